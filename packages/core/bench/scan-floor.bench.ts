/**
 * In-process scan vs its floor, alternated (issue 11: the full scan within 1.3x of synchronous 4 KiB reads with
 * one fstat per file). The same two cases as the `in-process scan` rows of `apps/cli/bench/peers.bench.ts`, on its
 * corpora, without the child processes around them, so a change to the scan can be judged in a minute:
 *   floor      readdirSync + open / fstat / read 4 KiB / close of every `*.md` but `MEMORY.md` (the peers floor)
 *   scan       `Scanner.scan(dir)` of this tree's live layer, no limit, through `Effect.runPromise`
 *   baseline   the same scan by another copy of `packages/core/src` (optional, for a before/after in one run)
 * Each case runs once per round in a rotated order; a ratio is the median of the per-round ratios (a load change
 * on the shared machine moves both sides of a round). Two phases per size: `cold` (one warm-up round, then
 * MEMDIR_BENCH_ROUNDS rounds, as the peers bench samples it) and `warm` (after WARM_RUNS more runs of each case).
 *
 *   tsx packages/core/bench/scan-floor.bench.ts
 *   MEMDIR_BENCH_CORPORA=/path/.bench   where `peers-<size>/memories` are (default: this repo's `.bench`; run the
 *                                       peers bench once to generate them)
 *   MEMDIR_BENCH_SIZES=200,1000,20000   corpus sizes (default: these)
 *   MEMDIR_BENCH_ROUNDS=9               rounds per phase (default 9)
 *   MEMDIR_SCAN_BASELINE=dir            a `src` directory of another checkout (e.g. `git archive main
 *                                       packages/core/src` unpacked under `packages/core/.bench/`, so it resolves
 *                                       the same dependencies) to scan alongside
 * Ratios only, never timed assertions; prints the load average with them.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Path from "effect/Path"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import * as Scanner from "../src/Scanner.js"
import { median } from "./measure.js"

const here = NodePath.dirname(fileURLToPath(import.meta.url))
const repoRoot = NodePath.resolve(here, "../../..")
const corporaRoot = process.env.MEMDIR_BENCH_CORPORA ?? NodePath.join(repoRoot, ".bench")
const SIZES = (process.env.MEMDIR_BENCH_SIZES ?? "200,1000,20000").split(",").map(Number)
const ROUNDS = Number(process.env.MEMDIR_BENCH_ROUNDS ?? 9)
const WARM_RUNS = 20

type Scan = (memoryDir: string) => Promise<unknown>

const scannerOf = async (module: typeof Scanner): Promise<Scan> => {
  const service = await Effect.runPromise(
    Effect.provide(module.Scanner, module.layerNode.pipe(Layer.provide(Path.layer)))
  )
  return (memoryDir) => Effect.runPromise(service.scan(memoryDir))
}

const floor = (memoryDir: string): number => {
  const buffer = Buffer.alloc(4096)
  let bytes = 0
  for (const name of NodeFs.readdirSync(memoryDir)) {
    if (!name.endsWith(".md") || name === "MEMORY.md") continue
    const fd = NodeFs.openSync(NodePath.join(memoryDir, name), "r")
    NodeFs.fstatSync(fd)
    bytes += NodeFs.readSync(fd, buffer, 0, 4096, 0)
    NodeFs.closeSync(fd)
  }
  return bytes
}

interface Samples {
  /** Wall time, ms. */
  readonly wall: Record<string, Array<number>>
  /** Process CPU time (user + system, all threads), ms: what the work cost, less distorted by a busy machine. */
  readonly cpu: Record<string, Array<number>>
}

/** Every case once per round, the order rotated each round. */
const alternate = async (cases: Record<string, () => unknown>, rounds: number): Promise<Samples> => {
  const names = Object.keys(cases)
  const samples: Samples = {
    wall: Object.fromEntries(names.map((name) => [name, []])),
    cpu: Object.fromEntries(names.map((name) => [name, []]))
  }
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < names.length; i++) {
      const name = names[(i + round) % names.length]!
      const cpuBefore = process.cpuUsage()
      const start = process.hrtime.bigint()
      await cases[name]!()
      samples.wall[name]!.push(Number(process.hrtime.bigint() - start) / 1e6)
      const cpu = process.cpuUsage(cpuBefore)
      samples.cpu[name]!.push((cpu.user + cpu.system) / 1000)
    }
  }
  return samples
}

const pairedRatio = (xs: ReadonlyArray<number>, baseline: ReadonlyArray<number>) =>
  median(Array.from({ length: Math.min(xs.length, baseline.length) }, (_, i) => xs[i]! / baseline[i]!))

const main = async () => {
  const scan = await scannerOf(Scanner)
  const baselineDir = process.env.MEMDIR_SCAN_BASELINE
  const baseline = baselineDir === undefined
    ? undefined
    : await scannerOf(
      await import(pathToFileURL(NodePath.join(NodePath.resolve(baselineDir), "Scanner.ts")).href) as typeof Scanner
    )
  const load = () => NodeOs.loadavg().map((l) => l.toFixed(2)).join(" ")
  console.log(`scan vs floor, in process (load ${load()} on ${NodeOs.cpus().length} CPUs, ${ROUNDS} rounds)`)
  console.log(
    "size".padStart(6) + "  phase" + "floor ms".padStart(10) + "scan ms".padStart(10) + "scan/floor".padStart(12) +
      (baseline === undefined ? "" : "base ms".padStart(10) + "base/floor".padStart(12) + "scan/base".padStart(11)) +
      "  (CPU time ratios: scan/floor" + (baseline === undefined ? ")" : ", base/floor, scan/base)")
  )
  for (const size of SIZES) {
    const memoryDir = NodePath.join(corporaRoot, `peers-${size}`, "memories")
    if (!NodeFs.existsSync(memoryDir)) {
      throw new Error(`no corpus at ${memoryDir}: run apps/cli/bench/peers.bench.ts once`)
    }
    const cases: Record<string, () => unknown> = {
      floor: () => floor(memoryDir),
      scan: () => scan(memoryDir),
      ...(baseline === undefined ? {} : { baseline: () => baseline(memoryDir) })
    }
    // Warm-up round, as the peers bench does.
    for (const run of Object.values(cases)) await run()
    const report = (phase: string, { cpu, wall }: Samples) => {
      const cell = (name: string) => median(wall[name]!).toFixed(2).padStart(10)
      const ratio = (a: string, b: string, width = 12, of = wall) =>
        pairedRatio(of[a]!, of[b]!).toFixed(2).padStart(width)
      console.log(
        String(size).padStart(6) + `  ${phase.padEnd(5)}` + cell("floor") + cell("scan") + ratio("scan", "floor") +
          (baseline === undefined
            ? ""
            : cell("baseline") + ratio("baseline", "floor") + ratio("scan", "baseline", 11)) +
          "  (" + ratio("scan", "floor", 0, cpu) +
          (baseline === undefined
            ? ")"
            : ", " + ratio("baseline", "floor", 0, cpu) + ", " + ratio("scan", "baseline", 0, cpu) + ")")
      )
    }
    report("cold", await alternate(cases, ROUNDS))
    await alternate(cases, WARM_RUNS)
    report("warm", await alternate(cases, ROUNDS))
  }
  console.log(`load at the end ${load()}`)
}

await main()
