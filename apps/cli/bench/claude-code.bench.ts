/**
 * What memdir's hooks cost inside the real Claude Code (docs/hooks.md#what-the-hooks-cost): `claude -p` 2.1.332
 * (test/support/claudeCode.ts, installed into the test cache on first use) against a local Messages API stand-in
 * that answers every request at once, in two scratch users with the same 200 memories: one without memdir's hooks,
 * one where `memdir hooks install --agent claude --model-calls off` set them up. Each round runs, in a rotated order:
 *
 *   one prompt    `claude -p PROMPT`                                      a one-prompt session
 *   two prompts   `claude -p --input-format stream-json` with 2 prompts   one session, two prompts
 *
 * for both users, after a warm-up round (which also fills the recall caches). Per round:
 *   per session = memdir's one-prompt session − the bare one;
 *   per prompt  = (memdir's two-prompt session − the bare one) − per session: what one more prompt costs (its
 *                 UserPromptSubmit and Stop hooks), SessionStart and SessionEnd cancelled out.
 * Medians of the per-round deltas beside the targets of issue 24 (≤ 0.4 s per prompt, ≤ 0.6 s per one-prompt
 * session). Medians only, never timed assertions. Every process runs without NODE_EXTRA_CA_CERTS (the hooks talk to
 * no network; a CA bundle costs each Node start 40–90 ms here). Writes `.bench/claude-code.json` at the repo root.
 *
 *   tsx apps/cli/bench/claude-code.bench.ts
 *   MEMDIR_BENCH_ROUNDS=11                  rounds (default 7)
 *   MEMDIR_BENCH_CLI=path/to/memdir.js      another bundle (its package's bin, when it is in one, runs it)
 *   MEMDIR_BENCH_BEFORE_CLI=path/memdir.js  also a third user whose hooks run that bundle (say, the commit before a
 *                                           change), in the same rounds: its added costs printed beside
 *   MEMDIR_BENCH_LABEL=before               writes `.bench/claude-code-before.json`
 *   MEMDIR_BENCH_HOOKD_LINGER_MS=0          the hook daemon leaves with each session (default: memdir's 60 s, so
 *                                           back-to-back sessions share it): every session starts without one
 *   MEMDIR_BENCH_MCP=1                      also two users without hooks, each with one MCP server in its project's
 *                                           .mcp.json: \`memdir mcp\` (docs/mcp.md), and a minimal stdio server that
 *                                           only answers initialize and tools/list: one-prompt sessions, what each
 *                                           adds to the bare one (Claude Code waits for its MCP servers before the
 *                                           first request, so a server's start-up is on every session's path)
 */
import * as MessagesApiServer from "@memdir/testing/MessagesApiServer"
import * as Effect from "effect/Effect"
import { execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

/** What this bench uses of test/support/claudeCode.ts (the system tests' Claude Code: same install, same users). */
interface ClaudeCodeSupport {
  readonly CLAUDE_CODE_VERSION: string
  readonly claudeBin: string
  readonly ensureClaudeCode: () => string | undefined
  readonly makeScratchUser: (scratch: string, name: string) => {
    readonly home: string
    readonly project: string
    readonly memoryDir: string
    readonly env: (extra?: Record<string, string>) => Record<string, string>
  }
}
// loaded by path: this package's type-check covers apps/cli only, and test/ is a project of its own
const support = "../../../test/support/claudeCode.js"
const { CLAUDE_CODE_VERSION, claudeBin, ensureClaudeCode, makeScratchUser }: ClaudeCodeSupport = await import(support)

const here = path.dirname(fileURLToPath(import.meta.url))
const repoRoot = path.resolve(here, "../../..")
const cli = path.resolve(process.env.MEMDIR_BENCH_CLI ?? path.join(repoRoot, "apps/cli/dist/memdir.js"))
const benchDir = path.join(repoRoot, ".bench")
const ROUNDS = Number(process.env.MEMDIR_BENCH_ROUNDS ?? 7)
const LINGER = process.env.MEMDIR_BENCH_HOOKD_LINGER_MS
const LABEL = process.env.MEMDIR_BENCH_LABEL
const MCP = process.env.MEMDIR_BENCH_MCP === "1"
const BEFORE_CLI = process.env.MEMDIR_BENCH_BEFORE_CLI === undefined ?
  undefined :
  path.resolve(process.env.MEMDIR_BENCH_BEFORE_CLI)
const TARGET_PROMPT_MS = 400
const TARGET_SESSION_MS = 600
const PROMPTS = [
  "how should the database migration be tested before the deploy?",
  "and what does the cache latency review say about the pool?"
] as const
const MEMORIES = 200

const types = ["user", "feedback", "project", "reference"] as const
const words = ["database", "pool", "migration", "deploy", "oncall", "review", "testing", "cache", "latency", "auth"]

/** `MEMORIES` memories and their index (150 lines), deterministic, as hook.bench.ts makes them. */
const writeMemories = (memoryDir: string) => {
  let seed = 7
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31)
  const index: Array<string> = []
  for (let i = 0; i < MEMORIES; i++) {
    const type = types[next() % 4]!
    const topic = `${words[next() % 10]} ${words[next() % 10]} ${i}`
    const file = `${type}_${topic.replace(/ /g, "_")}.md`
    const description = `Notes about ${topic} for the team`
    const body = "Body text that recall reads only when it selects this memory. ".repeat(2 + (next() % 30))
    fs.writeFileSync(
      path.join(memoryDir, file),
      `---\nname: ${topic}\ndescription: ${description}\ntype: ${type}\n---\n\n${body}\n`
    )
    if (index.length < 150) index.push(`- [${topic}](${file}) — ${description}`)
  }
  fs.writeFileSync(path.join(memoryDir, "MEMORY.md"), `${index.join("\n")}\n`)
}

