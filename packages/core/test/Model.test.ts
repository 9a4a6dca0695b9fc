/**
 * The Model service: configuration, what memdir sends, what it makes of the answers, retries and typed errors.
 * Live calls go through the REAL `@anthropic-ai/sdk` client to the local Messages API server of
 * `@memdir/testing`; the retry policy is also driven by the `TestClock`.
 */
import type Anthropic from "@anthropic-ai/sdk"
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as TestClock from "effect/testing/TestClock"
import * as Server from "../../testing/src/MessagesApiServer.js"
import * as SdkModels from "../../testing/src/SdkModels.js"
import { ModelError } from "../src/Errors.js"
import * as Model from "../src/Model.js"

// ---------------------------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------------------------

const withEnv = (env: Record<string, string>) =>
  Effect.provideService(
    ConfigProvider.ConfigProvider,
    ConfigProvider.fromEnvRecord(env, { preserveEmptyStrings: true })
  )

/** The live model from an explicit environment, with a fast retry policy (the policy itself is tested below). */
const liveModel = (env: Record<string, string>, retry: Partial<Model.RetryOptions> = {}) =>
  Effect.flatMap(Model.config, (config) =>
    Model.makeWith({
      ...config,
      retry: { ...config.retry, baseDelay: Duration.millis(5), maxDelay: Duration.millis(20), ...retry }
    })).pipe(withEnv(env))

const envFor = (server: Server.MessagesApiServerService, extra: Record<string, string> = {}) => ({
  ANTHROPIC_API_KEY: "sk-test",
  ANTHROPIC_BASE_URL: server.url,
  ...extra
})

const hello: Model.ModelRequest = {
  role: "selector",
  system: "Be brief.",
  messages: [{ role: "user", content: "hello" }],
  maxTokens: 50
}

const Picked = Schema.Struct({ picked: Schema.Array(Schema.String) })
const pickOutput = { name: "pick", description: "Pick items", schema: Picked }

// ---------------------------------------------------------------------------------------------------------------
// Defaults and configuration
// ---------------------------------------------------------------------------------------------------------------

describe("default models", () => {
  it("are in the installed SDK's Model list and not in its DEPRECATED_MODELS", () => {
    const known = SdkModels.knownModelIds()
    const deprecated = Object.keys(SdkModels.deprecatedModels())
    // the lists were read: a change of the SDK's file layout must fail here, not pass vacuously
    assert.isAbove(known.length, 5)
    assert.isAbove(deprecated.length, 0)
    for (const role of Model.modelRoles) {
      const model = Model.DEFAULT_MODELS[role]
      assert.include(known, model, `${role}: ${model} is not in the SDK's Model list`)
      assert.notInclude(deprecated, model, `${role}: ${model} is deprecated`)
    }
  })
})

