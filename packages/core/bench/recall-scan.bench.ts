/**
 * Capped-scan benchmark (issue 11 item 1): does recall's scan (`limit: 200`) read only what it keeps, so its time
 * follows the stat-every-file floor and its memory stays flat as the directory grows from 1k to 50k files?
 *
 * For 1k and 50k generated memory files (seeded; kept in `.bench/sets/recall-*` and reused while their manifest
 * matches) it times, interleaved in one process after a warm-up, the median of several runs of:
 *   stat-only      directory walk + one lstatSync per file: no scanner can know the newest without this
 *   floor          the same walk and lstats + sort by mtime + open / read 4 KiB / close of the 200 newest, plain
 *                  sync fs in process: what recall's scan must do at the least
 *   scan-200       the memdir Scanner live layer with `limit: 200` (what recall asks for)
 *   scan-all       the same scanner without a limit: every head read (what a capped scan cost before)
 * then, each in a fresh child process, the memory one run takes: heap growth (used and committed, no GC in
 * between), heap retained after a GC (the result held) and peak RSS growth sampled from another thread.
 *
 * Prints ratios measured in this one run (absolute times are noisy on a shared machine) and writes
 * `.bench/recall-scan.json`. Run with `pnpm bench` or `tsx packages/core/bench/recall-scan.bench.ts`.
 */
import { NodeServices } from "@effect/platform-node"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import * as NodeV8 from "node:v8"
import * as NodeVm from "node:vm"
import * as Scanner from "../src/Scanner.js"
import { listMemoryFiles, makeRandom, MEMORY_TYPES, pick, sentence } from "./corpus.js"
import { median, round, startRssSampler } from "./measure.js"

const thisFile = fileURLToPath(import.meta.url)
const repoRoot = NodePath.resolve(NodePath.dirname(thisFile), "../../..")
const benchRoot = NodePath.join(repoRoot, ".bench")
const GENERATOR_VERSION = 1
const SEED = 20_261_201
const LIMIT = 200
const HEAD_BYTES = 4096

// ---------------------------------------------------------------------------------------------------------------
// Data
// ---------------------------------------------------------------------------------------------------------------

// Its own, smaller vocabulary: the committed sets were generated with it (a change would regenerate them).
const words = (
  "integration tests database mocks migration deploy freeze review merge branch release pipeline latency " +
  "dashboard ticket oncall incident postgres redis queue worker cache schema api client auth token retry " +
  "timeout budget owner team frontend backend flaky lint format naming commit changelog feature flag rollout"
).split(" ")

/** `count` memories, 10% under `team/`, 1% without frontmatter, bodies 0.2–8 KB, mtimes over a year. */
const ensureSet = (count: number): string => {
  const dir = NodePath.join(benchRoot, "sets", `recall-${count}`)
  const memoryDir = NodePath.join(dir, "memory")
  const manifestPath = NodePath.join(dir, "manifest.json")
  const wanted = JSON.stringify({ version: GENERATOR_VERSION, seed: SEED, count })
  try {
    if (NodeFs.readFileSync(manifestPath, "utf8") === wanted) return memoryDir
  } catch {
    // No manifest yet: generate.
  }
  NodeFs.rmSync(dir, { recursive: true, force: true })
  NodeFs.mkdirSync(NodePath.join(memoryDir, "team"), { recursive: true })
  const random = makeRandom(SEED + count)
  const now = Date.UTC(2026, 11, 1) / 1000
  for (let i = 0; i < count; i++) {
    const type = pick(random, MEMORY_TYPES)
    const name = `${type}_${pick(random, words)}_${i}.md`
    const relative = random() < 0.1 ? `team/${name}` : name
    const bodyBytes = Math.round(200 * Math.pow(40, random()))
    let body = `${sentence(random, 12, words)}.\n\n**Why:** ${sentence(random, 14, words)}.\n`
    while (body.length < bodyBytes) body += `- ${sentence(random, 10, words)}\n`
    const text = random() < 0.01
      ? `# ${sentence(random, 4, words)}\n\n${body}`
      : `---\nname: ${sentence(random, 3, words)}\ndescription: ${
        sentence(random, 12, words)
      }\ntype: ${type}\n---\n\n${body}`
    const file = NodePath.join(memoryDir, relative)
    NodeFs.writeFileSync(file, text)
    const mtime = now - Math.floor(random() * 365 * 86_400)
    NodeFs.utimesSync(file, mtime, mtime)
  }
  NodeFs.writeFileSync(NodePath.join(memoryDir, "MEMORY.md"), "# Memory index\n")
  NodeFs.writeFileSync(manifestPath, wanted)
  return memoryDir
}

