/**
 * The listing batches of `MemoryFs`, live (a real temp dir with links, a FIFO, a hard link, more entries than one
 * lstat batch) and in memory:
 * - `walk`: the same entries in the same order, links reported and never followed, `enter`, `maxDepth` and
 *   `maxEntries` honoured;
 * - `walkKinds`: `walk`'s entries and kinds, with every option, without its lstats;
 * - `lstatMany` and `readFileMany`: per path exactly what `lstat` and `readFile` answer one at a time.
 */
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import { execFileSync } from "node:child_process"
import * as nodeFs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as MemoryFs from "../src/MemoryFs.js"

/** More entries in one directory than one synchronous lstat batch of the live walk holds. */
const MANY = 1300

const scratch = Effect.acquireRelease(
  Effect.sync(() => nodeFs.realpathSync(nodeFs.mkdtempSync(path.join(os.tmpdir(), "memdir-walk-")))),
  (dir) => Effect.sync(() => nodeFs.rmSync(dir, { recursive: true, force: true }))
)

const manyNames = Array.from({ length: MANY }, (_, i) => `n${String(i).padStart(4, "0")}.md`)

/** The tree on disk under `<dir>/m` (and `<dir>/outside`); returns its root and the same tree as an in-memory seed. */
const plant = (dir: string) => {
  const root = path.join(dir, "m")
  const outside = path.join(dir, "outside")
  nodeFs.mkdirSync(path.join(root, "a", "b", "c"), { recursive: true })
  nodeFs.mkdirSync(path.join(root, ".hidden"))
  nodeFs.mkdirSync(path.join(root, "many"))
  nodeFs.mkdirSync(outside, { recursive: true })
  nodeFs.writeFileSync(path.join(outside, "secret.md"), "KEY")
  nodeFs.writeFileSync(path.join(root, "top.md"), "top")
  nodeFs.writeFileSync(path.join(root, "a", "one.md"), "one")
  nodeFs.writeFileSync(path.join(root, "a", "b", "two.md"), "two")
  nodeFs.writeFileSync(path.join(root, "a", "b", "c", "three.md"), "three")
  nodeFs.writeFileSync(path.join(root, ".hidden", "state.json"), "{}")
  for (const name of manyNames) nodeFs.writeFileSync(path.join(root, "many", name), name)
  nodeFs.symlinkSync(outside, path.join(root, "dir-link"))
  nodeFs.symlinkSync(path.join(outside, "secret.md"), path.join(root, "out.md"))
  execFileSync("mkfifo", [path.join(root, "pipe.md")])
  const seed = {
    "/outside/secret.md": "KEY",
    "/m/top.md": "top",
    "/m/a/one.md": "one",
    "/m/a/b/two.md": "two",
    "/m/a/b/c/three.md": "three",
    "/m/.hidden/state.json": "{}",
    ...Object.fromEntries(manyNames.map((name) => [`/m/many/${name}`, name])),
    "/m/dir-link": { symlink: "/outside" },
    "/m/out.md": { symlink: "/outside/secret.md" },
    "/m/pipe.md": { fifo: true }
  } satisfies MemoryFs.MemoryFsSeed
  return { root, seed }
}

const walked = (root: string, options?: MemoryFs.WalkOptions) =>
  Effect.flatMap(MemoryFs.MemoryFs, (fs) => fs.walk(root, options)).pipe(
    Effect.map((entries) => entries.map((e) => `${e.relative}:${e.info.kind}`))
  )

const expectedAll = [
  ".hidden:Directory",
  "a:Directory",
  "dir-link:SymbolicLink",
  "many:Directory",
  "out.md:SymbolicLink",
  "pipe.md:FIFO",
  "top.md:File",
  ".hidden/state.json:File",
  "a/b:Directory",
  "a/one.md:File",
  ...manyNames.map((name) => `many/${name}:File`),
  "a/b/c:Directory",
  "a/b/two.md:File",
  "a/b/c/three.md:File"
]

const notHidden: MemoryFs.WalkOptions = { enter: (_relative, name) => !name.startsWith(".") }

