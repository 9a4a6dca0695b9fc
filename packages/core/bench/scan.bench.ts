/**
 * Scan benchmark (issue item 9): is the live `Scanner` within 1.3x of merely reading the first 4 KiB of every
 * memory file, measured in the same process and run?
 *
 * For 1k / 10k / 50k generated memory files (seeded, realistic frontmatter, bodies 0.2–20 KB log-uniform, kept in
 * `.bench/` and reused while their manifest matches) it times, after a warm-up, the median of at least three
 * interleaved runs (wall time and process CPU time) of:
 *   floor-sync        directory walk + open / read 4 KiB / close, plain sync fs
 *   floor-async       the same walk + fs.promises open / read / close, 64 in flight
 *   floor-sync+fstat  floor-sync plus one fstat per file: the floor of any scanner that must know mtimes
 *   scan              the memdir Scanner live layer, all files, no limit
 *   naive             the same walk + readFileSync of the whole file + the `yaml` parser on its header block
 * then the peak memory of a scan over small bodies vs the same headers with huge bodies (each in a fresh child
 * process), and the latency of the offline Selector over a 10k-entry manifest when it is available.
 *
 * Prints a table and writes `.bench/results.json`. Run with `pnpm bench` (or `tsx packages/core/bench/scan.bench.ts`).
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
import { parse as parseYaml } from "yaml"
import type { MemoryHeader } from "../src/Memory.js"
import * as Scanner from "../src/Scanner.js"
import { hex, listMemoryFiles, makeRandom, MEMORY_TYPES, pick, sentence, WORDS } from "./corpus.js"
import { median, round, startRssSampler } from "./measure.js"

const thisFile = fileURLToPath(import.meta.url)
const repoRoot = NodePath.resolve(NodePath.dirname(thisFile), "../../..")
const benchRoot = NodePath.join(repoRoot, ".bench")
const GENERATOR_VERSION = 3
const SEED = 20_260_305

// ---------------------------------------------------------------------------------------------------------------
// Deterministic data
// ---------------------------------------------------------------------------------------------------------------

interface SetSpec {
  readonly name: string
  readonly count: number
  /** Body bytes: log-uniform in [min, max]. */
  readonly bodyMin: number
  readonly bodyMax: number
  /** Bodies made of a sparse hole of `bodyMax` bytes instead of text (for the memory probe). */
  readonly sparseBodies: boolean
}

const memoryFile = (random: () => number, index: number, spec: SetSpec): { name: string; text: string } => {
  const type = pick(random, MEMORY_TYPES)
  const topic = `${pick(random, WORDS)}_${pick(random, WORDS)}_${index}`
  const title = sentence(random, 2 + Math.floor(random() * 4))
  const description = sentence(random, 6 + Math.floor(random() * 16))
  const roll = random()
  const lines = ["---", `name: ${title}`]
  if (roll < 0.02) {
    // The reference agent's files sometimes carry an unquoted ": " that strict YAML rejects.
    lines.push(`description: ${description} on 2026-03-05: ${sentence(random, 4)}`, `type: ${type}`)
  } else if (roll < 0.12) {
    // The newer layout: type under a nested metadata map.
    lines.push(
      `description: "${description}"`,
      "metadata:",
      "  node_type: memory",
      `  type: ${type}`,
      `  originSessionId: ${hex(random, 8)}-${hex(random, 4)}-${hex(random, 4)}-${hex(random, 4)}-${hex(random, 12)}`
    )
  } else {
    lines.push(`description: ${description}`, `type: ${type}`)
    if (roll < 0.6) lines.push(`originSessionId: ${hex(random, 8)}-${hex(random, 4)}-${hex(random, 4)}`)
  }
  lines.push("---", "")
  let body = ""
  if (!spec.sparseBodies) {
    const target = Math.round(spec.bodyMin * Math.pow(spec.bodyMax / spec.bodyMin, random()))
    const paragraphs = [`${sentence(random, 12)}.`, `**Why:** ${sentence(random, 14)}.`]
    paragraphs.push(`**How to apply:** ${sentence(random, 14)}.`)
    body = paragraphs.join("\n\n") + "\n"
    while (body.length < target) body += `- ${sentence(random, 10)}\n`
    body = body.slice(0, target)
  }
  return { name: `${type}_${topic}.md`, text: lines.join("\n") + "\n" + body }
}

