/**
 * Hook latency benchmark (docs/hooks.md): how long an agent CLI waits for `memdir hook` on 200 and 2,000 memories,
 * beside the start-up of `memdir --version` and `memdir path`,
 * offline (no key), with the recall caches warm (docs/architecture.md#the-recall-caches: filled once in process, as a
 * directory has them after a few recalls), as child processes fed the hook's JSON on stdin, side by side with the
 * floor `node -e 0` and with `memdir recall --selector offline` (the same recall as a command). Each UserPromptSubmit run is a new session (so
 * nothing is excluded as already surfaced) with a prompt that matches many memories, answered in process
 * (`MEMDIR_HOOK_DAEMON=off`: what the first hook of a session costs); `SessionStart, daemon` is a later hook of one
 * session, answered by the session's hook daemon (docs/hooks.md#the-hook-daemon), asked by `memdir hook` (Node) or by
 * `bin/memdir-hook` (sh and curl, what `hooks install` writes; each has its own daemon). Every case once per round, in a
 * rotated order, after a warm-up round; medians, spread, the ratio against `node -e 0` (median of per-round ratios)
 * and the 1.5 s budget. Ratios and medians only, never timed assertions. Writes `.bench/hook.json` at the repo root.
 *
 *   tsx apps/cli/bench/hook.bench.ts
 *   MEMDIR_BENCH_ROUNDS=15                   rounds per case (default 9)
 *   MEMDIR_BENCH_HOOK_SIZES=200              memory counts (default 200,2000)
 *   MEMDIR_BENCH_CLI=path/to/memdir.js       another bundle
 *   MEMDIR_BENCH_NODE=path/to/node           the Node that runs every case, the floor included (default: this one),
 *                                            e.g. Node 20 for a bundle of Effect 3 against this Effect 4 one
 *   MEMDIR_BENCH_LABEL=before                corpora of their own (`.bench/hook-before-200`), so two bundles never
 *                                            read each other's recall caches
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
const SIZES = (process.env.MEMDIR_BENCH_HOOK_SIZES ?? "200,2000").split(",").map(Number)
const ROUNDS = Number(process.env.MEMDIR_BENCH_ROUNDS ?? 9)
const NODE = process.env.MEMDIR_BENCH_NODE ?? process.execPath
const LABEL = process.env.MEMDIR_BENCH_LABEL === undefined ? "" : `${process.env.MEMDIR_BENCH_LABEL}-`
const PROMPT = "how should the database migration be tested before the deploy?"
const BUDGET_MS = 1_500
const GENERATOR_VERSION = 1

const types = ["user", "feedback", "project", "reference"] as const
const words = ["database", "pool", "migration", "deploy", "oncall", "review", "testing", "cache", "latency", "auth"]
const sentence = "Body text that recall reads only when it selects this memory. "

/** `size` memories and their index, deterministic, reused while the marker matches. */
const corpus = (size: number): string => {
  const memoryDir = path.join(benchDir, `hook-${LABEL}${size}`, "memory")
  const marker = path.join(benchDir, `hook-${LABEL}${size}`, ".generated")
  if (fs.existsSync(marker) && fs.readFileSync(marker, "utf8") === `${GENERATOR_VERSION}:${size}\n`) return memoryDir
  fs.rmSync(path.dirname(memoryDir), { recursive: true, force: true })
  fs.mkdirSync(memoryDir, { recursive: true })
  let seed = 7
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31)
  const now = Date.now() / 1000
  const index: Array<string> = []
  for (let i = 0; i < size; i++) {
    const type = types[next() % 4]!
    const topic = `${words[next() % 10]} ${words[next() % 10]} ${i}`
    const file = `${type}_${topic.replace(/ /g, "_")}.md`
    const description = `Notes about ${topic} for the team`
    const absolute = path.join(memoryDir, file)
    const body = sentence.repeat(2 + (next() % 30))
    fs.writeFileSync(absolute, `---\nname: ${topic}\ndescription: ${description}\ntype: ${type}\n---\n\n${body}\n`)
    const mtime = now - (next() % (90 * 86_400))
    fs.utimesSync(absolute, mtime, mtime)
    if (index.length < 150) index.push(`- [${topic}](${file}) — ${description}`)
  }
  fs.writeFileSync(path.join(memoryDir, "MEMORY.md"), `${index.join("\n")}\n`)
  fs.writeFileSync(marker, `${GENERATOR_VERSION}:${size}\n`)
  return memoryDir
}

type Case = () => number

let sessionCounter = 0
const hookInput = (event: "UserPromptSubmit" | "SessionStart") =>
  JSON.stringify({
    session_id: `bench-${process.pid}-${sessionCounter++}`,
    transcript_path: null,
    cwd: repoRoot,
    hook_event_name: event,
    ...(event === "UserPromptSubmit" ? { prompt: PROMPT } : { source: "startup" })
  })

const spawnCase = (
  args: ReadonlyArray<string>,
  env: NodeJS.ProcessEnv,
  input?: () => string,
  expectOutput = false,
  file = NODE
): Case =>
() => {
  const stdin = input?.()
  const start = process.hrtime.bigint()
  const result = spawnSync(file, args, { env, input: stdin, stdio: ["pipe", "pipe", "pipe"] })
  const ms = Number(process.hrtime.bigint() - start) / 1e6
  if (result.status !== 0 || (expectOutput && result.stdout.length === 0)) {
    throw new Error(
      `${file} ${args.join(" ")} exited ${result.status} (${result.stdout.length} bytes out): ${
        result.stderr.toString().slice(0, 2000)
      }`
    )
  }
  return ms
}