describe("Model config", () => {
  it.effect("without a key: unavailable, and calls fail not-configured without any network", () =>
    Effect.gen(function*() {
      for (const env of [{}, { ANTHROPIC_API_KEY: "" }, { ANTHROPIC_API_KEY: "  " }]) {
        const model = yield* Model.make.pipe(withEnv(env))
        assert.isFalse(model.available)
        assert.isFalse(yield* Model.isConfigured.pipe(withEnv(env)))
        const error = yield* Effect.flip(model.complete(hello))
        assert.strictEqual(error.kind, "not-configured")
        assert.strictEqual(error.model, Model.DEFAULT_MODELS.selector)
        const structuredError = yield* Effect.flip(model.structured(hello, pickOutput))
        assert.strictEqual(structuredError.kind, "not-configured")
      }
    }))

  it.effect("reads the model per role, the timeout and the retries from the environment", () =>
    Effect.gen(function*() {
      const config = yield* Model.config.pipe(withEnv({
        ANTHROPIC_API_KEY: "sk-x",
        ANTHROPIC_BASE_URL: "http://127.0.0.1:9",
        MEMDIR_MODEL_SELECTOR: "claude-haiku-5-5",
        MEMDIR_MODEL_DREAMER: "",
        MEMDIR_MODEL_TIMEOUT: "5 seconds",
        MEMDIR_MODEL_MAX_RETRIES: "4"
      }))
      assert.strictEqual(config.models.selector, "claude-haiku-5-5")
      assert.strictEqual(config.models.dreamer, Model.DEFAULT_MODELS.dreamer)
      assert.strictEqual(config.models.extractor, Model.DEFAULT_MODELS.extractor)
      assert.deepStrictEqual(config.baseUrl, Option.some("http://127.0.0.1:9"))
      assert.strictEqual(Duration.toMillis(config.timeout), 5000)
      assert.strictEqual(config.retry.maxRetries, 4)
      // the key stays redacted when printed
      assert.notInclude(String(config.apiKey), "sk-x")
      assert.strictEqual(Model.modelEnvVar("extractor"), "MEMDIR_MODEL_EXTRACTOR")
    }))

  it.effect("a negative or non-numeric retry count is a ConfigError", () =>
    Effect.gen(function*() {
      for (const value of ["-1", "many"]) {
        const exit = yield* Effect.exit(Model.config.pipe(withEnv({ MEMDIR_MODEL_MAX_RETRIES: value })))
        assert.isTrue(Exit.isFailure(exit), value)
      }
    }))
})

// ---------------------------------------------------------------------------------------------------------------
// Pure helpers
// ---------------------------------------------------------------------------------------------------------------

describe("request building", () => {
  it("system blocks marked cache get an ephemeral breakpoint, others none", () => {
    assert.strictEqual(Model.systemParam("plain"), "plain")
    assert.deepStrictEqual(Model.systemParam([{ text: "stable", cache: true }, { text: "varies" }]), [
      { type: "text", text: "stable", cache_control: { type: "ephemeral" } },
      { type: "text", text: "varies" }
    ])
  })

  it("the body carries model, max_tokens, tools and tool_choice, and never the retired temperature", () => {
    const tool: Anthropic.Tool = { name: "t", input_schema: { type: "object" } }
    const body = Model.toMessageParams(
      { ...hello, tools: [tool], toolChoice: { type: "tool", name: "t" }, temperature: 0 },
      "claude-haiku-5-5"
    )
    assert.strictEqual(body.model, "claude-haiku-5-5")
    assert.strictEqual(body.max_tokens, 50)
    assert.deepStrictEqual(body.tools, [tool])
    assert.deepStrictEqual(body.tool_choice, { type: "tool", name: "t" })
    assert.isFalse("temperature" in body)
    assert.isFalse("tools" in Model.toMessageParams(hello, "m"))
  })

  it("a tool's input schema is the JSON schema of the output schema, without $schema; non-objects are refused", () => {
    assert.deepStrictEqual(Model.toolInputSchema(Picked), {
      type: "object",
      required: ["picked"],
      properties: { picked: { type: "array", items: { type: "string" } } },
      additionalProperties: false
    })
    assert.isUndefined(Model.toolInputSchema(Schema.Array(Schema.String)))
  })

  it("statuses and error types map to kinds that say what to do", () => {
    const cases: ReadonlyArray<[number, string | null, ModelError["kind"]]> = [
      [400, "invalid_request_error", "invalid-request"],
      [401, "authentication_error", "authentication"],
      [403, "permission_error", "permission"],
      [404, "not_found_error", "not-found"],
      [413, "request_too_large", "invalid-request"],
      [429, "rate_limit_error", "rate-limited"],
      [500, "api_error", "server"],
      [503, null, "server"],
      [529, "overloaded_error", "overloaded"],
      [500, "overloaded_error", "overloaded"]
    ]
    for (const [status, type, kind] of cases) assert.strictEqual(Model.kindOfStatus(status, type), kind, `${status}`)
  })

  it("retry-after in ms, seconds or as an HTTP date; garbage is ignored", () => {
    const headers = (h: Record<string, string>) => (name: string) => h[name]
    const ms = (o: Option.Option<Duration.Duration>) => Option.map(o, Duration.toMillis)
    assert.deepStrictEqual(ms(Model.parseRetryAfter(headers({ "retry-after-ms": "250" }), 0)), Option.some(250))
    assert.deepStrictEqual(ms(Model.parseRetryAfter(headers({ "retry-after": "2" }), 0)), Option.some(2000))
    const now = Date.parse("2026-11-30T10:00:00Z")
    const date = headers({ "retry-after": "Mon, 30 Nov 2026 10:00:30 GMT" })
    assert.deepStrictEqual(ms(Model.parseRetryAfter(date, now)), Option.some(30_000))
    assert.isTrue(Option.isNone(Model.parseRetryAfter(headers({ "retry-after": "soon" }), 0)))
    assert.isTrue(Option.isNone(Model.parseRetryAfter(headers({}), 0)))
  })
})