interface Manifest {
  readonly version: number
  readonly seed: number
  readonly spec: SetSpec
  readonly files: number
}

/** Generates a set under `.bench/sets/<name>`, unless its manifest says it is already there. */
const ensureSet = (spec: SetSpec): { readonly dir: string; readonly generatedMs: number | undefined } => {
  const dir = NodePath.join(benchRoot, "sets", spec.name)
  const manifestPath = NodePath.join(dir, "manifest.json")
  const wanted: Manifest = { version: GENERATOR_VERSION, seed: SEED, spec, files: spec.count }
  try {
    if (JSON.stringify(JSON.parse(NodeFs.readFileSync(manifestPath, "utf8"))) === JSON.stringify(wanted)) {
      return { dir, generatedMs: undefined }
    }
  } catch {
    // No manifest (or an unreadable one): generate.
  }
  const started = performance.now()
  NodeFs.rmSync(dir, { recursive: true, force: true })
  const memoryDir = NodePath.join(dir, "memory")
  NodeFs.mkdirSync(NodePath.join(memoryDir, "team"), { recursive: true })
  NodeFs.mkdirSync(NodePath.join(memoryDir, "logs", "2026", "03"), { recursive: true })
  const random = makeRandom(SEED)
  const index: Array<string> = ["# Memory index", ""]
  const now = Date.UTC(2026, 2, 5) / 1000
  for (let i = 0; i < spec.count; i++) {
    const file = memoryFile(random, i, spec)
    const relative = random() < 0.1 ? `team/${file.name}` : file.name
    const absolute = NodePath.join(memoryDir, relative)
    NodeFs.writeFileSync(absolute, file.text)
    if (spec.sparseBodies) NodeFs.truncateSync(absolute, file.text.length + spec.bodyMax)
    const mtime = now - Math.floor(random() * 365 * 86_400)
    NodeFs.utimesSync(absolute, mtime, mtime)
    if (index.length < 200) index.push(`- [${file.name}](${relative}) — generated`)
  }
  NodeFs.writeFileSync(NodePath.join(memoryDir, "MEMORY.md"), index.join("\n") + "\n")
  NodeFs.writeFileSync(NodePath.join(memoryDir, "logs", "2026", "03", "2026-03-05.md"), "- 09:00 started\n")
  NodeFs.writeFileSync(manifestPath, JSON.stringify(wanted, null, 2) + "\n")
  return { dir, generatedMs: performance.now() - started }
}

// ---------------------------------------------------------------------------------------------------------------
// The contenders
// ---------------------------------------------------------------------------------------------------------------

const listFiles = listMemoryFiles

const headBuffer = Buffer.alloc(4096)

const floorSync = (root: string, withFstat: boolean): number => {
  let bytes = 0
  for (const file of listFiles(root)) {
    const fd = NodeFs.openSync(file, "r")
    if (withFstat) NodeFs.fstatSync(fd)
    bytes += NodeFs.readSync(fd, headBuffer, 0, 4096, 0)
    NodeFs.closeSync(fd)
  }
  return bytes
}

const floorAsync = async (root: string): Promise<number> => {
  const files = listFiles(root)
  let next = 0
  let bytes = 0
  const worker = async () => {
    const buffer = Buffer.alloc(4096)
    while (next < files.length) {
      const handle = await NodeFs.promises.open(files[next++]!, "r")
      const { bytesRead } = await handle.read(buffer, 0, 4096, 0)
      bytes += bytesRead
      await handle.close()
    }
  }
  await Promise.all(Array.from({ length: 64 }, worker))
  return bytes
}

