/**
 * `evals run … --record` never destroys a cassette (docs/evals.md, "Record and replay"): a recording whose trials
 * got no answer (a refused key) or only some of their answers keeps the old file byte for byte and fails with one
 * line saying why; a complete recording replaces it and replays; an interrupted one (SIGINT) exits 130 and keeps
 * it too. The real `@anthropic-ai/sdk` talks to `@memdir/testing`'s local Messages API server throughout.
 */
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it, layer } from "@effect/vitest"
import * as MessagesApiServer from "@memdir/testing/MessagesApiServer"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Path from "effect/Path"
import { spawn } from "node:child_process"
import { createHash } from "node:crypto"
import { fileURLToPath } from "node:url"
import { provenanceLine } from "../src/Report.js"
import { renderHtml } from "../src/ReportHtml.js"
import { RESULTS_FORMAT, type RunResults } from "../src/Results.js"
import { runCommand } from "../src/Run.js"
import { scriptedResponder } from "../src/Scripted.js"
import { evalsCommand, runEvals } from "./fixtures.js"

const repoRoot = fileURLToPath(new URL("../../..", import.meta.url))

/** The real model's endpoint settings, pointed at a local server (what `ANTHROPIC_BASE_URL` does for a user). */
const endpoint = (url: string, key = "sk-ant-test") =>
  Effect.provideService(
    ConfigProvider.ConfigProvider,
    ConfigProvider.fromEnvRecord({ ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: key })
  )

const REAL_MODEL_BANNER = "Answers from a real model"

layer(NodeServices.layer)("recording over a committed cassette", (it) => {
  /** A scratch evals directory holding a copy of the committed staleness suite and its cassette. */
  const committedCopy = Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const root = yield* fs.makeTempDirectoryScoped()
    yield* fs.copy(path.join(repoRoot, "evals", "staleness"), path.join(root, "staleness"))
    const cassette = path.join(root, "staleness", "cassette.json")
    const digest = fs.readFile(cassette).pipe(Effect.map((bytes) => createHash("sha256").update(bytes).digest("hex")))
    return { root, runsDir: path.join(root, "runs"), cassette, digest, before: yield* digest, fs, path }
  })

  it.effect(
    "a refused key: every trial unanswered, the cassette kept byte for byte, a non-zero exit saying why",
    () =>
      Effect.gen(function*() {
        const { before, cassette, digest, fs, path, root, runsDir } = yield* committedCopy
        const server = yield* MessagesApiServer.make({ handler: () => MessagesApiServer.unauthorized() })
        const result = yield* runEvals(
          ["run", "staleness", "--dir", root, "--runs-dir", runsDir, "--record", "--trials", "1"],
          { ANTHROPIC_API_KEY: "sk-ant-bad", ANTHROPIC_BASE_URL: server.url }
        )
        assert.isAbove((yield* server.requests).length, 0, "the SDK reached the server")
        assert.strictEqual(yield* digest, before, "the committed cassette is byte for byte as it was")
        assert.strictEqual(result.code, 11, result.stdout + result.stderr)
        const lines = result.stderr.split("\n").filter((line) => line.startsWith("evals: "))
        assert.strictEqual(lines.length, 1, result.stderr)
        assert.include(lines[0], "6 of 6 trials got no answer")
        assert.include(lines[0], "HTTP 401")
        assert.include(lines[0], "API key was refused")
        assert.include(lines[0], `${cassette} was kept as it was`)
        assert.notInclude(result.stdout, "cassette: ")

        // The run's own files say what happened: every trial errored, no answer, no real model.
        const [run] = yield* fs.readDirectory(runsDir)
        const results = JSON.parse(yield* fs.readFileString(path.join(runsDir, run!, "results.json"))) as RunResults
        assert.strictEqual(results.results.length, 6)
        assert.isTrue(results.results.every((r) => r.error !== undefined && r.error.includes("HTTP 401")))
        assert.isFalse(results.provenance.realModel)
        const html = yield* fs.readFileString(path.join(runsDir, run!, "report.html"))
        assert.notInclude(html, REAL_MODEL_BANNER)
        assert.include(html, "0 of 6 trials got an answer")
        assert.strictEqual(html.match(/<details class="trial errored"/g)?.length, 6)
      }),
    240_000
  )

  it.effect("some trials unanswered: the complete cassette is kept, the incomplete recording saved beside the run", () =>
    Effect.gen(function*() {
      const { before, digest, fs, path, root, runsDir } = yield* committedCopy
      // One variant's requests are refused; the other's are answered.
      const server = yield* MessagesApiServer.make({
        handler: (request) =>
          JSON.stringify(request.body?.system ?? "").includes("Trusting what you recall") ?
            MessagesApiServer.unauthorized() :
            scriptedResponder(request)
      })
      const error = yield* Effect.flip(
        runCommand({ evalsDir: root, runsDir, suite: "staleness", record: true, trials: 1 }).pipe(endpoint(server.url))
      )
      assert.strictEqual(error._tag, "RecordingIncompleteError")
      assert.strictEqual(yield* digest, before)
      assert.include(error.message, "3 of 6 trials got no answer")
      assert.include(error.message, "was kept as it was")
      const [run] = yield* fs.readDirectory(runsDir)
      const incomplete = path.join(runsDir, run!, "cassette.incomplete.json")
      assert.include(error.message, incomplete)
      const saved = JSON.parse(yield* fs.readFileString(incomplete))
      assert.isAbove(saved.entries.length, 0)
      assert.isTrue(saved.entries.every((e: { trial: string }) => e.trial.includes("/before-recommending/")))
    }))

  it.effect("a complete recording replaces the cassette, and a replay of it passes", () =>
    Effect.gen(function*() {
      const { before, cassette, digest, fs, root, runsDir } = yield* committedCopy
      const server = yield* MessagesApiServer.make({ handler: scriptedResponder })
      const recorded = yield* runCommand({ evalsDir: root, runsDir, suite: "staleness", record: true, trials: 1 }).pipe(
        endpoint(server.url)
      )
      assert.isTrue(recorded.run.results.every((r) => r.error === undefined))
      assert.notStrictEqual(yield* digest, before)
      assert.include(yield* fs.readFileString(cassette), server.url)
      assert.deepStrictEqual(
        (yield* fs.readDirectory(`${root}/staleness`)).sort(),
        ["cassette.json", "suite.yaml"],
        "no temp file left"
      )
      const replay = yield* runEvals(["run", "staleness", "--dir", root, "--runs-dir", runsDir, "--replay"])
      assert.strictEqual(replay.code, 0, replay.stdout + replay.stderr)
      assert.include(replay.stdout, "before-recommending (baseline)  3/3")
    }), 240_000)

  it.effect("SIGINT during a recording: exit 130, one line, the cassette kept", () =>
    Effect.gen(function*() {
      const { before, digest, root, runsDir } = yield* committedCopy
      const asked = yield* Deferred.make<void>()
      // The first request is held unanswered: the recording is in flight when the signal comes.
      const server = yield* MessagesApiServer.make({
        handler: () => {
          Effect.runSync(Deferred.succeed(asked, undefined))
          return new Promise<MessagesApiServer.Reply>(() => {})
        }
      })
      const command = evalsCommand(["run", "staleness", "--dir", root, "--runs-dir", runsDir, "--record"])
      const child = spawn(command.file, command.args, {
        cwd: repoRoot,
        env: { ...process.env, ANTHROPIC_API_KEY: "sk-ant-test", ANTHROPIC_BASE_URL: server.url },
        stdio: ["ignore", "pipe", "pipe"]
      })
      let stderr = ""
      child.stderr.on("data", (chunk) => (stderr += String(chunk)))
      const exited = Effect.callback<number | null>((resume) => {
        child.on("exit", (code) => resume(Effect.succeed(code)))
      })
      yield* Deferred.await(asked)
      child.kill("SIGINT")
      const code = yield* exited
      assert.strictEqual(code, 130, stderr)
      const lines = stderr.split("\n").filter((line) => line.startsWith("evals: "))
      assert.deepStrictEqual(lines.length, 1, stderr)
      assert.include(lines[0], "interrupted")
      assert.include(lines[0], "kept")
      assert.strictEqual(yield* digest, before)
    }), 240_000)
})