describe("MemoryFs.walk", () => {
  it.effect("live: breadth first, by name, links and FIFOs reported not followed, past one lstat batch", () =>
    Effect.gen(function*() {
      const { root } = plant(yield* scratch)
      assert.deepStrictEqual(yield* walked(root), expectedAll)
      assert.deepStrictEqual(
        yield* walked(root, notHidden),
        expectedAll.filter((e) => !e.startsWith(".hidden"))
      )
      assert.deepStrictEqual(
        yield* walked(root, { maxDepth: 2 }),
        expectedAll.filter((e) => e.split(":")[0]!.split("/").length <= 2)
      )
      assert.deepStrictEqual(yield* walked(root, { maxEntries: 600 }), expectedAll.slice(0, 600))
      const sizes = yield* Effect.flatMap(MemoryFs.MemoryFs, (fs) => fs.walk(path.join(root, "a")))
      assert.deepStrictEqual(
        sizes.filter((e) => e.info.kind === "File").map((e) => [e.relative, e.info.size, e.absolute]),
        [["one.md", 3, path.join(root, "a", "one.md")], ["b/two.md", 3, path.join(root, "a", "b", "two.md")], [
          "b/c/three.md",
          5,
          path.join(root, "a", "b", "c", "three.md")
        ]]
      )
      const missing = yield* Effect.flip(walked(path.join(root, "nothing-here")))
      assert.strictEqual(missing.reason, "NotFound")
    }).pipe(Effect.provide(Layer.mergeAll(MemoryFs.layer, NodeServices.layer))))

  it.effect("in memory: the same entries as the live walk", () =>
    Effect.gen(function*() {
      const { seed } = plant(yield* scratch)
      const inMemory = (options?: MemoryFs.WalkOptions) =>
        walked("/m", options).pipe(Effect.provide(MemoryFs.layerMemory(seed)))
      assert.deepStrictEqual(yield* inMemory(), expectedAll)
      assert.deepStrictEqual(yield* inMemory({ ...notHidden, maxDepth: 2 }), [
        ...expectedAll.filter((e) => !e.startsWith(".hidden") && e.split(":")[0]!.split("/").length <= 2)
      ])
    }))
})

const walkedKinds = (root: string, options?: MemoryFs.WalkOptions) =>
  Effect.flatMap(MemoryFs.MemoryFs, (fs) => fs.walkKinds(root, options)).pipe(
    Effect.map((entries) => entries.map((e) => `${e.relative}:${e.kind}`))
  )

describe("MemoryFs.walkKinds", () => {
  const optionSets: ReadonlyArray<MemoryFs.WalkOptions | undefined> = [
    undefined,
    notHidden,
    { maxDepth: 2 },
    { ...notHidden, maxDepth: 2 },
    { maxEntries: 600 }
  ]

  it.effect("live: walk's entries in walk's order, kinds from the listing, absolute paths, a missing root fails", () =>
    Effect.gen(function*() {
      const { root } = plant(yield* scratch)
      for (const options of optionSets) {
        assert.deepStrictEqual(yield* walkedKinds(root, options), yield* walked(root, options))
      }
      const kinds = yield* Effect.flatMap(MemoryFs.MemoryFs, (fs) => fs.walkKinds(path.join(root, "a")))
      assert.deepStrictEqual(kinds.map((e) => e.absolute), [
        path.join(root, "a", "b"),
        path.join(root, "a", "one.md"),
        path.join(root, "a", "b", "c"),
        path.join(root, "a", "b", "two.md"),
        path.join(root, "a", "b", "c", "three.md")
      ])
      const missing = yield* Effect.flip(walkedKinds(path.join(root, "nothing-here")))
      assert.strictEqual(missing.reason, "NotFound")
    }).pipe(Effect.provide(Layer.mergeAll(MemoryFs.layer, NodeServices.layer))))

  it.effect("in memory: the same entries as the live walk", () =>
    Effect.gen(function*() {
      const { seed } = plant(yield* scratch)
      for (const options of optionSets) {
        const inMemory = walkedKinds("/m", options).pipe(Effect.provide(MemoryFs.layerMemory(seed)))
        const walkedInMemory = walked("/m", options).pipe(Effect.provide(MemoryFs.layerMemory(seed)))
        assert.deepStrictEqual(yield* inMemory, yield* walkedInMemory)
      }
      assert.deepStrictEqual(yield* walkedKinds("/m").pipe(Effect.provide(MemoryFs.layerMemory(seed))), expectedAll)
    }))
})

/** A result as comparable data: the value, or the error's reason and detail. */
const outcome = <A>(result: Result.Result<A, MemoryFs.MemoryFsError> | A | MemoryFs.MemoryFsError) => {
  const value = Result.isResult(result) ? Result.merge(result) : result
  return value instanceof MemoryFs.MemoryFsError ? { reason: value.reason, detail: value.detail } : value
}

