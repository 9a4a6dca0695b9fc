/**
 * The trace of the hooks' background runs, end to end (docs/hooks.md#background-runs): a real `memdir hook` fed the
 * Stop hook's JSON starts the detached job, a local Messages API stand-in refuses its key (401), and the failed run
 * is recorded in `<memdir>/.runs/background.jsonl` and shown by `memdir doctor` (text and `--json`) with its fix,
 * never with the key. The detached child is waited for by polling the trace (bounded), not by a fixed sleep.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as MessagesApiServer from "@memdir/testing/MessagesApiServer"
import * as Effect from "effect/Effect"
import { execFile, execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { buildCli, cliPath, parseJson, repoRoot, runCli, scratchHomeEnv } from "./support/cli.js"
import { removeScratch } from "./support/scratch.js"

let scratch: string
let home: string
let project: string
let memoryDir: string

const SECRET_KEY = "sk-ant-api03-refusedrefusedrefusedrefused0123456789"

const memdir = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  runCli(args, { cwd: project, env: scratchHomeEnv(home, env) })

beforeAll(() => {
  buildCli()
  scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "memdir-bgruns-")))
  home = path.join(scratch, "home")
  project = path.join(scratch, "shop")
  fs.mkdirSync(project, { recursive: true })
  execFileSync("git", ["init", "-q"], { cwd: project })
  memoryDir = path.join(home, ".memdir", "projects", project.replace(/[^A-Za-z0-9]/g, "-"), "memory")
  fs.mkdirSync(memoryDir, { recursive: true })
  fs.writeFileSync(
    path.join(memoryDir, "feedback_database_tests.md"),
    "---\nname: Database tests\ndescription: integration tests hit a real database\ntype: feedback\n---\n\nNo mocks.\n"
  )
  fs.writeFileSync(
    path.join(memoryDir, "MEMORY.md"),
    "- [Database tests](feedback_database_tests.md) — real database in integration tests\n"
  )
  // the user's consent to automatic model calls (docs/configuration.md), where that switch exists
  fs.writeFileSync(path.join(home, ".memdir", "settings.json"), JSON.stringify({ automaticModelCalls: true }))
})

// background jobs and a lingering hook daemon may still be writing into the tree
afterAll(() => removeScratch(scratch))

/** Runs `memdir hook` with `input` on stdin. */
const hook = (input: string, env: Record<string, string>) =>
  Effect.callback<{ status: number; stdout: string; stderr: string }>((resume) => {
    const child = execFile(
      process.execPath,
      [cliPath, "hook"],
      { cwd: project, env: scratchHomeEnv(home, { MEMDIR_HOOK_GUARD_MS: "120000", ...env }), encoding: "utf8" },
      (error, stdout, stderr) => {
        const status = error === null ? 0 : typeof error.code === "number" ? error.code : -1
        resume(Effect.succeed({ status, stdout, stderr }))
      }
    )
    child.stdin?.end(input)
  })

const logFile = () => path.join(memoryDir, ".runs", "background.jsonl")
const endLines = () =>
  fs.existsSync(logFile()) ?
    fs.readFileSync(logFile(), "utf8").split("\n").filter((l) => l.includes("\"event\":\"end\"")) :
    []

