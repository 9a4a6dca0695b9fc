/**
 * HeaderCache under the live scanner on real temp directories: a warm scan gives what a scan without the cache gives
 * (every fixture directory of the selector set, headerless files included), an entry is believed only while its
 * file's size and mtime are unchanged, a corrupt or other-version cache is rebuilt, links and FIFOs are never read
 * through it, and recall through `Memdir.layer` stats each file once and still finds a memory outside the 200 newest.
 */
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { HEADER_CACHE_FILE, HEADER_CACHE_VERSION } from "../src/HeaderCache.js"
import * as HeaderCache from "../src/HeaderCache.js"
import * as Memdir from "../src/Memdir.js"
import type { MemoryHeader } from "../src/Memory.js"
import * as MemoryFs from "../src/MemoryFs.js"
import * as Recall from "../src/Recall.js"
import * as Scanner from "../src/Scanner.js"
import * as TermCache from "../src/TermCache.js"
import { SELECTOR_SET } from "./support/selectorSet.js"

const memory = (name: string, description: string, body: string) =>
  `---\nname: ${name}\ndescription: ${description}\ntype: project\n---\n\n${body}\n`

const scratchDir = () => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "memdir-heads-")))

/** The live scanner over the real file system, with a header cache (a fresh one: nothing loaded yet) or without. */
const withCache = Scanner.layer.pipe(Layer.provideMerge(HeaderCache.layer))
const scannerLayer = (cached: boolean) =>
  (cached ? withCache : Scanner.layer).pipe(Layer.provide(MemoryFs.layer), Layer.provide(NodeServices.layer))

const scanIn = (memoryDir: string, cached = true, options?: Scanner.ScanOptions) =>
  Effect.flatMap(Scanner.Scanner, (scanner) => scanner.scan(memoryDir, options)).pipe(
    Effect.provide(scannerLayer(cached))
  )

const readCache = (memoryDir: string) => JSON.parse(fs.readFileSync(path.join(memoryDir, HEADER_CACHE_FILE), "utf8"))
const writeCache = (memoryDir: string, value: unknown) =>
  fs.writeFileSync(path.join(memoryDir, HEADER_CACHE_FILE), typeof value === "string" ? value : JSON.stringify(value))

/** A scan's headers without the size only a cached scan carries. */
const withoutSize = (memories: ReadonlyArray<MemoryHeader>) => memories.map(({ size: _, ...rest }) => rest)

