/**
 * Record and replay: stable hashes, sandbox paths normalised, the real SDK against the local Messages API server
 * when recording, no network when replaying, identical results on every replay, and a clear failure on any
 * request the cassette has no answer for.
 */
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it, layer } from "@effect/vitest"
import * as ModelModule from "@memdir/core/Model"
import { Model, type ModelRequest } from "@memdir/core/Model"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Path from "effect/Path"
import {
  canonicalJson,
  Cassette,
  type CassetteMeta,
  compactRequest,
  hashedRequest,
  inTrial,
  layerRecord,
  layerReplay,
  readCassette,
  requestHash,
  SANDBOX_PLACEHOLDER,
  sourceOfEndpoint,
  writeCassette
} from "../src/Cassette.js"
import { runCommand } from "../src/Run.js"
import { SCRIPTED_MODEL, SCRIPTED_NOTE } from "../src/Scripted.js"

const noKey = Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnvRecord({}))

const request = (text: string, extra: Partial<ModelRequest> = {}): ModelRequest => ({
  role: "agent",
  system: "You are a test.",
  messages: [{ role: "user", content: text }],
  maxTokens: 100,
  ...extra
})

describe("hashing", () => {
  it("canonical JSON does not depend on key order and drops undefined fields", () => {
    assert.strictEqual(
      canonicalJson({ b: 1, a: { d: [1, { z: 1, y: 2 }], c: undefined } }),
      "{\"a\":{\"d\":[1,{\"y\":2,\"z\":1}]},\"b\":1}"
    )
    assert.strictEqual(canonicalJson({ a: 1, b: 2 }), canonicalJson({ b: 2, a: 1 }))
  })

  it("the same request in two scratch directories has one hash; any other change gives another", () => {
    const inA = request("read /tmp/memdir-eval-AAA/project/src/db.ts")
    const inB = request("read /tmp/memdir-eval-BBB/project/src/db.ts")
    const a = hashedRequest(inA, "m", "/tmp/memdir-eval-AAA")
    const b = hashedRequest(inB, "m", "/tmp/memdir-eval-BBB")
    assert.include(JSON.stringify(a), SANDBOX_PLACEHOLDER)
    assert.strictEqual(requestHash(a), requestHash(b))
    assert.notStrictEqual(requestHash(a), requestHash(hashedRequest(inA, "other-model", "/tmp/memdir-eval-AAA")))
    assert.notStrictEqual(
      requestHash(a),
      requestHash(hashedRequest({ ...inA, maxTokens: 101 }, "m", "/tmp/memdir-eval-AAA"))
    )
    assert.notStrictEqual(
      requestHash(a),
      requestHash(hashedRequest({ ...inA, system: "You are another test." }, "m", "/tmp/memdir-eval-AAA"))
    )
  })

  it("stores long shared parts once", () => {
    const manifest = "- [user] user_role.md (2026-03-01T00:00:00.000Z): x\n".repeat(40)
    const compact = compactRequest(hashedRequest(request(manifest), "m"))
    const json = JSON.stringify(compact.request)
    assert.notInclude(json, "user_role.md")
    assert.include(json, "$blob")
    assert.strictEqual(Object.values(compact.blobs).filter((b) => b === manifest).length, 1)
  })

  it("knows a local server from the real API and never trusts another endpoint", () => {
    assert.strictEqual(sourceOfEndpoint("https://api.anthropic.com"), "anthropic-api")
    assert.strictEqual(sourceOfEndpoint("http://127.0.0.1:43817"), "local-server")
    assert.strictEqual(sourceOfEndpoint("http://localhost:8080/v1"), "local-server")
    assert.strictEqual(sourceOfEndpoint("http://[::1]:9000"), "local-server")
    assert.strictEqual(sourceOfEndpoint("https://llm-proxy.example.com"), "other-endpoint")
    assert.strictEqual(sourceOfEndpoint("not a url"), "other-endpoint")
  })
})

