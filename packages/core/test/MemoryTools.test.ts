import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Path from "effect/Path"
import { execFileSync } from "node:child_process"
import type * as NodeFs from "node:fs"
import { createRequire, syncBuiltinESMExports } from "node:module"
import type { AgentTool } from "../src/Agent.js"
import { PathTraversalError } from "../src/Errors.js"
import { acquireLock, releaseLock } from "../src/internal/fs/lock.js"
import * as MemoryFs from "../src/MemoryFs.js"
import {
  INDEX_FILE,
  INDEX_LOCK,
  layer as memoryIndexLayer,
  layerWith as memoryIndexLayerWith
} from "../src/MemoryIndex.js"
import * as MemoryStore from "../src/MemoryStore.js"
import { boundText, LIST_MAX_ENTRIES, make, type MemoryToolsOptions, READ_MAX_LINES } from "../src/MemoryTools.js"
import { layerNode as scannerLayer, Scanner } from "../src/Scanner.js"
import { layer as teamGuardLayer, type TeamGuard, TeamGuard as TeamGuardTag } from "../src/TeamGuard.js"

const services = MemoryStore.layerNode.pipe(
  Layer.provideMerge(Layer.mergeAll(memoryIndexLayer, scannerLayer)),
  Layer.provideMerge(NodeServices.layer)
)

const memoryFile = (name: string, description: string, type = "feedback", body = "The rule.\n") =>
  `---\nname: ${name}\ndescription: ${description}\ntype: ${type}\n---\n\n${body}`

/** A scratch tree: <scratch>/memory (the memory dir), <scratch>/project, <scratch>/outside. */
const sandbox = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const scratch = yield* fs.realPath(yield* fs.makeTempDirectoryScoped({ prefix: "memdir-tools-" }))
  const memoryDir = path.join(scratch, "memory")
  const project = path.join(scratch, "project")
  const outside = path.join(scratch, "outside")
  for (const dir of [memoryDir, project, outside]) yield* fs.makeDirectory(dir, { recursive: true })
  yield* fs.writeFileString(path.join(outside, "secret.md"), memoryFile("Secret", "outside the sandbox"))
  return { scratch, memoryDir, project, outside }
})

const toolsetFor = (options: MemoryToolsOptions) =>
  Effect.gen(function*() {
    const toolset = yield* make(options)
    const call = (name: string, input: unknown) =>
      Effect.gen(function*() {
        const tool: AgentTool | undefined = toolset.tools.find((t) => t.definition.name === name)
        if (tool === undefined) return yield* Effect.die(new Error(`no tool ${name}`))
        return yield* tool.run(input)
      })
    return { ...toolset, call }
  })

/**
 * The `node:fs` calls `lstat` and `open` (synchronous and promise forms) while `effect` runs, by path: the module's
 * functions are wrapped and `syncBuiltinESMExports` makes every `import { lstatSync } from "node:fs"` see the
 * wrappers, so the calls counted are the system calls the code makes, whatever layer makes them.
 */
/** `node:fs` itself (its ES module namespace is read-only): what `syncBuiltinESMExports` copies to the namespace. */
const nodeFs = createRequire(import.meta.url)("node:fs") as { -readonly [K in keyof typeof NodeFs]: (typeof NodeFs)[K] }

const countingFsCalls = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const calls = { lstat: [] as Array<string>, open: [] as Array<string> }
      const original = {
        lstatSync: nodeFs.lstatSync,
        openSync: nodeFs.openSync,
        lstat: nodeFs.promises.lstat,
        open: nodeFs.promises.open
      }
      const counted = <F extends (path: NodeFs.PathLike, ...rest: Array<any>) => any>(into: Array<string>, f: F) =>
        ((path: NodeFs.PathLike, ...rest: Array<any>) => {
          into.push(String(path))
          return f(path, ...rest)
        }) as unknown as F
      nodeFs.lstatSync = counted(calls.lstat, original.lstatSync)
      nodeFs.openSync = counted(calls.open, original.openSync)
      nodeFs.promises.lstat = counted(calls.lstat, original.lstat)
      nodeFs.promises.open = counted(calls.open, original.open)
      syncBuiltinESMExports()
      const restore = () => {
        nodeFs.lstatSync = original.lstatSync
        nodeFs.openSync = original.openSync
        nodeFs.promises.lstat = original.lstat
        nodeFs.promises.open = original.open
        syncBuiltinESMExports()
      }
      return { calls, restore }
    }),
    ({ calls }) => Effect.map(effect, (result) => ({ result, calls })),
    ({ restore }) => Effect.sync(restore)
  )

