/**
 * The operations every door uses (Operations.ts), one contract suite run on the live services over real temp
 * directories and on the same services over the in-memory world (`TestMemdir`): each request
 * and result checked against its Schema, each operation's behaviour and typed errors, and the one edit's rules —
 * exactly one occurrence (or `replaceAll`), a missing, repeated or unchanged text refused with nothing written, and
 * a change landing between the edit's read and its write refused, never overwritten.
 */
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Path from "effect/Path"
import * as Schema from "effect/Schema"
import * as os from "node:os"
import type { EditMatchError } from "../src/Errors.js"
import { memoryVersion } from "../src/Memory.js"
import * as MemoryFs from "../src/MemoryFs.js"
import * as MemoryIndex from "../src/MemoryIndex.js"
import * as MemoryStore from "../src/MemoryStore.js"
import * as Operations from "../src/Operations.js"
import * as Recall from "../src/Recall.js"
import * as Scanner from "../src/Scanner.js"
import * as Selector from "../src/Selector.js"
import * as Staleness from "../src/Staleness.js"
import * as TeamGuard from "../src/TeamGuard.js"

const live = Recall.layer.pipe(
  Layer.provideMerge(Layer.mergeAll(MemoryStore.layerNode, Selector.layer, Scanner.layerNode, Staleness.layer)),
  Layer.provideMerge(MemoryIndex.layer),
  Layer.provideMerge(NodeServices.layer)
)

/** The same services over the in-memory `MemoryFs`, as TestMemdir. */
const inMemory = Recall.layer.pipe(
  Layer.provideMerge(
    MemoryStore.layerWithContainment.pipe(
      Layer.provideMerge(
        Layer.mergeAll(Scanner.layer, MemoryIndex.layerOver, TeamGuard.layerOver, Staleness.layer, Selector.layer)
      )
    )
  ),
  Layer.provideMerge(Layer.merge(MemoryFs.layerMemory(), Path.layer))
)

type World =
  | MemoryStore.MemoryStore
  | Recall.RecallSession
  | Staleness.Staleness
  | Scanner.Scanner
  | MemoryFs.MemoryFs
  | Path.Path

/** The same contract on the disk and in memory (a scratch directory made through either world's `MemoryFs`). */
const worlds: ReadonlyArray<readonly [string, Layer.Layer<World>]> = [["on disk", live], ["in memory", inMemory]]

const memoryFile = (name: string, description: string, type = "feedback", body = "The rule.\n") =>
  `---\nname: ${name}\ndescription: ${description}\ntype: ${type}\n---\n\n${body}`

/** A fresh memory directory (team memory on unless told) with its files' helpers, through either world's `MemoryFs`. */
const scratch = (teamEnabled = true) =>
  Effect.gen(function*() {
    const fs = yield* MemoryFs.MemoryFs
    const path = yield* Path.Path
    const base = path.join(os.tmpdir(), `memdir-ops-${process.pid}-${Math.random().toString(16).slice(2)}`)
    yield* Effect.acquireRelease(fs.makeDirectory(base), () => Effect.ignore(fs.remove(base, { recursive: true })))
    const memoryDir = path.join(yield* fs.realPath(base), "m")
    yield* fs.makeDirectory(memoryDir)
    const root: Operations.MemoryRoot = { memoryDir, teamEnabled }
    return {
      root,
      read: (file: string) =>
        Effect.map(fs.readFile(path.join(memoryDir, file), { maxBytes: 1 << 20 }), (read) => read.text),
      exists: (file: string) => fs.exists(path.join(memoryDir, file)),
      plant: (file: string, text: string) => fs.writeFileAtomic(path.join(memoryDir, file), text)
    }
  })

/** A result is what its Schema says (the doors encode it as their wire's JSON). */
const conforms = <S extends Schema.Top>(schema: S, value: unknown) =>
  assert.doesNotThrow(() => Schema.decodeUnknownSync(Schema.toType(schema))(value))

const testing = {
  type: "feedback" as const,
  name: "Testing policy",
  description: "Integration tests hit a real database",
  body: "Use the docker test database.\nWhy: a mock hid a broken migration.\n"
}