// ---------------------------------------------------------------------------------------------------------------
// Retry policy on the TestClock
// ---------------------------------------------------------------------------------------------------------------

const failure = (
  kind: ModelError["kind"],
  extra: Partial<Omit<Model.AttemptFailure, "error">> = {}
): Model.AttemptFailure => ({
  error: new ModelError({ kind, role: "selector", model: "m", detail: "scripted" }),
  retryAfter: Option.none(),
  shouldRetry: Option.none(),
  ...extra
})

/** Runs `failures` then succeeds, under `retrySchedule`; returns the attempt counter and the fiber. */
const retrying = (failures: ReadonlyArray<Model.AttemptFailure>, options: Partial<Model.RetryOptions> = {}) =>
  Effect.gen(function*() {
    const attempts = yield* Ref.make(0)
    const attempt = Effect.flatMap(
      Ref.getAndUpdate(attempts, (n) => n + 1),
      (n) => n < failures.length ? Effect.fail(failures[n]!) : Effect.succeed("ok")
    )
    const fiber = yield* Effect.forkChild(
      attempt.pipe(Effect.retry(Model.retrySchedule({ ...Model.defaultRetryOptions, ...options })))
    )
    return { attempts, fiber }
  })

describe("retrySchedule", () => {
  it.effect("backs off exponentially on retryable failures, at most maxRetries times", () =>
    Effect.gen(function*() {
      const { attempts, fiber } = yield* retrying(
        [failure("overloaded"), failure("server"), failure("rate-limited"), failure("connection")],
        { maxRetries: 2, baseDelay: Duration.seconds(1), maxDelay: Duration.seconds(60) }
      )
      yield* TestClock.adjust("1 millis")
      assert.strictEqual(yield* Ref.get(attempts), 1)
      // first backoff ≈ 1 s (±20 % jitter), second ≈ 2 s
      yield* TestClock.adjust("700 millis")
      assert.strictEqual(yield* Ref.get(attempts), 1)
      yield* TestClock.adjust("600 millis")
      assert.strictEqual(yield* Ref.get(attempts), 2)
      yield* TestClock.adjust("10 seconds")
      const exit = yield* Fiber.await(fiber)
      assert.strictEqual(yield* Ref.get(attempts), 3)
      assert.isTrue(Exit.isFailure(exit))
    }))

  it.effect("waits out a retry-after longer than the backoff", () =>
    Effect.gen(function*() {
      const { attempts, fiber } = yield* retrying([
        failure("rate-limited", { retryAfter: Option.some(Duration.seconds(5)) })
      ], {
        baseDelay: Duration.millis(10)
      })
      yield* TestClock.adjust("4 seconds")
      assert.strictEqual(yield* Ref.get(attempts), 1)
      yield* TestClock.adjust("1 seconds")
      assert.strictEqual(yield* Fiber.join(fiber), "ok")
      assert.strictEqual(yield* Ref.get(attempts), 2)
    }))

  it.effect("gives up at once when retry-after exceeds maxRetryAfter, or on a non-retryable failure", () =>
    Effect.gen(function*() {
      for (
        const first of [
          failure("rate-limited", { retryAfter: Option.some(Duration.minutes(10)) }),
          failure("authentication"),
          failure("invalid-request"),
          failure("timeout"),
          failure("malformed-output")
        ]
      ) {
        const { attempts, fiber } = yield* retrying([first])
        yield* TestClock.adjust("1 hours")
        const exit = yield* Fiber.await(fiber)
        assert.isTrue(Exit.isFailure(exit), first.error.kind)
        assert.strictEqual(yield* Ref.get(attempts), 1, first.error.kind)
      }
    }))

  it.effect("x-should-retry overrides the status: false stops a 529, true retries a 409-like failure", () =>
    Effect.gen(function*() {
      const stop = yield* retrying([failure("overloaded", { shouldRetry: Option.some(false) })])
      yield* TestClock.adjust("1 minutes")
      assert.isTrue(Exit.isFailure(yield* Fiber.await(stop.fiber)))
      assert.strictEqual(yield* Ref.get(stop.attempts), 1)

      const go = yield* retrying([failure("invalid-request", { shouldRetry: Option.some(true) })])
      yield* TestClock.adjust("1 minutes")
      assert.strictEqual(yield* Fiber.join(go.fiber), "ok")
      assert.strictEqual(yield* Ref.get(go.attempts), 2)
    }))
})