const meta: CassetteMeta = {
  source: "local-server",
  endpoint: "http://127.0.0.1:1",
  realModel: false,
  requestedModels: { agent: "test-model" },
  respondedModels: ["scripted"],
  recordedAt: "2026-03-10T12:00:00.000Z",
  suite: "demo",
  variants: ["a"],
  trials: 1,
  note: "test"
}

layer(NodeServices.layer)("record and replay layers", (it) => {
  it.effect("record keeps every exchange (sandbox paths replaced); replay answers the same, in order per trial", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const dir = yield* fs.makeTempDirectoryScoped()
      const scripted = ModelModule.layerTest(
        (req, i) => ModelModule.textReply(`answer ${i} to ${JSON.stringify(req.messages[0]!.content)}`),
        { models: { agent: "test-model" } }
      )
      const root = "/scratch/memdir-eval-1"
      const asked = request(`look at ${root}/project/a.ts`)
      const recorded = yield* Effect.gen(function*() {
        const model = yield* Model
        // the same request twice in one trial, and once in another trial
        const first = yield* model.complete(asked).pipe(inTrial({ trial: "t#1", sandboxRoot: root }))
        const second = yield* model.complete(asked).pipe(inTrial({ trial: "t#1", sandboxRoot: root }))
        const other = yield* model.complete(asked).pipe(inTrial({ trial: "t#2", sandboxRoot: root }))
        const entries = yield* (yield* Cassette).entries
        return { first, second, other, entries }
      }).pipe(Effect.provide(layerRecord.pipe(Layer.provide(scripted))))
      assert.strictEqual(recorded.entries.length, 3)
      assert.deepStrictEqual(recorded.entries.map((e) => [e.trial, e.occurrence]), [["t#1", 0], ["t#1", 1], ["t#2", 0]])
      assert.notInclude(JSON.stringify(recorded.entries), root)

      const file = path.join(dir, "cassette.json")
      yield* writeCassette(file, meta, recorded.entries)
      const loaded = yield* readCassette(file)
      // replayed from another scratch root, in another order of trials: same answers, paths put back
      const otherRoot = "/elsewhere/memdir-eval-2"
      const moved = request(`look at ${otherRoot}/project/a.ts`)
      const replayed = yield* Effect.gen(function*() {
        const model = yield* Model
        const other = yield* model.complete(moved).pipe(inTrial({ trial: "t#2", sandboxRoot: otherRoot }))
        const first = yield* model.complete(moved).pipe(inTrial({ trial: "t#1", sandboxRoot: otherRoot }))
        const second = yield* model.complete(moved).pipe(inTrial({ trial: "t#1", sandboxRoot: otherRoot }))
        return { first, second, other, misses: yield* (yield* Cassette).misses }
      }).pipe(Effect.provide(layerReplay(loaded, file)))
      assert.deepStrictEqual(replayed.misses, [])
      const text = (r: typeof recorded.first) => ModelModule.responseText(r)
      assert.strictEqual(text(replayed.first), text(recorded.first).split(root).join(otherRoot))
      assert.strictEqual(text(replayed.second), text(recorded.second).split(root).join(otherRoot))
      assert.strictEqual(text(replayed.other), text(recorded.other).split(root).join(otherRoot))
      assert.include(text(replayed.first), otherRoot)
    }))

  it.effect("a request the cassette has no answer for fails the call and is kept as a miss saying where it differs", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const dir = yield* fs.makeTempDirectoryScoped()
      const entries = yield* Effect.gen(function*() {
        const model = yield* Model
        yield* model.complete(request("hello")).pipe(inTrial({ trial: "t#1" }))
        return yield* (yield* Cassette).entries
      }).pipe(
        Effect.provide(layerRecord.pipe(Layer.provide(ModelModule.layerTest([ModelModule.textReply("hi")], {
          models: { agent: "test-model" }
        }))))
      )
      const file = path.join(dir, "cassette.json")
      yield* writeCassette(file, meta, entries)
      const loaded = yield* readCassette(file)
      const { error, misses } = yield* Effect.gen(function*() {
        const model = yield* Model
        const error = yield* Effect.flip(
          model.complete(request("hello", { system: "Changed." })).pipe(inTrial({ trial: "t#1" }))
        )
        return { error, misses: yield* (yield* Cassette).misses }
      }).pipe(Effect.provide(layerReplay(loaded, file)))
      assert.strictEqual(error._tag, "ModelError")
      assert.include(error.message, "has no answer")
      assert.strictEqual(misses.length, 1)
      assert.strictEqual(misses[0]!.trial, "t#1")
      assert.strictEqual(misses[0]!.differsAt, "system")
    }))

  it.effect("a file that is not a cassette is a CassetteError", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const dir = yield* fs.makeTempDirectoryScoped()
      const file = path.join(dir, "cassette.json")
      yield* fs.writeFileString(file, JSON.stringify({ format: "something-else" }))
      const error = yield* Effect.flip(readCassette(file))
      assert.strictEqual(error._tag, "CassetteError")
      assert.include(error.message, "memdir-eval-cassette/1")
    }))
})

