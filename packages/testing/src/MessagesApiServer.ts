/**
 * A local HTTP server that speaks the Anthropic Messages API (`POST /v1/messages`) closely enough for the real
 * `@anthropic-ai/sdk` client: point `ANTHROPIC_BASE_URL` (or the SDK's `baseURL`) at `server.url` and script
 * what it answers. For tests of anything that talks to a model, without a key or a network.
 *
 *   const server = yield* MessagesApiServer.make({ replies: [MessagesApiServer.toolUse("select", { … })] })
 *   // … run the code under test with ANTHROPIC_BASE_URL=server.url …
 *   const [request] = yield* server.requests   // headers (authorization, anthropic-version) and parsed body
 *
 * It binds 127.0.0.1 on a random port and closes (dropping open connections) with its scope. Replies come
 * from a queue (`replies`, `enqueue`), then from a `handler`; with neither, it answers a 500 with
 * `x-should-retry: false`, so a test that forgot a reply fails instead of hanging or retrying.
 *
 * What it imitates: JSON Message responses (`id`, `type: "message"`, `role`, `model`, `content` with text and
 * tool_use blocks, `stop_reason`, `usage`), error bodies `{type: "error", error: {type, message}}` with the
 * API's status codes (429 + `retry-after`, 529, 500, 401…), `request-id` headers, slow replies (`delayMs`),
 * malformed bodies, and prompt caching: a request whose prefix up to its last `cache_control` breakpoint was
 * seen before reports `cache_read_input_tokens`, a new one `cache_creation_input_tokens` (tokens ≈ chars / 4;
 * the real API also needs a minimum prefix length, not imitated). A `stream: true` request gets the same message as
 * server-sent events (`message_start`, per block `content_block_start`/`_delta`/`_stop` — a text block in one
 * `text_delta`, a tool call's input in one `input_json_delta` —, `message_delta`, `message_stop`), as the Claude
 * Code CLI and the SDK's `messages.stream` read them; errors stay JSON with their status, as the API answers them
 * before a stream starts. Not imitated: token counting, batches.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as Scripted from "./internal/scriptedServer.js"

/** One request as the server received it (headers lower-cased: `authorization`, `anthropic-version`…). */
export type RecordedRequest = Scripted.RecordedRequest

export type ReplyContent =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "tool_use"; readonly name: string; readonly input: unknown; readonly id?: string | undefined }

export interface ReplyUsage {
  readonly input_tokens: number
  readonly output_tokens: number
  readonly cache_creation_input_tokens: number
  readonly cache_read_input_tokens: number
}

interface ReplyTiming {
  /** Wait this long before answering (a slow model; a client timeout shorter than this fires first). */
  readonly delayMs?: number | undefined
  readonly headers?: Readonly<Record<string, string>> | undefined
}

/** What the server answers to one request. */
export type Reply =
  | ReplyTiming & {
    readonly kind: "message"
    readonly content: ReadonlyArray<ReplyContent>
    /** Default: "tool_use" when a tool_use block is present, else "end_turn". */
    readonly stopReason?: string | undefined
    /** Default: the requested model. */
    readonly model?: string | undefined
    /** Default: estimated (≈ chars / 4, with the cache simulation). */
    readonly usage?: Partial<ReplyUsage> | undefined
  }
  | ReplyTiming & {
    readonly kind: "error"
    readonly status: number
    /** The API's error type: `rate_limit_error`, `overloaded_error`, `api_error`, `authentication_error`… */
    readonly type: string
    readonly message: string
  }
  | ReplyTiming & {
    /** Anything at all, e.g. a body that is not JSON. */
    readonly kind: "raw"
    readonly status: number
    readonly body: string
    readonly contentType?: string | undefined
  }

export type Handler = Scripted.Handler<Reply>

export interface MessagesApiServerOptions {
  /** Answers in order; when they run out, `handler` answers. */
  readonly replies?: ReadonlyArray<Reply> | undefined
  readonly handler?: Handler | undefined
  /** When set, a request with another key (see `apiKeyOf`) gets a 401 (as the API does). */
  readonly apiKey?: string | undefined
}

export interface MessagesApiServerService extends Scripted.ScriptedServer<Reply> {
  /** Base URL for the SDK / `ANTHROPIC_BASE_URL`, e.g. `http://127.0.0.1:43817`. */
  readonly url: string
}

export class MessagesApiServer extends Context.Service<
  MessagesApiServer,
  MessagesApiServerService
>()("@memdir/testing/MessagesApiServer") {}

// ---------------------------------------------------------------------------------------------------------------
// Replies
// ---------------------------------------------------------------------------------------------------------------

type MessageOptions = Omit<Extract<Reply, { kind: "message" }>, "kind" | "content">

/** A message with one text block. */
export const text = (value: string, options: MessageOptions = {}): Reply => ({
  kind: "message",
  content: [{ type: "text", text: value }],
  ...options
})

/** A message whose text is `value` as JSON (a model answering "in JSON"). */
export const json = (value: unknown, options: MessageOptions = {}): Reply => text(JSON.stringify(value), options)

