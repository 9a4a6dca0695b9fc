/**
 * Ctrl-C and kill end a command honestly: the bundled CLI as a child process, stopped by SIGINT or SIGTERM while it
 * waits on the local Messages API server (which holds the request until the signal was sent), exits 130 / 143
 * with one line saying what was kept (with `--json`: one `{"error": {"_tag": "Interrupted", …}}` document on
 * stdout), its locks released, the extraction cursor and the memories as they were (docs/cli.md#exit-codes).
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as MessagesApiServer from "@memdir/testing/MessagesApiServer"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import { type ChildProcessWithoutNullStreams, execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { buildCli, cliPath, type CliRun, parseJson, repoRoot, runCli, scratchHomeEnv } from "./support/cli.js"

const fixtures = path.join(repoRoot, "packages/core/test/fixtures/transcripts")
const SESSION_ID = "6b0d9a4e-2f7c-4c1e-8d35-91a2f0e7c3d1"

let scratch: string
let home: string
let project: string
let memoryDir: string

const memdir = (args: ReadonlyArray<string>, env: Record<string, string> = {}): Effect.Effect<CliRun> =>
  runCli(args, { cwd: project, env: scratchHomeEnv(home, env) })

const env = (url: string) => ({ ANTHROPIC_API_KEY: "sk-test", ANTHROPIC_BASE_URL: url })

interface StoppedRun {
  readonly status: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

/**
 * A Messages API server whose requests wait until `release` (the test sends its signal meanwhile), after the
 * scripted `replies`; `waiting` completes when the first held request has arrived.
 */
const holdingServer = (replies: ReadonlyArray<MessagesApiServer.Reply> = []) =>
  Effect.gen(function*() {
    const waiting = yield* Deferred.make<void>()
    const held: Array<() => void> = []
    const server = yield* MessagesApiServer.make({
      replies,
      handler: () =>
        new Promise<MessagesApiServer.Reply>((resolve) => {
          held.push(() => resolve(MessagesApiServer.text("released")))
          Deferred.doneUnsafe(waiting, Effect.void)
        })
    })
    yield* Effect.addFinalizer(() => Effect.sync(() => held.forEach((release) => release())))
    return { server, waiting: Deferred.await(waiting) }
  })

/**
 * Runs `memdir args`, waits until `ready` (given the running child), sends `signal` and returns how the process
 * ended. The child is killed in the scope's finalizer should the test fail before it exits.
 */
const stopWhile = (
  args: ReadonlyArray<string>,
  env: Record<string, string>,
  ready: (child: ChildProcessWithoutNullStreams) => Effect.Effect<void>,
  signal: "SIGINT" | "SIGTERM"
) =>
  Effect.gen(function*() {
    const child = spawn(process.execPath, [cliPath, ...args], { cwd: project, env: scratchHomeEnv(home, env) })
    yield* Effect.addFinalizer(() => Effect.sync(() => child.exitCode === null && child.kill("SIGKILL")))
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    const ended = Effect.callback<StoppedRun>((resume) => {
      child.on("close", (status, endedBy) => resume(Effect.succeed({ status, signal: endedBy, stdout, stderr })))
    })
    yield* ready(child)
    child.kill(signal)
    return yield* ended
  })

/** Ready once the child has written a line to stdout that contains `text`. */
const printed = (text: string) => (child: ChildProcessWithoutNullStreams): Effect.Effect<void> =>
  Effect.callback<void>((resume) => {
    let seen = ""
    child.stdout.on("data", (chunk: string) => {
      seen += chunk
      if (seen.includes(text)) resume(Effect.void)
    })
  })

/** The lock files memdir could leave in the memory directory (index, session, dream lock and its guard). */
const locksIn = (dir: string): Array<string> =>
  fs.existsSync(dir) ?
    fs.readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((p) =>
      /\.lock(\.|$)|consolidate-lock/.test(path.basename(p))
    ) :
    []

const memoryText = (type: string, name: string, description: string, body: string) =>
  `---\nname: ${name}\ndescription: ${description}\ntype: ${type}\n---\n\n${body}\n`