const exists = (file: string) => Effect.flatMap(FileSystem.FileSystem, (fs) => fs.exists(file))
const read = (file: string) => Effect.flatMap(FileSystem.FileSystem, (fs) => fs.readFileString(file))

describe("MemoryTools: memory_write / memory_edit / memory_delete", () => {
  it.effect("writes a memory through the write program: file, index line, change record", () =>
    Effect.gen(function*() {
      const { memoryDir } = yield* sandbox
      const tools = yield* toolsetFor({ memoryDir })
      const first = yield* tools.call("memory_write", {
        path: "feedback_testing.md",
        content: memoryFile("Testing policy", "Integration tests hit a real database")
      })
      assert.isFalse(first.isError, first.content)
      assert.include(first.content, "created feedback_testing.md")
      assert.include(yield* read(`${memoryDir}/feedback_testing.md`), "description: Integration tests hit a real")
      assert.include(yield* read(`${memoryDir}/${INDEX_FILE}`), "- [Testing policy](feedback_testing.md) — Integration")

      const second = yield* tools.call("memory_write", {
        path: "feedback_testing.md",
        content: memoryFile("Testing policy", "Integration tests hit the docker database", "feedback", "Updated.\n")
      })
      assert.isFalse(second.isError, second.content)
      const index = yield* read(`${memoryDir}/${INDEX_FILE}`)
      assert.strictEqual(index.split("\n").filter((l) => l.includes("feedback_testing.md")).length, 1)
      assert.include(index, "docker database")
      const changes = yield* tools.changes
      assert.deepStrictEqual(changes.map((c) => [c.op, c.file]), [["created", "feedback_testing.md"], [
        "updated",
        "feedback_testing.md"
      ]])
      assert.include(changes[1]!.before!, "The rule.")
      assert.include(changes[1]!.after!, "Updated.")
      assert.deepStrictEqual(yield* tools.refusals, [])
    }).pipe(Effect.provide(services)))

  it.effect("accepts an absolute path inside the memory directory", () =>
    Effect.gen(function*() {
      const { memoryDir } = yield* sandbox
      const tools = yield* toolsetFor({ memoryDir })
      const result = yield* tools.call("memory_write", {
        path: `${memoryDir}/user_role.md`,
        content: memoryFile("Role", "Data engineer, new to React", "user")
      })
      assert.isFalse(result.isError, result.content)
      assert.isTrue(yield* exists(`${memoryDir}/user_role.md`))
    }).pipe(Effect.provide(services)))

  it.effect("refuses content without valid frontmatter and writes nothing", () =>
    Effect.gen(function*() {
      const { memoryDir } = yield* sandbox
      const tools = yield* toolsetFor({ memoryDir })
      const noFrontmatter = yield* tools.call("memory_write", { path: "a.md", content: "just text\n" })
      assert.isTrue(noFrontmatter.isError)
      assert.include(noFrontmatter.content, "frontmatter")
      const badType = yield* tools.call("memory_write", {
        path: "b.md",
        content: memoryFile("B", "something", "opinion")
      })
      assert.isTrue(badType.isError)
      assert.include(badType.content, "type must be one of user, feedback, project, reference")
      const notMarkdown = yield* tools.call("memory_write", { path: "c.txt", content: memoryFile("C", "c") })
      assert.isTrue(notMarkdown.isError)
      assert.include(notMarkdown.content, ".md")
      for (const file of ["a.md", "b.md", "c.txt", INDEX_FILE]) assert.isFalse(yield* exists(`${memoryDir}/${file}`))
    }).pipe(Effect.provide(services)))

  it.effect("memory_edit replaces one exact occurrence and keeps the index line in step", () =>
    Effect.gen(function*() {
      const { memoryDir } = yield* sandbox
      const tools = yield* toolsetFor({ memoryDir })
      yield* tools.call("memory_write", {
        path: "project_freeze.md",
        content: memoryFile("Freeze", "Merge freeze next week", "project", "Freeze from Thursday. Ask Ana.\nAna.\n")
      })
      const edit = yield* tools.call("memory_edit", {
        path: "project_freeze.md",
        old_string: "description: Merge freeze next week",
        new_string: "description: Merge freeze 2026-03-05 to 2026-03-09"
      })
      assert.isFalse(edit.isError, edit.content)
      assert.include(yield* read(`${memoryDir}/${INDEX_FILE}`), "Merge freeze 2026-03-05 to 2026-03-09")

      const missing = yield* tools.call("memory_edit", { path: "project_freeze.md", old_string: "zzz", new_string: "" })
      assert.isTrue(missing.isError)
      assert.include(missing.content, "does not occur")
      const ambiguous = yield* tools.call("memory_edit", {
        path: "project_freeze.md",
        old_string: "Ana",
        new_string: "Bo"
      })
      assert.isTrue(ambiguous.isError)
      assert.include(ambiguous.content, "occurs 2 times")
      const all = yield* tools.call("memory_edit", {
        path: "project_freeze.md",
        old_string: "Ana",
        new_string: "Bo",
        replace_all: true
      })
      assert.isFalse(all.isError, all.content)
      assert.notInclude(yield* read(`${memoryDir}/project_freeze.md`), "Ana")

      const before = yield* read(`${memoryDir}/project_freeze.md`)
      const broken = yield* tools.call("memory_edit", {
        path: "project_freeze.md",
        old_string: "type: project",
        new_string: "type: gossip"
      })
      assert.isTrue(broken.isError)
      assert.strictEqual(yield* read(`${memoryDir}/project_freeze.md`), before)
    }).pipe(Effect.provide(services)))

  it.effect("parallel edits of one file (one turn) are applied one after the other: none is lost", () =>
    Effect.gen(function*() {
      const { memoryDir } = yield* sandbox
      const tools = yield* toolsetFor({ memoryDir })
      const body = Array.from({ length: 8 }, (_, i) => `rule ${i}: old`).join("\n")
      yield* tools.call("memory_write", {
        path: "feedback_rules.md",
        content: memoryFile("Rules", "rules", "feedback", body)
      })
      const results = yield* Effect.all(
        Array.from(
          { length: 8 },
          (_, i) =>
            tools.call("memory_edit", {
              path: "feedback_rules.md",
              old_string: `rule ${i}: old`,
              new_string: `rule ${i}: new`
            })
        ),
        { concurrency: "unbounded" }
      )
      assert.isTrue(results.every((r) => !r.isError), results.map((r) => r.content).join("\n"))
      const text = yield* read(`${memoryDir}/feedback_rules.md`)
      assert.notInclude(text, ": old")
      assert.strictEqual(text.split(": new").length - 1, 8)
    }).pipe(Effect.provide(services)))

  it.effect("memory_delete is offered only when enabled, and removes file and index line", () =>
    Effect.gen(function*() {
      const { memoryDir } = yield* sandbox
      const extractor = yield* toolsetFor({ memoryDir })
      assert.notInclude(extractor.tools.map((t) => t.definition.name), "memory_delete")
      yield* extractor.call("memory_write", { path: "feedback_x.md", content: memoryFile("X", "x rule") })

      const dream = yield* toolsetFor({ memoryDir, allowDelete: true })
      const result = yield* dream.call("memory_delete", { path: "feedback_x.md" })
      assert.isFalse(result.isError, result.content)
      assert.isFalse(yield* exists(`${memoryDir}/feedback_x.md`))
      assert.notInclude(yield* read(`${memoryDir}/${INDEX_FILE}`), "feedback_x.md")
      const [change] = yield* dream.changes
      assert.strictEqual(change!.op, "deleted")
      assert.include(change!.before!, "x rule")
      const index = yield* dream.call("memory_delete", { path: INDEX_FILE })
      assert.isTrue(index.isError)
      assert.isTrue(yield* exists(`${memoryDir}/${INDEX_FILE}`))
    }).pipe(Effect.provide(services)))

  it.live("a write that cannot take the index lock is an error answer and an I/O failure for the caller", () =>
    Effect.gen(function*() {
      const { memoryDir } = yield* sandbox
      const held = yield* acquireLock(`${memoryDir}/${INDEX_LOCK}`)
      const tools = yield* toolsetFor({ memoryDir }).pipe(
        Effect.provide(memoryIndexLayerWith({ lock: { timeout: "200 millis" } }))
      )
      const result = yield* tools.call("memory_write", { path: "feedback_y.md", content: memoryFile("Y", "y") })
      yield* releaseLock(held)
      assert.isTrue(result.isError)
      const failures = yield* tools.ioFailures
      assert.strictEqual(failures.length, 1)
      assert.strictEqual(failures[0]!.error._tag, "LockTimeoutError")
      assert.isFalse(yield* exists(`${memoryDir}/feedback_y.md`))
    }).pipe(Effect.scoped, Effect.provide(services)))
})