type User = ReturnType<ClaudeCodeSupport["makeScratchUser"]>

/**
 * A scratch user with the memories, `memdir` on PATH running `cli`, and memdir's hooks when `hooks`. The package's
 * `memdir-hook` (what install writes, where the package has it) is linked beside it, as npm links a package's bins.
 */
const makeUser = (scratch: string, name: string, hooks: boolean, cli: string): User => {
  const user = makeScratchUser(scratch, name)
  fs.writeFileSync(
    path.join(user.home, "bin", "memdir"),
    `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(cli)} "$@"\n`,
    { mode: 0o755 }
  )
  const hookScript = path.join(path.dirname(cli), "memdir-hook")
  fs.rmSync(path.join(user.home, "bin", "memdir-hook"), { force: true })
  if (fs.existsSync(hookScript)) fs.symlinkSync(hookScript, path.join(user.home, "bin", "memdir-hook"))
  writeMemories(user.memoryDir)
  if (hooks) {
    execFileSync(
      process.execPath,
      [cli, "hooks", "install", "--agent", "claude", "--model-calls", "off"],
      { cwd: user.project, env: user.env(), stdio: "ignore" }
    )
  }
  return user
}

/** The smallest stdio MCP server: answers initialize and tools/list (no tools), nothing else (a floor for any server). */
const MINIMAL_MCP_SERVER = `let buf = ""
process.stdin.on("data", (d) => {
  buf += d
  let i
  while ((i = buf.indexOf("\\n")) >= 0) {
    const msg = JSON.parse(buf.slice(0, i))
    buf = buf.slice(i + 1)
    if (msg.id === undefined) continue
    const result = msg.method === "initialize"
      ? { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "minimal", version: "1" } }
      : msg.method === "tools/list" ? { tools: [] } : {}
    process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: msg.id, result }) + "\\n")
  }
})
`

/** `user`'s project gets one MCP server, `memdir` (as docs/mcp.md adds it), approved in its local settings. */
const addMcpServer = (user: User, command: string, args: ReadonlyArray<string>) => {
  fs.writeFileSync(
    path.join(user.project, ".mcp.json"),
    JSON.stringify({ mcpServers: { memdir: { command, args } } }, null, 2)
  )
  fs.mkdirSync(path.join(user.project, ".claude"), { recursive: true })
  fs.writeFileSync(
    path.join(user.project, ".claude", "settings.local.json"),
    JSON.stringify({ enableAllProjectMcpServers: true }, null, 2)
  )
}

const streamJsonPrompt = (text: string) =>
  JSON.stringify({ type: "user", message: { role: "user", content: [{ type: "text", text }] } }) + "\n"