/** A message with one tool call (stop_reason "tool_use"). */
export const toolUse = (name: string, input: unknown, options: MessageOptions = {}): Reply => ({
  kind: "message",
  content: [{ type: "tool_use", name, input }],
  ...options
})

/** Any message. */
export const message = (content: ReadonlyArray<ReplyContent>, options: MessageOptions = {}): Reply => ({
  kind: "message",
  content,
  ...options
})

/** An API error body `{type: "error", error: {type, message}}` with its status. */
export const apiError = (
  status: number,
  type: string,
  errorMessage: string,
  options: ReplyTiming = {}
): Reply => ({ kind: "error", status, type, message: errorMessage, ...options })

/** 429 `rate_limit_error` with `retry-after` in seconds (may be fractional; "0": retry at once). */
export const rateLimited = (retryAfterSeconds = 0): Reply =>
  apiError(429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit", {
    headers: { "retry-after": String(retryAfterSeconds) }
  })

/** 529 `overloaded_error`. */
export const overloaded = (): Reply => apiError(529, "overloaded_error", "Overloaded")

/** 500 `api_error`. */
export const serverError = (): Reply => apiError(500, "api_error", "Internal server error")

/** 401 `authentication_error`. */
export const unauthorized = (): Reply => apiError(401, "authentication_error", "invalid x-api-key")

/** 400 `invalid_request_error`. */
export const invalidRequest = (errorMessage: string): Reply => apiError(400, "invalid_request_error", errorMessage)

/** A 200 whose body is not JSON at all. */
export const malformedBody = (body = "{\"type\":\"message\",\"content\":[{\"type\":\"te"): Reply => ({
  kind: "raw",
  status: 200,
  body
})

/** The same reply, `delayMs` later. */
export const slow = (reply: Reply, delayMs: number): Reply => ({ ...reply, delayMs })

// ---------------------------------------------------------------------------------------------------------------
// Server
// ---------------------------------------------------------------------------------------------------------------

const estimateTokens = (chars: number): number => Math.max(1, Math.ceil(chars / 4))

const hasCacheControl = (value: unknown): boolean =>
  typeof value === "object" && value !== null && "cache_control" in value &&
  (value as { cache_control: unknown }).cache_control != null

const withoutCacheControl = (value: unknown): unknown => {
  if (typeof value !== "object" || value === null) return value
  const { cache_control: _, ...rest } = value as Record<string, unknown>
  return rest
}

/**
 * The cacheable prefix of a request, in the API's order (tools → system → messages), up to and including its
 * last `cache_control` breakpoint; undefined when it has none.
 */
export const cachePrefix = (body: any): string | undefined => {
  const pieces: Array<unknown> = []
  let last = -1
  const add = (piece: unknown) => {
    pieces.push(withoutCacheControl(piece))
    if (hasCacheControl(piece)) last = pieces.length - 1
  }
  for (const tool of Array.isArray(body?.tools) ? body.tools : []) add(tool)
  if (typeof body?.system === "string") add({ type: "text", text: body.system })
  else for (const block of Array.isArray(body?.system) ? body.system : []) add(block)
  for (const m of Array.isArray(body?.messages) ? body.messages : []) {
    add({ role: m?.role })
    if (typeof m?.content === "string") add({ type: "text", text: m.content })
    else for (const block of Array.isArray(m?.content) ? m.content : []) add(block)
  }
  return last < 0 ? undefined : JSON.stringify(pieces.slice(0, last + 1))
}

/**
 * The key a request authenticates with: `x-api-key`, or `Authorization: Bearer <key>` (how SDK 1.14 sends an
 * `apiKey`).
 */
export const apiKeyOf = (request: Pick<RecordedRequest, "headers">): string | undefined =>
  request.headers["x-api-key"] ?? /^Bearer\s+(.+)$/i.exec(request.headers["authorization"] ?? "")?.[1]

/** Why a body is not a Messages request the API would take, or undefined. */
const invalidBody = (body: any): string | undefined => {
  if (typeof body !== "object" || body === null) return "body: expected a JSON object"
  if (typeof body.model !== "string" || body.model === "") return "model: Field required"
  if (typeof body.max_tokens !== "number" || body.max_tokens < 1) return "max_tokens: Field required"
  if (!Array.isArray(body.messages) || body.messages.length === 0) return "messages: at least one message is required"
  if (body.tool_choice?.type === "tool") {
    const tools: ReadonlyArray<any> = Array.isArray(body.tools) ? body.tools : []
    if (!tools.some((tool) => tool?.name === body.tool_choice.name)) {
      return `tool_choice: tool ${JSON.stringify(body.tool_choice.name)} is not in tools`
    }
  }
  return undefined
}