const naive = (root: string): number => {
  let parsed = 0
  for (const file of listFiles(root)) {
    try {
      const text = NodeFs.readFileSync(file, "utf8")
      const end = text.startsWith("---\n") ? text.indexOf("\n---", 3) : -1
      const data = end === -1 ? undefined : parseYaml(text.slice(4, end))
      if (typeof data?.description === "string") parsed++
    } catch {
      // Strict YAML rejects some real files; the naive reader just loses them.
    }
  }
  return parsed
}

// ---------------------------------------------------------------------------------------------------------------
// Measuring
// ---------------------------------------------------------------------------------------------------------------

interface Sample {
  readonly wallMs: number
  /** User + system CPU of the whole process (all threads): what the work cost, even when the machine is busy. */
  readonly cpuMs: number
}

const timed = async (run: () => unknown): Promise<Sample> => {
  const cpuBefore = process.cpuUsage()
  const started = performance.now()
  await run()
  const wallMs = performance.now() - started
  const cpu = process.cpuUsage(cpuBefore)
  return { wallMs, cpuMs: (cpu.user + cpu.system) / 1000 }
}

const scannerService = await Effect.runPromise(
  Effect.provide(Scanner.Scanner, Scanner.layerNode.pipe(Layer.provide(NodeServices.layer)))
)
const scanAll = (root: string) => Effect.runPromise(scannerService.scan(root))

/** Child-process mode: one scan of `root`, reporting how much memory it took. */
const probeMemory = async (root: string) => {
  NodeV8.setFlagsFromString("--expose-gc")
  const gc = NodeVm.runInNewContext("gc") as () => void
  gc()
  const before = process.memoryUsage()
  const sampler = startRssSampler()
  await new Promise((resolve) => setTimeout(resolve, 20))
  const result = await scanAll(root)
  const peakRss = await sampler.stop()
  gc()
  const after = process.memoryUsage()
  process.stdout.write(JSON.stringify({
    memories: result.memories.length,
    problems: result.problems.length,
    peakRssGrowthMiB: round((peakRss - before.rss) / 1024 / 1024),
    retainedHeapMiB: round((after.heapUsed - before.heapUsed) / 1024 / 1024),
    externalGrowthMiB: round(
      (after.external + after.arrayBuffers - before.external - before.arrayBuffers) / 1024 / 1024
    )
  }))
}

interface SizeResult {
  readonly files: number
  readonly runs: number
  /** Median wall time of each contender. */
  readonly medianMs: Record<string, number>
  /** Median CPU time (user + system, all threads) of each contender. */
  readonly medianCpuMs: Record<string, number>
  readonly scanOverFloor: number
  /** The same ratio on CPU time: what the machine's load cannot distort. */
  readonly scanOverFloorCpu: number
  readonly scanOverFloorWithFstat: number
  readonly scanOverFloorWithFstatCpu: number
  readonly naiveOverScan: number
  readonly naiveOverScanCpu: number
  readonly memories: number
  readonly problems: number
}

const warmedUp = new Set<string>()

const measureSize = async (root: string, runs: number): Promise<SizeResult> => {
  const contenders: ReadonlyArray<readonly [string, () => unknown]> = [
    ["floor-sync", () => floorSync(root, false)],
    ["floor-async", () => floorAsync(root)],
    ["floor-sync+fstat", () => floorSync(root, true)],
    ["scan", () => scanAll(root)],
    ["naive", () => naive(root)]
  ]
  const samples: Record<string, Array<Sample>> = {}
  for (const [name, run] of contenders) {
    // Warm-up: the JIT once per contender; the page cache of every set through the cheap contenders. (The
    // expensive ones, 50k files through a YAML parser or 64 promises at a time, would blow the time budget.)
    if (!warmedUp.has(name) || name === "floor-sync" || name === "scan") await run()
    warmedUp.add(name)
    samples[name] = []
  }
  // Interleaved, so drift in machine load hits every contender alike.
  for (let i = 0; i < runs; i++) {
    for (const [name, run] of contenders) samples[name]!.push(await timed(run))
  }
  const medianOf = (pick: (sample: Sample) => number) =>
    Object.fromEntries(Object.entries(samples).map(([name, values]) => [name, median(values.map(pick))]))
  const medianMs = medianOf((sample) => sample.wallMs)
  const medianCpuMs = medianOf((sample) => sample.cpuMs)
  const result = await scanAll(root)
  return {
    files: listFiles(root).length,
    runs,
    medianMs,
    medianCpuMs,
    scanOverFloor: medianMs["scan"]! / Math.min(medianMs["floor-sync"]!, medianMs["floor-async"]!),
    scanOverFloorCpu: medianCpuMs["scan"]! / Math.min(medianCpuMs["floor-sync"]!, medianCpuMs["floor-async"]!),
    scanOverFloorWithFstat: medianMs["scan"]! / medianMs["floor-sync+fstat"]!,
    scanOverFloorWithFstatCpu: medianCpuMs["scan"]! / medianCpuMs["floor-sync+fstat"]!,
    naiveOverScan: medianMs["naive"]! / medianMs["scan"]!,
    naiveOverScanCpu: medianCpuMs["naive"]! / medianCpuMs["scan"]!,
    memories: result.memories.length,
    problems: result.problems.length
  }
}

