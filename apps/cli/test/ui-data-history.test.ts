/**
 * The history view's data (`ui/data/history.ts`) over real parts: temp directories, real git (team memory synced
 * through a bare remote by the real `TeamSync`, a private memory directory that is a repository), backups made by
 * the real programs (a dream driven by a scripted model, `Doctor.fix`, a delete that keeps what it removed).
 */
import type Anthropic from "@anthropic-ai/sdk"
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import * as BackgroundRuns from "@memdir/core/BackgroundRuns"
import * as Doctor from "@memdir/core/Doctor"
import { runDream } from "@memdir/core/Dream"
import * as DreamLock from "@memdir/core/DreamLock"
import { LockTimeoutError } from "@memdir/core/Errors"
import { serializeFrontmatter } from "@memdir/core/Frontmatter"
import { memoryVersion } from "@memdir/core/Memory"
import * as MemoryIndex from "@memdir/core/MemoryIndex"
import * as MemoryStore from "@memdir/core/MemoryStore"
import * as Model from "@memdir/core/Model"
import * as Scanner from "@memdir/core/Scanner"
import * as TeamGuard from "@memdir/core/TeamGuard"
import type { TeamLocation } from "@memdir/core/TeamMemory"
import * as TeamSync from "@memdir/core/TeamSync"
import * as Fixtures from "@memdir/testing/Fixtures"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import {
  dreamState,
  lastDreams,
  memoryHistory,
  parseBatch,
  parseLog,
  removeKeepingBackup,
  restore
} from "../src/ui/data/history.js"

const text = (name: string, description: string, body: string, type: "feedback" | "project" = "project") =>
  serializeFrontmatter({ name, description, type }, body)

const git = (cwd: string, ...args: Array<string>) =>
  execFileSync("git", ["-c", "user.email=t@memdir.invalid", "-c", "user.name=Tess", ...args], {
    cwd,
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "", HOME: cwd, GIT_CONFIG_NOSYSTEM: "1" }
  })

const services = (script: Model.ModelScript = []) =>
  Layer.mergeAll(TeamSync.layer, Scanner.layerNode, DreamLock.layer, BackgroundRuns.layer, Model.layerTest(script))
    .pipe(
      Layer.provideMerge(MemoryStore.layerNode.pipe(Layer.provideMerge(MemoryIndex.layer))),
      Layer.provideMerge(TeamGuard.layer),
      Layer.provideMerge(NodeServices.layer)
    )

const tempDir = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  return yield* fs.realPath(yield* fs.makeTempDirectoryScoped({ prefix: "memdir-ui-history-" }))
})

/** A teammate's team location (`@memdir/testing/Fixtures`), its memory directory made. */
const teammate = (root: string, name: string, remote: string): TeamLocation => {
  const team = Fixtures.teammate(root, name, remote)
  NodeFs.mkdirSync(team.memory.memoryDir, { recursive: true })
  return team
}

const rootOf = (team: TeamLocation) => ({ memoryDir: team.memory.memoryDir, teamEnabled: true })

const write = (root: MemoryStore.MemoryRoot, key: string, content: string) =>
  Effect.flatMap(MemoryStore.MemoryStore, (store) => store.write(root, key, content))

const read = (memoryDir: string, key: string) => NodeFs.readFileSync(NodePath.join(memoryDir, key), "utf8")

const toolUses = (...uses: ReadonlyArray<{ name: string; input: unknown }>): Model.ScriptedReply => ({
  content: uses.map((use, i) => ({
    type: "tool_use",
    id: `toolu_${i}_${use.name}`,
    name: use.name,
    input: use.input,
    caller: { type: "direct" }
  })) as unknown as ReadonlyArray<Anthropic.ContentBlock>,
  stopReason: "tool_use"
})

