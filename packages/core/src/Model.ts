/**
 * Model: memdir's only door to a language model, over `@anthropic-ai/sdk` (Messages API).
 *
 * Nothing here needs a key to build, test or run the offline default: without `ANTHROPIC_API_KEY`,
 * `available` is false, `complete` fails with `ModelError{kind: "not-configured"}` and callers fall back to
 * their offline behaviour. The SDK itself is loaded only when a key is configured (start-up cost).
 *
 * Configuration (Effect `Config`, i.e. environment variables by default):
 * - `ANTHROPIC_API_KEY` (secret), `ANTHROPIC_BASE_URL` (any Messages-API-compatible endpoint);
 * - `MEMDIR_MODEL_SELECTOR`, `MEMDIR_MODEL_EXTRACTOR`, `MEMDIR_MODEL_DREAMER`, `MEMDIR_MODEL_GRADER`,
 *   `MEMDIR_MODEL_AGENT`: the model per role (defaults: `DEFAULT_MODELS`);
 * - `MEMDIR_MODEL_TIMEOUT` (per attempt, e.g. "30 seconds"), `MEMDIR_MODEL_MAX_RETRIES`.
 *
 * Retries are memdir's own (`retrySchedule`; the SDK runs with `maxRetries: 0`) so that they are visible in
 * traces and testable: exponential backoff with jitter on 429 / 529 / 5xx / connection failures, honouring
 * `retry-after(-ms)` and `x-should-retry`. A timed-out attempt is not retried: a model that did not answer in
 * `MEMDIR_MODEL_TIMEOUT` once is unlikely to answer the same request faster, and the caller is waiting.
 */
import type Anthropic from "@anthropic-ai/sdk"
import type * as AnthropicSdk from "@anthropic-ai/sdk"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as JsonSchema from "effect/JsonSchema"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import { ModelError } from "./Errors.js"
import { DEFAULT_MODEL } from "./ModelCatalog.js"

/** Which job a call is for: each role has its own configured model. */
export type ModelRole = "selector" | "extractor" | "dreamer" | "grader" | "agent"

export const modelRoles: ReadonlyArray<ModelRole> = ["selector", "extractor", "dreamer", "grader", "agent"]

export interface ModelRequest {
  readonly role: ModelRole
  /** System prompt; blocks marked `cache: true` get a prompt-cache breakpoint. */
  readonly system: string | ReadonlyArray<{ readonly text: string; readonly cache?: boolean }>
  readonly messages: ReadonlyArray<Anthropic.MessageParam>
  readonly tools?: ReadonlyArray<Anthropic.Tool> | undefined
  readonly toolChoice?: Anthropic.ToolChoice | undefined
  readonly maxTokens: number
  /**
   * @deprecated Not sent: the Messages API of SDK 1.14 no longer takes `temperature` (its request type has no such
   * field), and an endpoint may refuse it. Kept so existing callers compile.
   */
  readonly temperature?: number | undefined
}

export interface ModelUsage {
  readonly inputTokens: number
  readonly outputTokens: number
  readonly cacheReadInputTokens: number
  readonly cacheCreationInputTokens: number
}

export interface ModelResponse {
  readonly model: string
  readonly content: ReadonlyArray<Anthropic.ContentBlock>
  readonly stopReason: string | null
  readonly usage: ModelUsage
  /** What the caller waited, retries included. */
  readonly latencyMs: number
  /** HTTP attempts it took (1 when the first one succeeded); absent from hand-made responses. */
  readonly attempts?: number | undefined
}

export interface StructuredOutput<A, I> {
  readonly name: string
  readonly description: string
  readonly schema: Schema.Codec<A, I>
}

export class Model extends Context.Service<Model, {
  /** False when no key is configured: callers must not call `complete` and should use their offline path. */
  readonly available: boolean
  /** The model id configured for a role. */
  readonly modelFor: (role: ModelRole) => string
  readonly complete: (request: ModelRequest) => Effect.Effect<ModelResponse, ModelError>
  /**
   * Forces one tool call named `name` whose input is decoded with `schema`; output that does not decode is a
   * `ModelError` with kind "malformed-output".
   */
  readonly structured: <A, I>(
    request: Omit<ModelRequest, "tools" | "toolChoice">,
    output: StructuredOutput<A, I>
  ) => Effect.Effect<{ readonly value: A; readonly response: ModelResponse }, ModelError>
}>()("@memdir/core/Model") {}

// ---------------------------------------------------------------------------------------------------------------
// Configuration
// ---------------------------------------------------------------------------------------------------------------