/** A small agent suite: one stale-memory scenario, two variants. */
const demoSuite = (heading = "Check the code before you act on a memory") => `
name: demo
kind: agent
description: Stale memory demo
section: recall-trust
now: "2026-03-10T09:00:00Z"
trials: 2
maxTurns: 5
variants:
  - name: before
    builtin: before-recommending
  - name: trusting
    builtin: trusting-what-you-recall
  - name: candidate
    patch:
      heading: ${heading}
scenarios:
  - id: pool
    memories:
      files:
        - path: project_pool.md
          ageDays: 40
          name: Pool size
          description: The pool size is set in src/db/pool.ts:3
          type: project
          body: "The pool size is set in \`src/db/pool.ts:3\`: max 10."
    project:
      files:
        src/db/pool.ts: |
          // Moved to the environment: set DB_POOL_MAX (default 25).
          export const max = Number(process.env.DB_POOL_MAX ?? 25)
    task: Where do I raise the pool size?
    recall: [project_pool.md]
    scorers:
      - type: tool-before-answer
        path: src/db/pool.ts
      - type: answer-matches
        pattern: DB_POOL_MAX
        required: false
      - type: rubric
        rubric: The answer names the current way to set the pool size, not the one the memory remembers.
`

layer(NodeServices.layer)("a suite recorded with the scripted responder, replayed", (it) => {
  const setUp = Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const root = yield* fs.makeTempDirectoryScoped()
    yield* fs.makeDirectory(path.join(root, "demo"))
    yield* fs.writeFileString(path.join(root, "demo", "suite.yaml"), demoSuite())
    const runsDir = path.join(root, "runs")
    const cassette = path.join(root, "demo", "cassette.json")
    return { root, runsDir, cassette, fs, path }
  })

  it.effect("records through the real SDK against the local server, labelled as not a model, and replays identically offline", () =>
    Effect.gen(function*() {
      const { cassette, fs, path, root, runsDir } = yield* setUp
      const recorded = yield* runCommand({ evalsDir: root, runsDir, suite: "demo", scripted: true, record: true })
      assert.strictEqual(recorded.run.provenance.mode, "record")
      assert.isFalse(recorded.run.provenance.realModel)
      assert.strictEqual(recorded.run.provenance.note, SCRIPTED_NOTE)
      assert.deepStrictEqual(recorded.run.provenance.models, [SCRIPTED_MODEL])
      const file = yield* readCassette(cassette)
      assert.strictEqual(file.meta.source, "local-server")
      assert.isFalse(file.meta.realModel)
      assert.deepStrictEqual(file.meta.respondedModels, [SCRIPTED_MODEL])
      assert.match(file.meta.endpoint, /^http:\/\/127\.0\.0\.1:\d+$/)
      assert.include(file.meta.note, "not a model")
      assert.notInclude(yield* fs.readFileString(cassette), root)
      // the harness ran for real: tools were called, a scorer saw them
      const before = recorded.run.results.filter((r) => r.variant === "before")
      assert.isTrue(before.every((r) => r.passed), JSON.stringify(before.map((r) => r.scores)))
      assert.isTrue(recorded.run.results.filter((r) => r.variant === "trusting").every((r) => !r.passed))
      assert.isAbove(before[0]!.calls!, 1)
      // the rubric went to the grader role, is marked model-graded, and does not decide the trial
      const rubric = before[0]!.scores.find((score) => score.type === "rubric")!
      assert.isTrue(rubric.modelGraded)
      assert.isFalse(rubric.required)
      assert.isFalse(rubric.passed)
      assert.include(rubric.detail, "does not grade")

      const replay = () => runCommand({ evalsDir: root, runsDir, suite: "demo", replay: true }).pipe(noKey)
      const first = yield* replay()
      const second = yield* replay()
      assert.strictEqual(first.run.provenance.mode, "replay")
      assert.isFalse(first.run.provenance.realModel)
      assert.include(first.run.provenance.note, "not a model")
      assert.isUndefined(first.gate, first.gate?.message)
      const strip = (results: typeof first.run.results) => results.map(({ latencyMs: _, ...rest }) => rest)
      assert.deepStrictEqual(strip(second.run.results), strip(first.run.results))
      assert.deepStrictEqual(
        strip(first.run.results).map((r) => [r.variant, r.scenario, r.trial, r.passed, r.scores, r.usage]),
        strip(recorded.run.results).map((r) => [r.variant, r.scenario, r.trial, r.passed, r.scores, r.usage])
      )
      assert.isTrue(yield* fs.exists(path.join(first.directory, "report.html")))
    }))

  it.effect("fails clearly when the prompt changed, when more trials are asked for, and when scoring drifted", () =>
    Effect.gen(function*() {
      const { cassette, fs, path, root, runsDir } = yield* setUp
      yield* runCommand({
        evalsDir: root,
        runsDir,
        suite: "demo",
        scripted: true,
        record: true,
        variants: ["candidate"]
      })

      // a changed variant text: the system prompt differs
      yield* fs.writeFileString(path.join(root, "demo", "suite.yaml"), demoSuite("Verify memory against the code"))
      const changed = yield* Effect.flip(
        runCommand({ evalsDir: root, runsDir, suite: "demo", replay: true, variants: ["candidate"] }).pipe(noKey)
      )
      assert.strictEqual(changed._tag, "CassetteMissError")
      assert.include(changed.message, "demo/candidate/pool#")
      assert.include(changed.message, "system")
      assert.include(changed.message, "--record")

      // more trials than recorded
      yield* fs.writeFileString(path.join(root, "demo", "suite.yaml"), demoSuite())
      const more = yield* Effect.flip(
        runCommand({ evalsDir: root, runsDir, suite: "demo", replay: true, variants: ["candidate"], trials: 3 }).pipe(
          noKey
        )
      )
      assert.strictEqual(more._tag, "CassetteMissError")
      assert.include(more.message, "demo/candidate/pool#3")

      // a recorded outcome that the replay does not reproduce: the measurement changed
      const text = yield* fs.readFileString(cassette)
      yield* fs.writeFileString(
        cassette,
        text.replace("\"demo/candidate/pool#1\":true", "\"demo/candidate/pool#1\":false")
      )
      const drift = yield* runCommand({ evalsDir: root, runsDir, suite: "demo", replay: true, variants: ["candidate"] })
        .pipe(noKey)
      assert.isDefined(drift.gate)
      assert.include(drift.gate!.message, "disagrees with its recording")
      assert.include(drift.gate!.message, "demo/candidate/pool#1")
    }))

  it.effect("without a key and without a cassette, a model suite says exactly that", () =>
    Effect.gen(function*() {
      const { root, runsDir } = yield* setUp
      const error = yield* Effect.flip(runCommand({ evalsDir: root, runsDir, suite: "demo" }).pipe(noKey))
      assert.strictEqual(error._tag, "ModelUnavailableError")
      assert.include(error.message, "needs a model")
      assert.include(error.message, "ANTHROPIC_API_KEY")
      assert.include(error.message, "--replay")
      const replay = yield* Effect.flip(
        runCommand({ evalsDir: root, runsDir, suite: "demo", replay: true }).pipe(noKey)
      )
      assert.strictEqual(replay._tag, "ModelUnavailableError")
      assert.include(replay.message, "no cassette at")
    }))
})