describe("the report's real-model claim", () => {
  /** A recording against the real API's endpoint in which no trial got an answer (a refused key). */
  const unanswered: RunResults = {
    format: RESULTS_FORMAT,
    suite: "demo",
    kind: "agent",
    section: "recall-trust",
    description: "demo",
    startedAt: "2026-03-10T09:00:00.000Z",
    finishedAt: "2026-03-10T09:00:01.000Z",
    trials: 1,
    variants: [{ name: "before" }],
    baseline: "before",
    scenarios: [{ id: "pool" }],
    provenance: {
      mode: "record",
      models: [],
      endpoint: "https://api.anthropic.com",
      realModel: true,
      note: "live answers from the Anthropic API"
    },
    results: [{
      variant: "before",
      scenario: "pool",
      trial: 1,
      passed: false,
      error: "agent model claude (HTTP 401): the API key was refused: check ANTHROPIC_API_KEY.",
      scores: [],
      metrics: {},
      latencyMs: 3
    }]
  }

  it("0 answers is no evidence of a real model: no green banner, the errors counted", () => {
    const html = renderHtml(unanswered)
    assert.notInclude(html, REAL_MODEL_BANNER)
    assert.notInclude(html, "banner real")
    assert.include(html, "0 of 1 trial got an answer")
    assert.notInclude(provenanceLine(unanswered), "real model (")
  })

  it("answers from the real API say how many trials got one", () => {
    const answered: RunResults = {
      ...unanswered,
      trials: 2,
      provenance: { ...unanswered.provenance, models: ["claude-sonnet-5-5"] },
      results: [...unanswered.results, {
        ...unanswered.results[0]!,
        scenario: "pool",
        trial: 2,
        passed: true,
        error: undefined,
        model: "claude-sonnet-5-5",
        calls: 2
      }]
    }
    const html = renderHtml(answered)
    assert.include(html, REAL_MODEL_BANNER)
    assert.include(html, "1 of 2 trials got an answer")
  })
})
