/**
 * TermCache on a real temp directory: the cache is written 0600 inside the memory directory's hidden state, reused
 * while a file's size and mtime are unchanged, rebuilt when it is corrupt or of another version, never follows a
 * link or opens a FIFO, and keeps to its analysis budget (while bodies are left, the selector's unknown words demand
 * nothing). Then recall through `Memdir.layer` over 250 memories:
 * one outside the 200 newest is recalled, and a phrase only deep in a long body finds its memory.
 */
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { headerKey } from "../src/internal/text/selectorIndex.js"
import * as Memdir from "../src/Memdir.js"
import * as MemoryFs from "../src/MemoryFs.js"
import * as Recall from "../src/Recall.js"
import * as Scanner from "../src/Scanner.js"
import { explainSelection, scoreMemories } from "../src/Selector.js"
import { TERM_CACHE_FILE, TermCache } from "../src/TermCache.js"
import * as TermCacheModule from "../src/TermCache.js"
import { SELECTOR_SET, setLabels } from "./support/selectorSet.js"

const memory = (name: string, description: string, body: string) =>
  `---\nname: ${name}\ndescription: ${description}\ntype: project\n---\n\n${body}\n`

const scratchDir = () => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "memdir-terms-")))

const live = (options: TermCacheModule.TermCacheOptions = {}) =>
  Layer.mergeAll(TermCacheModule.layerWith(options), Scanner.layer).pipe(
    Layer.provideMerge(MemoryFs.layer),
    Layer.provideMerge(NodeServices.layer)
  )

const bodiesOf = (memoryDir: string) =>
  Effect.gen(function*() {
    const scan = yield* (yield* Scanner.Scanner).scan(memoryDir)
    return yield* (yield* TermCache).bodies(memoryDir, [...scan.memories, ...(scan.headerless ?? [])])
  })

const readCache = (memoryDir: string) => JSON.parse(fs.readFileSync(path.join(memoryDir, TERM_CACHE_FILE), "utf8"))