/** `claude args` with `input` on stdin, timed from spawn to exit; fails on a non-zero exit. */
const timeClaude = (user: User, env: Record<string, string>, args: ReadonlyArray<string>, input = "") =>
  Effect.callback<number, Error>((resume) => {
    const start = process.hrtime.bigint()
    const child = spawn(claudeBin, args, { cwd: user.project, env, stdio: ["pipe", "ignore", "pipe"] })
    let stderr = ""
    child.stderr.on("data", (chunk) => (stderr += chunk))
    child.on("error", (error) => resume(Effect.fail(error)))
    child.on("close", (code) => {
      const ms = Number(process.hrtime.bigint() - start) / 1e6
      resume(
        code === 0 ? Effect.succeed(ms) : Effect.fail(new Error(`claude exited ${code}: ${stderr.slice(0, 2000)}`))
      )
    })
    child.stdin.end(input)
  })

const median = (xs: ReadonlyArray<number>) => {
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

const main = Effect.gen(function*() {
  const skip = ensureClaudeCode()
  if (skip !== undefined) return yield* Effect.fail(new Error(skip))
  if (!fs.existsSync(cli)) {
    return yield* Effect.fail(new Error(`${cli} missing: run \`pnpm --filter @memdir/cli run bundle\``))
  }
  if (BEFORE_CLI !== undefined && !fs.existsSync(BEFORE_CLI)) {
    return yield* Effect.fail(new Error(`${BEFORE_CLI} (MEMDIR_BENCH_BEFORE_CLI) missing`))
  }
  const scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "memdir-bench-claude-")))
  yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(scratch, { recursive: true, force: true })))
  const server = yield* MessagesApiServer.make({ handler: () => MessagesApiServer.text("done") })
  // a copy of the package as npm installs it (package.json, bin/, dist/; no build.mjs) and the `memdir` its bin names,
  // which is what a user's hooks run: the hook daemon is chosen by the bundle it runs, and a rebuild mid-bench would
  // start another. A bundle outside a package (no bin) is copied and run as it is.
  const copyBundle = (from: string, name: string) => {
    const pkg = path.dirname(path.dirname(from))
    const target = path.join(scratch, name)
    const manifest = path.join(pkg, "package.json")
    const bin: unknown = fs.existsSync(manifest) ? JSON.parse(fs.readFileSync(manifest, "utf8")).bin?.memdir : undefined
    if (typeof bin !== "string") {
      fs.cpSync(path.dirname(from), target, { recursive: true })
      return path.join(target, path.basename(from))
    }
    for (const part of ["package.json", path.dirname(bin), path.basename(path.dirname(from))]) {
      fs.cpSync(path.join(pkg, part), path.join(target, part), { recursive: true })
    }
    return path.join(target, bin)
  }
  const bundle = copyBundle(cli, "dist")
  const users: Record<string, User> = {
    bare: makeUser(scratch, "bare", false, bundle),
    memdir: makeUser(scratch, "memdir", true, bundle),
    ...(BEFORE_CLI === undefined
      ? {}
      : { before: makeUser(scratch, "before", true, copyBundle(BEFORE_CLI, "dist-before")) }),
    ...(MCP
      ? {
        "mcp server": makeUser(scratch, "mcp", false, bundle),
        "minimal mcp server": makeUser(scratch, "minimal", false, bundle)
      }
      : {})
  }
  if (MCP) {
    addMcpServer(users["mcp server"]!, path.join(users["mcp server"]!.home, "bin", "memdir"), ["mcp"])
    const minimal = path.join(scratch, "minimal-mcp-server.cjs")
    fs.writeFileSync(minimal, MINIMAL_MCP_SERVER)
    addMcpServer(users["minimal mcp server"]!, process.execPath, [minimal])
  }
  const envOf = (user: User) => {
    const { NODE_EXTRA_CA_CERTS: _certs, ...env } = user.env({
      ANTHROPIC_BASE_URL: server.url,
      ANTHROPIC_API_KEY: "sk-ant-test-dummy",
      // `0`: the daemon leaves with each session, so every session starts without one (the cold case)
      ...(LINGER === undefined ? {} : { MEMDIR_HOOKD_LINGER_MS: LINGER })
    })
    return env
  }
  const cases: Record<string, Effect.Effect<number, Error>> = {}
  for (const [name, user] of Object.entries(users)) {
    const env = envOf(user)
    cases[`${name} one prompt`] = timeClaude(user, env, ["-p", PROMPTS[0]])
    if (name.includes("mcp")) continue // one-prompt sessions only: what a server's start adds
    cases[`${name} two prompts`] = timeClaude(
      user,
      env,
      ["-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"],
      PROMPTS.map(streamJsonPrompt).join("")
    )
  }
  const names = Object.keys(cases)
  const samples: Record<string, Array<number>> = Object.fromEntries(names.map((n) => [n, []]))
  for (const name of names) yield* cases[name]! // warm-up: code cache, recall caches, Claude Code's own state
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < names.length; i++) {
      const name = names[(i + round) % names.length]!
      samples[name]!.push(yield* cases[name]!)
    }
  }
  /** What `user`'s hooks add per round: to a one-prompt session, and per prompt. */
  const added = (user: string) => {
    const perSession = samples[`${user} one prompt`]!.map((ms, i) => ms - samples["bare one prompt"]![i]!)
    const perPrompt = samples[`${user} two prompts`]!.map((ms, i) =>
      ms - samples["bare two prompts"]![i]! - perSession[i]!
    )
    return { perSession, perPrompt }
  }
  const { perPrompt, perSession } = added("memdir")
  const before = BEFORE_CLI === undefined ? undefined : added("before")
  const row = (label: string, xs: ReadonlyArray<number>, target?: number) =>
    label.padEnd(42) + median(xs).toFixed(0).padStart(7) + "  " +
    `${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}`.padEnd(14) +
    (target === undefined ? "" : `≤ ${target} ms: ${median(xs) <= target ? "met" : "NOT MET"}`)
  console.log(
    `\nmemdir's hooks in the real Claude Code ${CLAUDE_CODE_VERSION} (\`claude -p\`, local Messages API stand-in, ` +
      `${MEMORIES} memories; median of ${ROUNDS} alternated rounds after a warm-up)`
  )
  console.log("case".padEnd(42) + "ms".padStart(7) + "  " + "min–max".padEnd(14) + "target")
  for (const name of names) console.log(row(name, samples[name]!))
  console.log(row("added per one-prompt session", perSession, TARGET_SESSION_MS))
  console.log(row("added per prompt", perPrompt, TARGET_PROMPT_MS))
  if (before !== undefined) {
    console.log(row("before: added per one-prompt session", before.perSession, TARGET_SESSION_MS))
    console.log(row("before: added per prompt", before.perPrompt, TARGET_PROMPT_MS))
  }
  const mcpAdded = (user: string) => samples[`${user} one prompt`]!.map((ms, i) => ms - samples["bare one prompt"]![i]!)
  if (MCP) {
    console.log(row("memdir mcp: added per one-prompt session", mcpAdded("mcp server")))
    console.log(row("minimal MCP server: added per session", mcpAdded("minimal mcp server")))
  }
  const requests = (yield* server.requests).length
  fs.mkdirSync(benchDir, { recursive: true })
  fs.writeFileSync(
    path.join(benchDir, `claude-code${LABEL === undefined ? "" : `-${LABEL}`}.json`),
    JSON.stringify(
      {
        cli: path.relative(repoRoot, cli),
        claudeCode: CLAUDE_CODE_VERSION,
        rounds: ROUNDS,
        memories: MEMORIES,
        node: process.version,
        requests,
        targets: { perPromptMs: TARGET_PROMPT_MS, perSessionMs: TARGET_SESSION_MS },
        cases: Object.fromEntries(names.map((name) => [name, { ms: median(samples[name]!), samples: samples[name] }])),
        addedPerSession: { ms: median(perSession), samples: perSession },
        addedPerPrompt: { ms: median(perPrompt), samples: perPrompt },
        ...(MCP ?
          {
            mcpServerAddedPerSession: { ms: median(mcpAdded("mcp server")), samples: mcpAdded("mcp server") },
            minimalMcpServerAddedPerSession: {
              ms: median(mcpAdded("minimal mcp server")),
              samples: mcpAdded("minimal mcp server")
            }
          } :
          {}),
        ...(before === undefined ? {} : {
          before: {
            cli: BEFORE_CLI,
            addedPerSession: { ms: median(before.perSession), samples: before.perSession },
            addedPerPrompt: { ms: median(before.perPrompt), samples: before.perPrompt }
          }
        })
      },
      null,
      2
    ) + "\n"
  )
})

Effect.runPromise(Effect.scoped(main)).catch((error) => {
  console.error(String(error))
  process.exitCode = 1
})
