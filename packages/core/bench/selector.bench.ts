/**
 * Offline selector benchmark: the latency of one selection over 200 candidates (the recall default) and over a
 * 10k-entry manifest, for every query of the labelled set (`test/fixtures/selector-set`), with:
 *   cold      a candidate set never seen before (every memory analysed, the index built, then the query)
 *   warm      the same candidate objects again (the per-directory index reused)
 *   rescanned equal headers in new objects, as a new scan gives them each turn (index reused after checking
 *             every candidate's path, mtime and header text)
 * Candidates are the set's real memories (with the body heads the scan keeps), repeated under distinct paths with
 * two extra words each (seeded), so a 10k manifest has 10k distinct documents. Prints medians, p95 and max; no
 * assertion (timings belong in a benchmark, not a test). Run with `pnpm bench` or
 * `tsx packages/core/bench/selector.bench.ts`.
 */
import { NodeServices } from "@effect/platform-node"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { performance } from "node:perf_hooks"
import type { MemoryHeader } from "../src/Memory.js"
import * as Scanner from "../src/Scanner.js"
import { selectRelevantMemories } from "../src/Selector.js"
import { SELECTOR_SET, setLabels } from "../test/support/selectorSet.js"
import { makeRandom } from "./corpus.js"

const loadSet = Effect.gen(function*() {
  const scanner = yield* Scanner.Scanner
  const memories: Array<MemoryHeader> = []
  for (const dir of NodeFs.readdirSync(SELECTOR_SET).sort()) {
    if (!NodeFs.statSync(NodePath.join(SELECTOR_SET, dir)).isDirectory()) continue
    const result = yield* scanner.scan(NodePath.join(SELECTOR_SET, dir))
    memories.push(...result.memories, ...(result.headerless ?? []))
  }
  return memories
}).pipe(Effect.provide(Scanner.layerNode.pipe(Layer.provide(NodeServices.layer))))

/** `size` distinct candidates made from the real ones; `tag` keeps sets of different runs apart. */
const manifest = (base: ReadonlyArray<MemoryHeader>, size: number, tag: string): Array<MemoryHeader> => {
  const random = makeRandom(size)
  const vocabulary = base.flatMap((m) => m.description.split(/\s+/)).filter((w) => w.length > 3)
  return Array.from({ length: size }, (_, i) => {
    const m = base[i % base.length]!
    const extra = `${vocabulary[Math.floor(random() * vocabulary.length)]} ${
      vocabulary[Math.floor(random() * vocabulary.length)]
    }`
    const path = `${tag}/${i}/${m.path}`
    return { ...m, path, absolutePath: `/bench/${path}`, description: `${m.description} ${extra}` }
  })
}

const stats = (samples: Array<number>) => {
  samples.sort((a, b) => a - b)
  const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))]!
  return { median: at(0.5), p95: at(0.95), max: samples[samples.length - 1]! }
}

const time = (run: () => void): number => {
  const start = performance.now()
  run()
  return performance.now() - start
}

const main = async () => {
  const base = await Effect.runPromise(loadSet)
  const queries = setLabels.map((l) => l.query)
  const ms = (x: number) => `${x.toFixed(3)} ms`.padStart(11)
  console.info(`offline selector: ${queries.length} queries, candidates made from ${base.length} real memories`)
  console.info(
    `${"candidates".padEnd(11)} ${"mode".padEnd(10)} ${"median".padStart(11)} ${"p95".padStart(11)} ${
      "max".padStart(11)
    }`
  )
  for (const size of [200, 10_000]) {
    // Warm the JIT on a throwaway set of the same size.
    const warmup = manifest(base, size, "warmup")
    for (const query of queries.slice(0, 20)) selectRelevantMemories({ query, candidates: warmup })

    const cold: Array<number> = []
    for (let run = 0; run < (size > 1000 ? 3 : 20); run++) {
      const candidates = manifest(base, size, `cold${run}`)
      cold.push(time(() => selectRelevantMemories({ query: queries[run % queries.length]!, candidates })))
    }
    const candidates = manifest(base, size, "warm")
    selectRelevantMemories({ query: queries[0]!, candidates })
    const warm = queries.map((query) => time(() => selectRelevantMemories({ query, candidates })))
    const rescanned = queries.map((query) => {
      const copies = candidates.map((m) => ({ ...m }))
      return time(() => selectRelevantMemories({ query, candidates: copies }))
    })
    for (const [mode, samples] of [["cold", cold], ["warm", warm], ["rescanned", rescanned]] as const) {
      const s = stats([...samples])
      console.info(`${String(size).padEnd(11)} ${mode.padEnd(10)} ${ms(s.median)} ${ms(s.p95)} ${ms(s.max)}`)
    }
  }
}

void main()