/**
 * Default model per role: the catalog's `DEFAULT_MODEL` (ModelCatalog.ts, the one table of model ids and prices),
 * a current model of the installed SDK's own `Model` list and never one it lists as deprecated
 * (`test/Model.test.ts` reads both lists). The selector follows the reference (a Sonnet-class model, at most
 * 256 output tokens per turn).
 */
export const DEFAULT_MODELS: Readonly<Record<ModelRole, Anthropic.Model>> = {
  selector: DEFAULT_MODEL,
  extractor: DEFAULT_MODEL,
  dreamer: DEFAULT_MODEL,
  grader: DEFAULT_MODEL,
  agent: DEFAULT_MODEL
}

/** The environment variable that picks a role's model. */
export const modelEnvVar = (role: ModelRole): string => `MEMDIR_MODEL_${role.toUpperCase()}`

export const DEFAULT_TIMEOUT = Duration.seconds(60)
export const DEFAULT_MAX_RETRIES = 2

export interface RetryOptions {
  /** Retries after the first attempt (0: none). */
  readonly maxRetries: number
  /** First backoff delay; doubles per retry, ±20 % jitter. */
  readonly baseDelay: Duration.Duration
  /** Cap of one backoff delay. */
  readonly maxDelay: Duration.Duration
  /** A `retry-after` up to this long is waited out; a longer one ends the retries (the caller is waiting). */
  readonly maxRetryAfter: Duration.Duration
}

export const defaultRetryOptions: RetryOptions = {
  maxRetries: DEFAULT_MAX_RETRIES,
  baseDelay: Duration.millis(500),
  maxDelay: Duration.seconds(8),
  maxRetryAfter: Duration.seconds(30)
}

export interface ModelConfig {
  readonly apiKey: Option.Option<Redacted.Redacted<string>>
  /** Messages-API endpoint; None: the SDK's default (https://api.anthropic.com). */
  readonly baseUrl: Option.Option<string>
  readonly models: Readonly<Record<ModelRole, string>>
  /** Per attempt. */
  readonly timeout: Duration.Duration
  readonly retry: RetryOptions
}

const nonEmptyString = (name: string) =>
  Config.String(name).pipe(Config.option, Config.map(Option.filter((value) => value.trim() !== "")))

/** `ModelConfig` from `Config`: see the module comment for the variables. */
export const config: Config.Config<ModelConfig> = Config.all({
  apiKey: Config.Redacted("ANTHROPIC_API_KEY").pipe(
    Config.option,
    Config.map(Option.filter((key) => Redacted.value(key).trim() !== ""))
  ),
  baseUrl: nonEmptyString("ANTHROPIC_BASE_URL"),
  models: Config.all(
    Object.fromEntries(
      modelRoles.map((role) => [
        role,
        nonEmptyString(modelEnvVar(role)).pipe(
          Config.map((model) => Option.getOrElse(model, () => DEFAULT_MODELS[role]).trim())
        )
      ])
    ) as Record<ModelRole, Config.Config<string>>
  ),
  timeout: Config.Duration("MEMDIR_MODEL_TIMEOUT").pipe(Config.withDefault(DEFAULT_TIMEOUT)),
  maxRetries: Config.schema(
    Schema.Int.check(Schema.isGreaterThanOrEqualTo(0, { message: "must be a whole number ≥ 0" })),
    "MEMDIR_MODEL_MAX_RETRIES"
  ).pipe(Config.withDefault(DEFAULT_MAX_RETRIES))
}).pipe(Config.map(({ maxRetries, ...rest }) => ({ ...rest, retry: { ...defaultRetryOptions, maxRetries } })))

/** Whether `Config` has a key, without building the client (the CLI's default selector depends on it). */
export const isConfigured: Effect.Effect<boolean, Config.ConfigError> = Effect.map(
  config,
  (c) => Option.isSome(c.apiKey)
)

// ---------------------------------------------------------------------------------------------------------------
// Pure helpers: what goes on the wire, what comes back
// ---------------------------------------------------------------------------------------------------------------

/** The system prompt as the API takes it: blocks marked `cache: true` carry an ephemeral cache breakpoint. */
export const systemParam = (system: ModelRequest["system"]): string | Array<Anthropic.TextBlockParam> =>
  typeof system === "string" ?
    system :
    system.map((block) =>
      block.cache === true ?
        { type: "text", text: block.text, cache_control: { type: "ephemeral" } } :
        { type: "text", text: block.text }
    )

