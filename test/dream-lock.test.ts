/**
 * The dream lock (`.consolidate-lock`, docs/dream-and-logs.md) against REAL processes: the bundled CLI runs `memdir
 * dream` as child processes that talk, through the real SDK, to the local Messages API server in this test process. Two
 * dreams at once: exactly one runs. A SIGKILLed holder's lock is taken over. A lock held by a live process (a `sleep`
 * child) for more than an hour is stale and taken over (its mtime is set back rather than waited for). A failed dream
 * rolls the lock back: the previous mtime is restored, or a lock that did not exist is removed.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as MessagesApiServer from "@memdir/testing/MessagesApiServer"
import * as Effect from "effect/Effect"
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { buildCli, cliPath as cli, parseJson, scratchHomeEnv } from "./support/cli.js"

const HOUR = 3_600_000

let scratch: string
let home: string
let project: string
let memoryDir: string
let lockFile: string

interface Run {
  readonly status: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

/** Start `memdir …` (asynchronously: the in-process server must keep answering). */
const start = (args: ReadonlyArray<string>, env: Record<string, string>) => {
  const child = spawn(process.execPath, [cli, ...args], {
    cwd: project,
    env: scratchHomeEnv(home, env),
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  child.stdout!.on("data", (chunk) => (stdout += chunk))
  child.stderr!.on("data", (chunk) => (stderr += chunk))
  const finished = new Promise<Run>((resolve) =>
    child.on("close", (status, signal) => resolve({ status, signal, stdout, stderr }))
  )
  return { child, finished }
}

const run = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  Effect.promise(() => start(args, env).finished)

const json = parseJson

const modelEnv = (url: string) => ({
  ANTHROPIC_API_KEY: "sk-test-dream-lock",
  ANTHROPIC_BASE_URL: url,
  MEMDIR_MODEL_MAX_RETRIES: "0"
})

const writeLock = (content: string, mtime: number) => {
  fs.mkdirSync(memoryDir, { recursive: true })
  fs.writeFileSync(lockFile, content)
  fs.utimesSync(lockFile, new Date(mtime), new Date(mtime))
}

const lockState = () => ({ content: fs.readFileSync(lockFile, "utf8"), mtime: fs.statSync(lockFile).mtimeMs })

/** Polls until `ready` holds (or fails after `timeoutMs`). */
const waitUntil = (ready: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000) =>
  Effect.promise(async () => {
    const deadline = Date.now() + timeoutMs
    while (!(await ready())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
  })

const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) =>
    child.exitCode !== null || child.signalCode !== null ? resolve() : child.once("exit", () => resolve())
  )

beforeAll(() => {
  buildCli()
  scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "memdir-dream-lock-")))
  home = path.join(scratch, "home")
  project = path.join(scratch, "app")
  fs.mkdirSync(project, { recursive: true })
  execFileSync("git", ["init", "-q"], { cwd: project })
  const projectDir = path.join(home, ".memdir", "projects", project.replace(/[^A-Za-z0-9]/g, "-"))
  memoryDir = path.join(projectDir, "memory")
  lockFile = path.join(memoryDir, ".consolidate-lock")
  fs.mkdirSync(memoryDir, { recursive: true })
  fs.writeFileSync(
    path.join(memoryDir, "user_role.md"),
    "---\nname: Role\ndescription: Data engineer, new to React\ntype: user\n---\nData engineer.\n"
  )
  fs.writeFileSync(path.join(memoryDir, "MEMORY.md"), "- [Role](user_role.md) — data engineer, new to React\n")
  // the reference layout: transcripts beside memory/
  for (let i = 0; i < 6; i++) {
    fs.writeFileSync(path.join(projectDir, `session-${i}.jsonl`), `{"role":"user","content":"hello ${i}"}\n`)
  }
})

afterAll(() => {
  fs.rmSync(scratch, { recursive: true, force: true })
})

