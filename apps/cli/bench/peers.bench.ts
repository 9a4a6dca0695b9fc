/**
 * Start-up and peers benchmark: memdir side by side, in one run and on the same generated corpora, with
 *   - the floor: `node -e 0`, a plain Node process reading 4 KiB of every file, one that stats every file and
 *     reads the newest 200 heads, and in process the synchronous 4 KiB reads with one fstat per file;
 *   - the peers a user would otherwise pick: the Anthropic SDK's `BetaLocalFilesystemMemoryTool` (`view` of the
 *     directory and of one file) and `@modelcontextprotocol/server-memory` (`search_nodes` over the same
 *     memories through the MCP client over stdio, cold = server start + first call, warm = a later call).
 * Every case of a size runs once per round, in a rotated order (alternated runs), after a warm-up round (a case
 * slower than 1.5 s, in the first 2 rounds only, to keep `pnpm bench` short); the table gives medians, the
 * spread (min–max) and each ratio against its baseline (the median of per-round ratios), target beside it. A
 * process case is one run per sample; an in-process sample is the mean of back-to-back runs over at least 30 ms.
 * In process, the scans run as in a long-lived server (after a warm-up).
 * The corpora's headers are flat `key: value` lines (what memdir writes); the 200 and 1k memories are measured again
 * in the reference agent's layout (a quoted description, `type` under `metadata:`), for context.
 * Ratios only, never timed assertions. Writes `.bench/peers.json` at the repo root.
 *
 *   tsx apps/cli/bench/peers.bench.ts            sizes 200, 1k, 20k
 *   tsx apps/cli/bench/peers.bench.ts --full     adds 50k
 *   MEMDIR_BENCH_ROUNDS=9                        rounds per case (default 5)
 *   MEMDIR_BENCH_SIZES=200,20000                 these corpus sizes only
 *   MEMDIR_BENCH_CLI=path/to/memdir.js           another bundle (e.g. a saved build of main, for a before/after)
 */
import { BetaLocalFilesystemMemoryTool } from "@anthropic-ai/sdk/tools/memory/node"
import { NodeServices } from "@effect/platform-node"
import * as Browse from "@memdir/core/Browse"
import * as MemoryIndex from "@memdir/core/MemoryIndex"
import * as MemoryStore from "@memdir/core/MemoryStore"
import * as MemoryToolBackend from "@memdir/core/MemoryToolBackend"
import * as MemoryTools from "@memdir/core/MemoryTools"
import * as Scanner from "@memdir/core/Scanner"
import * as TeamGuard from "@memdir/core/TeamGuard"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const here = path.dirname(fileURLToPath(import.meta.url))
const repoRoot = path.resolve(here, "../../..")
const cli = path.resolve(process.env.MEMDIR_BENCH_CLI ?? path.join(repoRoot, "apps/cli/dist/memdir.js"))
const serverMemory = path.join(here, "../node_modules/@modelcontextprotocol/server-memory/dist/index.js")
const benchDir = path.join(repoRoot, ".bench")
const SIZES = process.env.MEMDIR_BENCH_SIZES !== undefined ?
  process.env.MEMDIR_BENCH_SIZES.split(",").map(Number) :
  process.argv.includes("--full")
  ? [200, 1_000, 20_000, 50_000]
  : [200, 1_000, 20_000]
const ROUNDS = Number(process.env.MEMDIR_BENCH_ROUNDS ?? 5)
const QUERY = "database migration"
const GENERATOR_VERSION = 1

// ---------------------------------------------------------------------------------------------------------------
// Corpora: deterministic, reused while their marker matches
// ---------------------------------------------------------------------------------------------------------------

const types = ["user", "feedback", "project", "reference"] as const
const words = ["database", "pool", "migration", "deploy", "oncall", "review", "testing", "cache", "latency", "auth"]
const sentence = "Body text that recall reads only when it selects this memory, and a peer indexes whole. "