describe("git output, parsed", () => {
  it("cat-file --batch: sizes are bytes (multi-byte text), a missing object is left out", () => {
    const body = "Grüße 🚀\nline two\n"
    const bytes = Buffer.byteLength(body)
    const out = new TextEncoder().encode(
      `${"a".repeat(40)} blob ${bytes}\n${body}\nHEAD:./gone.md missing\n${"b".repeat(40)} blob 2\nok\n`
    )
    const texts = parseBatch(["x:./m.md", "HEAD:./gone.md", "y:./m.md"], out)
    assert.deepStrictEqual([...texts.entries()], [["x:./m.md", body], ["y:./m.md", "ok"]])
  })

  it("log -z with a unit separator: a subject may hold anything but NUL; garbage is skipped", () => {
    const sha = "c".repeat(40)
    const parent = "d".repeat(40)
    const commits = parseLog(
      `${sha}\u001f${parent}\u001f2026-03-05T12:00:00+01:00\u001fDana \u001b[31m\u001ffix: a | b\u0000\nnot a commit\u0000`
    )
    assert.deepStrictEqual(commits, [{
      sha,
      parent,
      at: Date.parse("2026-03-05T11:00:00Z"),
      author: "Dana \u001b[31m",
      subject: "fix: a | b"
    }])
  })
})

describe("memoryHistory and restore: team memory from git", () => {
  it.live(
    "each sync's version with the one before, a change not yet synced first; restore puts one back",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const remote = `${dir}/remote.git`
        git(dir, "init", "-q", "--bare", "-b", "main", remote)
        const alice = teammate(dir, "alice", remote)
        const bob = teammate(dir, "bob", remote)
        const sync = (team: TeamLocation) => Effect.flatMap(TeamSync.TeamSync, (s) => s.sync(team))

        yield* write(rootOf(alice), "team/project_ci.md", text("CI", "How CI runs", "CI runs on every push.\n"))
        yield* sync(alice)
        yield* sync(bob)
        yield* write(
          rootOf(bob),
          "team/project_ci.md",
          text("CI", "How CI runs", "CI runs on every push and nightly.\n")
        )
        yield* sync(bob)
        yield* sync(alice)
        yield* write(rootOf(alice), "team/project_ci.md", text("CI", "How CI runs", "CI runs nightly only.\n"))

        const history = yield* memoryHistory(rootOf(alice), "team/project_ci.md")
        assert.strictEqual(history.path, "team/project_ci.md")
        assert.deepStrictEqual(history.entries.map((e) => e.source), ["working-tree", "git", "git"])
        const [local, changed, created] = history.entries
        assert.include(local!.summary, "not yet synced")
        assert.include(local!.before!, "every push and nightly")
        assert.include(local!.after!, "nightly only")
        // bob's change: both sides exactly as git has them
        assert.match(changed!.summary, /^changed in [0-9a-f]{12} by .+: memdir team sync: local changes$/)
        assert.include(changed!.before!, "CI runs on every push.\n")
        assert.include(changed!.after!, "every push and nightly")
        assert.strictEqual(changed!.afterIs, "exact")
        assert.isTrue(changed!.restorable)
        assert.strictEqual(changed!.restores, "after")
        assert.match(created!.summary, /^created in /)
        assert.isUndefined(created!.before)
        assert.isAbove(Date.parse(changed!.at), Date.parse(created!.at) - 1)

        // restore alice's first version: through the store, the version it replaces kept
        const restored = yield* restore(rootOf(alice), "team/project_ci.md", created!.id)
        assert.isTrue(restored.restored)
        const now = read(alice.memory.memoryDir, "team/project_ci.md")
        assert.include(now, "CI runs on every push.\n")
        assert.strictEqual(restored.version, memoryVersion(now))
        assert.include(read(alice.memory.memoryDir, restored.backup!), "nightly only")
        assert.include(read(alice.memory.memoryDir, "team/MEMORY.md"), "(project_ci.md)")
        const after = yield* memoryHistory(rootOf(alice), "team/project_ci.md")
        assert.strictEqual(after.entries[0]!.source, "working-tree")
        const kept = after.entries.find((e) => e.source === "restore-backup")!
        assert.include(kept.before!, "nightly only")
        assert.include(kept.after!, "CI runs on every push.\n")
      }).pipe(Effect.provide(services())),
    60_000
  )
})