/** A copy of a fixture transcript in the scratch directory (`__MEMORY_DIR__` filled in). */
const transcript = (name: string) => {
  const file = path.join(scratch, name)
  fs.writeFileSync(
    file,
    fs.readFileSync(path.join(fixtures, "claude-code-session.jsonl"), "utf8").replaceAll(
      "__MEMORY_DIR__",
      memoryDir.replace(/\/$/, "")
    )
  )
  return file
}

const interruptedLine = /^memdir: interrupted by (SIGINT|SIGTERM): .+$/gm

beforeAll(() => {
  buildCli()
  scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "memdir-interrupts-")))
  home = path.join(scratch, "home")
  project = path.join(scratch, "shop")
  fs.mkdirSync(project, { recursive: true })
  execFileSync("git", ["init", "-q"], { cwd: project })
  memoryDir = path.join(home, ".memdir", "projects", project.replace(/[^A-Za-z0-9]/g, "-"), "memory")
})

afterAll(() => {
  fs.rmSync(scratch, { recursive: true, force: true })
})

describe("a signal ends a command with 130 / 143 and says what was kept", () => {
  it.live("extract --json, SIGINT while the model is asked: exit 130, one JSON error, cursor and locks as before", () =>
    Effect.scoped(Effect.gen(function*() {
      const file = transcript("interrupted.jsonl")
      // A first, finished extraction of the first four messages leaves a cursor behind.
      const lines = fs.readFileSync(file, "utf8").split("\n").filter((l) => l !== "")
      fs.writeFileSync(file, lines.slice(0, 4).join("\n") + "\n")
      const first = yield* MessagesApiServer.make({ replies: [MessagesApiServer.text("Nothing worth saving.")] })
      const finished = yield* memdir(["extract", "--transcript", file], env(first.url))
      assert.strictEqual(finished.status, 0, finished.stderr)
      const cursorFile = path.join(memoryDir, ".extract", `${SESSION_ID}.json`)
      const cursorBefore = fs.readFileSync(cursorFile, "utf8")
      const memoriesBefore = fs.readdirSync(memoryDir).sort()

      // Then the rest of the session arrives, and the next extraction is stopped while the model thinks.
      fs.writeFileSync(file, lines.join("\n") + "\n")
      const { server, waiting } = yield* holdingServer()
      const run = yield* stopWhile(
        ["extract", "--transcript", file, "--json"],
        env(server.url),
        () => waiting,
        "SIGINT"
      )

      assert.strictEqual(run.status, 130, run.stderr)
      assert.isNull(run.signal)
      const error = parseJson(run).error
      assert.strictEqual(error._tag, "Interrupted")
      assert.strictEqual(error.signal, "SIGINT")
      assert.strictEqual(error.command, "extract")
      assert.strictEqual(error.exitCode, 130)
      assert.strictEqual(
        error.kept,
        "nothing was written; the extraction cursor is unchanged, so the next `memdir extract` reads these messages again"
      )
      assert.strictEqual(error.message, `interrupted by SIGINT: ${error.kept}`)
      // the document is the whole of stdout; the progress lines are on stderr, no second rendering there
      assert.deepStrictEqual([...run.stderr.matchAll(interruptedLine)], [])
      assert.strictEqual(fs.readFileSync(cursorFile, "utf8"), cursorBefore)
      assert.deepStrictEqual(fs.readdirSync(memoryDir).sort(), memoriesBefore)
      assert.deepStrictEqual(locksIn(memoryDir), [])
    })))

  it.live("extract, SIGTERM after the extractor wrote a memory: exit 143, one line saying the memory stays", () =>
    Effect.scoped(Effect.gen(function*() {
      const file = transcript("interrupted-after-write.jsonl")
      const { server, waiting } = yield* holdingServer([
        MessagesApiServer.toolUse("memory_write", {
          path: "feedback_no_db_mocks.md",
          content: memoryText("feedback", "No database mocks", "Integration tests hit a real database", "Never mock.")
        })
      ])
      const args = ["extract", "--transcript", file, "--session", "after-write"]
      const run = yield* stopWhile(args, env(server.url), () => waiting, "SIGTERM")

      assert.strictEqual(run.status, 143, run.stderr)
      assert.strictEqual(run.stdout, "")
      assert.deepStrictEqual([...run.stderr.matchAll(interruptedLine)].map((m) => m[0]), [
        "memdir: interrupted by SIGTERM: the extractor had answered 1 of 2 model calls: memories it wrote before " +
        "the signal stay; the extraction cursor did not move, so the next `memdir extract` reads these messages again"
      ])
      assert.include(fs.readFileSync(path.join(memoryDir, "feedback_no_db_mocks.md"), "utf8"), "Never mock.")
      assert.isFalse(fs.existsSync(path.join(memoryDir, ".extract", "after-write.json")))
      assert.deepStrictEqual(locksIn(memoryDir), [])
    })))

  it.live("dream --force --json, SIGINT while the dreamer is asked: exit 130, lock gone, memories untouched", () =>
    Effect.scoped(Effect.gen(function*() {
      fs.mkdirSync(memoryDir, { recursive: true })
      fs.writeFileSync(path.join(memoryDir, "user_shell.md"), memoryText("user", "Shell", "Uses fish", "fish."))
      fs.rmSync(path.join(memoryDir, ".consolidate-lock"), { force: true })
      const before = fs.readFileSync(path.join(memoryDir, "user_shell.md"), "utf8")
      const { server, waiting } = yield* holdingServer()
      const run = yield* stopWhile(
        ["dream", "--force", "--no-commit", "--json"],
        env(server.url),
        () => waiting,
        "SIGINT"
      )

      assert.strictEqual(run.status, 130, run.stderr)
      const error = parseJson(run).error
      assert.deepStrictEqual(
        { _tag: error._tag, signal: error.signal, command: error.command, exitCode: error.exitCode },
        { _tag: "Interrupted", signal: "SIGINT", command: "dream", exitCode: 130 }
      )
      assert.strictEqual(
        error.kept,
        "the dream lock was released and this dream does not count as a consolidation; no memory was changed"
      )
      // there was no lock before: none after (never consolidated, still due), no guard left behind
      assert.deepStrictEqual(locksIn(memoryDir), [])
      assert.strictEqual(fs.readFileSync(path.join(memoryDir, "user_shell.md"), "utf8"), before)
    })))

  it.live("dream, SIGTERM: exit 143; the lock of the last consolidation is back as it was (empty, same mtime)", () =>
    Effect.scoped(Effect.gen(function*() {
      fs.mkdirSync(memoryDir, { recursive: true })
      const lock = path.join(memoryDir, ".consolidate-lock")
      // whole seconds: an mtime in milliseconds is a float that may not round-trip exactly
      const lastConsolidated = new Date(Math.floor((Date.now() - 3 * 24 * 3_600_000) / 1000) * 1000)
      fs.writeFileSync(lock, "")
      fs.utimesSync(lock, lastConsolidated, lastConsolidated)
      const { server, waiting } = yield* holdingServer()
      const run = yield* stopWhile(["dream", "--force", "--no-commit"], env(server.url), () => waiting, "SIGTERM")

      assert.strictEqual(run.status, 143, run.stderr)
      assert.deepStrictEqual([...run.stderr.matchAll(interruptedLine)].map((m) => m[0]), [
        "memdir: interrupted by SIGTERM: the dream lock was released and this dream does not count as a " +
        "consolidation; no memory was changed"
      ])
      assert.strictEqual(fs.readFileSync(lock, "utf8"), "")
      assert.strictEqual(Math.round(fs.statSync(lock).mtimeMs), lastConsolidated.getTime())
      assert.deepStrictEqual(locksIn(memoryDir), [".consolidate-lock"])
    })))

  it.live("any other command (the MCP server), SIGTERM: exit 143 and the one line", () =>
    Effect.scoped(Effect.gen(function*() {
      const initialize = {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "test", version: "0" } }
      }
      const run = yield* stopWhile(["mcp"], {}, (child) => {
        child.stdin.write(JSON.stringify(initialize) + "\n")
        return printed("\"id\":1")(child)
      }, "SIGTERM")
      assert.strictEqual(run.status, 143, run.stderr)
      assert.deepStrictEqual([...run.stderr.matchAll(interruptedLine)].map((m) => m[0]), [
        "memdir: interrupted by SIGTERM: memdir mcp stopped before it finished; the locks it held were released"
      ])
    })))
})