interface Corpus {
  readonly size: number
  /** SDK memory tool base path: its root is `<base>/memories`, which is also memdir's memory directory. */
  readonly base: string
  readonly memoryDir: string
  /** The same memories as a server-memory knowledge graph (one entity per memory). */
  readonly graphFile: string
  readonly oneFile: string
}

/**
 * How each memory's header is written: `simple` (flat `key: value` lines, what memdir writes) or `reference` (the
 * reference agent's current layout: a quoted description with a non-ASCII dash, `type` under a `metadata:` block
 * with its session id), which takes the scanner's flat-block path instead of the simple reader.
 */
type Layout = "simple" | "reference"

const headerOf = (layout: Layout, topic: string, description: string, type: string, i: number) =>
  layout === "simple" ?
    `---\nname: ${topic}\ndescription: ${description}\ntype: ${type}\n---\n` :
    `---\nname: ${topic.replace(/ /g, "-")}\ndescription: "${description} — the why and the how."\nmetadata:\n` +
    `  node_type: memory\n  type: ${type}\n  originSessionId: ${(0x1000_0000 + i * 7919).toString(16)}-session\n---\n`

const corpus = (size: number, layout: Layout = "simple"): Corpus => {
  const base = path.join(benchDir, layout === "simple" ? `peers-${size}` : `peers-${layout}-${size}`)
  const memoryDir = path.join(base, "memories")
  const graphFile = path.join(base, "graph.jsonl")
  const marker = path.join(base, ".generated")
  const result = { size, base, memoryDir, graphFile, oneFile: "" }
  const stamp = `${GENERATOR_VERSION}:${size}`
  if (fs.existsSync(marker) && fs.readFileSync(marker, "utf8").startsWith(`${stamp}\n`)) {
    return { ...result, oneFile: fs.readFileSync(marker, "utf8").split("\n")[1]! }
  }
  fs.rmSync(base, { recursive: true, force: true })
  fs.mkdirSync(memoryDir, { recursive: true })
  let seed = 42
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31)
  const now = Date.now() / 1000
  const graph: Array<string> = []
  const index: Array<string> = []
  for (let i = 0; i < size; i++) {
    const type = types[next() % 4]!
    const topic = `${words[next() % 10]} ${words[next() % 10]} ${i}`
    const file = `${type}_${topic.replace(/ /g, "_")}.md`
    const description = `Notes about ${topic} for the team`
    const body = sentence.repeat(2 + (next() % 30))
    const absolute = path.join(memoryDir, file)
    fs.writeFileSync(absolute, `${headerOf(layout, topic, description, type, i)}\n${body}\n`)
    const mtime = now - (next() % (90 * 86_400))
    fs.utimesSync(absolute, mtime, mtime)
    graph.push(JSON.stringify({ type: "entity", name: topic, entityType: type, observations: [description, body] }))
    if (index.length < 150) index.push(`- [${topic}](${file}) — ${description}`)
  }
  fs.writeFileSync(path.join(memoryDir, "MEMORY.md"), `${index.join("\n")}\n`)
  fs.writeFileSync(graphFile, `${graph.join("\n")}\n`)
  const oneFile = fs.readdirSync(memoryDir).find((name) => name.startsWith("feedback_"))!
  fs.writeFileSync(marker, `${stamp}\n${oneFile}\n`)
  return { ...result, oneFile }
}

// ---------------------------------------------------------------------------------------------------------------
// Floors (plain Node processes)
// ---------------------------------------------------------------------------------------------------------------

const read4k = `
const fs = require("node:fs"), path = require("node:path")
const dir = process.argv[1], buf = Buffer.alloc(4096)
let n = 0
for (const name of fs.readdirSync(dir)) {
  if (!name.endsWith(".md") || name === "MEMORY.md") continue
  const fd = fs.openSync(path.join(dir, name), "r"); fs.readSync(fd, buf, 0, 4096, 0); fs.closeSync(fd); n++
}
process.stdout.write(String(n))
`