// ---------------------------------------------------------------------------------------------------------------
// Live, through the real SDK, against the local Messages API server
// ---------------------------------------------------------------------------------------------------------------

describe("Model.layer against a Messages API endpoint (real SDK)", () => {
  it.live("sends the role's model, max_tokens, cached system blocks, tools and tool_choice; maps the answer", () =>
    Effect.gen(function*() {
      const server = yield* Server.make({
        replies: [
          Server.text("plain answer", { usage: { input_tokens: 11, output_tokens: 3, cache_read_input_tokens: 7 } }),
          Server.toolUse("pick", { picked: ["a.md"] })
        ]
      })
      const model = yield* liveModel(envFor(server, { MEMDIR_MODEL_SELECTOR: "claude-haiku-5-5" }))
      assert.isTrue(model.available)
      assert.strictEqual(model.modelFor("selector"), "claude-haiku-5-5")

      const response = yield* model.complete(hello)
      assert.strictEqual(Model.responseText(response), "plain answer")
      assert.strictEqual(response.model, "claude-haiku-5-5")
      assert.strictEqual(response.stopReason, "end_turn")
      assert.deepStrictEqual(response.usage, {
        inputTokens: 11,
        outputTokens: 3,
        cacheReadInputTokens: 7,
        cacheCreationInputTokens: 0
      })
      assert.strictEqual(response.attempts, 1)
      assert.isAtLeast(response.latencyMs, 0)

      const { value } = yield* model.structured({
        ...hello,
        role: "extractor",
        system: [{ text: "stable rules", cache: true }, { text: "today: 2026-11-30" }],
        maxTokens: 256
      }, pickOutput)
      assert.deepStrictEqual(value, { picked: ["a.md"] })

      const [first, second] = yield* server.requests
      assert.strictEqual(Server.apiKeyOf(first!), "sk-test")
      assert.isString(first!.headers["anthropic-version"])
      assert.strictEqual(first!.body.model, "claude-haiku-5-5")
      assert.strictEqual(first!.body.max_tokens, 50)
      assert.strictEqual(first!.body.system, "Be brief.")
      assert.isFalse("tools" in first!.body)
      // the SDK's own retries are off: memdir's are the only ones
      assert.strictEqual(first!.headers["x-stainless-retry-count"], "0")

      assert.strictEqual(second!.body.model, Model.DEFAULT_MODELS.extractor)
      assert.strictEqual(second!.body.max_tokens, 256)
      assert.deepStrictEqual(second!.body.system, [
        { type: "text", text: "stable rules", cache_control: { type: "ephemeral" } },
        { type: "text", text: "today: 2026-11-30" }
      ])
      assert.deepStrictEqual(second!.body.tools, [{
        name: "pick",
        description: "Pick items",
        input_schema: Model.toolInputSchema(Picked)
      }])
      assert.deepStrictEqual(second!.body.tool_choice, { type: "tool", name: "pick" })
      assert.deepStrictEqual(second!.body.messages, [{ role: "user", content: "hello" }])
    }).pipe(Effect.scoped))

  it.live("malformed tool input and a missing tool call are malformed-output, not retried", () =>
    Effect.gen(function*() {
      const server = yield* Server.make({
        replies: [
          Server.toolUse("pick", { picked: "not-a-list" }),
          Server.text("I would pick a.md"),
          Server.toolUse("other_tool", { picked: [] })
        ]
      })
      const model = yield* liveModel(envFor(server))
      for (const expected of ["does not match its schema", "got [text]", "got [tool_use other_tool]"]) {
        const error = yield* Effect.flip(model.structured(hello, pickOutput))
        assert.strictEqual(error.kind, "malformed-output")
        assert.include(error.detail, expected)
      }
      assert.strictEqual((yield* server.requests).length, 3)
    }).pipe(Effect.scoped))

  it.live("429 then success: memdir retried once (two requests), honouring retry-after", () =>
    Effect.gen(function*() {
      const server = yield* Server.make({ replies: [Server.rateLimited(0.05), Server.text("second time lucky")] })
      const model = yield* liveModel(envFor(server))
      const response = yield* model.complete(hello)
      assert.strictEqual(Model.responseText(response), "second time lucky")
      assert.strictEqual(response.attempts, 2)
      assert.strictEqual((yield* server.requests).length, 2)
    }).pipe(Effect.scoped))

  it.live("500 then success, and 529 until the retries run out → overloaded with its status", () =>
    Effect.gen(function*() {
      const server = yield* Server.make({
        replies: [
          Server.serverError(),
          Server.text("ok"),
          Server.overloaded(),
          Server.overloaded(),
          Server.overloaded()
        ]
      })
      const model = yield* liveModel(envFor(server, { MEMDIR_MODEL_MAX_RETRIES: "2" }))
      const recovered = yield* model.complete(hello)
      assert.strictEqual(recovered.attempts, 2)
      const error = yield* Effect.flip(model.complete(hello))
      assert.strictEqual(error.kind, "overloaded")
      assert.strictEqual(error.status, 529)
      assert.strictEqual(error.role, "selector")
      assert.include(error.message, "overloaded")
      assert.strictEqual((yield* server.requests).length, 2 + 3)
    }).pipe(Effect.scoped))

  it.live("401 and 400 are not retried and say what to do", () =>
    Effect.gen(function*() {
      const server = yield* Server.make({
        replies: [Server.unauthorized(), Server.invalidRequest("max_tokens: too large")]
      })
      const model = yield* liveModel(envFor(server))
      const auth = yield* Effect.flip(model.complete(hello))
      assert.strictEqual(auth.kind, "authentication")
      assert.strictEqual(auth.status, 401)
      assert.include(auth.message, "ANTHROPIC_API_KEY")
      const invalid = yield* Effect.flip(model.complete(hello))
      assert.strictEqual(invalid.kind, "invalid-request")
      assert.include(invalid.detail, "max_tokens: too large")
      assert.strictEqual((yield* server.requests).length, 2)
    }).pipe(Effect.scoped))

  it.live("a slow reply ends in a timeout error after MEMDIR_MODEL_TIMEOUT, without a retry", () =>
    Effect.gen(function*() {
      const server = yield* Server.make({ replies: [Server.slow(Server.text("too late"), 20_000)] })
      const model = yield* liveModel(envFor(server, { MEMDIR_MODEL_TIMEOUT: "300 millis" }))
      const error = yield* Effect.flip(model.complete(hello))
      assert.strictEqual(error.kind, "timeout")
      assert.include(error.message, "MEMDIR_MODEL_TIMEOUT")
      assert.strictEqual((yield* server.requests).length, 1)
    }).pipe(Effect.scoped))

  it.live("a body that is not JSON is malformed-output; an unreachable endpoint is a connection error", () =>
    Effect.gen(function*() {
      const server = yield* Server.make({ replies: [Server.malformedBody()] })
      const model = yield* liveModel(envFor(server))
      const malformed = yield* Effect.flip(model.complete(hello))
      assert.strictEqual(malformed.kind, "malformed-output")

      // a port that was just closed: nothing listens there
      const scope = yield* Scope.make()
      const gone = yield* Server.make().pipe(Scope.provide(scope))
      yield* Scope.close(scope, Exit.void)
      const offline = yield* liveModel(envFor(gone, { MEMDIR_MODEL_MAX_RETRIES: "1" }))
      const error = yield* Effect.flip(offline.complete(hello))
      assert.strictEqual(error.kind, "connection")
      assert.include(error.message, "ANTHROPIC_BASE_URL")
    }).pipe(Effect.scoped))
})