describe("MemoryTools: the sandbox refuses, says why, and logs it", () => {
  it.effect("paths that leave the memory directory, by string or by symlink", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const { memoryDir, outside, scratch } = yield* sandbox
      yield* fs.symlink(outside, `${memoryDir}/evil`)
      yield* fs.symlink(`${outside}/secret.md`, `${memoryDir}/link.md`)
      yield* fs.symlink(`${scratch}/nowhere.md`, `${memoryDir}/dangling.md`)
      yield* fs.symlink(`${memoryDir}/loop-b.md`, `${memoryDir}/loop-a.md`)
      yield* fs.symlink(`${memoryDir}/loop-a.md`, `${memoryDir}/loop-b.md`)
      yield* fs.makeDirectory(`${scratch}/memory-evil`)
      const tools = yield* toolsetFor({ memoryDir })
      const content = memoryFile("Evil", "should never be written")

      const attempts: ReadonlyArray<readonly [string, unknown, string]> = [
        ["memory_write", { path: "../x.md", content }, "escapes-root"],
        ["memory_write", { path: "sub/../../x.md", content }, "escapes-root"],
        ["memory_write", { path: `${outside}/x.md`, content }, "absolute"],
        ["memory_write", { path: `${scratch}/memory-evil/x.md`, content }, "absolute"],
        ["memory_write", { path: "~/x.md", content }, "absolute"],
        ["memory_write", { path: "evil/x.md", content }, "symlink-escape"],
        ["memory_write", { path: "dangling.md", content }, "dangling-symlink"],
        ["memory_read", { path: "link.md" }, "symlink-escape"],
        ["memory_read", { path: "evil/secret.md" }, "symlink-escape"],
        ["memory_read", { path: "loop-a.md" }, "symlink-loop"],
        ["memory_edit", { path: "link.md", old_string: "outside", new_string: "inside" }, "symlink-escape"],
        ["memory_list", { dir: "evil" }, "symlink-escape"],
        ["memory_write", { path: "a\u0000.md", content }, "null-byte"],
        ["memory_write", { path: "sub\\..\\..\\x.md", content }, "backslash"],
        ["memory_write", { path: "%2e%2e%2fx.md", content }, "encoded-traversal"],
        ["memory_write", { path: INDEX_FILE, content }, "index-file"],
        ["memory_write", { path: "memory.md", content }, "index-file"],
        ["memory_edit", { path: INDEX_FILE, old_string: "a", new_string: "b" }, "index-file"],
        ["memory_write", { path: ".extract/session.md", content }, "hidden"],
        ["memory_write", { path: ".memory-index.lock/owner.md", content }, "hidden"],
        ["memory_write", { path: "logs/2026/03/2026-03-05.md", content }, "logs-append-only"],
        ["memory_write", { path: "team/feedback_x.md", content }, "team-disabled"],
        ["memory_read", { path: "team/feedback_x.md" }, "team-disabled"]
      ]
      for (const [tool, input, reason] of attempts) {
        const result = yield* tools.call(tool, input)
        assert.isTrue(result.isError, `${tool} ${JSON.stringify(input)} was not refused: ${result.content}`)
        assert.include(result.content, `refused`, `${tool} ${JSON.stringify(input)}`)
        assert.include(result.content, reason, `${tool} ${JSON.stringify(input)}: ${result.content}`)
      }
      const refusals = yield* tools.refusals
      assert.deepStrictEqual(refusals.map((r) => r.reason), attempts.map(([, , reason]) => reason))
      assert.deepStrictEqual(refusals.map((r) => r.tool), attempts.map(([tool]) => tool))

      // Nothing escaped: outside is as it was, nothing was written next to the memory directory.
      assert.deepStrictEqual((yield* fs.readDirectory(outside)).sort(), ["secret.md"])
      assert.isFalse(yield* exists(`${scratch}/x.md`))
      assert.deepStrictEqual(yield* fs.readDirectory(`${scratch}/memory-evil`), [])
      assert.include(yield* read(`${outside}/secret.md`), "outside the sandbox")
      assert.isFalse(yield* exists(`${memoryDir}/${INDEX_FILE}`))
      assert.deepStrictEqual(yield* tools.changes, [])
    }).pipe(Effect.provide(services)))

  it.effect("MEMORY.md may be edited only when allowed, and only within its caps", () =>
    Effect.gen(function*() {
      const { memoryDir } = yield* sandbox
      const dream = yield* toolsetFor({ memoryDir, allowIndexEdit: true, allowDelete: true })
      yield* dream.call("memory_write", { path: "feedback_a.md", content: memoryFile("A", "first rule") })
      const pruned = yield* dream.call("memory_edit", {
        path: INDEX_FILE,
        old_string: "first rule",
        new_string: "the first rule"
      })
      assert.isFalse(pruned.isError, pruned.content)
      assert.include(yield* read(`${memoryDir}/${INDEX_FILE}`), "the first rule")
      const bloated = yield* dream.call("memory_edit", {
        path: INDEX_FILE,
        old_string: "the first rule",
        new_string: "x".repeat(30_000)
      })
      assert.isTrue(bloated.isError)
      assert.include(bloated.content, "limit")
      assert.notInclude(yield* read(`${memoryDir}/${INDEX_FILE}`), "xxxx")
      const overwrite = yield* dream.call("memory_write", { path: INDEX_FILE, content: memoryFile("I", "index") })
      assert.isTrue(overwrite.isError)
    }).pipe(Effect.provide(services)))

  it.effect("team paths go through the TeamGuard when one is given", () =>
    Effect.gen(function*() {
      const { memoryDir } = yield* sandbox
      const calls: Array<string> = []
      const store = new Map<string, string>()
      const guard: TeamGuard["Service"] = {
        resolve: (_teamDir, key) =>
          key.includes("..") ?
            Effect.fail(new PathTraversalError({ key, reason: "escapes-root" })) :
            Effect.sync(() => {
              calls.push(`resolve ${key}`)
              return `${memoryDir}/team/${key}`
            }),
        read: (_teamDir, key) =>
          Effect.sync(() => {
            calls.push(`read ${key}`)
            return store.get(key) ?? memoryFile("T", "team rule")
          }),
        write: (_teamDir, key, content) =>
          Effect.sync(() => {
            calls.push(`write ${key}`)
            store.set(key, content)
            return `${memoryDir}/team/${key}`
          }),
        audit: () => Effect.succeed([])
      }
      // the guard reaches the tools through the memory store (the one door), team memory on; a store of its own
      // (`Layer.fresh`): the test's layers already built one with the real guard, which the memo map would hand back
      const storeContext = yield* Layer.build(Layer.fresh(
        MemoryStore.layerWithContainment.pipe(
          Layer.provide(Layer.mergeAll(MemoryFs.layer, Layer.succeed(TeamGuardTag, guard), memoryIndexLayer)),
          Layer.provide(NodeServices.layer)
        )
      ))
      const tools = yield* toolsetFor({ memoryDir, team: true }).pipe(Effect.provide(storeContext))
      const written = yield* tools.call("memory_write", {
        path: "team/reference_tracker.md",
        content: memoryFile("Tracker", "Bugs are in LINEAR project ENG", "reference")
      })
      assert.isFalse(written.isError, written.content)
      assert.include(calls, "write reference_tracker.md")
      const readBack = yield* tools.call("memory_read", { path: "team/reference_tracker.md" })
      assert.include(readBack.content, "LINEAR project ENG")
      const invalid = yield* tools.call("memory_write", { path: "team/x.md", content: "no frontmatter" })
      assert.isTrue(invalid.isError)
      assert.notInclude(calls, "write x.md")
    }).pipe(Effect.provide(services)))
})