describe("background runs: a failed run is recorded and shown by memdir doctor", () => {
  it.live("no runs: doctor says nothing about them", () =>
    Effect.gen(function*() {
      const run = yield* memdir(["doctor"])
      assert.strictEqual(run.status, 0, run.stderr)
      assert.notInclude(run.stdout, "background runs")
      assert.notProperty(parseJson(yield* memdir(["doctor", "--json"])), "backgroundRuns")
    }))

  it.live(
    "a Stop hook whose key the API refuses (401): the run's trace says so, and doctor shows it with the fix",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const session = "b4c5d6e7-0000-4000-8000-00000000bg02"
        const transcript = path.join(scratch, `${session}.jsonl`)
        const fixture = path.join(repoRoot, "packages/core/test/fixtures/transcripts/claude-code-session.jsonl")
        fs.writeFileSync(transcript, fs.readFileSync(fixture, "utf8").replaceAll("__MEMORY_DIR__", memoryDir))
        const server = yield* MessagesApiServer.make({ handler: () => MessagesApiServer.unauthorized() })
        const env = { ANTHROPIC_API_KEY: SECRET_KEY, ANTHROPIC_BASE_URL: server.url }
        const stop = yield* hook(
          JSON.stringify({
            session_id: session,
            transcript_path: transcript,
            cwd: project,
            hook_event_name: "Stop",
            stop_hook_active: false
          }),
          env
        )
        assert.strictEqual(stop.status, 0, stop.stderr)
        assert.strictEqual(stop.stdout, "")

        // the detached job writes its end line last: poll for it (bounded), no fixed sleep
        for (let i = 0; i < 600 && endLines().length === 0; i++) yield* Effect.sleep("100 millis")
        assert.lengthOf(endLines(), 1, "the background job recorded its end")
        const text = fs.readFileSync(logFile(), "utf8")
        const lines = text.trim().split("\n").map((l) => JSON.parse(l))
        const start = lines.find((l) => l.event === "start")
        const end = lines.find((l) => l.event === "end")
        assert.strictEqual(start.session, session)
        assert.isNumber(start.pid)
        assert.strictEqual(end.run, start.run)
        assert.strictEqual(end.outcome, "failed")
        assert.strictEqual(end.extraction.status, "failed")
        assert.strictEqual(end.failure.tag, "ModelError")
        assert.strictEqual(end.failure.kind, "authentication")
        assert.isAtLeast((yield* server.requests).length, 1)
        assert.strictEqual(fs.statSync(logFile()).mode & 0o777, 0o600)
        assert.notInclude(text, "refusedrefused", "the key is never in the trace")

        const doctor = yield* memdir(["doctor"])
        assert.strictEqual(doctor.status, 0, doctor.stderr)
        assert.include(doctor.stdout, "background runs (newest first; .runs/background.jsonl):")
        assert.match(doctor.stdout, /\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC {2}failed/)
        assert.include(doctor.stdout, "extraction failed (ModelError authentication:")
        assert.include(doctor.stdout, "warning: the last background run failed")
        assert.include(doctor.stdout, "fix: the API key was refused: check ANTHROPIC_API_KEY")
        assert.notInclude(doctor.stdout, "refusedrefused")

        const json = parseJson(yield* memdir(["doctor", "--json"]))
        const background = json.backgroundRuns
        assert.strictEqual(background.runs[0].state, "failed")
        assert.strictEqual(background.runs[0].session, session)
        assert.strictEqual(background.runs[0].failure.kind, "authentication")
        assert.strictEqual(background.failingInARow, 1)
        assert.strictEqual(background.fix, "the API key was refused: check ANTHROPIC_API_KEY")
      })),
    { timeout: 120_000 }
  )

  it.live("a run that died before it could write its end: doctor says so and shows the job's stderr", () =>
    Effect.gen(function*() {
      // a process that has exited: its pid is gone, as a killed job's would be
      const dead = execFileSync(process.execPath, ["-p", "process.pid"], { encoding: "utf8" }).trim()
      const start = { v: 1, event: "start", run: "zz-died", at: Date.now(), session: "s-died", pid: Number(dead) }
      fs.appendFileSync(logFile(), JSON.stringify(start) + "\n")
      fs.appendFileSync(
        path.join(memoryDir, ".runs", "background.stderr"),
        "<--- Last few GCs --->\nFATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory " +
          `(${SECRET_KEY})\n`
      )
      const doctor = yield* memdir(["doctor"])
      assert.strictEqual(doctor.status, 0, doctor.stderr)
      assert.match(doctor.stdout, /UTC {2}died {5}never finished/)
      assert.include(doctor.stdout, "warning: the last 2 background runs failed")
      assert.include(doctor.stdout, "FATAL ERROR: Reached heap limit")
      assert.notInclude(doctor.stdout, "refusedrefused")
      const json = parseJson(yield* memdir(["doctor", "--json"]))
      assert.strictEqual(json.backgroundRuns.runs[0].state, "died")
      assert.strictEqual(json.backgroundRuns.failingInARow, 2)
    }))
})