// ---------------------------------------------------------------------------------------------------------------
// The scripted test layer
// ---------------------------------------------------------------------------------------------------------------

describe("Model.layerTest", () => {
  it.effect("answers from a list, records every request, and judges structured output like the live one", () =>
    Effect.gen(function*() {
      const model = yield* Model.Model
      const text = yield* model.complete(hello)
      assert.strictEqual(Model.responseText(text), "scripted")
      const { value } = yield* model.structured(hello, pickOutput)
      assert.deepStrictEqual(value, { picked: ["x"] })
      const malformed = yield* Effect.flip(model.structured(hello, pickOutput))
      assert.strictEqual(malformed.kind, "malformed-output")
      const failed = yield* Effect.flip(model.complete(hello))
      assert.strictEqual(failed.kind, "rate-limited")
      const requests = yield* (yield* Model.ModelRequests).all
      assert.strictEqual(requests.length, 4)
      assert.deepStrictEqual(requests[1]!.toolChoice, { type: "tool", name: "pick" })
      // a script that ran out is a bug in the test: a defect, not a typed error
      const exit = yield* Effect.exit(model.complete(hello))
      assert.isTrue(Exit.isFailure(exit) && Cause.hasDies(exit.cause))
    }).pipe(Effect.provide(Model.layerTest([
      Model.textReply("scripted"),
      Model.toolUseReply("pick", { picked: ["x"] }),
      Model.toolUseReply("pick", { picked: 3 }),
      new ModelError({ kind: "rate-limited", role: "selector", model: "m", detail: "scripted" })
    ]))))

  it.effect("a function script sees each request and its index; available: false behaves like no key", () =>
    Effect.gen(function*() {
      const scripted = yield* Model.Model.pipe(
        Effect.provide(Model.layerTest((request, index) => Model.textReply(`${request.role} #${index}`)))
      )
      assert.strictEqual(Model.responseText(yield* scripted.complete(hello)), "selector #0")
      assert.strictEqual(Model.responseText(yield* scripted.complete({ ...hello, role: "dreamer" })), "dreamer #1")

      const offline = yield* Model.Model.pipe(
        Effect.provide(Model.layerTest([], { available: false, models: { selector: "custom" } }))
      )
      assert.isFalse(offline.available)
      const error = yield* Effect.flip(offline.complete(hello))
      assert.strictEqual(error.kind, "not-configured")
      assert.strictEqual(error.model, "custom")
    }))
})