describe("the dream lock across real processes", () => {
  it.live("two dreams at once: exactly one runs, the other is stopped by the lock", () =>
    Effect.scoped(Effect.gen(function*() {
      fs.rmSync(lockFile, { force: true })
      // The model answers only once one of the two processes has finished: the one that lost the lock finishes
      // without calling it. Were both to hold the lock, both would wait here (then both run, and the test fails).
      let release: () => void = () => {}
      const oneFinished = new Promise<void>((resolve) => (release = resolve))
      const server = yield* MessagesApiServer.make({
        handler: async () => {
          await Promise.race([oneFinished, new Promise((resolve) => setTimeout(resolve, 20_000))])
          return MessagesApiServer.text("Nothing needed consolidating.")
        }
      })
      const env = modelEnv(server.url)
      const a = start(["dream", "--force", "--json"], env)
      const b = start(["dream", "--force", "--json"], env)
      a.finished.then(release)
      b.finished.then(release)
      const results = yield* Effect.promise(() => Promise.all([a.finished, b.finished]))
      for (const result of results) assert.strictEqual(result.status, 0, result.stderr)
      const outcomes = results.map(json)
      assert.strictEqual(outcomes.filter((o) => o.ran).length, 1, JSON.stringify(outcomes.map((o) => o.gates.checks)))
      const loser = outcomes.find((o) => !o.ran)
      assert.strictEqual(loser.stoppedBy, "lock")
      assert.strictEqual((yield* server.requests).length, 1)
      // released: free, dated at the end of the dream
      const lock = lockState()
      assert.strictEqual(lock.content, "")
      assert.isAtMost(Math.abs(lock.mtime - Date.now()), 60_000)
    })))

  it.live("a holder killed with SIGKILL mid-dream: its PID stays in the lock, the next dream takes it over", () =>
    Effect.scoped(Effect.gen(function*() {
      fs.rmSync(lockFile, { force: true })
      let answer: () => void = () => {}
      const answered = new Promise<void>((resolve) => (answer = resolve))
      const server = yield* MessagesApiServer.make({
        handler: async () => {
          await answered
          return MessagesApiServer.text("done")
        }
      })
      yield* Effect.addFinalizer(() => Effect.sync(answer))
      const holder = start(["dream", "--force", "--json"], modelEnv(server.url))
      yield* Effect.addFinalizer(() => Effect.sync(() => holder.child.kill("SIGKILL")))
      // the model has been asked: the holder is mid-dream, holding the lock
      yield* waitUntil(() => Effect.runPromise(Effect.map(server.requests, (r) => r.length === 1)), "the model call")
      assert.strictEqual(lockState().content, String(holder.child.pid))
      holder.child.kill("SIGKILL")
      const killed = yield* Effect.promise(() => holder.finished)
      assert.strictEqual(killed.signal, "SIGKILL")
      assert.strictEqual(lockState().content, String(holder.child.pid), "a killed holder cannot clean up")

      answer()
      const next = json(yield* run(["dream", "--force", "--json"], modelEnv(server.url)))
      assert.isTrue(next.ran, JSON.stringify(next.gates))
      assert.strictEqual(next.gates.lock.status, "dead-holder")
      assert.strictEqual(next.gates.lock.holder, holder.child.pid)
      assert.strictEqual(lockState().content, "")
    })))

  it.live("a lock held by a live process: respected for an hour, then stale and taken over", () =>
    Effect.scoped(Effect.gen(function*() {
      const sleeper = spawn("sleep", ["120"], { stdio: "ignore" })
      yield* Effect.addFinalizer(() => Effect.promise(() => (sleeper.kill("SIGKILL"), exited(sleeper))))
      const server = yield* MessagesApiServer.make({ handler: () => MessagesApiServer.text("done") })
      const env = modelEnv(server.url)

      writeLock(String(sleeper.pid), Date.now() - 10 * 60_000)
      const held = yield* run(["dream", "--force", "--json"], env)
      assert.strictEqual(held.status, 0, held.stderr)
      const stopped = json(held)
      assert.isFalse(stopped.ran)
      assert.strictEqual(stopped.stoppedBy, "lock")
      assert.strictEqual(stopped.gates.lock.status, "held")
      assert.strictEqual(lockState().content, String(sleeper.pid), "a held lock is left alone")
      assert.strictEqual((yield* server.requests).length, 0)

      // the same live PID, an hour and a minute later (PID reuse, a hung holder): stale
      writeLock(String(sleeper.pid), Date.now() - HOUR - 60_000)
      const taken = json(yield* run(["dream", "--force", "--json"], env))
      assert.isTrue(taken.ran)
      assert.strictEqual(taken.gates.lock.status, "stale")
      assert.strictEqual(sleeper.exitCode, null, "the stale holder itself is not touched")
      assert.strictEqual(lockState().content, "")
    })))

  it.live("a failed dream rolls the lock back: previous mtime restored, or a new lock removed", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* MessagesApiServer.make({
        handler: () => MessagesApiServer.invalidRequest("scripted failure")
      })
      const env = modelEnv(server.url)

      const previous = Math.floor((Date.now() - 48 * HOUR) / 1000) * 1000
      writeLock("", previous)
      const failed = yield* run(["dream", "--json"], env)
      assert.strictEqual(failed.status, 13, failed.stdout + failed.stderr)
      assert.strictEqual(json(failed).error.kind, "invalid-request")
      assert.deepStrictEqual(lockState(), { content: "", mtime: previous })

      fs.rmSync(lockFile)
      const fresh = yield* run(["dream", "--force"], env)
      assert.strictEqual(fresh.status, 13)
      assert.include(fresh.stderr, "dreamer model")
      assert.isFalse(fs.existsSync(lockFile), "a lock that did not exist before is removed")
      assert.strictEqual((yield* server.requests).length, 2)
    })))
})
