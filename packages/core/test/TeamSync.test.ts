/**
 * Team sync with real git: a bare "remote" in a temp dir, two honest teammates (alice and bob, each a memory
 * directory synced by memdir) and a malicious one (mallory, who has push access: her commits are crafted with git's
 * plumbing, since porcelain refuses most of them). Every escape would land in the scratch tree, which the tests
 * inspect; the link "to /etc" is only ever a git object, never checked out.
 */
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import { teammate } from "../../testing/src/Fixtures.js"
import * as Doctor from "../src/Doctor.js"
import * as Git from "../src/Git.js"
import { conflictCopyPath } from "../src/internal/team/conflict.js"
import * as MemoryIndex from "../src/MemoryIndex.js"
import * as MemoryStore from "../src/MemoryStore.js"
import * as Scanner from "../src/Scanner.js"
import * as TeamGuard from "../src/TeamGuard.js"
import { type TeamLocation, writeTeamMemory } from "../src/TeamMemory.js"
import {
  entryViolations,
  parseLsTree,
  parseMergeTree,
  resolveConflicts,
  TEAM_GIT_DIR,
  TEAM_SYNC_MAX_DEPTH,
  TEAM_SYNC_MAX_NAME_BYTES,
  TEAM_SYNC_MAX_TOTAL_BYTES,
  TeamSync
} from "../src/TeamSync.js"
import * as TeamSyncModule from "../src/TeamSync.js"
import { inheritedFromHook, silentServer } from "./support/gitAttack.js"

// Isolated from the machine's git configuration: memdir's own identity fallback is used for sync commits.
// memdir's git never inherits GIT_* variables, so its global config is kept out by an empty scratch HOME.
process.env.GIT_CONFIG_GLOBAL = "/dev/null"
process.env.GIT_CONFIG_NOSYSTEM = "1"
process.env.HOME = NodeFs.mkdtempSync(`${NodeOs.tmpdir()}/memdir-teamsync-home-`)
delete process.env.XDG_CONFIG_HOME

const git = (cwd: string, args: ReadonlyArray<string>, input?: string): string =>
  execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    input,
    stdio: ["pipe", "pipe", "pipe"],
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "mallory",
      GIT_AUTHOR_EMAIL: "mallory@memdir.invalid",
      GIT_COMMITTER_NAME: "mallory",
      GIT_COMMITTER_EMAIL: "mallory@memdir.invalid"
    }
  })

const memoryText = (name: string, description: string, body: string, type = "project") =>
  `---\nname: ${name}\ndescription: ${description}\ntype: ${type}\n---\n\n${body}\n`

const NUL = "\u0000"

/** Built at run time so this file holds no literal credential. */
const FAKE_AWS_KEY = "AKIA" + "2Z3Y4X5W6V7UTSRQ"

interface World {
  readonly root: string
  readonly remote: string
  readonly alice: TeamLocation
  readonly bob: TeamLocation
  /** A plain clone of the remote for crafting hostile commits. */
  /** Mallory's git arguments: she crafts objects and moves `main` right in the remote (what a push does). */
  readonly mallory: ReadonlyArray<string>
  /** Where an escape through `team/evil → …/outside/etc` would write. */
  readonly outside: string
}

const world = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const root = yield* fs.realPath(yield* fs.makeTempDirectoryScoped({ prefix: "memdir-teamsync-" }))
  const remote = `${root}/remote.git`
  git(root, ["init", "-q", "--bare", "-b", "main", remote])
  const mallory = ["--git-dir", remote]
  const outside = `${root}/outside/etc`
  NodeFs.mkdirSync(outside, { recursive: true })
  NodeFs.writeFileSync(`${outside}/passwd`, "root:x:0:0\n")
  for (const name of ["alice", "bob"]) NodeFs.mkdirSync(`${root}/${name}/memory`, { recursive: true })
  const value: World = {
    root,
    remote,
    alice: teammate(root, "alice", remote),
    bob: teammate(root, "bob", remote),
    mallory,
    outside
  }
  return value
})

const sync = (team: TeamLocation) => Effect.flatMap(TeamSync, (s) => s.sync(team))

/** Every path under `dir` (relative, sorted), with file contents, skipping git's object stores. */
const snapshot = (dir: string): Record<string, string> => {
  const out: Record<string, string> = {}
  const walk = (at: string, rel: string) => {
    for (const entry of NodeFs.readdirSync(at, { withFileTypes: true })) {
      const relative = rel === "" ? entry.name : `${rel}/${entry.name}`
      if (entry.name === TEAM_GIT_DIR || entry.name === "remote.git" || entry.name === ".git") continue
      const absolute = `${at}/${entry.name}`
      if (entry.isSymbolicLink()) out[relative] = `-> ${NodeFs.readlinkSync(absolute)}`
      else if (entry.isDirectory()) walk(absolute, relative)
      else out[relative] = NodeFs.readFileSync(absolute, "utf8")
    }
  }
  walk(dir, "")
  return out
}