const statThenRead200 = `
const fs = require("node:fs"), path = require("node:path")
const dir = process.argv[1], buf = Buffer.alloc(4096), all = []
for (const name of fs.readdirSync(dir)) {
  if (!name.endsWith(".md") || name === "MEMORY.md") continue
  const file = path.join(dir, name)
  all.push([fs.statSync(file).mtimeMs, file])
}
all.sort((a, b) => b[0] - a[0])
for (const [, file] of all.slice(0, 200)) {
  const fd = fs.openSync(file, "r"); fs.readSync(fd, buf, 0, 4096, 0); fs.closeSync(fd)
}
process.stdout.write(String(all.length))
`

// ---------------------------------------------------------------------------------------------------------------
// Timing
// ---------------------------------------------------------------------------------------------------------------

type Case = () => Promise<number>

const spawnCase = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv): Case => () => {
  const start = process.hrtime.bigint()
  const result = spawnSync(process.execPath, args, { env, stdio: ["ignore", "pipe", "pipe"], maxBuffer: 1 << 30 })
  const ms = Number(process.hrtime.bigint() - start) / 1e6
  if (result.status !== 0) {
    throw new Error(`node ${args.join(" ")} exited ${result.status}: ${result.stderr.toString().slice(0, 2000)}`)
  }
  return Promise.resolve(ms)
}

/**
 * An in-process sample runs its case back to back until this much time has passed (at least once) and gives the
 * mean per run. A single run of a few milliseconds pays whatever collection the garbage of the case before it
 * happens to trigger; run back to back, each case pays for its own collections, in proportion to what it
 * allocates, as a long-lived process (an MCP server, an agent loop) does.
 */
const MIN_SAMPLE_MS = 30

const inProcess = (run: () => Promise<unknown>): Case => async () => {
  const start = process.hrtime.bigint()
  let runs = 0
  let elapsed = 0
  do {
    await run()
    runs++
    elapsed = Number(process.hrtime.bigint() - start) / 1e6
  } while (elapsed < MIN_SAMPLE_MS)
  return elapsed / runs
}

/** A case whose warm-up takes longer than this is sampled in the first HEAVY_ROUNDS rounds only. */
const HEAVY_MS = 1_500
const HEAVY_ROUNDS = 2

/** Every case once per round, the order rotated each round, after one warm-up round. */
const alternate = async (
  cases: Record<string, Case>,
  rounds: number = ROUNDS
): Promise<Record<string, Array<number>>> => {
  const names = Object.keys(cases)
  const samples: Record<string, Array<number>> = Object.fromEntries(names.map((n) => [n, []]))
  const heavy = new Set<string>()
  for (const name of names) if ((await cases[name]!()) > HEAVY_MS) heavy.add(name)
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < names.length; i++) {
      const name = names[(i + round) % names.length]!
      if (round >= HEAVY_ROUNDS && heavy.has(name)) continue
      samples[name]!.push(await cases[name]!())
    }
  }
  return samples
}

/**
 * A case over its baseline, round by round (samples of round i were taken next to each other, so a load change
 * on the shared machine moves both), then the median of those ratios.
 */
const pairedRatio = (xs: ReadonlyArray<number>, baseline: ReadonlyArray<number>) =>
  median(Array.from({ length: Math.min(xs.length, baseline.length) }, (_, i) => xs[i]! / baseline[i]!))

