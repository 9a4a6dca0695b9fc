/**
 * Start-up benchmark: agents and hooks run `memdir` many times a session, so a process must start fast.
 * Ratios measured in one run against baselines (no absolute thresholds):
 *   - `memdir --version`               vs `node -e 0`                          (target ≤ 5×)
 *   - `memdir ls --json` over 20,000   vs a plain node process that reads the
 *     memories                           first 4 KiB of each of the same files (target ≤ 2×)
 * Writes `.bench/startup.json` at the repo root.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..")
const cli = path.join(repoRoot, "apps/cli/dist/memdir.js")
const benchDir = path.join(repoRoot, ".bench")
const memoryDir = path.join(benchDir, "startup-20k", "memory")
const COUNT = 20_000
const RUNS = Number(process.env.MEMDIR_BENCH_RUNS ?? 7)

const types = ["user", "feedback", "project", "reference"] as const
const words = ["database", "pool", "migration", "deploy", "oncall", "review", "testing", "cache", "latency", "auth"]

/** Deterministic generator (LCG), so every run measures the same tree. */
const generate = () => {
  const marker = path.join(memoryDir, ".generated")
  if (fs.existsSync(marker) && fs.readFileSync(marker, "utf8") === String(COUNT)) return
  fs.rmSync(memoryDir, { recursive: true, force: true })
  fs.mkdirSync(memoryDir, { recursive: true })
  let seed = 42
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31)
  for (let i = 0; i < COUNT; i++) {
    const type = types[next() % 4]
    const topic = `${words[next() % 10]}_${words[next() % 10]}_${i}`
    const body = "Body text that recall reads only when selected. ".repeat(1 + (next() % 200))
    fs.writeFileSync(
      path.join(memoryDir, `${type}_${topic}.md`),
      `---\nname: ${topic.replace(/_/g, " ")}\ndescription: Notes about ${topic.replace(/_/g, " ")} for the team\n` +
        `type: ${type}\n---\n\n${body}\n`
    )
  }
  fs.writeFileSync(path.join(memoryDir, "MEMORY.md"), "")
  fs.writeFileSync(marker, String(COUNT))
}

const plainReader = `
const fs = require("node:fs"), path = require("node:path")
const dir = process.argv[1], buf = Buffer.alloc(4096)
let n = 0
for (const name of fs.readdirSync(dir)) {
  if (!name.endsWith(".md")) continue
  const fd = fs.openSync(path.join(dir, name), "r"); fs.readSync(fd, buf, 0, 4096, 0); fs.closeSync(fd); n++
}
process.stdout.write(String(n))
`

const time = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv = process.env): number => {
  const start = process.hrtime.bigint()
  const result = spawnSync(process.execPath, args, { env, stdio: ["ignore", "pipe", "pipe"], maxBuffer: 1 << 30 })
  const ms = Number(process.hrtime.bigint() - start) / 1e6
  if (result.status !== 0) throw new Error(`${args.join(" ")} exited ${result.status}: ${result.stderr}`)
  return ms
}

const median = (xs: Array<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

const measure = (args: ReadonlyArray<string>, env?: NodeJS.ProcessEnv) => {
  time(args, env) // warm-up
  return median(Array.from({ length: RUNS }, () => time(args, env)))
}

if (!fs.existsSync(cli)) throw new Error(`${cli} missing: run \`pnpm --filter @memdir/cli run bundle\``)
generate()
const env = { ...process.env, MEMDIR_MEMORY_DIR: memoryDir, MEMDIR_HOME: path.join(benchDir, "startup-home") }

const nodeBare = measure(["-e", "0"])
const version = measure([cli, "--version"], env)
const plain = measure(["-e", plainReader, memoryDir])
const ls = measure([cli, "ls", "--json"], env)

const rows = [
  { case: "memdir --version", ms: version, baseline: "node -e 0", baselineMs: nodeBare, target: 5 },
  { case: `memdir ls --json (${COUNT} files)`, ms: ls, baseline: "plain 4 KiB reader", baselineMs: plain, target: 2 }
].map((r) => ({ ...r, ratio: r.ms / r.baselineMs }))

console.log(`\nstart-up (median of ${RUNS} runs, warm cache)`)
console.log(
  "case".padEnd(36) + "ms".padStart(9) + "  baseline".padEnd(24) + "ms".padStart(9) + "ratio".padStart(8) +
    "target".padStart(8)
)
for (const r of rows) {
  console.log(
    r.case.padEnd(36) + r.ms.toFixed(1).padStart(9) + `  ${r.baseline}`.padEnd(24) +
      r.baselineMs.toFixed(1).padStart(9) +
      `${r.ratio.toFixed(2)}×`.padStart(8) + `≤${r.target}×`.padStart(8)
  )
}
fs.mkdirSync(benchDir, { recursive: true })
fs.writeFileSync(path.join(benchDir, "startup.json"), JSON.stringify({ runs: RUNS, rows }, null, 2))
