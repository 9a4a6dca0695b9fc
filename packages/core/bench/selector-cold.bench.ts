/**
 * The offline selector's first run in a fresh process (issue 11): what `memdir recall` pays for selecting among the
 * newest 200 memories when nothing is compiled yet. Each round starts a child process (this file, `--probe`) that
 * scans a memory directory like recall (`limit: 200`) and times one selection for a query: wall time and the
 * process's CPU time during it (CPU time is steadier than wall time on a shared machine), then a second selection
 * over the same memories as new versions (every memory analysed again, the code now warm). The children run one
 * after another, `node -e 0` between them as the machine's pace in the same run.
 *
 *   tsx packages/core/bench/selector-cold.bench.ts [DIR] [QUERY]
 *
 * DIR defaults to the selector's labelled set (all ten directories as one); the peers benchmark's corpora
 * (`.bench/peers-200/memories`) are the recall case. `MEMDIR_BENCH_ROUNDS` sets the rounds (default 11). Prints
 * medians and quartiles; no assertion (timings belong in a benchmark, not a test).
 */
import { NodeServices } from "@effect/platform-node"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { performance } from "node:perf_hooks"
import { fileURLToPath } from "node:url"
import type { MemoryHeader } from "../src/Memory.js"
import * as Scanner from "../src/Scanner.js"
import { selectRelevantMemories } from "../src/Selector.js"
import { SELECTOR_SET } from "../test/support/selectorSet.js"
import { median, round } from "./measure.js"

const thisFile = fileURLToPath(import.meta.url)
const ROUNDS = Number(process.env.MEMDIR_BENCH_ROUNDS ?? 11)

interface Probe {
  readonly candidates: number
  readonly firstMs: number
  readonly firstCpuMs: number
  readonly secondMs: number
  readonly selected: ReadonlyArray<string>
}

/** The newest 200 of a directory, or of every directory of the labelled set. */
const loadCandidates = (dir: string | undefined) =>
  Effect.gen(function*() {
    const scanner = yield* Scanner.Scanner
    const dirs = dir !== undefined ? [dir] : NodeFs.readdirSync(SELECTOR_SET).sort()
      .map((name) => NodePath.join(SELECTOR_SET, name))
      .filter((path) => NodeFs.statSync(path).isDirectory())
    const memories: Array<MemoryHeader> = []
    for (const path of dirs) {
      const scan = yield* scanner.scan(path, { limit: 200 })
      memories.push(...scan.memories, ...(scan.headerless ?? []))
    }
    return memories.slice(0, 200)
  }).pipe(Effect.provide(Scanner.layerNode.pipe(Layer.provide(NodeServices.layer))))

/** In the child: one cold selection, then one over new versions of the same memories. */
const probe = async (dir: string | undefined, query: string): Promise<void> => {
  const candidates = await Effect.runPromise(loadCandidates(dir))
  const cpu = process.cpuUsage()
  const start = performance.now()
  const selected = selectRelevantMemories({ query, candidates })
  const firstMs = performance.now() - start
  const used = process.cpuUsage(cpu)
  const renewed = candidates.map((m) => ({ ...m, mtime: m.mtime + 1 }))
  const again = performance.now()
  selectRelevantMemories({ query, candidates: renewed })
  const result: Probe = {
    candidates: candidates.length,
    firstMs,
    firstCpuMs: (used.user + used.system) / 1000,
    secondMs: performance.now() - again,
    selected
  }
  process.stdout.write(JSON.stringify(result))
}

const run = (args: ReadonlyArray<string>): { readonly ms: number; readonly stdout: string } => {
  const start = performance.now()
  const child = spawnSync(process.execPath, args, { encoding: "utf8" })
  if (child.status !== 0) throw new Error(`${args.join(" ")} exited ${child.status}: ${child.stderr}`)
  return { ms: performance.now() - start, stdout: child.stdout }
}

const quartiles = (values: ReadonlyArray<number>): string => {
  const sorted = [...values].sort((a, b) => a - b)
  const at = (q: number) => round(sorted[Math.floor(q * (sorted.length - 1))]!, 1)
  return `${round(median(values), 1)} ms [${at(0.25)}, ${at(0.75)}]`
}

const main = (dir: string | undefined, query: string): void => {
  const probes: Array<Probe> = []
  const node: Array<number> = []
  for (let i = 0; i < ROUNDS; i++) {
    node.push(run(["-e", "0"]).ms)
    const args = [...process.execArgv, thisFile, "--probe", query, ...(dir === undefined ? [] : [dir])]
    probes.push(JSON.parse(run(args).stdout))
  }
  console.info(
    `offline selector, first run in a fresh process: ${probes[0]!.candidates} candidates from ${
      dir ?? "the labelled set"
    }, query "${query}", ${ROUNDS} rounds`
  )
  console.info(`  first selection, wall    ${quartiles(probes.map((p) => p.firstMs))}`)
  console.info(`  first selection, CPU     ${quartiles(probes.map((p) => p.firstCpuMs))}`)
  console.info(`  again, new versions      ${quartiles(probes.map((p) => p.secondMs))}`)
  console.info(`  node -e 0 (the pace)     ${quartiles(node)}`)
  console.info(`  selected                 ${JSON.stringify(probes[0]!.selected)}`)
}

const probeAt = process.argv.indexOf("--probe")
if (probeAt !== -1) await probe(process.argv[probeAt + 2], process.argv[probeAt + 1]!)
else main(process.argv[2], process.argv[3] ?? "database migration")
