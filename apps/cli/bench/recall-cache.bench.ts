/**
 * Recall with and without its caches (docs/architecture.md#the-recall-caches): `memdir recall --selector offline`
 * through the bundled CLI, a fresh process each run as a hook runs it, over 200 / 2,000 / 20,000 generated memories:
 *   cold   `.cache/` removed before every run: every head read and parsed, the term cache empty (at most 96 KiB of
 *          bodies analysed by the run, as a first recall does)
 *   warm   both caches complete (filled once in process with no analysis budget, then left as the runs find them):
 *          unchanged heads are `lstat`ed, not read; every body's terms come from the cache
 * beside `node -e 0` (the machine's pace) in the same rounds, every case once per round in a rotated order after a
 * warm-up. Prints medians and the ratios warm / cold and × `node -e 0` (medians of per-round ratios), and the hook
 * budget (1.5 s, docs/hooks.md) beside the warm runs. Ratios and medians only, never timed assertions. Writes
 * `.bench/recall-cache.json`.
 *
 *   tsx apps/cli/bench/recall-cache.bench.ts
 *   MEMDIR_BENCH_SIZES=200,2000           sizes (default 200,2000,20000)
 *   MEMDIR_BENCH_ROUNDS=9                 rounds per case (default 5)
 *   MEMDIR_BENCH_CLI=path/to/memdir.js    another bundle
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { warmCaches } from "./warmCaches.js"

const here = path.dirname(fileURLToPath(import.meta.url))
const repoRoot = path.resolve(here, "../../..")
const cli = path.resolve(process.env.MEMDIR_BENCH_CLI ?? path.join(repoRoot, "apps/cli/dist/memdir.js"))
const benchDir = path.join(repoRoot, ".bench")
const SIZES = (process.env.MEMDIR_BENCH_SIZES ?? "200,2000,20000").split(",").map(Number)
const ROUNDS = Number(process.env.MEMDIR_BENCH_ROUNDS ?? 5)
const PROMPT = "how should the database migration be tested before the deploy?"
const BUDGET_MS = 1_500
const GENERATOR_VERSION = 1

const types = ["user", "feedback", "project", "reference"] as const
const words = (
  "integration tests database mocks migration deploy freeze review merge branch release pipeline latency " +
  "dashboard ticket oncall incident postgres redis queue worker cache schema api client auth token retry " +
  "timeout budget owner team frontend backend flaky lint format naming commit changelog feature flag rollout " +
  "compliance audit storage bucket region cost invoice weekly standup planning sprint roadmap decision"
).split(" ")

/** `size` memories (seeded: the same files on every machine), reused while the marker matches. */
const corpus = (size: number): string => {
  const memoryDir = path.join(benchDir, `recall-cache-${size}`, "memory")
  const marker = path.join(benchDir, `recall-cache-${size}`, ".generated")
  if (fs.existsSync(marker) && fs.readFileSync(marker, "utf8") === `${GENERATOR_VERSION}:${size}\n`) return memoryDir
  fs.rmSync(path.dirname(memoryDir), { recursive: true, force: true })
  fs.mkdirSync(memoryDir, { recursive: true })
  let seed = 11
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31)
  const phrase = (count: number) => Array.from({ length: count }, () => words[next() % words.length]).join(" ")
  const now = Date.now() / 1000
  for (let i = 0; i < size; i++) {
    const type = types[next() % 4]!
    const topic = `${phrase(2)} ${i}`
    const file = `${type}_${topic.replace(/ /g, "_")}.md`
    const body = Array.from({ length: 2 + (next() % 20) }, () => `${phrase(12)}.`).join("\n")
    const absolute = path.join(memoryDir, file)
    fs.writeFileSync(
      absolute,
      `---\nname: ${topic}\ndescription: ${phrase(8)} for the team\ntype: ${type}\n---\n\n${body}\n`
    )
    const mtime = now - (next() % (365 * 86_400))
    fs.utimesSync(absolute, mtime, mtime)
  }
  fs.writeFileSync(marker, `${GENERATOR_VERSION}:${size}\n`)
  return memoryDir
}

const median = (xs: ReadonlyArray<number>) => {
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

const run = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv): number => {
  const start = process.hrtime.bigint()
  const result = spawnSync(process.execPath, args, { env, stdio: ["ignore", "pipe", "pipe"] })
  const ms = Number(process.hrtime.bigint() - start) / 1e6
  if (result.status !== 0) {
    throw new Error(`node ${args.join(" ")} exited ${result.status}: ${result.stderr.toString().slice(0, 2000)}`)
  }
  return ms
}