/** The Messages API body for a request (non-streaming). */
export const toMessageParams = (request: ModelRequest, model: string): Anthropic.MessageCreateParamsNonStreaming => ({
  model,
  max_tokens: request.maxTokens,
  system: systemParam(request.system),
  messages: [...request.messages],
  ...(request.tools === undefined ? {} : { tools: [...request.tools] }),
  ...(request.toolChoice === undefined ? {} : { tool_choice: request.toolChoice })
})

/**
 * The tool's `input_schema` for an output schema: `Schema.toJsonSchemaDocument` (draft 2020-12), its definitions
 * (if any) as `$defs`, and `additionalProperties: false` on objects (what the model is told it may send). Undefined
 * when the schema is not an object schema: the Messages API takes only those as tool input.
 */
export const toolInputSchema = <A, I>(schema: Schema.Codec<A, I>): Anthropic.Tool.InputSchema | undefined => {
  const document = Schema.toJsonSchemaDocument(schema, { onExcessProperty: "error" })
  const json: JsonSchema.JsonSchema = Object.keys(document.definitions).length === 0 ?
    document.schema :
    { ...document.schema, $defs: document.definitions }
  return json.type === "object" ? json as Anthropic.Tool.InputSchema : undefined
}

export const toUsage = (usage: Partial<Anthropic.Usage> | undefined): ModelUsage => ({
  inputTokens: usage?.input_tokens ?? 0,
  outputTokens: usage?.output_tokens ?? 0,
  cacheReadInputTokens: usage?.cache_read_input_tokens ?? 0,
  cacheCreationInputTokens: usage?.cache_creation_input_tokens ?? 0
})

/** The text of a response's text blocks, joined. */
export const responseText = (response: Pick<ModelResponse, "content">): string =>
  response.content.flatMap((block) => block.type === "text" ? [block.text] : []).join("")

const RETRYABLE_KINDS: ReadonlySet<ModelError["kind"]> = new Set(["rate-limited", "overloaded", "server", "connection"])

/** A failed attempt: the error a caller would see, plus what the server said about retrying. */
export interface AttemptFailure {
  readonly error: ModelError
  /** From `retry-after-ms` / `retry-after`. */
  readonly retryAfter: Option.Option<Duration.Duration>
  /** From `x-should-retry`: the server's own verdict, which wins over the status code. */
  readonly shouldRetry: Option.Option<boolean>
}

export const isRetryable = (failure: AttemptFailure): boolean =>
  Option.getOrElse(failure.shouldRetry, () => RETRYABLE_KINDS.has(failure.error.kind))

/** The kind of failure an HTTP status (and the body's `error.type`) stands for. */
export const kindOfStatus = (status: number, errorType?: string | null): ModelError["kind"] => {
  if (errorType === "overloaded_error" || status === 529) return "overloaded"
  if (errorType === "rate_limit_error" || status === 429) return "rate-limited"
  if (status === 401) return "authentication"
  if (status === 402 || status === 403) return "permission"
  if (status === 404) return "not-found"
  if (status === 408) return "timeout"
  // 409: the API's lock timeouts, retried like a server error (as the SDK does)
  if (status === 409 || status >= 500) return "server"
  return "invalid-request"
}

/** Milliseconds to wait according to `retry-after-ms` or `retry-after` (seconds or an HTTP date). */
export const parseRetryAfter = (
  header: (name: string) => string | null | undefined,
  nowMs: number
): Option.Option<Duration.Duration> => {
  const ms = Number.parseFloat(header("retry-after-ms") ?? "")
  if (Number.isFinite(ms) && ms >= 0) return Option.some(Duration.millis(ms))
  const raw = header("retry-after")
  if (raw === null || raw === undefined || raw.trim() === "") return Option.none()
  const seconds = Number(raw.trim())
  if (Number.isFinite(seconds) && seconds >= 0) return Option.some(Duration.millis(seconds * 1000))
  const date = Date.parse(raw)
  return Number.isNaN(date) ? Option.none() : Option.some(Duration.millis(Math.max(0, date - nowMs)))
}

/**
 * The retry policy: exponential backoff from `baseDelay` (×2, ±20 % jitter from `Random`, capped at
 * `maxDelay`), at most `maxRetries` times, only for retryable failures; a `retry-after` longer than the
 * backoff is waited out, one longer than `maxRetryAfter` stops retrying.
 */