// ---------------------------------------------------------------------------------------------------------------
// Contenders
// ---------------------------------------------------------------------------------------------------------------

const listFiles = listMemoryFiles

const statOnly = (root: string): number => {
  let newest = 0
  for (const file of listFiles(root)) newest = Math.max(newest, NodeFs.lstatSync(file).mtimeMs)
  return newest
}

const headBuffer = Buffer.alloc(HEAD_BYTES)

const floor = (root: string): number => {
  const files = listFiles(root)
  const mtimes = files.map((file) => NodeFs.lstatSync(file).mtimeMs)
  const order = files.map((_, i) => i).sort((a, b) => mtimes[b]! - mtimes[a]!)
  let bytes = 0
  for (const i of order.slice(0, LIMIT)) {
    const fd = NodeFs.openSync(files[i]!, "r")
    bytes += NodeFs.readSync(fd, headBuffer, 0, HEAD_BYTES, 0)
    NodeFs.closeSync(fd)
  }
  return bytes
}

const scanner = await Effect.runPromise(
  Effect.provide(Scanner.Scanner, Scanner.layerNode.pipe(Layer.provide(NodeServices.layer)))
)
const scan = (root: string, limit: number | undefined) => Effect.runPromise(scanner.scan(root, { limit }))

const contenders = {
  "stat-only": (root: string) => statOnly(root),
  floor: (root: string) => floor(root),
  "scan-200": (root: string) => scan(root, LIMIT),
  "scan-all": (root: string) => scan(root, undefined)
} as const
type Contender = keyof typeof contenders
const names = Object.keys(contenders) as Array<Contender>

// ---------------------------------------------------------------------------------------------------------------
// Measuring
// ---------------------------------------------------------------------------------------------------------------

const timeAll = async (root: string, runs: number) => {
  const wall: Record<string, Array<number>> = {}
  const cpu: Record<string, Array<number>> = {}
  for (const name of names) {
    await contenders[name](root) // warm-up: JIT and page cache
    wall[name] = []
    cpu[name] = []
  }
  // Interleaved, so drift in the machine's load hits every contender alike.
  for (let run = 0; run < runs; run++) {
    for (const name of names) {
      const cpuBefore = process.cpuUsage()
      const started = performance.now()
      await contenders[name](root)
      wall[name]!.push(performance.now() - started)
      const used = process.cpuUsage(cpuBefore)
      cpu[name]!.push((used.user + used.system) / 1000)
    }
  }
  const medians = (samples: Record<string, Array<number>>) =>
    Object.fromEntries(names.map((name) => [name, round(median(samples[name]!), 1)])) as Record<Contender, number>
  return { wallMs: medians(wall), cpuMs: medians(cpu) }
}

const MiB = 1024 * 1024

/** Child-process mode: one run of `name` over `root` (after a warm-up run), and the memory it took. */
const probeMemory = async (name: Contender, root: string) => {
  NodeV8.setFlagsFromString("--expose-gc")
  const gc = NodeVm.runInNewContext("gc") as () => void
  await contenders[name](root)
  gc()
  const sampler = startRssSampler()
  await new Promise((resolve) => setTimeout(resolve, 20))
  gc()
  const before = process.memoryUsage()
  const heapBefore = NodeV8.getHeapStatistics()
  const result = await contenders[name](root)
  const heapAfter = NodeV8.getHeapStatistics()
  const after = process.memoryUsage()
  const peakRss = await sampler.stop()
  gc()
  const retained = process.memoryUsage().heapUsed
  process.stdout.write(JSON.stringify({
    heapUsedGrowthMiB: round((after.heapUsed - before.heapUsed) / MiB),
    heapCommittedGrowthMiB: round((heapAfter.total_heap_size - heapBefore.total_heap_size) / MiB),
    retainedHeapMiB: round((retained - before.heapUsed) / MiB),
    peakRssGrowthMiB: round((peakRss - before.rss) / MiB),
    kept: typeof result === "object" ? result.memories.length : undefined
  }))
  // Keep the result alive up to the retained measurement.
  if (result === undefined) process.exitCode = 1
}

// ---------------------------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------------------------