describe("memoryHistory and restore: private memory", () => {
  it.live(
    "a delete keeps the memory; its entry restores it with its index line; a stale version is refused",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const root = { memoryDir: `${dir}/memory/` }
        const original = text(
          "Testing policy",
          "Integration tests hit a real database",
          "Never mock the DB.\n",
          "feedback"
        )
        yield* write(root, "feedback_testing.md", original)
        const removed = yield* removeKeepingBackup(root, "feedback_testing.md")
        assert.isTrue(removed.fileRemoved)
        assert.isFalse(NodeFs.existsSync(`${dir}/memory/feedback_testing.md`))
        assert.notInclude(read(root.memoryDir, "MEMORY.md"), "feedback_testing.md")

        const history = yield* memoryHistory(root, "feedback_testing.md")
        assert.strictEqual(history.entries.length, 1)
        const entry = history.entries[0]!
        assert.strictEqual(entry.source, "delete-backup")
        assert.strictEqual(entry.id, removed.undoId)
        assert.include(entry.before!, "Never mock the DB.")
        assert.isUndefined(entry.after)

        const back = yield* restore(root, "feedback_testing.md", removed.undoId!)
        assert.isTrue(back.restored)
        assert.include(read(root.memoryDir, "feedback_testing.md"), "Never mock the DB.")
        assert.include(read(root.memoryDir, "MEMORY.md"), "(feedback_testing.md)")
        // a second restore of the same version writes nothing
        assert.isFalse((yield* restore(root, "feedback_testing.md", removed.undoId!)).restored)

        // the version the caller saw is checked
        const conflict = yield* Effect.flip(
          restore(root, "feedback_testing.md", removed.undoId!, { ifVersion: "0000" })
        )
        assert.strictEqual(conflict._tag, "VersionConflictError")
        const unknown = yield* Effect.flip(restore(root, "feedback_testing.md", "backup:.deleted/../../etc/passwd"))
        assert.strictEqual(unknown._tag, "InvalidMemoryInputError")
        const outside = yield* Effect.flip(memoryHistory(root, "../outside.md"))
        assert.strictEqual(outside._tag, "PathTraversalError")
        const team = yield* Effect.flip(memoryHistory(root, "team/x.md"))
        assert.strictEqual(team._tag, "TeamMemoryDisabledError")
        // a version the store refuses (its frontmatter is broken): nothing written, no backup of a restore left
        const broken = "---\nname: Broken\ndescription: [unclosed\ntype: feedback\n---\nbody\n"
        NodeFs.writeFileSync(`${root.memoryDir}/feedback_broken.md`, broken)
        const gone = yield* removeKeepingBackup(root, "feedback_broken.md")
        yield* write(root, "feedback_broken.md", text("Fixed", "A fixed memory", "Fixed.\n", "feedback"))
        const refused = yield* Effect.flip(restore(root, "feedback_broken.md", gone.undoId!))
        assert.strictEqual(refused._tag, "InvalidFrontmatterError")
        assert.include(read(root.memoryDir, "feedback_broken.md"), "Fixed.")
        assert.deepStrictEqual(
          (yield* memoryHistory(root, "feedback_broken.md")).entries.map((e) => e.source),
          ["delete-backup"]
        )
        assert.isFalse(
          NodeFs.existsSync(`${root.memoryDir}/.replaced`) &&
            NodeFs.readdirSync(`${root.memoryDir}/.replaced`).length > 0
        )

        // a state directory that is not one (a file named .dream) hides nothing else
        NodeFs.writeFileSync(`${root.memoryDir}/.dream`, "not a directory")
        assert.lengthOf((yield* memoryHistory(root, "feedback_testing.md")).entries, 1)

        // a memory directory not made yet: an empty history, no dream
        assert.deepStrictEqual((yield* memoryHistory({ memoryDir: `${dir}/not-yet` }, "feedback_x.md")).entries, [])
        assert.deepStrictEqual(yield* lastDreams({ memoryDir: `${dir}/not-yet` }), [])

        // nothing kept, no git: an empty history
        assert.deepStrictEqual((yield* memoryHistory(root, "feedback_never.md")).entries, [])
      }).pipe(Effect.provide(services())),
    60_000
  )

  it.live(
    "a private directory kept in git shows its commits; doctor's backup of MEMORY.md is listed, not restorable",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const memoryDir = `${dir}/memory`
        const root = { memoryDir }
        yield* write(root, "project_api.md", text("API", "API versioning", "v1 is frozen.\n"))
        git(dir, "init", "-q", "-b", "main", memoryDir)
        git(memoryDir, "add", ".")
        git(memoryDir, "commit", "-qm", "first")
        yield* write(root, "project_api.md", text("API", "API versioning", "v1 and v2 are frozen.\n"))
        git(memoryDir, "commit", "-qam", "freeze v2")
        const history = yield* memoryHistory(root, "project_api.md")
        assert.deepStrictEqual(history.entries.map((e) => e.summary.replace(/[0-9a-f]{12}/, "<sha>")), [
          "changed in <sha> by Tess: freeze v2",
          "created in <sha> by Tess: first"
        ])
        assert.include(history.entries[0]!.before!, "v1 is frozen.")
        assert.include(history.entries[0]!.after!, "v1 and v2 are frozen.")

        // a name with spaces, deleted in the last commit: that commit restores what it removed
        yield* write(root, "project api notes.md", text("API notes", "Notes on the API", "Rate limits: 100/s.\n"))
        git(memoryDir, "add", ".")
        git(memoryDir, "commit", "-qm", "notes")
        git(memoryDir, "rm", "-q", "project api notes.md")
        git(memoryDir, "commit", "-qm", "drop the notes")
        const notes = yield* memoryHistory(root, "project api notes.md")
        assert.deepStrictEqual(notes.entries.map((e) => [e.summary.replace(/[0-9a-f]{12}/, "<sha>"), e.restores]), [
          ["deleted in <sha> by Tess: drop the notes", "before"],
          ["created in <sha> by Tess: notes", "after"]
        ])
        assert.include(notes.entries[0]!.before!, "Rate limits: 100/s.")
        assert.isUndefined(notes.entries[0]!.after)

        NodeFs.appendFileSync(`${memoryDir}/MEMORY.md`, "- [Gone](project_gone.md) — deleted by hand\n")
        const fixed = yield* Doctor.fix(memoryDir)
        assert.isDefined(fixed.backup)
        const index = yield* memoryHistory(root, "MEMORY.md")
        const doctor = index.entries.find((e) => e.source === "doctor-backup")!
        assert.include(doctor.before!, "project_gone.md")
        assert.notInclude(doctor.after!, "project_gone.md")
        assert.isFalse(doctor.restorable)
      }).pipe(Effect.provide(services())),
    60_000
  )
})