export const retrySchedule = (options: RetryOptions): Schedule.Schedule<unknown, AttemptFailure> =>
  Schedule.exponential(options.baseDelay, 2).pipe(
    Schedule.jittered,
    Schedule.setInputType<AttemptFailure>(),
    Schedule.modifyDelay(({ duration, input }) => {
      const backoff = Duration.min(duration, options.maxDelay)
      return Effect.succeed(
        Option.match(input.retryAfter, { onNone: () => backoff, onSome: (after) => Duration.max(backoff, after) })
      )
    }),
    Schedule.upTo({ times: options.maxRetries }),
    Schedule.while(({ input }) =>
      isRetryable(input) &&
      Option.match(input.retryAfter, {
        onNone: () => true,
        onSome: (after) => Duration.isLessThanOrEqualTo(after, options.maxRetryAfter)
      })
    )
  )

const shorten = (text: string, max = 400): string => text.length <= max ? text : `${text.slice(0, max - 1)}…`

/**
 * `structured` on top of any `complete`: one forced tool call, its input decoded with the schema. Shared by
 * the live and the test layer so both judge a model's answer the same way.
 */
export const structuredWith = (
  complete: (request: ModelRequest) => Effect.Effect<ModelResponse, ModelError>,
  modelFor: (role: ModelRole) => string
) =>
<A, I>(
  request: Omit<ModelRequest, "tools" | "toolChoice">,
  output: StructuredOutput<A, I>
): Effect.Effect<{ readonly value: A; readonly response: ModelResponse }, ModelError> =>
  Effect.gen(function*() {
    const inputSchema = toolInputSchema(output.schema)
    // a programming error, not a model failure
    if (inputSchema === undefined) {
      return yield* Effect.die(new Error(`${output.name}: structured output needs a Struct`))
    }
    const tool: Anthropic.Tool = { name: output.name, description: output.description, input_schema: inputSchema }
    const response = yield* complete({ ...request, tools: [tool], toolChoice: { type: "tool", name: output.name } })
    const malformed = (detail: string) =>
      new ModelError({ kind: "malformed-output", role: request.role, model: response.model, detail })
    const call = response.content.find((block): block is Anthropic.ToolUseBlock =>
      block.type === "tool_use" && block.name === output.name
    )
    if (call === undefined) {
      const got = response.content.map((block) => block.type === "tool_use" ? `tool_use ${block.name}` : block.type)
      return yield* malformed(
        `expected a call to the tool ${output.name}, got [${got.join(", ")}] (stop_reason: ${response.stopReason})`
      )
    }
    const value = yield* Schema.decodeUnknownEffect(output.schema)(call.input).pipe(
      Effect.mapError((error) =>
        malformed(
          `the ${output.name} input does not match its schema (stop_reason: ${response.stopReason}): ` +
            shorten(error.message)
        )
      )
    )
    return { value, response }
  }).pipe(Effect.withSpan("Model.structured", { attributes: { tool: output.name, model: modelFor(request.role) } }))

// ---------------------------------------------------------------------------------------------------------------
// Live
// ---------------------------------------------------------------------------------------------------------------

/** The SDK module, loaded on first use (`import()`), so that memdir without a key never pays for it. */
type Sdk = typeof AnthropicSdk

/**
 * An SDK failure as a typed attempt failure. A body that is not JSON (the SDK's `SyntaxError`) is the endpoint's
 * malformed output; anything else that is not an SDK error is a defect.
 */
const toAttemptFailure = (
  sdk: Sdk,
  role: ModelRole,
  model: string,
  cause: unknown,
  nowMs: number
): Effect.Effect<never, AttemptFailure> => {
  const fail = (
    kind: ModelError["kind"],
    detail: string,
    extra: { status?: number; headers?: Headers | undefined } = {}
  ) => {
    const header = (name: string) => extra.headers?.get(name)
    const shouldRetry = header("x-should-retry")
    return Effect.fail<AttemptFailure>({
      error: new ModelError({
        kind,
        role,
        model,
        detail: shorten(detail),
        ...(extra.status === undefined ? {} : { status: extra.status })
      }),
      retryAfter: extra.headers === undefined ? Option.none() : parseRetryAfter(header, nowMs),
      shouldRetry: shouldRetry === "true"
        ? Option.some(true)
        : shouldRetry === "false"
        ? Option.some(false)
        : Option.none()
    })
  }
  if (cause instanceof sdk.APIConnectionTimeoutError) return fail("timeout", cause.message)
  if (cause instanceof sdk.APIConnectionError) {
    const reason = cause.cause instanceof Error ? ` (${cause.cause.message})` : ""
    return fail("connection", `${cause.message}${reason}`)
  }
  if (cause instanceof sdk.APIError && typeof cause.status === "number") {
    return fail(kindOfStatus(cause.status, cause.type), cause.apiMessage ?? cause.message, {
      status: cause.status,
      headers: cause.headers
    })
  }
  if (cause instanceof SyntaxError) {
    return fail("malformed-output", `the endpoint's answer is not JSON: ${cause.message}`)
  }
  // the SDK refused the request before sending it (e.g. an option it does not accept)
  if (cause instanceof sdk.AnthropicError) return fail("invalid-request", cause.message)
  return Effect.die(cause)
}

