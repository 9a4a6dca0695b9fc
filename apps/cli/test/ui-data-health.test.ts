/**
 * The health view's data (`ui/data/health.ts`) over real parts: a memory directory with planted problems that
 * `Doctor.diagnose` finds, a background run that failed recorded by the real `BackgroundRuns.track`, records made
 * unreadable on disk, and team memory synced through a bare remote by the real `TeamSync` (a conflict included).
 */
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import * as BackgroundRuns from "@memdir/core/BackgroundRuns"
import { ModelError } from "@memdir/core/Errors"
import { serializeFrontmatter } from "@memdir/core/Frontmatter"
import * as MemoryIndex from "@memdir/core/MemoryIndex"
import * as MemoryStore from "@memdir/core/MemoryStore"
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
import { ALL_SAFE_FIXES, applyFix, health, parseStatus } from "../src/ui/data/health.js"

const text = (name: string, description: string, body: string) =>
  serializeFrontmatter({ name, description, type: "project" }, body)

const services = Layer.mergeAll(TeamSync.layer, Scanner.layerNode, BackgroundRuns.layer).pipe(
  Layer.provideMerge(MemoryStore.layerNode.pipe(Layer.provideMerge(MemoryIndex.layer))),
  Layer.provideMerge(TeamGuard.layer),
  Layer.provideMerge(NodeServices.layer)
)

const tempDir = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  return yield* fs.realPath(yield* fs.makeTempDirectoryScoped({ prefix: "memdir-ui-health-" }))
})

const put = (memoryDir: string, file: string, content: string) => {
  NodeFs.mkdirSync(NodePath.dirname(NodePath.join(memoryDir, file)), { recursive: true })
  NodeFs.writeFileSync(NodePath.join(memoryDir, file), content)
}

describe("git status, parsed", () => {
  it("porcelain -z: each changed path once, a rename by its new name, names with spaces kept", () => {
    assert.deepStrictEqual(
      parseStatus(" M project_ci.md\u0000?? new notes.md\u0000R  renamed.md\u0000old.md\u0000 D gone.md\u0000"),
      ["project_ci.md", "new notes.md", "renamed.md", "gone.md"]
    )
  })
})