describe("MemoryTools: team memory through the real TeamGuard", () => {
  it.effect("writes and reads under team/, refuses a team symlink pointing out", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const { memoryDir, outside } = yield* sandbox
      yield* fs.makeDirectory(`${memoryDir}/team`)
      yield* fs.symlink(outside, `${memoryDir}/team/evil`)
      const tools = yield* toolsetFor({ memoryDir, team: true })
      const content = memoryFile("Tracker", "Bugs are in Linear project SHOP", "reference")
      const written = yield* tools.call("memory_write", { path: "team/reference_tracker.md", content })
      assert.isFalse(written.isError, written.content)
      // As written, plus the `modified:` every memdir write stamps.
      assert.strictEqual(
        (yield* read(`${memoryDir}/team/reference_tracker.md`)).replace(/^modified: .*\n/m, ""),
        content
      )
      const readBack = yield* tools.call("memory_read", { path: "team/reference_tracker.md" })
      assert.include(readBack.content, "Linear project SHOP")
      // The last one passes memdir's own string checks; the guard's Unicode layer refuses it.
      for (const key of ["team/evil/x.md", "team/../../x.md", "team/%2e%2e/x.md", "team/\uff0e\uff0e\uff0fx.md"]) {
        const refused = yield* tools.call("memory_write", { path: key, content })
        assert.isTrue(refused.isError, `${key}: ${refused.content}`)
        assert.include(refused.content, "refused")
      }
      assert.deepStrictEqual((yield* fs.readDirectory(outside)).sort(), ["secret.md"])
      const refusals = yield* tools.refusals
      assert.strictEqual(refusals.length, 4)
      assert.strictEqual(refusals[3]!.reason, "unicode-traversal")
    }).pipe(Effect.provide(teamGuardLayer), Effect.provide(services)))
})