describe("TermCache", () => {
  it.effect("writes the cache 0600, reuses an entry while the file is unchanged, re-analyses a changed one", () =>
    Effect.gen(function*() {
      const dir = scratchDir()
      fs.writeFileSync(path.join(dir, "a.md"), memory("A", "first", "alpha beta gamma"))
      fs.writeFileSync(path.join(dir, "b.md"), memory("B", "second", "delta epsilon"))
      const first = yield* bodiesOf(dir)
      assert.deepStrictEqual([...first.keys()].sort(), ["a.md", "b.md"])
      const file = path.join(dir, TERM_CACHE_FILE)
      assert.strictEqual(fs.statSync(file).mode & 0o777, 0o600)
      assert.strictEqual(Object.keys(readCache(dir).entries).length, 2)
      // a planted entry with the file's own size and mtime is believed (the cache is consulted, not bypassed)…
      const cache = readCache(dir)
      cache.entries[path.join(dir, "a.md")].t = [["planted", 3]]
      fs.writeFileSync(file, JSON.stringify(cache))
      const fresh = yield* bodiesOf(dir).pipe(Effect.provide(live()))
      assert.strictEqual(fresh.get("a.md")!.counts.get("planted"), 3)
      // …until the file changes: then it is analysed again
      fs.writeFileSync(path.join(dir, "a.md"), memory("A", "first", "alpha beta gamma zeta"))
      const changed = yield* bodiesOf(dir).pipe(Effect.provide(live()))
      assert.isUndefined(changed.get("a.md")!.counts.get("planted"))
      assert.isAbove(changed.get("a.md")!.counts.get("zeta") ?? 0, 0)
    }).pipe(Effect.provide(live())))

  it.effect("a corrupt cache, or one of another version, is ignored and rebuilt", () =>
    Effect.gen(function*() {
      const dir = scratchDir()
      fs.writeFileSync(path.join(dir, "a.md"), memory("A", "first", "alpha"))
      fs.mkdirSync(path.join(dir, ".cache"))
      for (const bad of ["{not json", JSON.stringify({ version: 999, entries: {} }), "null", "[]"]) {
        fs.writeFileSync(path.join(dir, TERM_CACHE_FILE), bad)
        const bodies = yield* bodiesOf(dir).pipe(Effect.provide(live()))
        assert.isAbove(bodies.get("a.md")!.counts.get("alpha") ?? 0, 0, bad)
        assert.strictEqual(readCache(dir).version, TermCacheModule.ANALYSIS_VERSION)
      }
    }).pipe(Effect.provide(live())))

  it.effect("never follows a link out of the directory, never opens a FIFO", () =>
    Effect.gen(function*() {
      const dir = scratchDir()
      const outside = scratchDir()
      fs.writeFileSync(path.join(outside, "secret.md"), memory("Secret", "outside", "classified"))
      fs.symlinkSync(path.join(outside, "secret.md"), path.join(dir, "link.md"))
      execFileSync("mkfifo", [path.join(dir, "pipe.md")])
      fs.writeFileSync(path.join(dir, "a.md"), memory("A", "first", "alpha"))
      const bodies = yield* (yield* TermCache).bodies(dir, [
        {
          path: "link.md",
          absolutePath: path.join(dir, "link.md"),
          name: "L",
          description: "l",
          type: "project",
          mtime: 1,
          extra: {}
        },
        {
          path: "pipe.md",
          absolutePath: path.join(dir, "pipe.md"),
          name: "P",
          description: "p",
          type: "project",
          mtime: 1,
          extra: {}
        },
        {
          path: "a.md",
          absolutePath: path.join(dir, "a.md"),
          name: "A",
          description: "a",
          type: "project",
          mtime: 1,
          extra: {}
        }
      ])
      assert.deepStrictEqual([...bodies.keys()], ["a.md"])
      assert.notInclude(fs.readFileSync(path.join(dir, TERM_CACHE_FILE), "utf8"), "classified")
    }).pipe(Effect.provide(live())))

  it.effect("keeps each header's terms beside its body's; scores with them are the scores without", () =>
    Effect.gen(function*() {
      const dir = scratchDir()
      fs.cpSync(path.join(SELECTOR_SET, "payments-en"), dir, { recursive: true })
      const scan = yield* (yield* Scanner.Scanner).scan(dir)
      const cached = yield* (yield* TermCache).bodies(dir, scan.memories)
      const entries = Object.values(readCache(dir).entries) as Array<{ h?: Array<unknown> }>
      assert.strictEqual(entries.filter((e) => e.h !== undefined).length, scan.memories.length)
      for (const m of scan.memories) assert.strictEqual(cached.get(m.path)!.header!.key, headerKey(m))
      const bare = new Map([...cached].map(([p, { header: _, ...terms }]) => [p, terms]))
      for (const label of setLabels.filter((l) => l.dir === "payments-en")) {
        const request = { query: label.query, candidates: scan.memories }
        assert.deepStrictEqual(
          scoreMemories({ ...request, bodies: cached }),
          scoreMemories({ ...request, bodies: bare }),
          label.id
        )
      }
      // terms made for another header (a changed parse, say) are not used: the header is analysed again
      const cache = readCache(dir)
      const first = scan.memories[0]!
      cache.entries[first.absolutePath].h[0] = "stale"
      fs.writeFileSync(path.join(dir, TERM_CACHE_FILE), JSON.stringify(cache))
      const again = yield* Effect.flatMap(TermCache, (c) => c.bodies(dir, scan.memories)).pipe(Effect.provide(live()))
      assert.strictEqual(again.get(first.path)!.header!.key, headerKey(first))
      assert.strictEqual(readCache(dir).entries[first.absolutePath].h[0], headerKey(first))
    }).pipe(Effect.provide(live())))

  it.effect("keeps where each term of a long body occurs; a damaged list is analysed again", () =>
    Effect.gen(function*() {
      const dir = scratchDir()
      const body = Array.from({ length: 30 }, (_, i) => `Step ${i}: the webhook retries once and logs it.`).join("\n")
      fs.writeFileSync(path.join(dir, "long.md"), memory("Long", "a long note", body))
      fs.writeFileSync(path.join(dir, "short.md"), memory("Short", "a short note", "webhook retries"))
      const made = yield* bodiesOf(dir)
      const entries = readCache(dir).entries
      const stored = entries[path.join(dir, "long.md")]
      assert.strictEqual(stored.b.split(" ").length, stored.t.length)
      // a short body is one passage whole: nothing to keep
      assert.isUndefined(entries[path.join(dir, "short.md")].b)
      assert.isUndefined(made.get("short.md")!.blocks)
      // a fresh process reads them back as they were made
      const everyTerm = (terms: TermCacheModule.BodyTerms) =>
        [...terms.counts.keys()].map((term) => [term, terms.blocks!(term)] as const)
      const read = yield* bodiesOf(dir).pipe(Effect.provide(live()))
      const blocks = everyTerm(read.get("long.md")!)
      assert.deepStrictEqual(blocks, everyTerm(made.get("long.md")!))
      assert.deepStrictEqual(
        read.get("long.md")!.blocks!("step"),
        [...Array(Math.ceil(made.get("long.md")!.words / 20)).keys()]
      )
      assert.deepStrictEqual(read.get("long.md")!.blocks!("absent"), [])
      // a list of blocks that is not one, or terms it cannot follow one for one, are no entry: the body is analysed
      // again
      const terms = stored.t.length
      const lists = (list: string, n = terms) => Array(n).fill(list).join(" ")
      const twice = [...stored.t.slice(0, -1), stored.t[0]]
      for (
        const [damaged, t] of [
          [lists("-1"), stored.t],
          [lists("1,,2"), stored.t],
          [lists("1,"), stored.t],
          [lists("0", terms - 1), stored.t],
          [[0], stored.t],
          [0, stored.t],
          [stored.b, twice]
        ]
      ) {
        const cache = readCache(dir)
        cache.entries[path.join(dir, "long.md")].b = damaged
        cache.entries[path.join(dir, "long.md")].t = t
        fs.writeFileSync(path.join(dir, TERM_CACHE_FILE), JSON.stringify(cache))
        const again = yield* bodiesOf(dir).pipe(Effect.provide(live()))
        assert.deepStrictEqual(everyTerm(again.get("long.md")!), blocks, JSON.stringify(damaged))
      }
    }).pipe(Effect.provide(live())))

  it.effect("analyses at most its budget per call; the rest on later calls", () =>
    Effect.gen(function*() {
      const dir = scratchDir()
      for (let i = 0; i < 6; i++) fs.writeFileSync(path.join(dir, `m${i}.md`), memory(`M${i}`, "x", "y".repeat(900)))
      const layer = live({ analyseBudgetBytes: 2000 })
      const sizes = [] as Array<number>
      for (let call = 0; call < 3; call++) sizes.push((yield* bodiesOf(dir).pipe(Effect.provide(layer))).size)
      assert.deepStrictEqual(sizes, [2, 4, 6])
    }).pipe(Effect.provide(live())))

  it.effect("while bodies are left to analyse, a word in them is not taken for one no memory has", () =>
    Effect.gen(function*() {
      const dir = scratchDir()
      fs.writeFileSync(path.join(dir, "project_pulse.md"), memory("Pulse bot", "Pulse scans the market", "Small."))
      for (let i = 0; i < 5; i++) {
        fs.writeFileSync(path.join(dir, `project_log_${i}.md`), memory(`Log ${i}`, "x", "filler ".repeat(150)))
      }
      // the words of the request other than "pulse" are only in this body
      fs.writeFileSync(
        path.join(dir, "project_watch.md"),
        memory("Watch export", "x", `${"filler ".repeat(150)}The garmin export keeps bpm samples; nobody is worried.`)
      )
      const query = "my garmin shows a pulse of 95 bpm, should I be worried"
      const layer = live({ analyseBudgetBytes: 2500 })
      const scan = yield* (yield* Scanner.Scanner).scan(dir)
      const candidates = [...scan.memories, ...(scan.headerless ?? [])]
      const explained: Array<{ unanalysed: number; bar: number; unknown: ReadonlyArray<string> }> = []
      for (let call = 0; call < 4; call++) {
        const bodies = yield* Effect.flatMap(TermCache, (cache) => cache.bodies(dir, candidates)).pipe(
          Effect.provide(layer)
        )
        const e = explainSelection({ query, candidates, bodies })
        explained.push({ unanalysed: e.unanalysed, bar: e.unknownWordsBar, unknown: e.unknownWords })
      }
      // the first calls leave bodies unread: whatever is unknown then, it demands nothing
      assert.isAbove(explained[0]!.unanalysed, 0)
      for (const e of explained.filter((e) => e.unanalysed > 0)) assert.strictEqual(e.bar, 0)
      // once every body is read, the words are found in one of them: none is unknown
      const last = explained.at(-1)!
      assert.strictEqual(last.unanalysed, 0)
      assert.notInclude(last.unknown, "garmin")
      assert.notInclude(last.unknown, "bpm")
    }).pipe(Effect.provide(live())))
})