describe("health and applyFix: doctor's findings", () => {
  it.live(
    "a planted broken memory and dead lines are found; one safe fix repairs only its own line",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const memoryDir = `${dir}/memory`
        const root = { memoryDir }
        put(memoryDir, "project_api.md", text("API", "API versioning", "v1 is frozen.\n"))
        put(memoryDir, "project_new.md", text("New", "A memory with no index line", "Nobody listed me.\n"))
        put(memoryDir, "project_broken.md", "---\nname: Broken\ndescription: [unclosed\ntype: project\n---\nbody\n")
        put(
          memoryDir,
          "MEMORY.md",
          [
            "- [API](project_api.md) — API versioning",
            "- [Gone](project_gone.md) — deleted by hand",
            "- [Also gone](project_also_gone.md) — deleted by hand"
          ].join("\n") + "\n"
        )

        const found = yield* health(root)
        assert.isUndefined(found.team)
        const codes = found.findings.map((f) => `${f.severity} ${f.code} ${f.where ?? ""}`)
        assert.strictEqual(codes[0], "error invalid-frontmatter project_broken.md:4")
        assert.includeMembers(codes, [
          "warning dead-link MEMORY.md:2",
          "warning dead-link MEMORY.md:3",
          "warning missing-from-index project_new.md"
        ])
        assert.strictEqual(found.summary.errors, 1)
        assert.strictEqual(found.summary.fixable, 3)
        const broken = found.findings.find((f) => f.code === "invalid-frontmatter")!
        assert.isFalse(broken.fix!.safe)
        const gone = found.findings.find((f) => f.where === "MEMORY.md:2")!
        assert.isTrue(gone.fix!.safe)
        assert.include(gone.message, "project_gone.md")

        // one finding's fix: only its line goes, MEMORY.md kept first
        const one = yield* applyFix(root, gone.fix!.id)
        assert.isTrue(one.applied, one.message)
        assert.deepStrictEqual(one.changes, [
          "removed line 2 (dead-link project_gone.md): - [Gone](project_gone.md) — deleted by hand"
        ])
        const index = NodeFs.readFileSync(`${memoryDir}/MEMORY.md`, "utf8")
        assert.notInclude(index, "project_gone.md")
        assert.include(index, "project_also_gone.md")
        assert.notInclude(index, "project_new.md")
        assert.include(NodeFs.readFileSync(NodePath.join(memoryDir, one.backup!), "utf8"), "project_gone.md")

        // the same id again: gone; advice only: refused; nothing written either time
        const again = yield* applyFix(root, gone.fix!.id)
        assert.isFalse(again.applied)
        assert.include(again.message, "no longer there")
        const advice = yield* applyFix(root, broken.fix!.id)
        assert.isFalse(advice.applied)
        assert.include(advice.message, "does not repair")
        assert.strictEqual(NodeFs.readFileSync(`${memoryDir}/MEMORY.md`, "utf8"), index)

        // all of them: what `memdir doctor --fix` does
        const all = yield* applyFix(root, ALL_SAFE_FIXES)
        assert.isTrue(all.applied)
        assert.lengthOf(all.changes, 2)
        const after = yield* health(root)
        assert.strictEqual(after.summary.fixable, 0)
        assert.deepStrictEqual(after.findings.map((f) => f.code), ["invalid-frontmatter"])
        assert.isFalse((yield* applyFix(root, ALL_SAFE_FIXES)).applied)
      }).pipe(Effect.provide(services)),
    60_000
  )

  it.live(
    "a failed background run and records that cannot be read are findings, never a failure",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const memoryDir = `${dir}/memory`
        const root = { memoryDir }
        put(memoryDir, "project_api.md", text("API", "API versioning", "v1 is frozen.\n"))
        put(memoryDir, "MEMORY.md", "- [API](project_api.md) — API versioning\n")
        assert.deepStrictEqual((yield* health(root)).findings, [])
        // a memory directory not made yet (a new project): nothing wrong, nothing to fix
        const fresh = yield* health({ memoryDir: `${dir}/not-yet`, teamEnabled: true })
        assert.deepStrictEqual(fresh.findings, [])
        assert.deepStrictEqual(fresh.team, {
          enabled: true,
          synced: false,
          ahead: 0,
          behind: 0,
          pending: [],
          conflicts: []
        })
        assert.isFalse((yield* applyFix({ memoryDir: `${dir}/not-yet` }, ALL_SAFE_FIXES)).applied)

        const refused = new ModelError({
          kind: "authentication",
          role: "extractor",
          model: "claude-x",
          status: 401,
          detail: "invalid x-api-key"
        })
        yield* Effect.ignore(BackgroundRuns.track({ memoryDir, session: "s1" }, () => Effect.fail(refused)))
        NodeFs.appendFileSync(`${memoryDir}/.runs/background.jsonl`, "{ half a line\n")
        put(memoryDir, ".dream/2026-12-01T03-00-00Z/report.json", "not json")
        put(memoryDir, ".sessions/s-9.json", "{ half")

        const found = yield* health(root)
        const runs = found.findings.find((f) => f.code === "background-runs")!
        assert.strictEqual(runs.severity, "warning")
        assert.include(runs.message, "the last background run failed: ModelError")
        assert.include(runs.fix!.description, "ANTHROPIC_API_KEY")
        assert.isFalse(runs.fix!.safe)
        const unreadable = found.findings.filter((f) => f.code === "record-unreadable").map((f) => f.where)
        assert.deepStrictEqual(unreadable, [
          ".dream/2026-12-01T03-00-00Z/report.json",
          ".runs/background.jsonl",
          "1 session record in .sessions/"
        ])
        assert.strictEqual(found.findings.at(-1)!.severity, "info")
      }).pipe(Effect.provide(services)),
    60_000
  )
})