describe("MemoryTools: reading and listing memory", () => {
  it.effect("memory_list shows memories with type and description, not hidden entries", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const { memoryDir } = yield* sandbox
      const tools = yield* toolsetFor({ memoryDir })
      yield* tools.call("memory_write", { path: "feedback_a.md", content: memoryFile("A", "first rule") })
      yield* fs.makeDirectory(`${memoryDir}/.extract`)
      yield* fs.writeFileString(`${memoryDir}/.extract/s.json`, "{}")
      yield* fs.makeDirectory(`${memoryDir}/team`)
      yield* fs.writeFileString(`${memoryDir}/team/feedback_t.md`, memoryFile("T", "team"))
      const listing = yield* tools.call("memory_list", {})
      assert.isFalse(listing.isError, listing.content)
      assert.match(listing.content, /- \[feedback\] feedback_a\.md \(\d{4}-.*\): first rule/)
      assert.include(listing.content, INDEX_FILE)
      assert.notInclude(listing.content, ".extract")
      assert.notInclude(listing.content, "team/")
    }).pipe(Effect.provide(services)))

  // live clock: the `modified:` times are compared with now
  it.live("memory_list reads only the heads it shows and describes them as the scan would, past the cap too", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const { memoryDir } = yield* sandbox
      // more memories than one answer shows, and every kind of file a listing meets
      for (let i = 0; i < LIST_MAX_ENTRIES + 40; i++) {
        const name = `feedback_${String(i).padStart(4, "0")}.md`
        yield* fs.writeFileString(`${memoryDir}/${name}`, memoryFile(`R${i}`, `rule ${i}`))
      }
      yield* fs.writeFileString(`${memoryDir}/aa_broken.md`, "---\nname: [unclosed\n---\nbody\n")
      yield* fs.writeFileString(`${memoryDir}/aa_plain.md`, "no header at all\n")
      yield* fs.writeFileString(`${memoryDir}/aa_notes.txt`, "not markdown\n")
      yield* fs.writeFileString(
        `${memoryDir}/aa_dated.md`,
        `---\nname: Dated\ndescription: has its own time\ntype: project\nmodified: 2026-01-02T03:04:05.000Z\n---\n`
      )
      yield* fs.makeDirectory(`${memoryDir}/aa_sub/logs`, { recursive: true })
      yield* fs.writeFileString(`${memoryDir}/aa_sub/user_deep.md`, memoryFile("Deep", "deep one", "user"))
      yield* fs.writeFileString(`${memoryDir}/aa_sub/logs/user_log.md`, memoryFile("Log", "not a memory", "user"))
      yield* fs.writeFileString(`${memoryDir}/aa_sub/${INDEX_FILE}`, memoryFile("Index", "not a memory", "user"))
      yield* fs.makeDirectory(`${memoryDir}/logs/2026/01`, { recursive: true })
      yield* fs.writeFileString(`${memoryDir}/logs/2026/01/2026-01-01.md`, "- a log line\n")
      yield* fs.writeFileString(`${memoryDir}/${INDEX_FILE}`, "- [R0](feedback_0000.md) — rule 0\n")
      yield* fs.symlink(`${memoryDir}/feedback_0001.md`, `${memoryDir}/aa_link.md`)

      const opened: Array<string> = []
      // Every path the listing stats or reads otherwise (a walk's entries are each lstat-ed).
      const statted: Array<string> = []
      const counting = Layer.effect(
        MemoryFs.MemoryFs,
        Effect.map(MemoryFs.MemoryFs, (live) =>
          MemoryFs.MemoryFs.of({
            ...live,
            visitHeads: (paths, visitor) =>
              Effect.suspend(() => {
                opened.push(...paths)
                return live.visitHeads(paths, visitor)
              }),
            lstat: (path) => Effect.suspend(() => (statted.push(path), live.lstat(path))),
            lstatMany: (paths) => Effect.suspend(() => (statted.push(...paths), live.lstatMany(paths))),
            mtimeMany: (paths) => Effect.suspend(() => (statted.push(...paths), live.mtimeMany(paths))),
            readFile: (path, options) => Effect.suspend(() => (statted.push(path), live.readFile(path, options))),
            readHead: (path, max) => Effect.suspend(() => (statted.push(path), live.readHead(path, max))),
            readFileMany: (paths, options) =>
              Effect.suspend(() => (statted.push(...paths), live.readFileMany(paths, options))),
            walk: (root, options) =>
              Effect.tap(live.walk(root, options), (entries) =>
                Effect.sync(() => statted.push(...entries.map((e) => e.absolute))))
          }))
      ).pipe(Layer.provide(MemoryFs.layer))
      // fresh: a store over the counting file system, not the one `services` built and the memo map would reuse
      const countedServices = Layer.fresh(MemoryStore.layerWithContainment.pipe(
        Layer.provideMerge(Layer.mergeAll(memoryIndexLayer, teamGuardLayer)),
        Layer.provideMerge(counting),
        Layer.provideMerge(NodeServices.layer)
      ))
      const listing = yield* Effect.flatMap(toolsetFor({ memoryDir }), (tools) => tools.call("memory_list", {})).pipe(
        Effect.provide(countedServices)
      )
      assert.isFalse(listing.isError, listing.content)

      // What the listing said before it read only its page: every head scanned, the shown entries described.
      const store = yield* MemoryStore.MemoryStore
      const scan = yield* (yield* Scanner).scan(memoryDir)
      const described = new Map(scan.memories.map((m) => [m.path, m]))
      const entries = yield* store.list({ memoryDir })
      const expected = entries.slice(0, LIST_MAX_ENTRIES).map((entry) => {
        const m = described.get(entry.key)
        return m === undefined ?
          `- ${entry.key} (${entry.size} bytes)` :
          `- [${m.type}] ${entry.key} (${new Date(m.writtenAt ?? m.mtime).toISOString()}): ${m.description}`
      })
      const more = entries.length - LIST_MAX_ENTRIES
      assert.isAbove(more, 0)
      assert.strictEqual(listing.content, `${expected.join("\n")}\n[… ${more} more files not shown]`)
      assert.include(listing.content, "- [project] aa_dated.md (2026-01-02T03:04:05.000Z): has its own time")
      assert.include(listing.content, "- [user] aa_sub/user_deep.md (")
      assert.match(listing.content, /- aa_plain\.md \(\d+ bytes\)/)
      assert.match(listing.content, /- aa_sub\/logs\/user_log\.md \(\d+ bytes\)/)
      assert.notInclude(listing.content, "aa_link.md")

      // Only the files on the page were opened, each once (a size from that open's fstat); nothing else was stat-ed.
      assert.deepStrictEqual([...opened].sort(), entries.slice(0, LIST_MAX_ENTRIES).map((e) => e.path).sort())
      assert.notInclude(opened, `${memoryDir}/feedback_0539.md`)
      assert.deepStrictEqual(statted, [])
    }).pipe(Effect.provide(services)))

  it.effect("memory_list takes kinds from the directory entries: no lstat, each shown file opened once", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const { memoryDir, outside } = yield* sandbox
      for (const name of ["feedback_a.md", "project_b.md", "user_c.md"]) {
        yield* fs.writeFileString(`${memoryDir}/${name}`, memoryFile(name, `about ${name}`))
      }
      yield* fs.makeDirectory(`${memoryDir}/sub`)
      yield* fs.writeFileString(`${memoryDir}/sub/reference_d.md`, memoryFile("D", "deep", "reference"))
      yield* fs.writeFileString(`${memoryDir}/notes.txt`, "twelve bytes")
      yield* fs.makeDirectory(`${memoryDir}/.dream`)
      yield* fs.writeFileString(`${memoryDir}/.dream/state.md`, memoryFile("S", "hidden state"))
      yield* fs.symlink(`${outside}/secret.md`, `${memoryDir}/linked.md`)
      execFileSync("mkfifo", [`${memoryDir}/pipe.md`])
      const tools = yield* toolsetFor({ memoryDir })

      const { calls, result } = yield* countingFsCalls(tools.call("memory_list", {}))
      assert.isFalse(result.isError, result.content)
      assert.strictEqual(
        result.content.replace(/\(\d{4}-[^)]*\)/g, "(time)"),
        [
          "- [feedback] feedback_a.md (time): about feedback_a.md",
          "- notes.txt (12 bytes)",
          "- [feedback] project_b.md (time): about project_b.md",
          "- [reference] sub/reference_d.md (time): deep",
          "- [feedback] user_c.md (time): about user_c.md"
        ].join("\n")
      )
      const inside = (paths: ReadonlyArray<string>) => paths.filter((p) => p.startsWith(`${memoryDir}/`)).sort()
      // No lstat at all; each shown file opened once; the link, the FIFO and the hidden directory never touched.
      assert.deepStrictEqual(inside(calls.lstat), [])
      assert.deepStrictEqual(
        inside(calls.open),
        ["feedback_a.md", "notes.txt", "project_b.md", "sub/reference_d.md", "user_c.md"].map((key) =>
          `${memoryDir}/${key}`
        )
      )
    }).pipe(Effect.provide(services)))

  it.effect("memory_read bounds long files and says how to read on", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const { memoryDir } = yield* sandbox
      const body = Array.from({ length: 3000 }, (_, i) => `line ${i + 1}`).join("\n")
      yield* fs.writeFileString(`${memoryDir}/project_long.md`, memoryFile("Long", "long", "project", body))
      const tools = yield* toolsetFor({ memoryDir })
      const first = yield* tools.call("memory_read", { path: "project_long.md" })
      assert.include(first.content, `read on with offset ${READ_MAX_LINES + 1}`)
      const rest = yield* tools.call("memory_read", { path: "project_long.md", offset: READ_MAX_LINES + 1 })
      assert.include(rest.content, "line 3000")
      const missing = yield* tools.call("memory_read", { path: "nope.md" })
      assert.isTrue(missing.isError)
      assert.include(missing.content, "no file nope.md")
    }).pipe(Effect.provide(services)))

  it("boundText cuts by lines and by characters", () => {
    assert.strictEqual(boundText("a\nb\nc\n", { limit: 2 }), "a\nb\n[… lines 1–2 of 3; read on with offset 3]")
    assert.strictEqual(boundText("a\nb\nc\n", { offset: 3 }), "c")
    assert.include(boundText("a\n", { offset: 5 }), "past the end")
    const wide = boundText(Array.from({ length: 10 }, () => "y".repeat(10_000)).join("\n"))
    assert.isBelow(wide.length, 31_000)
    assert.include(wide, "read on with offset")
  })
})