interface Row {
  readonly size: number
  readonly case: string
  readonly ms: number
  readonly min: number
  readonly max: number
  readonly perNode: number
  readonly perCold?: number | undefined
}

const main = async () => {
  if (!fs.existsSync(cli)) throw new Error(`${cli} missing: run \`pnpm --filter @memdir/cli run bundle\``)
  const { ANTHROPIC_API_KEY: _key, NODE_EXTRA_CA_CERTS: _certs, ...baseEnv } = process.env
  const home = path.join(benchDir, "recall-cache-home")
  fs.mkdirSync(home, { recursive: true })
  const rows: Array<Row> = []
  for (const size of SIZES) {
    const memoryDir = corpus(size)
    const cacheDir = path.join(memoryDir, ".cache")
    const env: NodeJS.ProcessEnv = { ...baseEnv, MEMDIR_MEMORY_DIR: memoryDir, MEMDIR_HOME: home }
    const recall = [cli, "recall", "--selector", "offline", PROMPT]
    fs.rmSync(cacheDir, { recursive: true, force: true })
    await warmCaches(memoryDir)
    const warmCopy = path.join(benchDir, `recall-cache-${size}`, "warm-cache")
    fs.rmSync(warmCopy, { recursive: true, force: true })
    fs.cpSync(cacheDir, warmCopy, { recursive: true })
    const cases: Record<string, () => number> = {
      "node -e 0": () => run(["-e", "0"], baseEnv),
      "recall cold": () => {
        fs.rmSync(cacheDir, { recursive: true, force: true })
        return run(recall, env)
      },
      "recall warm": () => {
        // the complete caches back, as a user's directory has them after a few recalls
        fs.rmSync(cacheDir, { recursive: true, force: true })
        fs.cpSync(warmCopy, cacheDir, { recursive: true })
        return run(recall, env)
      }
    }
    const names = Object.keys(cases)
    const samples: Record<string, Array<number>> = Object.fromEntries(names.map((n) => [n, []]))
    for (const name of names) cases[name]!() // warm-up (the code cache, the page cache)
    for (let round = 0; round < ROUNDS; round++) {
      for (let i = 0; i < names.length; i++) {
        const name = names[(i + round) % names.length]!
        samples[name]!.push(cases[name]!())
      }
    }
    const floor = samples["node -e 0"]!
    const cold = samples["recall cold"]!
    for (const name of names) {
      const xs = samples[name]!
      rows.push({
        size,
        case: name,
        ms: median(xs),
        min: Math.min(...xs),
        max: Math.max(...xs),
        perNode: median(xs.map((x, i) => x / floor[i]!)),
        perCold: name === "recall warm" ? median(xs.map((x, i) => x / cold[i]!)) : undefined
      })
    }
  }
  console.log(`\nrecall with and without its caches, offline (median of ${ROUNDS} alternated runs after a warm-up)`)
  console.log(
    "size".padStart(6) + "  " + "case".padEnd(14) + "ms".padStart(9) + "  " + "min–max".padEnd(20) +
      "× node -e 0".padStart(12) + "warm / cold".padStart(13)
  )
  for (const r of rows) {
    console.log(
      String(r.size).padStart(6) + "  " + r.case.padEnd(14) + r.ms.toFixed(1).padStart(9) + "  " +
        `${r.min.toFixed(1)}–${r.max.toFixed(1)}`.padEnd(20) + `${r.perNode.toFixed(2)}×`.padStart(12) +
        (r.perCold === undefined ? "" : `${r.perCold.toFixed(2)}×`.padStart(13))
    )
  }
  for (const r of rows.filter((r) => r.case === "recall warm")) {
    console.log(
      `warm recall at ${r.size}: ${r.ms.toFixed(0)} ms median, hook budget ${BUDGET_MS} ms: ${
        r.ms <= BUDGET_MS ? "met" : "NOT MET"
      }`
    )
  }
  fs.writeFileSync(
    path.join(benchDir, "recall-cache.json"),
    JSON.stringify({ cli: path.relative(repoRoot, cli), rounds: ROUNDS, node: process.version, rows }, null, 2)
  )
}

void main()