describe("lastDreams and the dream's backups", () => {
  const seed = (memoryDir: string) => {
    const put = (file: string, content: string) => NodeFs.writeFileSync(NodePath.join(memoryDir, file), content)
    NodeFs.mkdirSync(memoryDir, { recursive: true })
    put("feedback_testing.md", text("Testing policy", "Integration tests", "Use the real database.\n", "feedback"))
    put(
      "feedback_db_mocks.md",
      text("No DB mocks", "Do not mock the database", "Mocks hid a broken migration.\n", "feedback")
    )
    put("project_release.md", text("Release freeze", "Merge freeze", "Merge freeze starts Thursday.\n"))
    put("project_old.md", text("Old plan", "A plan nobody follows", "Ship by spring.\n"))
    put(
      "MEMORY.md",
      [
        "- [Testing policy](feedback_testing.md) — integration tests",
        "- [No DB mocks](feedback_db_mocks.md) — do not mock the database",
        "- [Release freeze](project_release.md) — merge freeze",
        "- [Old plan](project_old.md) — a plan nobody follows",
        "- [Gone](project_gone.md) — deleted by hand"
      ].join("\n") + "\n"
    )
  }
  const script: Model.ModelScript = [
    toolUses({
      name: "memory_write",
      input: {
        path: "feedback_testing.md",
        content: text(
          "Testing policy",
          "Integration tests hit the real database, never mocks",
          "Use the real database. Never mock it: mocks hid a broken migration.\n",
          "feedback"
        )
      }
    }),
    toolUses({ name: "memory_delete", input: { path: "feedback_db_mocks.md" } }),
    toolUses({
      name: "memory_edit",
      input: { path: "project_release.md", old_string: "Thursday", new_string: "2026-12-03" }
    }),
    toolUses({ name: "memory_delete", input: { path: "project_old.md" } }),
    Model.textReply("Merged the testing memories, dated the freeze, dropped the old plan.")
  ]

  it.live(
    "what each dream merged, fixed and pruned; the rewritten memory's backup restores it",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const memoryDir = `${dir}/memory`
        const root = { memoryDir }
        assert.deepStrictEqual(yield* lastDreams(root), [])
        seed(memoryDir)
        const outcome = yield* runDream({ memoryDir, transcriptsDir: `${dir}/transcripts`, force: true, commit: false })
        assert.strictEqual(outcome._tag, "Completed")

        const dreams = yield* lastDreams(root, { limit: 5 })
        assert.strictEqual(dreams.length, 1)
        const dream = dreams[0]!
        assert.isTrue(dream.ok)
        assert.deepStrictEqual(dream.merged, ["feedback_db_mocks.md → feedback_testing.md"])
        assert.deepStrictEqual([...dream.fixed].sort(), ["feedback_testing.md", "project_release.md"])
        assert.deepStrictEqual(dream.pruned, ["project_old.md"])
        assert.include(dream.summary, "dated the freeze")
        assert.isTrue(dream.indexRemoved.some((r) => r.line.includes("project_gone.md")))

        const release = yield* memoryHistory(root, "project_release.md")
        assert.strictEqual(release.entries.length, 1)
        const rewritten = release.entries[0]!
        assert.strictEqual(rewritten.source, "dream-backup")
        assert.strictEqual(rewritten.summary, "rewritten by a dream")
        assert.include(rewritten.before!, "starts Thursday")
        assert.include(rewritten.after!, "starts 2026-12-03")
        const merged = yield* memoryHistory(root, "feedback_db_mocks.md")
        assert.strictEqual(merged.entries[0]!.summary, "merged by a dream into feedback_testing.md")
        assert.strictEqual((yield* memoryHistory(root, "project_old.md")).entries[0]!.summary, "deleted by a dream")

        yield* restore(root, "project_release.md", rewritten.id)
        assert.include(read(memoryDir, "project_release.md"), "starts Thursday")

        // whether it dreams: when it last finished, and what the hooks' job said of each attempt
        assert.deepStrictEqual(yield* dreamState(root), {
          lastConsolidatedAt: new Date(NodeFs.statSync(`${memoryDir}/${DreamLock.DREAM_LOCK_FILE}`).mtimeMs)
            .toISOString(),
          running: false,
          attempts: []
        })
        yield* BackgroundRuns.track({ memoryDir, session: "s-1" }, (notes) =>
          notes.dream({
            gates: "closed",
            ran: false,
            stoppedBy: "time",
            reason: "0 h since the last dream (needs 24 h)"
          }))
        yield* Effect.ignore(BackgroundRuns.track({ memoryDir, session: "s-2" }, (notes) =>
          Effect.andThen(
            notes.extraction({ status: "up-to-date", runs: 1, messagesRead: 0, written: 0, refused: 0 }),
            Effect.fail(new LockTimeoutError({ path: `${memoryDir}/.consolidate-lock`, waitedMs: 2_000 }))
          )))
        const attempts = (yield* dreamState(root)).attempts
        assert.deepStrictEqual(attempts.map((a) => [a.session, a.ran, a.stoppedBy, a.error?.slice(0, 17)]), [
          ["s-2", false, undefined, "LockTimeoutError:"],
          ["s-1", false, "time", undefined]
        ])

        // a report that cannot be read is a failed dream saying so, never a crash
        NodeFs.writeFileSync(NodePath.join(memoryDir, dream.backupDir, "report.json"), "{ not json")
        const corrupt = yield* lastDreams(root)
        assert.strictEqual(corrupt.length, 1)
        assert.isFalse(corrupt[0]!.ok)
        assert.include(corrupt[0]!.error!, "corrupt")
        assert.strictEqual(
          (yield* memoryHistory(root, "project_release.md")).entries.find((e) => e.source === "dream-backup")!.summary,
          "replaced by a dream (its report is missing or unreadable)"
        )
      }).pipe(Effect.provide(services(script))),
    60_000
  )
})