describe("MemoryFs.lstatMany / readFileMany", () => {
  it.effect("live: each path answered as lstat and readFile answer it alone (links, FIFOs, hard links, limits)", () =>
    Effect.gen(function*() {
      const fs = yield* MemoryFs.MemoryFs
      const { root } = plant(yield* scratch)
      nodeFs.writeFileSync(path.join(root, "big.md"), "z".repeat(300))
      nodeFs.writeFileSync(path.join(root, "linked.md"), "twice")
      nodeFs.linkSync(path.join(root, "linked.md"), path.join(root, "hard.md"))
      const paths = [
        "top.md",
        "a/one.md",
        "out.md",
        "dir-link",
        "pipe.md",
        "hard.md",
        "big.md",
        "missing.md",
        "a",
        "dir-link/secret.md"
      ].map((p) => path.join(root, p))
      const options = { maxBytes: 100, singleLink: true, within: root }
      const alone = yield* Effect.forEach(paths, (p) => Effect.result(fs.readFile(p, options)))
      const batch = yield* fs.readFileMany(paths, options)
      assert.deepStrictEqual(batch.map(outcome), alone.map(outcome))
      assert.deepStrictEqual(batch.map((r) => r instanceof MemoryFs.MemoryFsError ? r.reason : "ok"), [
        "ok",
        "ok",
        "SymbolicLink",
        "SymbolicLink",
        "NotRegularFile",
        "NotRegularFile",
        "TooLarge",
        "NotFound",
        "NotRegularFile",
        "Escapes"
      ])
      const lstats = yield* fs.lstatMany(paths)
      const lstatAlone = yield* Effect.forEach(paths, (p) => Effect.result(fs.lstat(p)))
      assert.deepStrictEqual(lstats.map(outcome), lstatAlone.map(outcome))
      assert.deepStrictEqual(yield* fs.readFileMany([], options), [])
    }).pipe(Effect.provide(MemoryFs.layer)))

  it.effect.skipIf(process.platform !== "linux")(
    "live: a file longer than its fstat size (a /proc file: size 0) is read whole up to the limit, TooLarge past it",
    () =>
      Effect.gen(function*() {
        const fs = yield* MemoryFs.MemoryFs
        // /proc/self/maps of the process reading it: the same memory map in both reads, several KiB long
        const file = "/proc/self/maps"
        const expected = nodeFs.readFileSync(file, "utf8")
        assert.isAbove(expected.length, 1000)
        assert.strictEqual(nodeFs.statSync(file).size, 0)
        const whole = yield* fs.readFile(file, { maxBytes: 1024 * 1024 })
        assert.strictEqual(whole.text.split("\n")[0], expected.split("\n")[0])
        assert.isAbove(whole.text.length, 1000)
        const batch = yield* fs.readFileMany([file], { maxBytes: 1024 * 1024 })
        assert.strictEqual((batch[0] as { text: string }).text.split("\n")[0], expected.split("\n")[0])
        const capped = yield* Effect.flip(fs.readFile(file, { maxBytes: 100 }))
        assert.strictEqual(capped.reason, "TooLarge")
        assert.include(capped.detail, "grew past 100 bytes")
      }).pipe(Effect.provide(MemoryFs.layer))
  )

  it.effect("in memory: each path answered as lstat and readFile answer it alone", () =>
    Effect.gen(function*() {
      const fs = yield* MemoryFs.MemoryFs
      const paths = ["/m/top.md", "/m/out.md", "/m/pipe.md", "/m/missing.md", "/m/big.md"]
      const options = { maxBytes: 10 }
      const alone = yield* Effect.forEach(paths, (p) => Effect.result(fs.readFile(p, options)))
      assert.deepStrictEqual((yield* fs.readFileMany(paths, options)).map(outcome), alone.map(outcome))
      const lstatAlone = yield* Effect.forEach(paths, (p) => Effect.result(fs.lstat(p)))
      assert.deepStrictEqual((yield* fs.lstatMany(paths)).map(outcome), lstatAlone.map(outcome))
    }).pipe(
      Effect.provide(MemoryFs.layerMemory({
        "/m/top.md": "top",
        "/m/big.md": "z".repeat(300),
        "/m/out.md": { symlink: "/m/top.md" },
        "/m/pipe.md": { fifo: true }
      }))
    ))
})