/** A whole message as the API streams it: server-sent events, each block's content in one delta. */
const streamBody = (message: any): string => {
  const event = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`
  const { content, stop_reason, stop_sequence, usage } = message
  return [
    event("message_start", {
      message: {
        ...message,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usage, output_tokens: 1 }
      }
    }),
    ...(content as ReadonlyArray<any>).flatMap((block, index) =>
      block.type === "text" ?
        [
          event("content_block_start", { index, content_block: { type: "text", text: "", citations: null } }),
          event("content_block_delta", { index, delta: { type: "text_delta", text: block.text } }),
          event("content_block_stop", { index })
        ] :
        [
          event("content_block_start", { index, content_block: { ...block, input: {} } }),
          event("content_block_delta", {
            index,
            delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) }
          }),
          event("content_block_stop", { index })
        ]
    ),
    event("message_delta", { delta: { stop_reason, stop_sequence }, usage: { output_tokens: usage.output_tokens } }),
    event("message_stop", {})
  ].join("")
}

/** Start the server; it stops when the scope closes. */
export const make = (
  options: MessagesApiServerOptions = {}
): Effect.Effect<MessagesApiServerService, never, Scope.Scope> =>
  Effect.gen(function*() {
    const seenPrefixes = new Set<string>()
    let messageCount = 0

    const messageBody = (reply: Extract<Reply, { kind: "message" }>, request: RecordedRequest) => {
      messageCount += 1
      const n = String(messageCount).padStart(4, "0")
      const content = reply.content.map((block, i) =>
        block.type === "text" ?
          { type: "text", text: block.text, citations: null } :
          {
            type: "tool_use",
            id: block.id ?? `toolu_test_${n}_${i}`,
            name: block.name,
            input: block.input,
            caller: { type: "direct" }
          }
      )
      const prefix = cachePrefix(request.body)
      const cached = prefix !== undefined && seenPrefixes.has(prefix)
      if (prefix !== undefined) seenPrefixes.add(prefix)
      const prefixTokens = prefix === undefined ? 0 : estimateTokens(prefix.length)
      const usage: ReplyUsage = {
        input_tokens: Math.max(1, estimateTokens(request.rawBody.length) - prefixTokens),
        output_tokens: estimateTokens(JSON.stringify(content).length),
        cache_creation_input_tokens: cached ? 0 : prefixTokens,
        cache_read_input_tokens: cached ? prefixTokens : 0,
        ...reply.usage
      }
      return {
        id: `msg_test_${n}`,
        type: "message",
        role: "assistant",
        model: reply.model ?? request.body.model,
        content,
        stop_reason: reply.stopReason ?? (content.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn"),
        stop_sequence: null,
        stop_details: null,
        container: null,
        diagnostics: null,
        usage: {
          ...usage,
          cache_creation: null,
          inference_geo: null,
          output_tokens_details: null,
          server_tool_use: null,
          service_tier: "standard",
          speed: null
        }
      }
    }

    const errorBody = (type: string, errorMessage: string, index: number) =>
      JSON.stringify({
        type: "error",
        error: { type, message: errorMessage },
        request_id: `req_test_${String(index + 1).padStart(4, "0")}`
      })

    const server = yield* Scripted.serve<Reply>({
      replies: options.replies,
      handler: options.handler,
      requestIdHeader: "request-id",
      refuse: (request, index) => {
        if (request.method !== "POST" || request.path !== "/v1/messages") {
          return { status: 404, body: errorBody("not_found_error", `Not found: ${request.path}`, index) }
        }
        if (options.apiKey !== undefined && apiKeyOf(request) !== options.apiKey) {
          return { status: 401, body: errorBody("authentication_error", "invalid x-api-key", index) }
        }
        const invalid = request.body === undefined ? "body: not valid JSON" : invalidBody(request.body)
        return invalid === undefined ?
          undefined :
          { status: 400, body: errorBody("invalid_request_error", invalid, index) }
      },
      unscripted: (index) =>
        apiError(500, "api_error", `MessagesApiServer: no scripted reply for request ${index + 1}`, {
          headers: { "x-should-retry": "false" }
        }),
      render: (reply, request, index) => {
        switch (reply.kind) {
          case "message": {
            const body = messageBody(reply, request)
            return request.body.stream === true
              ? { status: 200, body: streamBody(body), headers: reply.headers, contentType: "text/event-stream" }
              : { status: 200, body: JSON.stringify(body), headers: reply.headers }
          }
          case "error":
            return { status: reply.status, body: errorBody(reply.type, reply.message, index), headers: reply.headers }
          case "raw":
            return { status: reply.status, body: reply.body, headers: reply.headers, contentType: reply.contentType }
        }
      },
      // a handler that threw: answer like the API's own failure, and do not retry a broken test
      crashed: (error) => ({
        status: 500,
        body: errorBody("api_error", `MessagesApiServer handler: ${error}`, 0),
        headers: { "x-should-retry": "false" }
      })
    })

    return { ...server, url: `http://127.0.0.1:${server.port}` }
  })

/** The server as a layer (one per test file or suite). */
export const layer = (options: MessagesApiServerOptions = {}): Layer.Layer<MessagesApiServer> =>
  Layer.effect(MessagesApiServer, make(options))