const remoteHead = (w: World): string => git(w.root, ["--git-dir", w.remote, "rev-parse", "main"]).trim()

/**
 * Mallory commits, on top of `parent`, a tree holding `base` (entries as `ls-tree` prints them: the parent's and
 * an honest file) and `hostile` entries (mode sha path).
 */
const pushHostileTree = (w: World, parent: string, base: string, hostile: ReadonlyArray<string>) => {
  const tree = git(w.root, [...w.mallory, "mktree"], [base, ...hostile].join("\n") + "\n").trim()
  const commit = git(w.root, [...w.mallory, "commit-tree", tree, "-p", parent, "-m", "innocent update"]).trim()
  git(w.root, [...w.mallory, "update-ref", "refs/heads/main", commit])
  return commit
}

const blob = (w: World, content: string | Buffer) =>
  git(w.root, [...w.mallory, "hash-object", "-w", "--stdin"], content as string).trim()

/** A script that records each call in `markers/<first argument>` and passes stdin through (a filter's job). */
const plantRecorder = (root: string): { readonly script: string; readonly markers: string } => {
  const markers = `${root}/markers`
  NodeFs.mkdirSync(markers, { recursive: true })
  const script = `${root}/recorder.sh`
  NodeFs.writeFileSync(script, `#!/bin/sh\ntouch "${markers}/$1"\ncat\n`, { mode: 0o755 })
  return { script, markers }
}

const TestLayer = Layer.mergeAll(TeamSyncModule.layer, Scanner.layerNode, MemoryIndex.layer).pipe(
  Layer.provideMerge(MemoryStore.layerNode.pipe(Layer.provide(MemoryIndex.layer))),
  Layer.provideMerge(TeamGuard.layer),
  Layer.provideMerge(NodeServices.layer)
)

describe("TeamSync pure parts", () => {
  it("parses ls-tree --long -z, submodules included", () => {
    const entries = parseLsTree(
      ["100644 blob aaaa      12\tx.md", "120000 blob bbbb       4\tevil", "160000 commit cccc       -\tsub", ""]
        .join(NUL)
    )
    assert.deepStrictEqual(entries.map((e) => [e.mode, e.type, e.size, e.path]), [
      ["100644", "blob", 12, "x.md"],
      ["120000", "blob", 4, "evil"],
      ["160000", "commit", undefined, "sub"]
    ])
  })

  it("keeps both versions of a memory changed on both sides, and the changed one when the other deleted it", () => {
    const parsed = parseMergeTree(
      [
        "tree1",
        "100644 base 1\tx.md",
        "100644 ours1234 2\tx.md",
        "100644 theirs5678 3\tx.md",
        "100644 b2 1\ty.md",
        "100644 theirsy 3\ty.md",
        "",
        "messages",
        ""
      ].join(NUL)
    )
    assert.strictEqual(parsed.tree, "tree1")
    const resolved = resolveConflicts(parsed.conflicted)
    assert.deepStrictEqual(resolved.entries, [
      { mode: "100644", sha: "ours1234", path: "x.md" },
      { mode: "100644", sha: "theirs5678", path: "x.conflict-theirs56.md" },
      { mode: "100644", sha: "theirsy", path: "y.md" }
    ])
    assert.deepStrictEqual(resolved.conflicts.map((c) => [c.path, c.kept]), [["team/x.md", "both"], [
      "team/y.md",
      "theirs"
    ]])
  })
})

describe("TeamSync push outcomes", () => {
  it("a push that lost the race to another pusher is retried (fetch, merge, push), other failures are errors", () => {
    // receive-pack's words when another sync moved the ref between our fetch and our push (captured on git 2.39)
    const lostRef = "remote: error: cannot lock ref 'refs/heads/main': is at 1a2b3c4d but expected 5e6f7a8b\n" +
      "To /tmp/remote.git\n!\tHEAD:refs/heads/main\t[remote rejected] (failed to update ref)\nDone"
    assert.isTrue(TeamSyncModule.isLostPushRace(lostRef))
    assert.isTrue(TeamSyncModule.isLostPushRace("!\tHEAD:refs/heads/main\t[rejected] (fetch first)"))
    assert.isTrue(TeamSyncModule.isLostPushRace(" ! [rejected]        HEAD -> main (non-fast-forward)"))
    assert.isFalse(TeamSyncModule.isLostPushRace("fatal: '/nowhere.git' does not appear to be a git repository"))
    assert.isFalse(TeamSyncModule.isLostPushRace("remote: error: hook declined to update refs/heads/main"))
  })
})