/** The live model over an SDK client (needs a key in `config`; without one, `available` is false). */
export const makeWith = (modelConfig: ModelConfig): Effect.Effect<Context.Service.Shape<typeof Model>> =>
  Effect.gen(function*() {
    const modelFor = (role: ModelRole): string => modelConfig.models[role]
    if (Option.isNone(modelConfig.apiKey)) return unavailable(modelFor)
    const sdk: Sdk = yield* Effect.promise(() => import("@anthropic-ai/sdk"))
    const timeoutMs = Duration.toMillis(modelConfig.timeout)
    const client = new sdk.default({
      apiKey: Redacted.value(modelConfig.apiKey.value),
      // explicit, so that `Config` (not the SDK reading the environment on its own) decides the endpoint
      baseURL: Option.getOrElse(modelConfig.baseUrl, () => "https://api.anthropic.com"),
      maxRetries: 0,
      // the SDK's own clock is only a backstop: the attempt's `Effect.timeoutOrElse` fires first
      timeout: Math.max(1, Math.ceil(timeoutMs)) + 1000
    })
    const schedule = retrySchedule(modelConfig.retry)

    const complete = Effect.fn("Model.complete")(function*(request: ModelRequest) {
      const model = modelFor(request.role)
      const body = toMessageParams(request, model)
      const attempts = yield* Ref.make(0)
      const startedAt = yield* Clock.currentTimeMillis
      const attempt = Ref.update(attempts, (n) => n + 1).pipe(
        Effect.andThen(Effect.tryPromise({
          try: (signal) => client.messages.create(body, { signal }),
          catch: (cause) => cause
        })),
        Effect.catch((cause) =>
          Effect.flatMap(Clock.currentTimeMillis, (now) => toAttemptFailure(sdk, request.role, model, cause, now))
        ),
        Effect.timeoutOrElse({
          duration: modelConfig.timeout,
          orElse: () =>
            Effect.fail<AttemptFailure>({
              error: new ModelError({
                kind: "timeout",
                role: request.role,
                model,
                detail: `no answer within ${Duration.format(modelConfig.timeout)}`
              }),
              retryAfter: Option.none(),
              shouldRetry: Option.some(false)
            })
        })
      )
      const message = yield* attempt.pipe(
        Effect.retry(schedule),
        Effect.mapError((failure) => failure.error),
        Effect.tapError((error) =>
          Effect.flatMap(Ref.get(attempts), (n) =>
            Effect.annotateCurrentSpan({
              "model.role": request.role,
              "model.id": model,
              "model.error": error.kind,
              "model.attempts": n
            }))
        )
      )
      const response: ModelResponse = {
        model: message.model,
        content: message.content,
        stopReason: message.stop_reason,
        usage: toUsage(message.usage),
        latencyMs: (yield* Clock.currentTimeMillis) - startedAt,
        attempts: yield* Ref.get(attempts)
      }
      yield* annotateResponse(request, response)
      return response
    })

    return Model.of({ available: true, modelFor, complete, structured: structuredWith(complete, modelFor) })
  })

const annotateResponse = (request: ModelRequest, response: ModelResponse) =>
  Effect.annotateCurrentSpan({
    "model.role": request.role,
    "model.id": response.model,
    "model.attempts": response.attempts ?? 1,
    "model.latency_ms": response.latencyMs,
    "model.stop_reason": response.stopReason ?? "",
    "model.input_tokens": response.usage.inputTokens,
    "model.output_tokens": response.usage.outputTokens,
    "model.cache_read_input_tokens": response.usage.cacheReadInputTokens,
    "model.cache_creation_input_tokens": response.usage.cacheCreationInputTokens
  })