const median = (xs: ReadonlyArray<number>) => {
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

const measure = async (size: number) => {
  const memoryDir = corpus(size)
  await warmCaches(memoryDir)
  const { ANTHROPIC_API_KEY: _key, ...baseEnv } = process.env
  const home = path.join(benchDir, `hook-${LABEL}home`)
  fs.mkdirSync(home, { recursive: true })
  // the hook in process, as the first hook of a session runs it (no session daemon: docs/hooks.md#the-hook-daemon)
  const env: NodeJS.ProcessEnv = {
    ...baseEnv,
    MEMDIR_MEMORY_DIR: memoryDir,
    MEMDIR_HOME: home,
    MEMDIR_HOOK_DAEMON: "off"
  }
  // …and a later hook of one session, answered by the daemon its first hook started
  const { MEMDIR_HOOK_DAEMON: _off, ...daemonEnv } = env
  const daemonSession = `bench-daemon-${process.pid}-${size}`
  const sessionHook = (event: "SessionStart" | "SessionEnd") => () =>
    JSON.stringify({ session_id: daemonSession, transcript_path: null, cwd: repoRoot, hook_event_name: event })
  spawnCase([cli, "hook"], daemonEnv, sessionHook("SessionStart"), true)()
  // the hook script beside the bundle's package bin, when there is one; its fallback runs the `node` first on PATH
  const script = path.join(path.dirname(cli), "..", "bin", "memdir-hook")
  const scriptEnv = { ...daemonEnv, PATH: [path.dirname(NODE), daemonEnv.PATH ?? ""].join(path.delimiter) }
  const scriptCase = (input: () => string) => spawnCase([], scriptEnv, input, true, script)
  const scriptCases: Record<string, Case> = fs.existsSync(script)
    ? {
      "memdir-hook UPS, daemon": scriptCase(() => hookInput("UserPromptSubmit")),
      "memdir-hook SessionStart, daemon": scriptCase(sessionHook("SessionStart"))
    }
    : {}
  if (fs.existsSync(script)) scriptCase(sessionHook("SessionStart"))()
  const cases: Record<string, Case> = {
    "node -e 0": spawnCase(["-e", "0"], baseEnv),
    "--version": spawnCase([cli, "--version"], env, undefined, true),
    "path": spawnCase([cli, "path"], env, undefined, true),
    "hook UserPromptSubmit": spawnCase([cli, "hook"], env, () => hookInput("UserPromptSubmit"), true),
    "hook SessionStart": spawnCase([cli, "hook"], env, () => hookInput("SessionStart"), true),
    "hook SessionStart, daemon": spawnCase([cli, "hook"], daemonEnv, sessionHook("SessionStart"), true),
    "hook UPS, daemon": spawnCase([cli, "hook"], daemonEnv, () => hookInput("UserPromptSubmit"), true),
    ...scriptCases,
    "recall --selector offline": spawnCase([cli, "recall", "--selector", "offline", PROMPT], env)
  }
  const names = Object.keys(cases)
  const samples: Record<string, Array<number>> = Object.fromEntries(names.map((n) => [n, []]))
  for (const name of names) cases[name]!() // warm-up
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < names.length; i++) {
      const name = names[(i + round) % names.length]!
      samples[name]!.push(cases[name]!())
    }
  }
  spawnCase([cli, "hook"], daemonEnv, sessionHook("SessionEnd"))() // the session's daemon goes with it
  if (fs.existsSync(script)) spawnCase([], scriptEnv, sessionHook("SessionEnd"), false, script)()
  const floor = samples["node -e 0"]!
  const rows = names.map((name) => {
    const xs = samples[name]!
    const ratio = median(xs.map((x, i) => x / floor[i]!))
    return { case: name, ms: median(xs), min: Math.min(...xs), max: Math.max(...xs), ratio }
  })
  console.log(
    `\nhook latency, ${size} memories, offline, recall caches warm (median of ${ROUNDS} alternated runs after a warm-up)`
  )
  console.log("case".padEnd(34) + "ms".padStart(9) + "  " + "min–max".padEnd(18) + "× node -e 0".padStart(12))
  for (const r of rows) {
    console.log(
      r.case.padEnd(34) + r.ms.toFixed(1).padStart(9) + "  " + `${r.min.toFixed(1)}–${r.max.toFixed(1)}`.padEnd(18) +
        `${r.ratio.toFixed(2)}×`.padStart(12)
    )
  }
  const hook = rows.find((r) => r.case === "hook UserPromptSubmit")!
  console.log(
    `\nUserPromptSubmit: ${hook.ms.toFixed(0)} ms median, budget ${BUDGET_MS} ms: ${
      hook.ms <= BUDGET_MS ? "met" : "NOT MET"
    }`
  )
  return { size, rows }
}

const main = async () => {
  if (!fs.existsSync(cli)) throw new Error(`${cli} missing: run \`pnpm --filter @memdir/cli run bundle\``)
  const sizes = []
  for (const size of SIZES) sizes.push(await measure(size))
  fs.writeFileSync(
    path.join(benchDir, `hook${LABEL === "" ? "" : `-${LABEL.slice(0, -1)}`}.json`),
    JSON.stringify(
      { cli: path.relative(repoRoot, cli), rounds: ROUNDS, node: NODE, budgetMs: BUDGET_MS, sizes },
      null,
      2
    )
  )
}

void main()
