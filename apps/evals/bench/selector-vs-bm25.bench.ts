/**
 * memdir's offline selector against the BM25 baseline (apps/evals/src/Bm25Baseline.ts), in one run, on the same
 * labelled queries over the same directories: the ten written for the selector's test
 * (`packages/core/test/fixtures/selector-set`) and, when `../shared/corpora/memories` exists beside the checkout, the
 * twelve real ones (`evals/selector-real/labels.json`).
 *
 * Quality, counted as `pnpm evals:generalize` counts it (Generalization.countsOf): recall, precision, off-topic picks
 * (memories surfaced for a request where nothing should surface). memdir runs as shipped, over whole bodies (as
 * recall gives them); BM25 at `BM25_DEFAULT_THRESHOLD`, the threshold the generalization run chooses over all 22
 * directories (as memdir's defaults were chosen: neither side is scored leave-one-directory-out here; that is
 * `pnpm evals:generalize`'s job).
 *
 * Latency per query, both from the same inputs (each memory's header and whole body text):
 *   cold  a directory neither has seen: memdir analyses every body and header and builds its index, MiniSearch
 *         tokenizes and indexes every document; then the query
 *   warm  the same directory again: each reuses its index (memdir: the same candidates and body terms, as a
 *         long-lived recall gives them), only the query runs
 * The two systems alternate query by query, after a warm-up pass. Medians, p95 and the ratio of the medians
 * (memdir / BM25); never an assertion. Writes `.bench/selector-vs-bm25.json` at the repo root.
 *
 *   tsx apps/evals/bench/selector-vs-bm25.bench.ts
 *   MEMDIR_BENCH_ROUNDS=5     warm passes over every query (default 3)
 */
import { NodeServices } from "@effect/platform-node"
import { analyzeBody } from "@memdir/core/internal/text/selectorIndex"
import * as ScannerModule from "@memdir/core/Scanner"
import { selectRelevantMemories } from "@memdir/core/Selector"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import {
  BM25_DEFAULT_THRESHOLD,
  type Bm25Index,
  documentsOf,
  makeBm25Index,
  selectWithBm25
} from "../src/Bm25Baseline.js"
import {
  addCounts,
  bodiesOf,
  countsOf,
  type Figures,
  figures,
  type LabelledDirectory,
  type LabelledQuery,
  ZERO_COUNTS
} from "../src/Generalization.js"
import {
  type LabelledSet,
  loadDirectories,
  readLabelledSets,
  REAL_CORPUS,
  REAL_LABELS,
  repoRoot,
  writtenSet
} from "../src/LabelledSets.js"

const benchDir = path.join(repoRoot, ".bench")
const ROUNDS = Number(process.env.MEMDIR_BENCH_ROUNDS ?? 3)

type SystemName = "memdir" | "bm25"
const SYSTEMS: ReadonlyArray<SystemName> = ["memdir", "bm25"]

// ---------------------------------------------------------------------------------------------------------------
// The two systems, each from a directory's raw inputs (headers and whole body texts)
// ---------------------------------------------------------------------------------------------------------------

/** memdir from nothing: every body analysed, candidates it has never indexed (copies), then the query. */
const memdirCold = (directory: LabelledDirectory, query: string): ReadonlyArray<string> => {
  const bodies = new Map([...directory.bodies].map(([p, text]) => [p, analyzeBody(text)] as const))
  const candidates = directory.candidates.map((m) => ({ ...m }))
  return selectRelevantMemories({ query, candidates, bodies })
}

/** memdir again on the same directory: the same candidates and body terms, so its index is reused. */
const memdirWarm = (directory: LabelledDirectory, query: string): ReadonlyArray<string> =>
  selectRelevantMemories({ query, candidates: directory.candidates, bodies: bodiesOf(directory, "whole") })

const bm25IndexFor = (directory: LabelledDirectory): Bm25Index =>
  makeBm25Index(documentsOf(directory.candidates, (m) => directory.bodies.get(m.path)))

const bm25Cold = (directory: LabelledDirectory, query: string): ReadonlyArray<string> =>
  selectWithBm25(bm25IndexFor(directory), query, BM25_DEFAULT_THRESHOLD)

const bm25Indexes = new Map<string, Bm25Index>()
const bm25Warm = (directory: LabelledDirectory, query: string): ReadonlyArray<string> => {
  let index = bm25Indexes.get(directory.dir)
  if (index === undefined) {
    index = bm25IndexFor(directory)
    bm25Indexes.set(directory.dir, index)
  }
  return selectWithBm25(index, query, BM25_DEFAULT_THRESHOLD)
}

const run: Record<SystemName, Record<"cold" | "warm", typeof memdirCold>> = {
  memdir: { cold: memdirCold, warm: memdirWarm },
  bm25: { cold: bm25Cold, warm: bm25Warm }
}

// ---------------------------------------------------------------------------------------------------------------
// Measuring
// ---------------------------------------------------------------------------------------------------------------

const quantile = (samples: ReadonlyArray<number>, q: number): number => {
  const sorted = [...samples].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
}

const time = (f: () => unknown): number => {
  const start = performance.now()
  f()
  return performance.now() - start
}

interface Latency {
  readonly median: number
  readonly p95: number
}

const latencyOf = (samples: ReadonlyArray<number>): Latency => ({
  median: quantile(samples, 0.5),
  p95: quantile(samples, 0.95)
})

interface SetResult {
  readonly set: string
  readonly directories: number
  readonly memories: number
  readonly queries: number
  readonly quality: Record<SystemName, Figures>
  readonly latencyMs: Record<SystemName, Record<"cold" | "warm", Latency>>
  /** memdir's median / BM25's median. */
  readonly ratio: Record<"cold" | "warm", number>
}