describe("recall over every memory, by whole bodies (Memdir.layer)", () => {
  const recallIn = (memoryDir: string, query: string) =>
    Effect.gen(function*() {
      const session = yield* Recall.RecallSession
      return yield* session.recall({ memoryDir, query })
    }).pipe(Effect.provide(Memdir.layer()), Effect.provide(NodeServices.layer))

  it.live("a memory outside the 200 newest is recalled, and a phrase deep in a long body finds it", () =>
    Effect.gen(function*() {
      const dir = scratchDir()
      const now = Date.now() / 1000
      for (let i = 0; i < 250; i++) {
        const file = path.join(dir, `project_note_${i}.md`)
        fs.writeFileSync(
          file,
          memory(`Note ${i}`, `Meeting notes number ${i} about the roadmap`, "Discussed the plan.")
        )
        fs.utimesSync(file, now - i * 60, now - i * 60)
      }
      const old = path.join(dir, "project_kafka_rebalance.md")
      fs.writeFileSync(
        old,
        memory("Kafka consumers", "Consumer group rebalance storms and their fix", "Use static membership.")
      )
      fs.utimesSync(old, now - 400 * 86_400, now - 400 * 86_400)
      const longBody = Array.from({ length: 150 }, (_, i) => `Line ${i} about the renderer pipeline and shaders.`)
        .join("\n") + "\nIf the import throws TextureImporterOverflowException, split the atlas in two.\n"
      fs.writeFileSync(
        path.join(dir, "project_rendering.md"),
        memory("Rendering", "How the renderer is set up", longBody)
      )
      const kafka = yield* recallIn(dir, "why does the kafka consumer group keep rebalancing?")
      assert.deepStrictEqual(kafka.selected.map((m) => m.path), ["project_kafka_rebalance.md"])
      assert.strictEqual(kafka.candidates, 252)
      const phrase = yield* recallIn(dir, "the build fails with TextureImporterOverflowException, what do I do?")
      assert.deepStrictEqual(phrase.selected.map((m) => m.path), ["project_rendering.md"])
    }))
})