describe("TeamSyncTree bounds (the same both ways)", () => {
  const entry = (path: string, size = 10) => ({ mode: "100644", type: "blob", sha: "a".repeat(40), size, path })
  const reasons = (entries: ReadonlyArray<ReturnType<typeof entry>>) =>
    entryViolations("/m/team", entries).map((v) => [v.path, v.reason])

  it("git's words on one line: its first line kept, then its last two, blank lines left out", () => {
    const stderr = "fatal: '/x.git' does not appear to be a git repository\nfatal: Could not read from remote " +
      "repository.\n\nPlease make sure you have the correct access rights\nand the repository exists.\n"
    assert.strictEqual(
      TeamSyncModule.gitSays(stderr),
      "fatal: '/x.git' does not appear to be a git repository | … | Please make sure you have the correct access " +
        "rights | and the repository exists."
    )
    assert.strictEqual(TeamSyncModule.gitSays("error: one\n\nhint: two\n"), "error: one | hint: two")
  })

  it("depth: 64 levels pass, 65 are refused", () => {
    const at = (levels: number) => `${"d/".repeat(levels - 1)}x.md`
    assert.deepStrictEqual(reasons([entry(at(TEAM_SYNC_MAX_DEPTH))]), [])
    assert.deepStrictEqual(reasons([entry(at(TEAM_SYNC_MAX_DEPTH + 1))]), [[at(65), "too-deep"]])
  })

  it("names: room is left for a conflict copy within the 255-byte file-name limit (bytes, not characters)", () => {
    const fits = `${"n".repeat(TEAM_SYNC_MAX_NAME_BYTES - 3)}.md`
    assert.deepStrictEqual(reasons([entry(fits)]), [])
    assert.isAtMost(Buffer.byteLength(conflictCopyPath(fits, "f".repeat(40))), 255)
    const long = `${"n".repeat(TEAM_SYNC_MAX_NAME_BYTES - 2)}.md`
    assert.deepStrictEqual(reasons([entry(long)]), [[long, "name-too-long"]])
    const wide = `${"é".repeat(120)}.md` // 243 bytes in 123 characters
    assert.deepStrictEqual(reasons([entry(`dir/${wide}`)]), [[`dir/${wide}`, "name-too-long"]])
  })

  it("the index stays a file: nothing under MEMORY.md, in any case", () => {
    assert.deepStrictEqual(reasons([entry("MEMORY.md/x.md"), entry("memory.MD/y.md"), entry("MEMORY.md")]), [
      ["MEMORY.md/x.md", "index-not-a-file"],
      ["memory.MD/y.md", "index-not-a-file"]
    ])
  })

  it("the whole tree: its total size is bounded, not only each blob", () => {
    const copies = Array.from({ length: 300 }, (_, i) => entry(`project_${i}.md`, 240_000))
    assert.deepStrictEqual(reasons(copies), [[".", "too-large"]])
    assert.deepStrictEqual(reasons(copies.slice(0, 200)), [])
    assert.strictEqual(TEAM_SYNC_MAX_TOTAL_BYTES, 64 * 1024 * 1024)
  })
})