/** No key: every call fails with "not-configured" (callers check `available` first). */
const unavailable = (modelFor: (role: ModelRole) => string): Context.Service.Shape<typeof Model> => {
  const complete = (request: ModelRequest) =>
    Effect.fail(
      new ModelError({
        kind: "not-configured",
        role: request.role,
        model: modelFor(request.role),
        detail: "ANTHROPIC_API_KEY is not set"
      })
    )
  return Model.of({ available: false, modelFor, complete, structured: structuredWith(complete, modelFor) })
}

export const make: Effect.Effect<Context.Service.Shape<typeof Model>, Config.ConfigError> = Effect.flatMap(
  config,
  makeWith
)

/** The live model from `Config` (environment variables). */
export const layer: Layer.Layer<Model, Config.ConfigError> = Layer.effect(Model, make)

/** The live model from `Config`, with some settings fixed in code (e.g. a faster retry policy in tests). */
export const layerWith = (
  overrides: Partial<Omit<ModelConfig, "retry">> & { readonly retry?: Partial<RetryOptions> | undefined }
): Layer.Layer<Model, Config.ConfigError> =>
  Layer.effect(
    Model,
    Effect.flatMap(config, (fromEnv) =>
      makeWith({
        ...fromEnv,
        ...overrides,
        models: { ...fromEnv.models, ...overrides.models },
        retry: { ...fromEnv.retry, ...overrides.retry }
      }))
  )

// ---------------------------------------------------------------------------------------------------------------
// Test
// ---------------------------------------------------------------------------------------------------------------

/** One scripted answer: a message, or the `ModelError` the call fails with. */
export type ScriptedReply =
  | ModelError
  | {
    readonly content: ReadonlyArray<Anthropic.ContentBlock>
    readonly stopReason?: string | null | undefined
    readonly usage?: Partial<ModelUsage> | undefined
    readonly model?: string | undefined
  }

/** Answers in order, or computed from the request (`index` counts calls from 0). */
export type ModelScript =
  | ReadonlyArray<ScriptedReply>
  | ((request: ModelRequest, index: number) => ScriptedReply)

/** A text answer. */
export const textReply = (text: string): ScriptedReply => ({
  content: [{ type: "text", text, citations: null }],
  stopReason: "end_turn"
})

/** A tool call (what `structured` expects back). */
export const toolUseReply = (name: string, input: unknown, id = "toolu_scripted"): ScriptedReply => ({
  content: [{ type: "tool_use", id, name, input, caller: { type: "direct" } }],
  stopReason: "tool_use"
})

/** What a scripted model was asked, for assertions. */
export class ModelRequests extends Context.Service<ModelRequests, {
  readonly all: Effect.Effect<ReadonlyArray<ModelRequest>>
}>()("@memdir/core/Model/ModelRequests") {}

export interface TestModelOptions {
  /** False: behave as if no key were configured (every call fails "not-configured"). */
  readonly available?: boolean | undefined
  readonly models?: Partial<Record<ModelRole, string>> | undefined
}

/**
 * A scripted model: no network, deterministic. Every request is recorded (`ModelRequests`); a script that
 * runs out of answers is a bug in the test and dies with a message saying so.
 */
export const layerTest = (
  script: ModelScript,
  options: TestModelOptions = {}
): Layer.Layer<Model | ModelRequests> =>
  Layer.effectContext(Effect.gen(function*() {
    const requests = yield* Ref.make<ReadonlyArray<ModelRequest>>([])
    const modelFor = (role: ModelRole): string => options.models?.[role] ?? DEFAULT_MODELS[role]
    const scripted = Effect.fn("Model.complete")(function*(request: ModelRequest) {
      const index = (yield* Ref.getAndUpdate(requests, (all) => [...all, request])).length
      const reply = typeof script === "function" ? script(request, index) : script[index]
      if (reply === undefined) {
        return yield* Effect.die(new Error(`Model.layerTest: no scripted reply for call ${index + 1}`))
      }
      if (reply instanceof ModelError) return yield* reply
      const response: ModelResponse = {
        model: reply.model ?? modelFor(request.role),
        content: reply.content,
        stopReason: reply.stopReason ?? null,
        usage: { ...toUsage(undefined), ...reply.usage },
        latencyMs: 0,
        attempts: 1
      }
      yield* annotateResponse(request, response)
      return response
    })
    const model = options.available === false ? unavailable(modelFor) : Model.of({
      available: true,
      modelFor,
      complete: scripted,
      structured: structuredWith(scripted, modelFor)
    })
    return Context.make(Model, model).pipe(Context.add(ModelRequests, { all: Ref.get(requests) }))
  }))