const git = (cwd: string, ...args: Array<string>) =>
  execFileSync("git", args, { cwd, encoding: "utf8", env: { PATH: process.env.PATH ?? "", HOME: cwd } })

/** A teammate's team location (`@memdir/testing/Fixtures`), its memory directory made. */
const teammate = (root: string, name: string, remote: string): TeamLocation => {
  const team = Fixtures.teammate(root, name, remote)
  NodeFs.mkdirSync(team.memory.memoryDir, { recursive: true })
  return team
}

describe("health: team sync state", () => {
  it.live(
    "never synced; changes not yet shared; behind after a fetch; a teammate's conflicting version",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const remote = `${dir}/remote.git`
        git(dir, "init", "-q", "--bare", "-b", "main", remote)
        const alice = teammate(dir, "alice", remote)
        const bob = teammate(dir, "bob", remote)
        const rootOf = (t: TeamLocation) => ({ memoryDir: t.memory.memoryDir, teamEnabled: true })
        const sync = (t: TeamLocation) => Effect.flatMap(TeamSync.TeamSync, (s) => s.sync(t))
        const write = (t: TeamLocation, body: string) =>
          Effect.flatMap(
            MemoryStore.MemoryStore,
            (store) => store.write(rootOf(t), "team/project_ci.md", text("CI", "How CI runs", body))
          )

        yield* write(alice, "CI runs on every push.\n")
        const fresh = (yield* health(rootOf(alice))).team!
        assert.deepStrictEqual(
          { synced: fresh.synced, ahead: fresh.ahead, behind: fresh.behind, conflicts: fresh.conflicts },
          { synced: false, ahead: 0, behind: 0, conflicts: [] }
        )
        yield* sync(alice)
        const synced = (yield* health(rootOf(alice))).team!
        assert.isTrue(synced.synced)
        assert.deepStrictEqual([synced.ahead, synced.behind, synced.pending], [0, 0, []])
        assert.isAbove(Date.parse(synced.lastSync!), Date.now() - 60_000)
        assert.match(synced.head!, /^[0-9a-f]{40}$/)

        yield* sync(bob)
        yield* write(bob, "CI runs nightly.\n")
        yield* sync(bob)
        yield* write(alice, "CI runs on every push and on tags.\n")
        const pending = (yield* health(rootOf(alice))).team!
        assert.include(pending.pending, "team/project_ci.md")
        // what a sync's fetch brings in, before it is merged: bob's commit is one alice does not have
        git(
          alice.memory.memoryDir,
          "--git-dir",
          ".team.git",
          "fetch",
          "-q",
          remote,
          "+refs/heads/main:refs/memdir/incoming"
        )
        assert.strictEqual((yield* health(rootOf(alice))).team!.behind, 1)

        // both edited the memory: the sync keeps alice's and bob's side by side until someone merges them
        yield* sync(alice)
        const conflicted = yield* health(rootOf(alice))
        assert.lengthOf(conflicted.team!.conflicts, 1)
        assert.match(conflicted.team!.conflicts[0]!, /^team\/project_ci\.conflict-[0-9a-f]+\.md$/)
        assert.isTrue(conflicted.findings.some((f) => f.code === "team-conflict"))
        assert.deepStrictEqual([conflicted.team!.ahead, conflicted.team!.behind], [0, 0])

        // a sync that committed but could not reach the remote: one commit not yet shared
        yield* write(alice, "CI runs on every push, on tags and nightly.\n")
        yield* Effect.flip(sync({ ...alice, remote: `${dir}/gone.git` }))
        const unshared = (yield* health(rootOf(alice))).team!
        assert.deepStrictEqual([unshared.ahead, unshared.behind, unshared.pending], [1, 0, []])
      }).pipe(Effect.provide(services)),
    60_000
  )
})