const measureSet = (
  set: string,
  directories: ReadonlyMap<string, LabelledDirectory>,
  queries: ReadonlyArray<LabelledQuery>
): SetResult => {
  const directoryOf = (q: LabelledQuery) => directories.get(q.dir)!
  // quality: the warm answer is the answer (cold gives the same one, checked below)
  const counts = { memdir: ZERO_COUNTS, bm25: ZERO_COUNTS }
  for (const q of queries) {
    for (const system of SYSTEMS) {
      const selected = run[system].warm(directoryOf(q), q.query)
      const cold = run[system].cold(directoryOf(q), q.query)
      if (cold.join("\n") !== selected.join("\n")) throw new Error(`${system} answers ${q.id} differently cold`)
      counts[system] = addCounts(counts[system], countsOf(q, selected))
    }
  }
  // latency: a warm-up pass above; then the systems alternate query by query
  const samples: Record<SystemName, Record<"cold" | "warm", Array<number>>> = {
    memdir: { cold: [], warm: [] },
    bm25: { cold: [], warm: [] }
  }
  for (const [i, q] of queries.entries()) {
    const order = i % 2 === 0 ? SYSTEMS : [...SYSTEMS].reverse()
    for (const system of order) samples[system].cold.push(time(() => run[system].cold(directoryOf(q), q.query)))
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, q] of queries.entries()) {
      const order = (i + round) % 2 === 0 ? SYSTEMS : [...SYSTEMS].reverse()
      for (const system of order) samples[system].warm.push(time(() => run[system].warm(directoryOf(q), q.query)))
    }
  }
  const latencyMs = {
    memdir: { cold: latencyOf(samples.memdir.cold), warm: latencyOf(samples.memdir.warm) },
    bm25: { cold: latencyOf(samples.bm25.cold), warm: latencyOf(samples.bm25.warm) }
  }
  return {
    set,
    directories: directories.size,
    memories: [...directories.values()].reduce((n, d) => n + d.candidates.length, 0),
    queries: queries.length,
    quality: { memdir: figures(counts.memdir), bm25: figures(counts.bm25) },
    latencyMs,
    ratio: {
      cold: latencyMs.memdir.cold.median / latencyMs.bm25.cold.median,
      warm: latencyMs.memdir.warm.median / latencyMs.bm25.warm.median
    }
  }
}

const loadSet = (sets: ReadonlyArray<LabelledSet>) =>
  Effect.gen(function*() {
    const { corpusOf, queries } = readLabelledSets(sets)
    const directories = yield* loadDirectories(queries, corpusOf)
    return { directories, queries }
  })

const main = Effect.gen(function*() {
  const sets: Array<{ readonly name: string; readonly sets: ReadonlyArray<LabelledSet> }> = [
    { name: "written (10 directories)", sets: [writtenSet] }
  ]
  const real = fs.existsSync(REAL_CORPUS)
  if (real) sets.push({ name: "real (12 directories)", sets: [{ corpus: REAL_CORPUS, file: REAL_LABELS }] })
  else console.info(`(no ${REAL_CORPUS}: the real directories are left out)`)

  const loaded = []
  for (const s of sets) loaded.push({ name: s.name, ...(yield* loadSet(s.sets)) })
  // warm-up: every system, cold and warm, on every query once (JIT, and memdir's caches of the warm mode)
  for (const { directories, queries } of loaded) {
    for (const q of queries) {
      for (const system of SYSTEMS) {
        run[system].cold(directories.get(q.dir)!, q.query)
        run[system].warm(directories.get(q.dir)!, q.query)
      }
    }
  }
  const results = loaded.map(({ directories, name, queries }) => measureSet(name, directories, queries))

  const r2 = (x: number) => x.toFixed(2)
  const ms = (x: number) => x < 1 ? x.toFixed(3) : x.toFixed(2)
  console.info(
    `memdir's offline selector (as shipped, whole bodies) vs BM25+ (MiniSearch, score >= ${BM25_DEFAULT_THRESHOLD}, ` +
      `best 5), the same labelled queries; latency in ms, ${ROUNDS} warm round(s)\n`
  )
  console.info(
    "| set | system | recall | precision | off-topic picks | cold median | cold p95 | warm median | warm p95 |"
  )
  console.info("|---|---|---|---|---|---|---|---|---|")
  for (const r of results) {
    for (const system of SYSTEMS) {
      const q = r.quality[system]
      const l = r.latencyMs[system]
      console.info(
        `| ${r.set}, ${r.queries} queries, ${r.memories} memories | ${system} | ${r2(q.recall)} | ${
          r2(q.precision)
        } | ${q.offTopicPicks} | ${ms(l.cold.median)} | ${ms(l.cold.p95)} | ${ms(l.warm.median)} | ${ms(l.warm.p95)} |`
      )
    }
  }
  console.info("")
  for (const r of results) {
    console.info(`${r.set}: memdir / BM25 median latency, cold ${r2(r.ratio.cold)}×, warm ${r2(r.ratio.warm)}×`)
  }
  fs.mkdirSync(benchDir, { recursive: true })
  fs.writeFileSync(
    path.join(benchDir, "selector-vs-bm25.json"),
    JSON.stringify(
      {
        measuredAt: new Date().toISOString(),
        node: process.version,
        bm25Threshold: BM25_DEFAULT_THRESHOLD,
        warmRounds: ROUNDS,
        sets: results
      },
      null,
      2
    ) + "\n"
  )
  console.info(`\nwrote ${path.relative(process.cwd(), path.join(benchDir, "selector-vs-bm25.json"))}`)
})

main.pipe(
  Effect.provide(ScannerModule.layerNode.pipe(Layer.provideMerge(NodeServices.layer))),
  Effect.runPromise
).catch((error) => {
  console.error(error)
  process.exitCode = 1
})