for (const [world, services] of worlds) {
  describe(`Operations (${world}): write, read, list, search, recall`, () => {
    it.effect("write creates a memory and its index line, then updates it (never a duplicate)", () =>
      Effect.gen(function*() {
        const { read, root } = yield* scratch()
        const created = yield* Operations.write(root, testing)
        conforms(Operations.WriteResult, created)
        assert.deepStrictEqual(
          { path: created.path, scope: created.scope, created: created.created, warnings: created.warnings },
          { path: "feedback_testing_policy.md", scope: "private", created: true, warnings: [] }
        )
        assert.strictEqual(created.version, memoryVersion(yield* read(created.path)))
        assert.include(yield* read("MEMORY.md"), "(feedback_testing_policy.md)")
        const updated = yield* Operations.write(root, { ...testing, body: "Only the docker database.\n" })
        assert.strictEqual(updated.path, created.path)
        assert.isFalse(updated.created)
        assert.strictEqual((yield* read("MEMORY.md")).split("feedback_testing_policy.md").length - 1, 1)
        // a stale version writes nothing
        const stale = yield* Effect.flip(
          Operations.write(root, { ...testing, body: "x\n", ifVersion: created.version })
        )
        assert.strictEqual(stale._tag, "VersionConflictError")
        assert.include(yield* read(created.path), "Only the docker database.")
        const team = yield* Operations.write(root, { ...testing, scope: "team" })
        assert.deepStrictEqual([team.path, team.scope], ["team/feedback_testing_policy.md", "team"])
        assert.include(yield* read("team/MEMORY.md"), "(feedback_testing_policy.md)")
      }).pipe(Effect.provide(services)))

    it.effect("write follows the location's memoryLayout setting (nested: type under metadata:)", () =>
      Effect.gen(function*() {
        const { read, root } = yield* scratch()
        const flat = yield* Operations.write(root, testing)
        assert.match(yield* read(flat.path), /^type: feedback$/m)
        const nested = yield* Operations.write(root, { ...testing, type: "user", name: "Nested" }, { layout: "nested" })
        const text = yield* read(nested.path)
        assert.match(text, /^metadata:\n(?: .*\n)* +type: user$/m)
        assert.notMatch(text, /^type:/m)
      }).pipe(Effect.provide(services)))

    it.effect("write to team scope while team memory is off is refused, nothing written", () =>
      Effect.gen(function*() {
        const { exists, root } = yield* scratch(false)
        const refused = yield* Effect.flip(Operations.write(root, { ...testing, scope: "team" }))
        assert.strictEqual(refused._tag, "TeamMemoryDisabledError")
        assert.isFalse(yield* exists("team"))
      }).pipe(Effect.provide(services)))

    it.effect("read gives the whole file, its frontmatter, body, age and version; a missing memory is not found", () =>
      Effect.gen(function*() {
        const { plant, root } = yield* scratch()
        const text = memoryFile("Dashboards", "Checkout latency lives in grafana", "reference", "grafana/d/checkout\n")
        yield* plant("reference_dashboards.md", text)
        const read = yield* Operations.read(root, { path: "reference_dashboards.md" })
        conforms(Operations.ReadResult, read)
        assert.strictEqual(read.content, text)
        assert.deepStrictEqual(read.frontmatter, {
          name: "Dashboards",
          description: "Checkout latency lives in grafana",
          type: "reference"
        })
        assert.strictEqual(read.body, "grafana/d/checkout\n")
        assert.deepStrictEqual([read.age, read.caveat, read.version], ["today", null, memoryVersion(text)])
        const missing = yield* Effect.flip(Operations.read(root, { path: "nothing.md" }))
        assert.strictEqual(missing._tag, "MemoryNotFoundError")
        const outside = yield* Effect.flip(Operations.read(root, { path: "../outside.md" }))
        assert.strictEqual(outside._tag, "PathTraversalError")
      }).pipe(Effect.provide(services)))

    it.effect("list and search give headers by scope and type; search ranks by the query", () =>
      Effect.gen(function*() {
        const { root } = yield* scratch()
        yield* Operations.write(root, testing)
        yield* Operations.write(root, {
          type: "reference",
          name: "Dashboards",
          description: "Checkout latency dashboards live in grafana",
          body: "grafana/d/checkout\n"
        })
        yield* Operations.write(root, { ...testing, name: "Team testing", scope: "team" })
        const all = yield* Operations.list(root, {})
        conforms(Operations.ListResult, all)
        assert.isTrue(all.teamEnabled)
        assert.sameMembers(all.memories.map((m) => m.path), [
          "feedback_testing_policy.md",
          "reference_dashboards.md",
          "team/feedback_team_testing.md"
        ])
        assert.deepStrictEqual(
          (yield* Operations.list(root, { scope: "team" })).memories.map((m) => [m.path, m.scope, m.age]),
          [["team/feedback_team_testing.md", "team", "today"]]
        )
        assert.deepStrictEqual(
          (yield* Operations.list(root, { type: "reference" })).memories.map((m) => m.path),
          ["reference_dashboards.md"]
        )
        const found = yield* Operations.search(root, { query: "grafana latency dashboards", scope: "private" })
        conforms(Operations.SearchResult, found)
        assert.strictEqual(found.results[0]?.path, "reference_dashboards.md")
        assert.isTrue(found.results[0]!.relevant)
        const off = yield* Effect.flip(Operations.list({ ...root, teamEnabled: false }, { scope: "team" }))
        assert.strictEqual(off._tag, "TeamMemoryDisabledError")
      }).pipe(Effect.provide(services)))

    it.effect("recall gives the one recalled-memory shape (links included), never the same memory twice", () =>
      Effect.gen(function*() {
        const { root } = yield* scratch()
        yield* Operations.write(root, { ...testing, body: "Use the docker test database. See [[Dashboards]].\n" })
        yield* Operations.write(root, {
          type: "reference",
          name: "Dashboards",
          description: "Checkout latency dashboards live in grafana",
          body: "grafana/d/checkout\n"
        })
        const query = "should the integration tests use a real database or mocks"
        const recalled = yield* Operations.recall(root, { query })
        conforms(Operations.RecallResult, recalled)
        assert.deepStrictEqual(recalled.memories.map((m) => m.path), ["feedback_testing_policy.md"])
        assert.deepStrictEqual(recalled.memories[0]!.links, ["reference_dashboards.md"])
        assert.include(recalled.memories[0]!.content, "docker test database")
        assert.deepStrictEqual((yield* Operations.recall(root, { query })).memories, [])
        const skipped = yield* Operations.recall(root, { query: "thanks" })
        assert.strictEqual(skipped.skipped, "one-word-prompt")
      }).pipe(Effect.provide(services)))
  })

  describe(`Operations (${world}): the one edit`, () => {
    it.effect("replaces the one occurrence; its index line follows; every occurrence only with replaceAll", () =>
      Effect.gen(function*() {
        const { read, root } = yield* scratch()
        const { path } = yield* Operations.write(root, { ...testing, body: "Ask Ana. Then Ana again.\n" })
        const before = yield* read(path)
        const edited = yield* Operations.edit(root, {
          path,
          old: "description: Integration tests hit a real database",
          new: "description: Integration tests hit the docker database"
        })
        conforms(Operations.EditResult, edited)
        assert.deepStrictEqual([edited.path, edited.scope, edited.replacements], [path, "private", 1])
        assert.strictEqual(edited.before, before)
        assert.strictEqual(edited.after, yield* read(path))
        assert.strictEqual(edited.version, memoryVersion(edited.after))
        assert.include(yield* read("MEMORY.md"), "Integration tests hit the docker database")
        const all = yield* Operations.edit(root, { path, old: "Ana", new: "Bo", replaceAll: true })
        assert.strictEqual(all.replacements, 2)
        assert.include(all.after, "Ask Bo. Then Bo again.")
      }).pipe(Effect.provide(services)))

    it.effect("a text that does not occur, occurs twice, or equals its replacement is refused; nothing changes", () =>
      Effect.gen(function*() {
        const { read, root } = yield* scratch()
        const { path } = yield* Operations.write(root, { ...testing, body: "zz zz\n" })
        const before = yield* read(path)
        const index = yield* read("MEMORY.md")
        const refusal = (old: string, replacement: string) =>
          Effect.flip(Operations.edit(root, { path, old, new: replacement }))
        const matchError = (old: string, replacement: string) =>
          Effect.map(refusal(old, replacement), (error) => {
            assert.strictEqual(error._tag, "EditMatchError")
            return error as EditMatchError
          })
        const none = yield* matchError("nope", "x")
        assert.deepStrictEqual([none.reason, none.count, none.path], ["no-match", 0, path])
        assert.include(none.message, "does not occur")
        const twice = yield* matchError("zz", "x")
        assert.deepStrictEqual([twice.reason, twice.count], ["multiple-matches", 2])
        assert.include(twice.message, "occurs 2 times")
        const same = yield* matchError("zz zz", "zz zz")
        assert.strictEqual(same.reason, "no-change")
        const broken = yield* refusal("type: feedback", "type: gossip")
        assert.strictEqual(broken._tag, "InvalidMemoryInputError")
        const gone = yield* Effect.flip(Operations.edit(root, { path: "missing.md", old: "a", new: "b" }))
        assert.strictEqual(gone._tag, "MemoryNotFoundError")
        assert.strictEqual(yield* read(path), before)
        assert.strictEqual(yield* read("MEMORY.md"), index)
      }).pipe(Effect.provide(services)))

    it.effect("stamps modified: as every write does, unless verbatim (the memory tool's rule)", () =>
      Effect.gen(function*() {
        const { plant, read, root } = yield* scratch()
        const text = memoryFile("Freeze", "Merge freeze", "project", "From Thursday.\n")
        yield* plant("project_freeze.md", text)
        const verbatim = yield* Operations.edit(root, { path: "project_freeze.md", old: "Thursday", new: "Friday" }, {
          verbatim: true
        })
        assert.strictEqual(verbatim.after, text.replace("Thursday", "Friday"))
        const stamped = yield* Operations.edit(root, { path: "project_freeze.md", old: "Friday", new: "Monday" })
        assert.match(stamped.after, /^modified: \d{4}-\d\d-\d\dT[\d:.]+Z$/m)
        assert.strictEqual(stamped.after.replace(/^modified: .*\n/m, ""), text.replace("Thursday", "Monday"))
        assert.strictEqual(yield* read("project_freeze.md"), stamped.after)
      }).pipe(Effect.provide(services)))

    it.effect("a stale ifVersion is refused with the current text; the current one edits", () =>
      Effect.gen(function*() {
        const { read, root } = yield* scratch()
        const written = yield* Operations.write(root, testing)
        yield* Operations.edit(root, { path: written.path, old: "docker", new: "staging" })
        const current = yield* read(written.path)
        const stale = yield* Effect.flip(
          Operations.edit(root, { path: written.path, old: "staging", new: "prod", ifVersion: written.version })
        )
        assert.strictEqual(stale._tag, "VersionConflictError")
        if (stale._tag !== "VersionConflictError") return
        assert.deepStrictEqual([stale.current, stale.content], [memoryVersion(current), current])
        assert.strictEqual(yield* read(written.path), current)
        const ok = yield* Operations.edit(root, {
          path: written.path,
          old: "staging",
          new: "prod",
          ifVersion: memoryVersion(current)
        })
        assert.include(ok.after, "Use the prod test database.")
      }).pipe(Effect.provide(services)))

    it.effect("a change landing between the edit's read and its write is refused, never overwritten", () =>
      Effect.gen(function*() {
        const { read, root } = yield* scratch()
        const written = yield* Operations.write(root, testing)
        const live = yield* MemoryStore.MemoryStore
        // another writer gets in after the edit has read the memory, before its write takes the lock
        let raced = false
        const racing = MemoryStore.MemoryStore.of({
          ...live,
          write: (at, key, content, options) =>
            Effect.suspend(() => {
              if (raced) return live.write(at, key, content, options)
              raced = true
              return live.write(at, key, (text) => (text ?? "").replace("docker", "other writer's")).pipe(
                Effect.andThen(live.write(at, key, content, options))
              )
            })
        })
        const refused = yield* Effect.flip(
          Operations.edit(root, { path: written.path, old: "Why: a mock", new: "Why: mocks" }).pipe(
            Effect.provideService(MemoryStore.MemoryStore, racing)
          )
        )
        assert.isTrue(raced)
        assert.strictEqual(refused._tag, "VersionConflictError")
        assert.include(refused.message, "changed while it was being edited")
        const now = yield* read(written.path)
        assert.include(now, "Use the other writer's test database.")
        assert.include(now, "Why: a mock hid")
      }).pipe(Effect.provide(services)))

    it.effect("a team edit keeps the team rules: a secret is refused, the team index follows", () =>
      Effect.gen(function*() {
        const { read, root } = yield* scratch()
        const team = yield* Operations.write(root, { ...testing, scope: "team" })
        const secret = yield* Effect.flip(Operations.edit(root, {
          path: team.path,
          old: "docker test database",
          new: `database with token ghp_${"a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"}`
        }))
        assert.strictEqual(secret._tag, "SecretDetectedError")
        assert.include(yield* read(team.path), "docker test database")
        yield* Operations.edit(root, {
          path: team.path,
          old: "description: Integration tests hit a real database",
          new: "description: Team tests hit the docker database"
        })
        assert.include(yield* read("team/MEMORY.md"), "Team tests hit the docker database")
        const off = yield* Effect.flip(
          Operations.edit({ ...root, teamEnabled: false }, { path: team.path, old: "Team", new: "All" })
        )
        assert.strictEqual(off._tag, "TeamMemoryDisabledError")
      }).pipe(Effect.provide(services)))
  })

  describe(`Operations (${world}): delete, rename`, () => {
    it.effect("delete removes the file and its index line; a missing memory is not found", () =>
      Effect.gen(function*() {
        const { exists, read, root } = yield* scratch()
        const { path } = yield* Operations.write(root, testing)
        const text = yield* read(path)
        const removed = yield* Operations.delete(root, { path })
        conforms(Operations.DeleteResult, removed)
        assert.deepStrictEqual(removed, { path, fileRemoved: true, indexLinesRemoved: 1, before: text })
        assert.isFalse(yield* exists(path))
        assert.notInclude(yield* read("MEMORY.md"), path)
        assert.strictEqual((yield* Effect.flip(Operations.remove(root, { path })))._tag, "MemoryNotFoundError")
      }).pipe(Effect.provide(services)))

    it.effect("rename moves the memory and its line (into team/ too); never onto an existing memory", () =>
      Effect.gen(function*() {
        const { exists, read, root } = yield* scratch()
        const first = yield* Operations.write(root, testing)
        const other = yield* Operations.write(root, { ...testing, type: "user" })
        const refused = yield* Effect.flip(Operations.rename(root, { path: first.path, newPath: other.path }))
        assert.strictEqual(refused._tag, "PathExistsError")
        assert.include(refused.message, "already exists")
        assert.isTrue(yield* exists(first.path))
        const renamed = yield* Operations.rename(root, { path: first.path, newPath: "feedback_db_tests.md" })
        conforms(Operations.RenameResult, renamed)
        assert.deepStrictEqual(renamed, { from: first.path, path: "feedback_db_tests.md", scope: "private" })
        assert.isFalse(yield* exists(first.path))
        assert.include(yield* read("MEMORY.md"), "(feedback_db_tests.md)")
        assert.notInclude(yield* read("MEMORY.md"), `(${first.path})`)
        const shared = yield* Operations.rename(root, { path: "feedback_db_tests.md", newPath: "team/feedback_db.md" })
        assert.deepStrictEqual([shared.path, shared.scope], ["team/feedback_db.md", "team"])
        assert.include(yield* read("team/MEMORY.md"), "(feedback_db.md)")
      }).pipe(Effect.provide(services)))
  })
}