const median = (xs: ReadonlyArray<number>) => {
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

// ---------------------------------------------------------------------------------------------------------------
// Peers and memdir in process
// ---------------------------------------------------------------------------------------------------------------

/** The in-process floor: synchronous open, fstat, 4 KiB read and close of each memory file. */
const syncFloor = (dir: string) => {
  const buf = Buffer.alloc(4096)
  for (const name of fs.readdirSync(dir)) {
    if (!name.endsWith(".md") || name === "MEMORY.md") continue
    const fd = fs.openSync(path.join(dir, name), "r")
    fs.fstatSync(fd)
    fs.readSync(fd, buf, 0, 4096, 0)
    fs.closeSync(fd)
  }
}

const toolsLayer = MemoryToolBackend.layer.pipe(
  Layer.provideMerge(MemoryStore.layerNode),
  Layer.provideMerge(Layer.mergeAll(Scanner.layerNode, MemoryIndex.layer)),
  Layer.provideMerge(NodeServices.layer)
)

const memdirTools = (memoryDir: string) =>
  Effect.runPromise(
    Effect.gen(function*() {
      const scanner = yield* Scanner.Scanner
      const toolset = yield* MemoryTools.make({ memoryDir })
      const tool = (name: string) => {
        const found = toolset.tools.find((t) => t.definition.name === name)
        if (found === undefined) throw new Error(`memdir offers no ${name} tool`)
        return (input: unknown) =>
          Effect.runPromise(found.run(input)).then((result) => {
            if (result.isError) throw new Error(`${name} failed: ${result.content.slice(0, 500)}`)
            return result.content
          })
      }
      const store = yield* MemoryStore.MemoryStore
      const backend = yield* MemoryToolBackend.MemoryToolBackend
      const guard = yield* TeamGuard.TeamGuard
      const root = { memoryDir }
      return {
        scan: () => Effect.runPromise(scanner.scan(memoryDir)),
        list: tool("memory_list"),
        read: tool("memory_read"),
        storeList: () => Effect.runPromise(store.list(root)),
        // the MCP server's memory_list and resources list: every header, by scope and type
        browseList: () =>
          Effect.runPromise(
            Browse.listMemories({ memoryDir, teamEnabled: false }).pipe(Effect.provideService(Scanner.Scanner, scanner))
          ),
        backendView: () => Effect.runPromise(backend.run(root, { command: "view", path: "/memories" })),
        // `memdir team audit` over a directory of this size (the corpus as if it were team/)
        audit: () => Effect.runPromise(guard.audit(memoryDir))
      }
    }).pipe(Effect.provide(toolsLayer))
  )

const mcpClient = async (graphFile: string) => {
  const client = new Client({ name: "memdir-bench", version: "0" })
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [serverMemory],
      env: { ...process.env, MEMORY_FILE_PATH: graphFile } as Record<string, string>,
      stderr: "ignore"
    })
  )
  return client
}

const searchNodes = async (client: Client) => {
  const result = await client.callTool({ name: "search_nodes", arguments: { query: QUERY } })
  if (result.isError === true) throw new Error(`search_nodes failed: ${JSON.stringify(result.content)}`)
  return result
}

// ---------------------------------------------------------------------------------------------------------------
// Run
// ---------------------------------------------------------------------------------------------------------------

interface Row {
  readonly size: number | null
  readonly case: string
  readonly ms: number
  readonly spread: readonly [number, number]
  readonly baseline: string
  readonly baselineMs: number
  readonly ratio: number
  /** The target for this ratio (≤), or undefined when the row is context only. */
  readonly target: number | undefined
  readonly met: boolean | undefined
}

const rows: Array<Row> = []
const row = (
  size: number | null,
  samples: Record<string, Array<number>>,
  name: string,
  baseline: string,
  target?: number
) => {
  const ms = median(samples[name]!)
  const baselineMs = median(samples[baseline]!)
  const ratio = pairedRatio(samples[name]!, samples[baseline]!)
  rows.push({
    size,
    case: name,
    ms,
    spread: [Math.min(...samples[name]!), Math.max(...samples[name]!)],
    baseline,
    baselineMs,
    ratio,
    target,
    met: target === undefined ? undefined : ratio <= target
  })
}