describe("MemoryTools: read-only project tools", () => {
  it.effect("read_file, list_dir and grep stay inside the project", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const { memoryDir, outside, project } = yield* sandbox
      yield* fs.makeDirectory(`${project}/src`)
      yield* fs.makeDirectory(`${project}/node_modules/dep`, { recursive: true })
      yield* fs.makeDirectory(`${project}/.git`)
      yield* fs.writeFileString(`${project}/src/db.ts`, "export const pool = 10\n// TODO: real database\n")
      yield* fs.writeFileString(`${project}/node_modules/dep/index.js`, "database\n")
      yield* fs.writeFileString(`${project}/.git/config`, "database\n")
      yield* fs.writeFileString(`${project}/bin.dat`, "database\u0000\u0001")
      yield* fs.symlink(outside, `${project}/out`)
      const tools = yield* toolsetFor({ memoryDir, projectRoot: project })
      assert.deepStrictEqual(tools.tools.slice(0, 3).map((t) => t.definition.name), ["read_file", "list_dir", "grep"])

      const file = yield* tools.call("read_file", { path: "src/db.ts" })
      assert.isFalse(file.isError, file.content)
      assert.include(file.content, "     1\texport const pool = 10")
      const listing = yield* tools.call("list_dir", {})
      assert.deepStrictEqual(listing.content.split("\n"), [".git/", "bin.dat", "node_modules/", "out@", "src/"])
      const found = yield* tools.call("grep", { pattern: "DATABASE", ignore_case: true })
      assert.strictEqual(found.content, "src/db.ts:2: // TODO: real database")
      const invalid = yield* tools.call("grep", { pattern: "(" })
      assert.isTrue(invalid.isError)
      assert.include(invalid.content, "invalid pattern")
      // A catastrophic-backtracking pattern (hangs a backtracking engine forever) answers at once.
      yield* fs.writeFileString(`${project}/src/aaa.txt`, "a".repeat(40) + "!\n")
      const hostile = yield* tools.call("grep", { pattern: "^(a+)+$", path: "src" })
      assert.strictEqual(hostile.content, "(no matches)")
      const lookaround = yield* tools.call("grep", { pattern: "foo(?=bar)" })
      assert.isTrue(lookaround.isError)
      assert.include(lookaround.content, "lookaround")

      for (
        const [tool, input, reason] of [
          ["read_file", { path: "../outside/secret.md" }, "escapes-root"],
          ["read_file", { path: `${outside}/secret.md` }, "absolute"],
          ["read_file", { path: "out/secret.md" }, "symlink-escape"],
          ["list_dir", { path: "out" }, "symlink-escape"],
          ["grep", { pattern: "sandbox", path: "out" }, "symlink-escape"],
          ["grep", { pattern: "sandbox", path: ".." }, "escapes-root"]
        ] as const
      ) {
        const result = yield* tools.call(tool, input)
        assert.isTrue(result.isError, `${tool} ${JSON.stringify(input)}: ${result.content}`)
        assert.include(result.content, reason)
      }
      assert.strictEqual((yield* tools.refusals).length, 6)
    }).pipe(Effect.provide(services)))
})