const main = async () => {
  const started = performance.now()
  NodeFs.mkdirSync(benchRoot, { recursive: true })
  const sizes: ReadonlyArray<readonly [number, number]> = [[1_000, 9], [50_000, 5]]
  const results: Record<string, unknown> = {}
  const rows: Array<{
    files: number
    wallMs: Record<Contender, number>
    cpuMs: Record<Contender, number>
    memory: Record<string, Record<string, number>>
  }> = []
  for (const [count, runs] of sizes) {
    const root = ensureSet(count)
    const { cpuMs, wallMs } = await timeAll(root, runs)
    const capped = await scan(root, LIMIT)
    const memory: Record<string, Record<string, number>> = {}
    for (const name of ["floor", "scan-200", "scan-all"] as const) {
      const child = spawnSync(process.execPath, [...process.execArgv, thisFile, "--probe-memory", name, root], {
        encoding: "utf8",
        maxBuffer: 1 << 20
      })
      memory[name] = child.status === 0
        ? JSON.parse(child.stdout) as Record<string, number>
        : { error: NaN, status: child.status ?? -1 }
      if (child.status !== 0) console.error(child.stderr.slice(0, 2000))
    }
    const row = { files: listFiles(root).length, wallMs, cpuMs, memory }
    rows.push(row)
    results[`recall-${count}`] = {
      ...row,
      runs,
      kept: capped.memories.length,
      total: capped.total,
      problemsReported: capped.problems.length,
      scan200OverFloor: round(wallMs["scan-200"] / wallMs.floor),
      scan200OverFloorCpu: round(cpuMs["scan-200"] / cpuMs.floor),
      scanAllOverScan200: round(wallMs["scan-all"] / wallMs["scan-200"])
    }
  }

  const load = NodeOs.loadavg().map((l) => l.toFixed(1)).join(" ")
  console.log(
    `\nmemdir capped scan (limit ${LIMIT}) vs the floor (load average ${load} on ${NodeOs.cpus().length} CPUs)\n`
  )
  console.log(
    "files".padStart(7) + names.map((n) => `${n} ms`.padStart(14)).join("") +
      "   scan-200/floor (cpu)   scan-all/scan-200"
  )
  for (const row of rows) {
    console.log(
      String(row.files).padStart(7) + names.map((n) => row.wallMs[n].toFixed(1).padStart(14)).join("") +
        `   ${(row.wallMs["scan-200"] / row.wallMs.floor).toFixed(2).padStart(8)} (${
          (row.cpuMs["scan-200"] / row.cpuMs.floor).toFixed(2)
        })   ${(row.wallMs["scan-all"] / row.wallMs["scan-200"]).toFixed(2).padStart(17)}`
    )
  }
  console.log(
    "\nmemory of one run (fresh process each; MiB): heap used growth / committed growth / retained / peak RSS"
  )
  for (const row of rows) {
    for (const [name, m] of Object.entries(row.memory)) {
      console.log(
        `  ${String(row.files).padStart(6)} ${name.padEnd(9)}` +
          [m["heapUsedGrowthMiB"], m["heapCommittedGrowthMiB"], m["retainedHeapMiB"], m["peakRssGrowthMiB"]]
            .map((v) => String(v).padStart(9)).join("")
      )
    }
  }
  const [small, large] = rows
  if (small !== undefined && large !== undefined) {
    const growth = (row: typeof small, name: string) => row.memory[name]?.["heapCommittedGrowthMiB"] ?? NaN
    const retainedOf = (row: typeof small, name: string) => row.memory[name]?.["retainedHeapMiB"] ?? NaN
    const flat = {
      scan200CommittedHeap50kMinus1kMiB: round(growth(large, "scan-200") - growth(small, "scan-200")),
      floorCommittedHeap50kMinus1kMiB: round(growth(large, "floor") - growth(small, "floor")),
      scan200Retained50kMinus1kMiB: round(retainedOf(large, "scan-200") - retainedOf(small, "scan-200")),
      scanAllRetained50kMinus1kMiB: round(retainedOf(large, "scan-all") - retainedOf(small, "scan-all"))
    }
    results["flatness"] = flat
    console.log(`\n50k minus 1k: ${JSON.stringify(flat)}`)
  }
  const report = {
    date: new Date().toISOString(),
    node: process.version,
    cpus: NodeOs.cpus().length,
    loadAverage: NodeOs.loadavg(),
    limit: LIMIT,
    results,
    totalSeconds: round((performance.now() - started) / 1000, 1)
  }
  const out = NodePath.join(benchRoot, "recall-scan.json")
  NodeFs.writeFileSync(out, JSON.stringify(report, null, 2) + "\n")
  console.log(`\nwrote ${NodePath.relative(process.cwd(), out)} in ${report.totalSeconds} s`)
}

const probeAt = process.argv.indexOf("--probe-memory")
if (probeAt !== -1) await probeMemory(process.argv[probeAt + 1] as Contender, process.argv[probeAt + 2]!)
else await main()