const main = async () => {
  if (!fs.existsSync(cli)) throw new Error(`${cli} missing: run \`pnpm --filter @memdir/cli run bundle\``)
  const started = Date.now()
  const corpora = SIZES.map((size) => corpus(size))
  const home = path.join(benchDir, "peers-home")
  fs.mkdirSync(home, { recursive: true })
  const { ANTHROPIC_API_KEY: _key, ...baseEnv } = process.env
  // the bundle's code cache in the bench directory: the warm-up round fills it, as a user's first run would
  const codeCache = path.join(benchDir, "code-cache")
  const envFor = (c: Corpus): NodeJS.ProcessEnv => ({
    ...baseEnv,
    MEMDIR_MEMORY_DIR: c.memoryDir,
    MEMDIR_HOME: home,
    MEMDIR_CODE_CACHE: codeCache
  })
  const uncached = (c: Corpus): NodeJS.ProcessEnv => ({ ...envFor(c), MEMDIR_CODE_CACHE: "off" })

  // start-up: size-independent commands, on the smallest corpus; cheap, so twice the rounds
  const small = corpora[0]!
  const startup = await alternate({
    "node -e 0": spawnCase(["-e", "0"], baseEnv),
    "memdir --version": spawnCase([cli, "--version"], envFor(small)),
    "memdir path": spawnCase([cli, "path"], envFor(small)),
    "memdir path, no code cache": spawnCase([cli, "path"], uncached(small)),
    "memdir --help": spawnCase([cli, "--help"], envFor(small))
  }, 2 * ROUNDS)
  row(null, startup, "memdir --version", "node -e 0", 3)
  row(null, startup, "memdir path", "node -e 0", 3)
  row(null, startup, "memdir path", "memdir path, no code cache")
  row(null, startup, "memdir --help", "node -e 0")

  for (const c of corpora) {
    const env = envFor(c)
    const tools = await memdirTools(c.memoryDir)
    const sdkTool = new BetaLocalFilesystemMemoryTool(c.base)
    const warm = await mcpClient(c.graphFile)
    const samples = await alternate({
      "node -e 0": spawnCase(["-e", "0"], baseEnv),
      "floor: read 4 KiB of each": spawnCase(["-e", read4k, c.memoryDir], baseEnv),
      "floor: stat all, read newest 200": spawnCase(["-e", statThenRead200, c.memoryDir], baseEnv),
      "memdir ls --json": spawnCase([cli, "ls", "--json"], env),
      "memdir recall": spawnCase([cli, "recall", "--selector", "offline", QUERY], env),
      ...(c.size <= 200
        ? { "memdir recall, no code cache": spawnCase([cli, "recall", "--selector", "offline", QUERY], uncached(c)) }
        : {}),
      "server-memory search_nodes cold": inProcess(async () => {
        const client = await mcpClient(c.graphFile)
        await searchNodes(client)
        await client.close()
      }),
      "server-memory search_nodes warm": inProcess(() => searchNodes(warm)),
      "in-process floor: sync 4 KiB + fstat": inProcess(async () => syncFloor(c.memoryDir)),
      "in-process scan": inProcess(tools.scan),
      "memory_list tool": inProcess(() => tools.list({})),
      "MemoryStore.list": inProcess(tools.storeList),
      "Browse list (MCP memory_list)": inProcess(tools.browseList),
      "memory-tool backend view (dir)": inProcess(tools.backendView),
      "team audit (walk, read, secrets)": inProcess(tools.audit),
      "memory_read tool (one file)": inProcess(() => tools.read({ path: c.oneFile })),
      "SDK memory tool view (directory)": inProcess(() => sdkTool.view({ command: "view", path: "/memories" })),
      "SDK memory tool view (one file)": inProcess(() =>
        sdkTool.view({ command: "view", path: `/memories/${c.oneFile}` })
      )
    })
    await warm.close()
    row(c.size, samples, "memdir recall", "floor: stat all, read newest 200", c.size >= 20_000 ? 1.5 : undefined)
    if (c.size <= 200) {
      row(c.size, samples, "memdir recall", "node -e 0", 3)
      row(c.size, samples, "memdir recall", "memdir recall, no code cache")
    }
    row(c.size, samples, "memdir recall", "server-memory search_nodes cold", 1)
    row(c.size, samples, "server-memory search_nodes warm", "memdir recall")
    row(c.size, samples, "memdir ls --json", "floor: read 4 KiB of each", c.size >= 20_000 ? 2 : undefined)
    row(c.size, samples, "in-process scan", "in-process floor: sync 4 KiB + fstat", 1.3)
    row(c.size, samples, "memory_list tool", "in-process scan", 1.2)
    row(c.size, samples, "memory_list tool", "SDK memory tool view (directory)", 1)
    row(c.size, samples, "MemoryStore.list", "in-process scan", 1.2)
    row(c.size, samples, "Browse list (MCP memory_list)", "in-process scan", 1.2)
    row(c.size, samples, "memory-tool backend view (dir)", "in-process scan", 1.2)
    row(c.size, samples, "memory-tool backend view (dir)", "SDK memory tool view (directory)", 1)
    // reads every file whole and looks for secrets: context, against the scan and the plain reads
    row(c.size, samples, "team audit (walk, read, secrets)", "in-process scan")
    row(c.size, samples, "team audit (walk, read, secrets)", "in-process floor: sync 4 KiB + fstat")
    row(c.size, samples, "memory_read tool (one file)", "SDK memory tool view (one file)")
  }

  // The same memories in the reference agent's layout (context: the corpora above are all simple headers)
  for (const size of SIZES.filter((n) => n <= 1_000)) {
    const c = corpus(size, "reference")
    const tools = await memdirTools(c.memoryDir)
    const samples = await alternate({
      "node -e 0": spawnCase(["-e", "0"], baseEnv),
      "memdir recall, reference layout": spawnCase(
        [cli, "recall", "--selector", "offline", QUERY],
        envFor(c)
      ),
      "in-process floor: sync 4 KiB + fstat": inProcess(async () => syncFloor(c.memoryDir)),
      "in-process scan, reference layout": inProcess(tools.scan)
    })
    row(size, samples, "memdir recall, reference layout", "node -e 0")
    row(size, samples, "in-process scan, reference layout", "in-process floor: sync 4 KiB + fstat")
  }

  const fmt = (ms: number) => (ms < 10 ? ms.toFixed(2) : ms.toFixed(1))
  console.log(
    `\npeers (median of ${ROUNDS} alternated runs, ${2 * ROUNDS} for start-up, ${HEAVY_ROUNDS} for cases over ` +
      `${HEAVY_MS} ms, after a warm-up; an in-process sample: mean of runs over ${MIN_SAMPLE_MS} ms; ratio = median ` +
      `of per-round ratios; ${path.relative(repoRoot, cli)})`
  )
  const header = "size".padStart(6) + "  " + "case".padEnd(32) + "ms".padStart(9) + "  " + "min–max".padEnd(16) +
    "baseline".padEnd(38) + "ms".padStart(9) + "ratio".padStart(9) + "target".padStart(8) + "  met"
  console.log(header)
  console.log("-".repeat(header.length))
  for (const r of rows) {
    console.log(
      (r.size === null ? "-" : String(r.size)).padStart(6) + "  " + r.case.padEnd(32) + fmt(r.ms).padStart(9) +
        "  " + `${fmt(r.spread[0])}–${fmt(r.spread[1])}`.padEnd(16) + r.baseline.padEnd(38) +
        fmt(r.baselineMs).padStart(9) + `${r.ratio.toFixed(2)}×`.padStart(9) +
        (r.target === undefined ? "" : `≤${r.target}×`).padStart(8) +
        (r.met === undefined ? "" : r.met ? "  met" : "  NOT MET")
    )
  }
  const notMet = rows.filter((r) => r.met === false)
  console.log(`\n${rows.filter((r) => r.met === true).length} targets met, ${notMet.length} not met`)
  console.log(`${((Date.now() - started) / 1000).toFixed(0)} s`)
  fs.writeFileSync(
    path.join(benchDir, "peers.json"),
    JSON.stringify(
      { cli: path.relative(repoRoot, cli), rounds: ROUNDS, sizes: SIZES, node: process.version, rows },
      null,
      2
    )
  )
}

await main()