describe("HeaderCache", () => {
  it.effect("a warm scan gives what an uncached scan gives, over every selector-set directory", () =>
    Effect.gen(function*() {
      const copy = scratchDir()
      fs.cpSync(SELECTOR_SET, copy, { recursive: true })
      for (const dir of fs.readdirSync(copy).filter((d) => fs.statSync(path.join(copy, d)).isDirectory())) {
        const memoryDir = path.join(copy, dir)
        const plain = yield* scanIn(memoryDir, false)
        const cold = yield* scanIn(memoryDir)
        const entries = Object.keys(readCache(memoryDir).entries).length
        const warm = yield* scanIn(memoryDir)
        for (const scan of [cold, warm]) {
          assert.deepStrictEqual(withoutSize(scan.memories), withoutSize(plain.memories), dir)
          assert.deepStrictEqual(scan.headerless, plain.headerless, dir)
          assert.deepStrictEqual(scan.problems, plain.problems, dir)
          assert.strictEqual(scan.total, plain.total, dir)
        }
        assert.strictEqual(entries, plain.memories.length + (plain.headerless?.length ?? 0), dir)
        // the scan's look at each file goes with its header: size and mtime
        for (const m of warm.memories) assert.strictEqual(m.size, fs.statSync(m.absolutePath).size, m.path)
      }
    }))

  it.effect("writes the cache 0600; an entry is believed while size and mtime match, re-read when either changes", () =>
    Effect.gen(function*() {
      const dir = scratchDir()
      const file = path.join(dir, "a.md")
      fs.writeFileSync(file, memory("Alpha", "first memory", "alpha"))
      fs.writeFileSync(path.join(dir, "b.md"), memory("Bravo", "second memory", "bravo"))
      yield* scanIn(dir)
      assert.strictEqual(fs.statSync(path.join(dir, HEADER_CACHE_FILE)).mode & 0o777, 0o600)
      assert.strictEqual(fs.statSync(path.join(dir, ".cache")).mode & 0o777, 0o700)
      const cache = readCache(dir)
      assert.strictEqual(cache.version, HEADER_CACHE_VERSION)
      // a planted name with the file's own size and mtime is believed: the warm scan does not read the file…
      cache.entries[file][3] = "Planted"
      writeCache(dir, cache)
      const warm = yield* scanIn(dir)
      assert.deepStrictEqual(warm.memories.map((m) => m.name).sort(), ["Bravo", "Planted"])
      // …until its mtime changes (same size, same bytes)…
      const stat = fs.statSync(file)
      fs.utimesSync(file, stat.atime, new Date(stat.mtimeMs + 5_000))
      assert.deepStrictEqual((yield* scanIn(dir)).memories.map((m) => m.name).sort(), ["Alpha", "Bravo"])
      // …or its size does, even with the mtime put back
      const again = readCache(dir)
      again.entries[file][3] = "Planted"
      writeCache(dir, again)
      const before = fs.statSync(file)
      fs.writeFileSync(file, memory("Alpha", "first memory, longer", "alpha"))
      fs.utimesSync(file, before.atime, before.mtime)
      const resized = yield* scanIn(dir)
      assert.deepStrictEqual(resized.memories.map((m) => m.description).sort(), [
        "first memory, longer",
        "second memory"
      ])
      // a file removed leaves the cache when it is written back
      fs.rmSync(path.join(dir, "b.md"))
      fs.writeFileSync(path.join(dir, "c.md"), memory("Charlie", "third memory", "charlie"))
      yield* scanIn(dir)
      assert.deepStrictEqual(Object.keys(readCache(dir).entries).sort(), [file, path.join(dir, "c.md")])
    }))

  it.effect("a corrupt cache, one of another version, or an entry of the wrong shape is ignored and rebuilt", () =>
    Effect.gen(function*() {
      const dir = scratchDir()
      const file = path.join(dir, "a.md")
      fs.writeFileSync(file, memory("Alpha", "first memory", "alpha"))
      yield* scanIn(dir)
      const good = readCache(dir)
      const planted = { ...good, entries: { [file]: [...good.entries[file]] } }
      planted.entries[file][3] = "Planted"
      const wrongShape = { ...good, entries: { [file]: [...good.entries[file]] } }
      wrongShape.entries[file][5] = "no-such-type"
      for (
        const bad of [
          "{not json",
          "null",
          "[]",
          JSON.stringify({ ...planted, version: HEADER_CACHE_VERSION + 1 }),
          JSON.stringify(wrongShape),
          "x".repeat(10)
        ]
      ) {
        writeCache(dir, bad)
        const scan = yield* scanIn(dir)
        assert.deepStrictEqual(scan.memories.map((m) => [m.name, m.type]), [["Alpha", "project"]], bad)
        assert.deepStrictEqual(readCache(dir), good, bad)
      }
    }))

  it.effect("never reads a link or a FIFO through the cache, nor a cache file that is a link", () =>
    Effect.gen(function*() {
      const dir = scratchDir()
      const outside = scratchDir()
      fs.writeFileSync(path.join(outside, "secret.md"), memory("Secret", "outside the directory", "classified"))
      fs.symlinkSync(path.join(outside, "secret.md"), path.join(dir, "link.md"))
      execFileSync("mkfifo", [path.join(dir, "pipe.md")])
      fs.writeFileSync(path.join(dir, "a.md"), memory("Alpha", "first memory", "alpha"))
      fs.writeFileSync(path.join(dir, "real.md"), memory("Real", "linked from inside", "inside"))
      fs.symlinkSync(path.join(dir, "real.md"), path.join(dir, "inner.md"))
      const plain = yield* scanIn(dir, false)
      for (let round = 0; round < 2; round++) {
        const scan = yield* scanIn(dir)
        assert.deepStrictEqual(withoutSize(scan.memories), withoutSize(plain.memories))
        assert.deepStrictEqual(scan.problems, plain.problems)
      }
      assert.include(plain.problems.map((p) => p.code), "symlink-escape")
      const text = fs.readFileSync(path.join(dir, HEADER_CACHE_FILE), "utf8")
      assert.notInclude(text, "classified")
      assert.notInclude(text, "pipe.md")
      // a cache file planted as a link to a file elsewhere is not read, and what it points at is not written
      const planted = readCache(dir)
      planted.entries[path.join(dir, "a.md")][3] = "Planted"
      const elsewhere = path.join(outside, "headers.json")
      fs.writeFileSync(elsewhere, JSON.stringify(planted))
      fs.rmSync(path.join(dir, HEADER_CACHE_FILE))
      fs.symlinkSync(elsewhere, path.join(dir, HEADER_CACHE_FILE))
      const scan = yield* scanIn(dir)
      assert.notInclude(scan.memories.map((m) => m.name), "Planted")
      assert.strictEqual(fs.readFileSync(elsewhere, "utf8"), JSON.stringify(planted))
    }))

  it.effect("keeps the entries of what a scan skipped (team/ while team memory is off)", () =>
    Effect.gen(function*() {
      const dir = scratchDir()
      fs.mkdirSync(path.join(dir, "team"))
      fs.writeFileSync(path.join(dir, "a.md"), memory("Alpha", "first memory", "alpha"))
      fs.writeFileSync(path.join(dir, "team", "t.md"), memory("Team", "a team memory", "shared"))
      yield* scanIn(dir)
      yield* scanIn(dir, true, { skipDirs: ["team"], exclude: new Set(["a.md"]) })
      assert.deepStrictEqual(Object.keys(readCache(dir).entries).sort(), [
        path.join(dir, "a.md"),
        path.join(dir, "team", "t.md")
      ])
    }))

  it.effect("writeCache: false reads the cache and writes nothing (a dry run)", () =>
    Effect.gen(function*() {
      const dir = scratchDir()
      fs.writeFileSync(path.join(dir, "a.md"), memory("Alpha", "first memory", "alpha"))
      const dry = yield* scanIn(dir, true, { writeCache: false })
      assert.deepStrictEqual(dry.memories.map((m) => m.name), ["Alpha"])
      assert.isFalse(fs.existsSync(path.join(dir, ".cache")), "no cache directory after a scan that may not write")
      yield* scanIn(dir)
      const written = fs.readFileSync(path.join(dir, HEADER_CACHE_FILE), "utf8")
      fs.writeFileSync(path.join(dir, "b.md"), memory("Beta", "second memory", "beta"))
      const again = yield* scanIn(dir, true, { writeCache: false })
      assert.deepStrictEqual(again.memories.map((m) => m.name).sort(), ["Alpha", "Beta"])
      assert.strictEqual(fs.readFileSync(path.join(dir, HEADER_CACHE_FILE), "utf8"), written, "the cache unchanged")
    }))
})