const measureSelector = async (candidates: ReadonlyArray<MemoryHeader>) => {
  let module: Record<string, unknown>
  try {
    module = await import("../src/Selector.js") as Record<string, unknown>
  } catch (error) {
    return { available: false as const, reason: `cannot load Selector: ${String(error)}` }
  }
  const selectorLayer = module["layer"]
  const tag = module["Selector"]
  if (!Layer.isLayer(selectorLayer) || tag === undefined) {
    return { available: false as const, reason: "Selector has no `layer` export yet" }
  }
  interface SelectorService {
    readonly select: (request: {
      readonly query: string
      readonly candidates: ReadonlyArray<MemoryHeader>
      readonly recentTools?: ReadonlyArray<string>
    }) => Effect.Effect<{ readonly selected: ReadonlyArray<string>; readonly selector: string }>
  }
  try {
    const service = await Effect.runPromise(
      Effect.provide(
        tag as Effect.Effect<SelectorService>,
        (selectorLayer as Layer.Layer<unknown>).pipe(Layer.provide(NodeServices.layer)) as Layer.Layer<unknown>
      )
    )
    const request = {
      query: "why do the integration tests hit the real database instead of mocks before a deploy freeze?",
      candidates,
      recentTools: ["Bash", "Edit"]
    }
    const first = await Effect.runPromise(service.select(request))
    const samples: Array<number> = []
    for (let i = 0; i < 5; i++) samples.push((await timed(() => Effect.runPromise(service.select(request)))).wallMs)
    return {
      available: true as const,
      selector: first.selector,
      candidates: candidates.length,
      selected: first.selected.length,
      medianMs: median(samples)
    }
  } catch (error) {
    return { available: false as const, reason: `Selector.layer could not run offline: ${String(error)}` }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------------------------

const format = (ms: number) => (ms >= 100 ? ms.toFixed(0) : ms.toFixed(1)).padStart(8)

const main = async () => {
  const started = performance.now()
  NodeFs.mkdirSync(benchRoot, { recursive: true })
  const sizes: ReadonlyArray<readonly [SetSpec, number]> = [
    [{ name: "scan-1k", count: 1_000, bodyMin: 200, bodyMax: 20_000, sparseBodies: false }, 7],
    [{ name: "scan-10k", count: 10_000, bodyMin: 200, bodyMax: 20_000, sparseBodies: false }, 3],
    [{ name: "scan-50k", count: 50_000, bodyMin: 200, bodyMax: 20_000, sparseBodies: false }, 3]
  ]
  const memorySets: ReadonlyArray<SetSpec> = [
    { name: "memory-small-bodies", count: 5_000, bodyMin: 200, bodyMax: 200, sparseBodies: false },
    { name: "memory-huge-bodies", count: 5_000, bodyMin: 1_048_576, bodyMax: 1_048_576, sparseBodies: true }
  ]

  const generation: Record<string, number | "reused"> = {}
  const results: Record<string, SizeResult> = {}
  for (const [spec, runs] of sizes) {
    const { dir, generatedMs } = ensureSet(spec)
    generation[spec.name] = generatedMs ?? "reused"
    results[spec.name] = await measureSize(NodePath.join(dir, "memory"), runs)
  }

  const memory: Record<string, unknown> = {}
  for (const spec of memorySets) {
    const { dir, generatedMs } = ensureSet(spec)
    generation[spec.name] = generatedMs ?? "reused"
    const child = spawnSync(
      process.execPath,
      [...process.execArgv, thisFile, "--probe-memory", NodePath.join(dir, "memory")],
      { encoding: "utf8", maxBuffer: 1 << 20 }
    )
    memory[spec.name] = child.status === 0
      ? JSON.parse(child.stdout) as unknown
      : { error: `probe exited with ${child.status}: ${child.stderr.slice(0, 500)}` }
  }

  const tenK = await scanAll(NodePath.join(benchRoot, "sets", "scan-10k", "memory"))
  const selection = await measureSelector(tenK.memories)

  const report = {
    date: new Date().toISOString(),
    machine: {
      node: process.version,
      cpus: NodeOs.cpus().length,
      cpuModel: NodeOs.cpus()[0]?.model ?? "unknown",
      loadAverageAtStart: NodeOs.loadavg()
    },
    seed: SEED,
    generation,
    sizes: results,
    memory,
    selection,
    totalSeconds: 0
  }

  console.log(
    `\nmemdir scan benchmark (directory walk included in every contender; ` +
      `load average ${NodeOs.loadavg().map((l) => l.toFixed(1)).join(" ")} on ${NodeOs.cpus().length} CPUs)\n`
  )
  const names = ["floor-sync", "floor-async", "floor-sync+fstat", "scan", "naive"]
  const table = (
    title: string,
    key: "medianMs" | "medianCpuMs",
    ratios: (r: SizeResult) => [number, number, number]
  ) => {
    console.log(title)
    console.log(
      "set".padEnd(10) + "files".padStart(7) + names.map((n) => n.padStart(17)).join("") +
        "  scan/floor  scan/(floor+fstat)  naive/scan"
    )
    for (const [name, result] of Object.entries(results)) {
      const [overFloor, overFstat, naiveOver] = ratios(result)
      console.log(
        name.padEnd(10) + String(result.files).padStart(7) +
          names.map((n) => format(result[key][n]!).padStart(17)).join("") +
          `  ${overFloor.toFixed(2).padStart(10)}  ${overFstat.toFixed(2).padStart(18)}  ${
            naiveOver.toFixed(2).padStart(10)
          }`
      )
    }
  }
  table("wall time, median ms:", "medianMs", (r) => [r.scanOverFloor, r.scanOverFloorWithFstat, r.naiveOverScan])
  table(
    "\nCPU time (user + system, all threads), median ms:",
    "medianCpuMs",
    (r) => [r.scanOverFloorCpu, r.scanOverFloorWithFstatCpu, r.naiveOverScanCpu]
  )
  console.log("\npeak memory of one scan (fresh process each):")
  for (const [name, probe] of Object.entries(memory)) console.log(`  ${name.padEnd(22)} ${JSON.stringify(probe)}`)
  console.log("\noffline selection over the 10k manifest:")
  console.log(
    selection.available
      ? `  ${selection.selector}: ${selection.medianMs.toFixed(1)} ms median, ${selection.selected} of ` +
        `${selection.candidates} selected`
      : `  selector not available (${selection.reason})`
  )
  report.totalSeconds = (performance.now() - started) / 1000
  NodeFs.writeFileSync(NodePath.join(benchRoot, "results.json"), JSON.stringify(report, null, 2) + "\n")
  console.log(
    `\nwrote ${NodePath.relative(process.cwd(), NodePath.join(benchRoot, "results.json"))} ` +
      `in ${report.totalSeconds.toFixed(1)} s`
  )
}

const probeAt = process.argv.indexOf("--probe-memory")
if (probeAt !== -1) await probeMemory(process.argv[probeAt + 1]!)
else await main()