layer(TestLayer, { timeout: 120_000, excludeTestServices: true })("TeamSync with real git", (it) => {
  it.effect("an honest round trip: alice's team memory reaches bob, committed under memdir's identity", () =>
    Effect.gen(function*() {
      const w = yield* world
      yield* writeTeamMemory({
        memoryDir: w.alice.memory.memoryDir,
        type: "reference",
        name: "Dashboards",
        description: "Checkout latency lives on grafana.internal/d/checkout",
        body: "Look there after touching payments."
      })
      const first = yield* sync(w.alice)
      assert.isTrue(first.pushed)
      assert.isDefined(first.committed)
      assert.strictEqual(first.merge, "none")
      assert.strictEqual(remoteHead(w), first.head)
      assert.strictEqual(
        git(w.root, ["--git-dir", w.remote, "log", "-1", "--format=%an"]).trim(),
        "memdir",
        "no git identity configured: memdir's own"
      )

      const second = yield* sync(w.bob)
      assert.strictEqual(second.merge, "fast-forward")
      assert.isFalse(second.pushed)
      const files = snapshot(w.bob.teamDir)
      assert.deepStrictEqual(Object.keys(files).sort(), ["MEMORY.md", "reference_dashboards.md"])
      assert.include(files["MEMORY.md"]!, "- [Dashboards](reference_dashboards.md)")

      // Nothing new on either side: a no-op.
      const again = yield* sync(w.bob)
      assert.strictEqual(again.merge, "up-to-date")
      assert.isUndefined(again.committed)
      assert.isFalse(again.pushed)
    }))

  it.effect("is off when auto memory or team memory is off, and needs a remote", () =>
    Effect.gen(function*() {
      const w = yield* world
      const autoOff = yield* Effect.flip(
        sync({ ...w.alice, memory: { ...w.alice.memory, enabled: false, enabledBy: "env MEMDIR_DISABLE_AUTO_MEMORY" } })
      )
      assert.strictEqual(autoOff._tag, "MemoryDisabledError")
      const teamOff = yield* Effect.flip(sync({ ...w.alice, enabled: false, enabledBy: "default" }))
      assert.strictEqual(teamOff._tag, "TeamMemoryDisabledError")
      const noRemote = yield* Effect.flip(sync({ ...w.alice, remote: undefined }))
      assert.strictEqual(noRemote._tag, "TeamSyncError")
      assert.include(noRemote.message, "teamRemote")
      // says what is missing and where to set it, not `team sync with "" failed`
      assert.match(noRemote.message, /^team sync cannot start: no remote is configured: set "teamRemote"/)
      assert.include(noRemote.message, "$MEMDIR_HOME/settings.json")
      assert.notInclude(noRemote.message, "\"\"")
      // None of them touched the disk.
      assert.isFalse(NodeFs.existsSync(`${w.alice.memory.memoryDir}${TEAM_GIT_DIR}`))
      assert.isFalse(NodeFs.existsSync(w.alice.teamDir))
      // a remote that is not a repository: git's own first line ("fatal: …") is in the error, not only its advice
      const missing = `${w.root}/nowhere.git`
      const notRepo = yield* Effect.flip(sync({ ...w.alice, remote: missing }))
      assert.strictEqual(notRepo._tag, "TeamSyncError")
      if (notRepo._tag === "TeamSyncError") {
        assert.strictEqual(notRepo.step, "fetch")
        assert.include(notRepo.detail, `fatal: '${missing}' does not appear to be a git repository`)
        assert.include(notRepo.detail, "the repository exists")
      }
    }))

  /**
   * Each hostile commit sits on top of an honest one. The sync must refuse the whole update (the honest file
   * included), leave alice's team/ and everything outside it as they were, and take the honest change once the
   * hostile commit is gone from the remote.
   */
  const hostile: ReadonlyArray<{
    readonly name: string
    readonly entries: (w: World) => ReadonlyArray<string>
    readonly path: string
    readonly reason: string
  }> = [
    {
      name: "a symlink team/evil → the scratch tree's etc (mode 120000)",
      entries: (w) => [`120000 blob ${blob(w, w.outside)}\tevil`],
      path: "evil",
      reason: "symlink"
    },
    {
      name: "a symlink literally to /etc, never checked out anywhere",
      entries: (w) => [`120000 blob ${blob(w, "/etc")}\tetc`],
      path: "etc",
      reason: "symlink"
    },
    {
      name: "a ../../x.md name crafted with mktree",
      entries: (w) => {
        const x = blob(w, memoryText("X", "escapes", "boom"))
        const inner = git(w.root, [...w.mallory, "mktree"], `100644 blob ${x}\tx.md\n`).trim()
        const middle = git(w.root, [...w.mallory, "mktree"], `040000 tree ${inner}\t..\n`).trim()
        return [`040000 tree ${middle}\t..`]
      },
      path: "../../x.md",
      reason: "escapes-root"
    },
    {
      name: "a percent-encoded traversal name (which git itself accepts)",
      entries: (w) => [`100644 blob ${blob(w, memoryText("E", "encoded", "x"))}\t%2e%2e%2fx.md`],
      path: "%2e%2e%2fx.md",
      reason: "encoded-traversal"
    },
    {
      name: "an oversized file (300,000 bytes)",
      entries: (w) => [`100644 blob ${blob(w, memoryText("Big", "big", "x".repeat(300_000)))}\tproject_big.md`],
      path: "project_big.md",
      reason: "oversized"
    },
    {
      name: "a likely secret (an AWS access key id)",
      entries: (w) => [
        `100644 blob ${blob(w, memoryText("Creds", "deploy creds", `key: ${FAKE_AWS_KEY}`))}\treference_creds.md`
      ],
      path: "reference_creds.md",
      reason: "secret"
    },
    {
      name: "a submodule (mode 160000)",
      entries: (w) => [`160000 commit ${remoteHead(w)}\tvendor`],
      path: "vendor",
      reason: "submodule"
    },
    {
      name: "a path 65 levels deep (the outgoing side stops at 64)",
      entries: (w) => {
        let tree = git(w.root, [...w.mallory, "mktree"], `100644 blob ${blob(w, memoryText("D", "deep", "x"))}\tx.md\n`)
          .trim()
        for (let level = 0; level < 63; level++) {
          tree = git(w.root, [...w.mallory, "mktree"], `040000 tree ${tree}\td\n`).trim()
        }
        return [`040000 tree ${tree}\td`]
      },
      path: `${"d/".repeat(64)}x.md`,
      reason: "too-deep"
    },
    {
      name: "a 241-byte name (its conflict copy would pass the 255-byte file-name limit)",
      entries: (w) => [`100644 blob ${blob(w, memoryText("L", "long", "x"))}\t${"n".repeat(238)}.md`],
      path: `${"n".repeat(238)}.md`,
      reason: "name-too-long"
    },
    {
      name: "a small commit naming one 240 KB blob 300 times (72 MB once checked out)",
      entries: (w) => {
        const big = blob(w, memoryText("Big", "big", "x".repeat(239_000)))
        return Array.from({ length: 300 }, (_, i) => `100644 blob ${big}\tproject_copy${i}.md`)
      },
      path: ".",
      reason: "too-large"
    },
    {
      name: "a .gitattributes that would change how git treats the tree",
      entries: (w) => [`100644 blob ${blob(w, "* filter=evil\n")}\t.gitattributes`],
      path: ".gitattributes",
      reason: "hidden-file"
    }
  ]

  it.effect("refuses each hostile update whole, writes nothing anywhere, then takes an honest teammate's change", () =>
    Effect.gen(function*() {
      const w = yield* world
      // Alice has synced once: the remote has her memory.
      yield* writeTeamMemory({
        memoryDir: w.alice.memory.memoryDir,
        type: "project",
        name: "Freeze",
        description: "Merge freeze 2026-03-05 to 2026-03-09",
        body: "Mobile release."
      })
      yield* sync(w.alice)
      const honestBase = remoteHead(w)
      const honest = blob(w, memoryText("Honest", "an honest note", "hi"))
      const base = git(w.root, [...w.mallory, "ls-tree", honestBase]).trim() +
        `\n100644 blob ${honest}\tproject_honest.md`
      // Read from the ref file: every git process costs a spawn, and there are many attacks.
      const aliceHead = () => NodeFs.readFileSync(`${w.alice.memory.memoryDir}${TEAM_GIT_DIR}/refs/heads/main`, "utf8")

      for (const attack of hostile) {
        pushHostileTree(w, honestBase, base, attack.entries(w))
        const aliceHeadBefore = aliceHead()
        const before = snapshot(w.root)

        const error = yield* Effect.flip(sync(w.alice))
        assert.strictEqual(error._tag, "TeamSyncRejectedError", attack.name)
        if (error._tag !== "TeamSyncRejectedError") return
        assert.strictEqual(error.direction, "incoming")
        assert.deepInclude(
          error.violations.map((v) => ({ path: v.path, reason: v.reason })),
          { path: attack.path, reason: attack.reason },
          attack.name
        )
        // Nothing merged: alice's branch, team/ and the whole scratch tree (outside/etc included) are unchanged.
        assert.strictEqual(aliceHead(), aliceHeadBefore, attack.name)
        assert.deepStrictEqual(snapshot(w.root), before, attack.name)
        assert.isFalse(NodeFs.existsSync(`${w.alice.teamDir}project_honest.md`), attack.name)
        assert.deepStrictEqual(NodeFs.readdirSync(w.outside), ["passwd"], attack.name)
        // The hostile commit is removed from the remote before the next attack.
        git(w.root, ["--git-dir", w.remote, "update-ref", "refs/heads/main", honestBase])
      }

      // An honest teammate's change comes through.
      yield* writeTeamMemory({
        memoryDir: w.bob.memory.memoryDir,
        type: "reference",
        name: "Tracker",
        description: "Bugs are tracked in linear.app/acme",
        body: "Team ACME."
      })
      yield* sync(w.bob)
      const accepted = yield* sync(w.alice)
      assert.strictEqual(accepted.merge, "fast-forward")
      const files = Object.keys(snapshot(w.alice.teamDir)).sort()
      assert.deepStrictEqual(files, ["MEMORY.md", "project_freeze.md", "reference_tracker.md"])
    }))

  it.effect("two people editing one memory at once: both versions survive, MEMORY.md keeps both lines, doctor reports it", () =>
    Effect.gen(function*() {
      const w = yield* world
      const write = (team: TeamLocation, name: string, description: string, body: string) =>
        writeTeamMemory({ memoryDir: team.memory.memoryDir, type: "project", name, description, body })
      yield* write(w.alice, "Release", "Release train is weekly", "Ships on Tuesdays.")
      yield* sync(w.alice)
      yield* sync(w.bob)
      // Both edit the same memory, and each adds another one.
      yield* write(w.alice, "Release", "Release train is weekly", "Ships on Wednesdays now (alice).")
      yield* write(w.alice, "Oncall", "Alice is on call until 2026-03-09", "Page her.")
      yield* write(w.bob, "Release", "Release train is weekly", "Ships on Thursdays now (bob).")
      yield* write(w.bob, "Budget", "Cloud budget is 5k per month", "Ask finance first.")
      yield* sync(w.alice)
      const merged = yield* sync(w.bob)
      assert.strictEqual(merged.merge, "merged")
      assert.isTrue(merged.pushed)
      assert.strictEqual(merged.conflicts.length, 1)
      const conflict = merged.conflicts[0]!
      assert.strictEqual(conflict.path, "team/project_release.md")
      assert.strictEqual(conflict.kept, "both")
      assert.match(conflict.copy!, /^team\/project_release\.conflict-[0-9a-f]{8}\.md$/)

      yield* sync(w.alice)
      for (const team of [w.alice, w.bob]) {
        const files = snapshot(team.teamDir)
        assert.include(files["project_release.md"]!, "Thursdays now (bob)")
        assert.include(files[conflict.copy!.slice("team/".length)]!, "Wednesdays now (alice)")
        // The team index merged as a union: every memory keeps its line, none twice.
        const index = files["MEMORY.md"]!
        for (const file of ["project_release.md", "project_oncall.md", "project_budget.md"]) {
          assert.strictEqual(index.split(`](${file})`).length - 1, 1, `${file} in\n${index}`)
        }
        const report = yield* Doctor.diagnose(team.memory.memoryDir)
        const found = report.findings.filter((f) => f.code === "team-conflict")
        assert.deepStrictEqual(found.map((f) => f.path), [conflict.copy])
        assert.include(found[0]!.fix, "team/project_release.md")
      }
      assert.strictEqual(
        git(w.root, ["--git-dir", `${w.alice.memory.memoryDir}${TEAM_GIT_DIR}`, "rev-parse", "HEAD"]).trim(),
        remoteHead(w)
      )
    }))

  it.effect("never commits or pushes a likely secret or a link put into team/ by hand", () =>
    Effect.gen(function*() {
      const w = yield* world
      yield* writeTeamMemory({
        memoryDir: w.alice.memory.memoryDir,
        type: "reference",
        name: "Runbook",
        description: "Deploy runbook lives in the wiki",
        body: "wiki/deploy"
      })
      yield* sync(w.alice)
      const pushed = remoteHead(w)

      NodeFs.writeFileSync(`${w.alice.teamDir}reference_aws.md`, memoryText("AWS", "deploy key", `id ${FAKE_AWS_KEY}`))
      const secret = yield* Effect.flip(sync(w.alice))
      assert.strictEqual(secret._tag, "SecretDetectedError")
      if (secret._tag !== "SecretDetectedError") return
      assert.strictEqual(secret.path, "team/reference_aws.md")
      assert.include(secret.pattern, "aws-access-key-id")
      assert.strictEqual(secret.action, "sync")
      assert.include(secret.message, "team/reference_aws.md")
      NodeFs.rmSync(`${w.alice.teamDir}reference_aws.md`)

      NodeFs.symlinkSync(w.outside, `${w.alice.teamDir}evil`)
      const link = yield* Effect.flip(sync(w.alice))
      assert.strictEqual(link._tag, "TeamSyncRejectedError")
      if (link._tag !== "TeamSyncRejectedError") return
      assert.strictEqual(link.direction, "outgoing")
      assert.deepStrictEqual(link.violations.map((v) => [v.path, v.reason]), [["evil", "symlink-escape"]])
      NodeFs.rmSync(`${w.alice.teamDir}evil`)

      assert.strictEqual(remoteHead(w), pushed, "nothing reached the remote")
      const tree = git(w.root, ["--git-dir", w.remote, "ls-tree", "-r", "--name-only", "main"]).trim().split("\n")
      assert.deepStrictEqual(tree, ["MEMORY.md", "reference_runbook.md"])
      // Dot-files (editor swap files) stay local.
      NodeFs.writeFileSync(`${w.alice.teamDir}.reference_runbook.md.swp`, "swap")
      const clean = yield* sync(w.alice)
      assert.isUndefined(clean.committed)
    }))

  it.effect("two syncs of one memory directory at once, and two teammates syncing at once, all succeed", () =>
    Effect.gen(function*() {
      const w = yield* world
      const write = (team: TeamLocation, name: string) =>
        writeTeamMemory({
          memoryDir: team.memory.memoryDir,
          type: "project",
          name,
          description: `${name} notes`,
          body: name
        })
      yield* write(w.alice, "First")
      const [one, two] = yield* Effect.all([sync(w.alice), sync(w.alice)], { concurrency: 2 })
      // The lock serialises them: one commits and pushes, the other finds everything up to date.
      assert.deepStrictEqual([one.pushed, two.pushed].sort(), [false, true])
      assert.deepStrictEqual([one.committed === undefined, two.committed === undefined].sort(), [false, true])
      assert.strictEqual(one.head, two.head)

      yield* write(w.alice, "Second")
      yield* write(w.bob, "Third")
      yield* Effect.all([sync(w.alice), sync(w.bob)], { concurrency: 2 })
      yield* sync(w.alice)
      yield* sync(w.bob)
      const remoteFiles = git(w.root, ["--git-dir", w.remote, "ls-tree", "-r", "--name-only", "main"]).trim()
      assert.deepStrictEqual(remoteFiles.split("\n"), [
        "MEMORY.md",
        "project_first.md",
        "project_second.md",
        "project_third.md"
      ])
      for (const team of [w.alice, w.bob]) {
        assert.strictEqual(
          git(w.root, ["--git-dir", `${team.memory.memoryDir}${TEAM_GIT_DIR}`, "rev-parse", "HEAD"]).trim(),
          remoteHead(w)
        )
        git(w.root, ["--git-dir", `${team.memory.memoryDir}${TEAM_GIT_DIR}`, "fsck", "--no-progress"])
        assert.strictEqual(
          git(w.root, [
            "--git-dir",
            `${team.memory.memoryDir}${TEAM_GIT_DIR}`,
            "--work-tree",
            team.teamDir,
            "status",
            "--porcelain"
          ]),
          ""
        )
      }
    }))
  it.effect("a shared-folder remote's planted hooks never run, over a path or a file:// URL", () =>
    Effect.gen(function*() {
      const w = yield* world
      const { markers, script } = plantRecorder(w.root)
      const hooks = [
        "pre-receive",
        "update",
        "post-receive",
        "post-update",
        "reference-transaction",
        "push-to-checkout",
        "proc-receive",
        "pre-auto-gc"
      ]
      for (const hook of hooks) {
        NodeFs.writeFileSync(`${w.remote}/hooks/${hook}`, `#!/bin/sh\n"${script}" ${hook} </dev/null\n`, {
          mode: 0o755
        })
      }
      for (const [who, remote] of [[w.alice, w.remote], [w.bob, `file://${w.remote}`]] as const) {
        yield* writeTeamMemory({
          memoryDir: who.memory.memoryDir,
          type: "project",
          name: `Note of ${remote.slice(0, 4)}`,
          description: "a note",
          body: "hi"
        })
        const result = yield* sync({ ...who, remote })
        assert.isTrue(result.pushed, remote)
      }
      assert.deepStrictEqual(NodeFs.readdirSync(markers), [])
      const tree = git(w.root, ["--git-dir", w.remote, "ls-tree", "-r", "--name-only", "main"]).trim().split("\n")
      assert.strictEqual(tree.length, 3, tree.join(" "))
    }))

  it.effect("filters, drivers, an attributes file and fsmonitor planted in .team.git/config never run; a link at info/attributes is replaced, not written through", () =>
    Effect.gen(function*() {
      const w = yield* world
      const { markers, script } = plantRecorder(w.root)
      const write = (team: TeamLocation, body: string) =>
        writeTeamMemory({
          memoryDir: team.memory.memoryDir,
          type: "project",
          name: "Release",
          description: "Release train is weekly",
          body
        })
      yield* write(w.alice, "Ships on Tuesdays.")
      yield* sync(w.alice)
      yield* sync(w.bob)
      const attributes = `${w.root}/planted-attributes`
      NodeFs.writeFileSync(attributes, "* filter=evil merge=evil diff=evil\n")
      const victim = `${w.root}/victim`
      NodeFs.writeFileSync(victim, "precious\n")
      for (const team of [w.alice, w.bob]) {
        const gitDir = `${team.memory.memoryDir}${TEAM_GIT_DIR}`
        NodeFs.appendFileSync(
          `${gitDir}/config`,
          `[core]\n\tattributesFile = ${attributes}\n\tfsmonitor = "${script}" fsmonitor\n` +
            `[filter "evil"]\n\tclean = "${script}" clean\n\tsmudge = "${script}" smudge\n\trequired = true\n` +
            `[merge "evil"]\n\tdriver = "${script}" merge %O %A %B\n` +
            `[diff "evil"]\n\ttextconv = "${script}" textconv\n` +
            `[credential]\n\thelper = "!${script} credential"\n`
        )
        NodeFs.writeFileSync(`${team.teamDir}.gitattributes`, "* filter=evil merge=evil\n")
        NodeFs.rmSync(`${gitDir}/info/attributes`)
        NodeFs.symlinkSync(victim, `${gitDir}/info/attributes`)
      }
      // Both edit the memory: the sync merges, the case where a merge driver would run.
      yield* write(w.alice, "Ships on Wednesdays now (alice).")
      yield* write(w.bob, "Ships on Thursdays now (bob).")
      yield* sync(w.alice)
      const merged = yield* sync(w.bob)
      assert.strictEqual(merged.merge, "merged")
      assert.isTrue(merged.pushed)
      yield* sync(w.alice)

      assert.deepStrictEqual(NodeFs.readdirSync(markers), [])
      assert.strictEqual(NodeFs.readFileSync(victim, "utf8"), "precious\n")
      for (const team of [w.alice, w.bob]) {
        const gitDir = `${team.memory.memoryDir}${TEAM_GIT_DIR}`
        assert.isTrue(NodeFs.lstatSync(`${gitDir}/info/attributes`).isFile())
        assert.notInclude(NodeFs.readFileSync(`${gitDir}/config`, "utf8"), "evil")
        assert.include(NodeFs.readFileSync(`${team.teamDir}project_release.md`, "utf8"), "Thursdays now (bob)")
      }
    }))

  it.effect("an info/ of the clone that is a link or a file is replaced by memdir's own private directory", () =>
    Effect.gen(function*() {
      const w = yield* world
      yield* writeTeamMemory({
        memoryDir: w.alice.memory.memoryDir,
        type: "reference",
        name: "Runbooks",
        description: "Runbooks live in the ops wiki",
        body: "Look there first."
      })
      yield* sync(w.alice)
      const gitDir = `${w.alice.memory.memoryDir}${TEAM_GIT_DIR}`
      const elsewhere = `${w.root}/elsewhere-info`
      NodeFs.mkdirSync(elsewhere)
      for (
        const plant of [
          () => NodeFs.symlinkSync(elsewhere, `${gitDir}/info`),
          () => NodeFs.writeFileSync(`${gitDir}/info`, "x")
        ]
      ) {
        NodeFs.rmSync(`${gitDir}/info`, { recursive: true, force: true })
        plant()
        yield* sync(w.alice)
        const info = NodeFs.lstatSync(`${gitDir}/info`)
        assert.isTrue(info.isDirectory())
        assert.strictEqual(info.mode & 0o777, 0o700)
        assert.strictEqual(
          NodeFs.readFileSync(`${gitDir}/info/attributes`, "utf8"),
          "* -filter -ident -working-tree-encoding merge=text\n/MEMORY.md merge=union\n"
        )
        assert.strictEqual(NodeFs.readFileSync(`${gitDir}/info/exclude`, "utf8"), ".*\n*~\n")
      }
      assert.deepStrictEqual(NodeFs.readdirSync(elsewhere), [])
    }))

  it.effect("GIT_DIR, GIT_WORK_TREE and GIT_INDEX_FILE from a calling hook do not redirect the sync", () =>
    Effect.gen(function*() {
      const w = yield* world
      const project = `${w.root}/project`
      NodeFs.mkdirSync(project)
      git(project, ["init", "-q", "-b", "main"])
      NodeFs.writeFileSync(`${project}/README.md`, "the project\n")
      git(project, ["add", "README.md"])
      git(project, ["commit", "-qm", "project"])
      const projectHead = git(project, ["rev-parse", "HEAD"])
      yield* writeTeamMemory({
        memoryDir: w.alice.memory.memoryDir,
        type: "project",
        name: "Hooked",
        description: "synced from a post-commit hook",
        body: "hi"
      })
      const synced = yield* Effect.scoped(Effect.gen(function*() {
        yield* inheritedFromHook({
          GIT_DIR: `${project}/.git`,
          GIT_WORK_TREE: project,
          GIT_INDEX_FILE: `${project}/.git/index`
        })
        return yield* sync(w.alice)
      }))
      assert.isTrue(synced.pushed)
      assert.deepStrictEqual(
        git(w.root, ["--git-dir", w.remote, "ls-tree", "-r", "--name-only", "main"]).trim().split("\n"),
        ["MEMORY.md", "project_hooked.md"]
      )
      assert.strictEqual(git(project, ["rev-parse", "HEAD"]), projectHead)
      assert.strictEqual(git(project, ["ls-files"]), "README.md\n")
      assert.strictEqual(git(project, ["status", "--porcelain"]), "")
    }))

  it.effect("a remote that never answers fails the sync at the timeout and leaves the team lock free", () =>
    Effect.gen(function*() {
      const w = yield* world
      const { port } = yield* silentServer
      // fresh: the block's layer built `layerWithoutDependencies` over the default git, which the memo map would reuse
      const shortTimeout = Layer.fresh(TeamSyncModule.layerWithoutDependencies.pipe(
        Layer.provide(Git.layerWith({ timeout: "1500 millis" }))
      ))
      yield* writeTeamMemory({
        memoryDir: w.alice.memory.memoryDir,
        type: "project",
        name: "Waiting",
        description: "a note",
        body: "hi"
      })
      const started = Date.now()
      const error = yield* Effect.flip(
        sync({ ...w.alice, remote: `git://127.0.0.1:${port}/team.git` }).pipe(Effect.provide(shortTimeout))
      )
      assert.isBelow(Date.now() - started, 20_000)
      assert.strictEqual(error._tag, "TeamSyncError")
      if (error._tag !== "TeamSyncError") return
      assert.strictEqual(error.step, "fetch")
      assert.include(error.detail, "did not finish")
      // The lock was given back: a team write goes through at once.
      yield* writeTeamMemory({
        memoryDir: w.alice.memory.memoryDir,
        type: "project",
        name: "After",
        description: "written after the failed sync",
        body: "hi"
      }).pipe(Effect.timeout("5 seconds"))
    }))

  it.effect("remotes git would run code for, or read as an option, are refused without hanging", () =>
    Effect.gen(function*() {
      const w = yield* world
      const { markers, script } = plantRecorder(w.root)
      for (const remote of ["fd::3", `ext::${script} ext`]) {
        const error = yield* Effect.flip(sync({ ...w.alice, remote }))
        assert.strictEqual(error._tag, "TeamSyncError", remote)
        if (error._tag === "TeamSyncError") assert.strictEqual(error.step, "fetch", remote)
      }
      const option = yield* Effect.flip(sync({ ...w.alice, remote: `--upload-pack=${script} option` }))
      assert.strictEqual(option._tag, "TeamSyncError")
      if (option._tag === "TeamSyncError") assert.strictEqual(option.step, "configure")
      assert.deepStrictEqual(NodeFs.readdirSync(markers), [])
    }))
})