describe("recall with the header cache (Memdir.layer)", () => {
  /** The live MemoryFs, counting the paths it is asked to `lstat` in batches. */
  const countingFs = (counter: { lstats: number }) =>
    Layer.effect(
      MemoryFs.MemoryFs,
      Effect.map(MemoryFs.MemoryFs, (live) =>
        MemoryFs.MemoryFs.of({
          ...live,
          lstatMany: (paths) => {
            counter.lstats += paths.length
            return live.lstatMany(paths)
          }
        }))
    ).pipe(Layer.provide(MemoryFs.layer))

  it.live("stats each memory once, and a memory outside the 200 newest is recalled cold and warm", () =>
    Effect.gen(function*() {
      const dir = scratchDir()
      const now = Date.now() / 1000
      for (let i = 0; i < 240; i++) {
        const file = path.join(dir, `project_note_${i}.md`)
        fs.writeFileSync(
          file,
          memory(`Note ${i}`, `Meeting notes number ${i} about the roadmap`, "Discussed the plan.")
        )
        fs.utimesSync(file, now - i * 60, now - i * 60)
      }
      const old = path.join(dir, "project_kafka_rebalance.md")
      fs.writeFileSync(old, memory("Kafka consumers", "Consumer group rebalance storms and their fix", "Static ids."))
      fs.utimesSync(old, now - 400 * 86_400, now - 400 * 86_400)
      const query = "why does the kafka consumer group keep rebalancing?"
      for (const round of ["cold", "warm"]) {
        const counter = { lstats: 0 }
        const layer = Layer.mergeAll(HeaderCache.layer, Scanner.layer, TermCache.layer).pipe(
          Layer.provideMerge(countingFs(counter)),
          Layer.provideMerge(NodeServices.layer)
        )
        const scanned = yield* Effect.gen(function*() {
          const scan = yield* (yield* Scanner.Scanner).scan(dir)
          yield* (yield* TermCache.TermCache).bodies(dir, scan.memories)
          return scan.memories.length
        }).pipe(Effect.provide(layer))
        assert.strictEqual(scanned, 241, round)
        assert.strictEqual(counter.lstats, 241, round)
        const recalled = yield* Effect.flatMap(
          Recall.RecallSession,
          (session) => session.recall({ memoryDir: dir, query })
        ).pipe(
          Effect.provide(Memdir.layer()),
          Effect.provide(NodeServices.layer)
        )
        assert.deepStrictEqual(recalled.selected.map((m) => m.path), ["project_kafka_rebalance.md"], round)
        assert.strictEqual(recalled.candidates, 241, round)
      }
      assert.strictEqual(Object.keys(readCache(dir).entries).length, 241)
    }))
})
