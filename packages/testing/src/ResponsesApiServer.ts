/**
 * A local HTTP server that speaks OpenAI's Responses API (`POST /v1/responses`) closely enough for the real Codex
 * CLI (0.171): point a Codex model provider at `server.baseUrl` (`base_url`, `wire_api = "responses"`) and script
 * what the model answers. For tests of memdir inside Codex, without a login, a key or a network.
 *
 *   const server = yield* ResponsesApiServer.make({ handler: () => ResponsesApiServer.text("done") })
 *   // … run `codex exec` with a provider whose base_url is server.baseUrl …
 *   const [request] = yield* server.requests   // headers (authorization, originator) and parsed body
 *
 * It binds 127.0.0.1 on a random port and closes (dropping open connections) with its scope. Replies come from a
 * queue (`replies`, `enqueue`), then from a `handler`; with neither, it answers a 500, so a test that forgot a
 * reply fails (give Codex's provider `request_max_retries = 0` so it does not retry first).
 *
 * What it imitates: a `stream: true` request gets server-sent events in the API's order — `response.created`,
 * `response.in_progress`, per output item `response.output_item.added`, for a message `response.content_part.added`,
 * one `response.output_text.delta`, `response.output_text.done`, `response.content_part.done`, for a function call
 * one `response.function_call_arguments.delta` and `response.function_call_arguments.done`, then
 * `response.output_item.done` with the whole item, and `response.completed` with the response and its `usage`
 * (tokens ≈ chars / 4). Codex reads `response.created`, `response.output_item.added` / `.done`,
 * `response.output_text.delta` and `response.completed` (openai/codex `codex-rs/codex-api/src/sse/responses.rs`);
 * a stream without `response.completed` is an error to it. A request without `stream` gets the response object as
 * JSON. Error replies are the API's JSON `{error: {message, type, param, code}}` with its status, or a stream that
 * ends in `response.failed`. A function call may carry a `namespace`: Codex 0.171 offers an MCP server's tools as one
 * `{type: "namespace", name: "mcp__<server>", tools}` entry and expects a call of one as
 * `{type: "function_call", namespace: "mcp__<server>", name: "<tool>"}`. Not imitated: reasoning items, built-in
 * tools (web search), background responses, `previous_response_id` state, WebSocket transport.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as Scripted from "./internal/scriptedServer.js"

/** One request as the server received it (headers lower-cased: `authorization`, `originator`…). */
export type RecordedRequest = Scripted.RecordedRequest

/** One output item of a scripted response. */
export type ReplyOutput =
  | { readonly type: "text"; readonly text: string }
  | {
    readonly type: "function_call"
    readonly name: string
    /** The call's arguments; sent as the JSON string the API sends. */
    readonly arguments: unknown
    /** The tool's namespace, e.g. `mcp__memdir` for an MCP server's tool in Codex. */
    readonly namespace?: string | undefined
    readonly callId?: string | undefined
  }

export interface ReplyUsage {
  readonly input_tokens: number
  readonly output_tokens: number
}

interface ReplyTiming {
  /** Wait this long before answering. */
  readonly delayMs?: number | undefined
  readonly headers?: Readonly<Record<string, string>> | undefined
}

/** What the server answers to one request. */
export type Reply =
  | ReplyTiming & {
    readonly kind: "response"
    readonly output: ReadonlyArray<ReplyOutput>
    /** Default: the requested model. */
    readonly model?: string | undefined
    /** Default: estimated (≈ chars / 4). */
    readonly usage?: Partial<ReplyUsage> | undefined
  }
  | ReplyTiming & {
    /** An HTTP error before any stream: `{error: {message, type, param, code}}` with `status`. */
    readonly kind: "error"
    readonly status: number
    readonly type: string
    readonly code: string | null
    readonly message: string
  }
  | ReplyTiming & {
    /** A 200 stream that ends in `response.failed` (how the API reports a failure mid-response). */
    readonly kind: "failed"
    readonly code: string
    readonly message: string
  }
  | ReplyTiming & {
    /** Anything at all, e.g. a stream that stops before `response.completed`. */
    readonly kind: "raw"
    readonly status: number
    readonly body: string
    readonly contentType?: string | undefined
  }

export type Handler = Scripted.Handler<Reply>

export interface ResponsesApiServerOptions {
  /** Answers in order; when they run out, `handler` answers. */
  readonly replies?: ReadonlyArray<Reply> | undefined
  readonly handler?: Handler | undefined
  /** When set, a request without `Authorization: Bearer <apiKey>` gets a 401 (as the API does). */
  readonly apiKey?: string | undefined
}

export interface ResponsesApiServerService extends Scripted.ScriptedServer<Reply> {
  /** The server's origin, e.g. `http://127.0.0.1:43817`. */
  readonly url: string
  /** The API's base URL, `<url>/v1`: Codex's `base_url`, the OpenAI SDK's `baseURL`. */
  readonly baseUrl: string
}

export class ResponsesApiServer extends Context.Service<
  ResponsesApiServer,
  ResponsesApiServerService
>()("@memdir/testing/ResponsesApiServer") {}

// ---------------------------------------------------------------------------------------------------------------
// Replies
// ---------------------------------------------------------------------------------------------------------------

type ResponseOptions = Omit<Extract<Reply, { kind: "response" }>, "kind" | "output">

/** A response with one assistant message. */
export const text = (value: string, options: ResponseOptions = {}): Reply => ({
  kind: "response",
  output: [{ type: "text", text: value }],
  ...options
})

/** A response with one function call; `namespace` for a namespaced tool (Codex: `mcp__<server>`). */
export const functionCall = (
  name: string,
  args: unknown,
  options: ResponseOptions & { readonly namespace?: string | undefined; readonly callId?: string | undefined } = {}
): Reply => {
  const { callId, namespace, ...rest } = options
  return { kind: "response", output: [{ type: "function_call", name, arguments: args, namespace, callId }], ...rest }
}

/** Any response. */
export const response = (output: ReadonlyArray<ReplyOutput>, options: ResponseOptions = {}): Reply => ({
  kind: "response",
  output,
  ...options
})

/** An HTTP error as the API answers it. */
export const apiError = (
  status: number,
  type: string,
  message: string,
  options: ReplyTiming & { readonly code?: string | null | undefined } = {}
): Reply => {
  const { code, ...timing } = options
  return { kind: "error", status, type, code: code ?? null, message, ...timing }
}

/** A stream that ends in `response.failed` with this error. */
export const failed = (code: string, message: string): Reply => ({ kind: "failed", code, message })

/** Anything at all. */
export const raw = (status: number, body: string, contentType = "text/event-stream"): Reply => ({
  kind: "raw",
  status,
  body,
  contentType
})

// ---------------------------------------------------------------------------------------------------------------
// Reading requests
// ---------------------------------------------------------------------------------------------------------------

const textsOf = (content: unknown): Array<string> =>
  typeof content === "string"
    ? [content]
    : Array.isArray(content)
    ? content.flatMap((part: any) => (typeof part?.text === "string" ? [part.text] : []))
    : []

/** The text of every message of a request's `input` with `role` (all roles when omitted), in order. */
export const messageTexts = (body: any, role?: string): ReadonlyArray<string> => {
  if (typeof body?.input === "string") return role === undefined || role === "user" ? [body.input] : []
  return (Array.isArray(body?.input) ? body.input : [])
    .filter((item: any) => (item?.type ?? "message") === "message" && (role === undefined || item.role === role))
    .flatMap((item: any) => textsOf(item.content))
}

/** Everything of a request the model reads as text: `instructions` and every message's text. */
export const textOf = (body: any): string =>
  [...(typeof body?.instructions === "string" ? [body.instructions] : []), ...messageTexts(body)].join("\n")

/**
 * The tools a request offers, by the name a call uses: a function as its name, a namespace's function as
 * `<namespace>/<name>` (e.g. `mcp__memdir/memory_write`), any other tool as its type.
 */
export const toolNames = (body: any): ReadonlyArray<string> =>
  (Array.isArray(body?.tools) ? body.tools : []).flatMap((tool: any) =>
    tool?.type === "namespace"
      ? (Array.isArray(tool.tools) ? tool.tools : []).map((inner: any) => `${tool.name}/${inner?.name}`)
      : [tool?.type === "function" ? String(tool.name) : String(tool?.type)]
  )

/** The function call outputs a request sends back, in order: their call id and what the model reads of each. */
export const functionCallOutputs = (body: any): ReadonlyArray<{ readonly callId: string; readonly text: string }> =>
  (Array.isArray(body?.input) ? body.input : [])
    .filter((item: any) => item?.type === "function_call_output")
    .map((item: any) => ({ callId: String(item.call_id), text: textsOf(item.output).join("\n") }))

// ---------------------------------------------------------------------------------------------------------------
// Server
// ---------------------------------------------------------------------------------------------------------------

const estimateTokens = (chars: number): number => Math.max(1, Math.ceil(chars / 4))

/** Why a body is not a Responses request the API would take, or undefined. */
const invalidBody = (body: any): string | undefined => {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return "body: expected a JSON object"
  if (typeof body.model !== "string" || body.model === "") return "Missing required parameter: 'model'."
  if (typeof body.input !== "string" && !Array.isArray(body.input)) return "Invalid type for 'input'."
  if (body.tools !== undefined && !Array.isArray(body.tools)) return "Invalid type for 'tools': expected an array."
  return undefined
}

const errorBody = (type: string, message: string, code: string | null = null) =>
  JSON.stringify({ error: { message, type, param: null, code } })

/** One server-sent event as the API writes it. */
const sse = (type: string, sequence: number, data: object) =>
  `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence, ...data })}\n\n`

/** A whole response as the API streams it, each message's text and each call's arguments in one delta. */
const streamBody = (response: any): string => {
  let sequence = 0
  const event = (type: string, data: object) => sse(type, sequence++, data)
  const pending = { ...response, status: "in_progress", output: [], usage: null }
  return [
    event("response.created", { response: pending }),
    event("response.in_progress", { response: pending }),
    ...(response.output as ReadonlyArray<any>).flatMap((item, output_index) => {
      if (item.type === "message") {
        const part = item.content[0]
        const at = { item_id: item.id, output_index, content_index: 0 }
        return [
          event("response.output_item.added", { output_index, item: { ...item, status: "in_progress", content: [] } }),
          event("response.content_part.added", { ...at, part: { ...part, text: "" } }),
          event("response.output_text.delta", { ...at, delta: part.text, logprobs: [] }),
          event("response.output_text.done", { ...at, text: part.text, logprobs: [] }),
          event("response.content_part.done", { ...at, part }),
          event("response.output_item.done", { output_index, item })
        ]
      }
      const at = { item_id: item.id, output_index }
      return [
        event("response.output_item.added", { output_index, item: { ...item, status: "in_progress", arguments: "" } }),
        event("response.function_call_arguments.delta", { ...at, delta: item.arguments }),
        event("response.function_call_arguments.done", { ...at, arguments: item.arguments }),
        event("response.output_item.done", { output_index, item })
      ]
    }),
    event("response.completed", { response })
  ].join("")
}

/** A stream that starts and ends in `response.failed`. */
const failedStreamBody = (response: any, code: string, message: string): string => {
  const pending = { ...response, status: "in_progress", output: [], usage: null }
  return [
    sse("response.created", 0, { response: pending }),
    sse("response.failed", 1, { response: { ...pending, status: "failed", error: { code, message } } })
  ].join("")
}

/** Start the server; it stops when the scope closes. */
export const make = (
  options: ResponsesApiServerOptions = {}
): Effect.Effect<ResponsesApiServerService, never, Scope.Scope> =>
  Effect.gen(function*() {
    let responseCount = 0

    const responseObject = (request: RecordedRequest, reply?: Extract<Reply, { kind: "response" }>) => {
      responseCount += 1
      const n = String(responseCount).padStart(4, "0")
      const output = (reply?.output ?? []).map((out, i) =>
        out.type === "text" ?
          {
            type: "message",
            id: `msg_test_${n}_${i}`,
            status: "completed",
            role: "assistant",
            content: [{ type: "output_text", text: out.text, annotations: [] }]
          } :
          {
            type: "function_call",
            id: `fc_test_${n}_${i}`,
            status: "completed",
            call_id: out.callId ?? `call_test_${n}_${i}`,
            ...(out.namespace === undefined ? {} : { namespace: out.namespace }),
            name: out.name,
            arguments: JSON.stringify(out.arguments)
          }
      )
      const input_tokens = reply?.usage?.input_tokens ?? estimateTokens(request.rawBody.length)
      const output_tokens = reply?.usage?.output_tokens ?? estimateTokens(JSON.stringify(output).length)
      return {
        id: `resp_test_${n}`,
        object: "response",
        created_at: Math.floor(Date.now() / 1000),
        status: "completed",
        error: null,
        incomplete_details: null,
        model: reply?.model ?? request.body.model,
        output,
        parallel_tool_calls: request.body.parallel_tool_calls ?? true,
        tool_choice: request.body.tool_choice ?? "auto",
        tools: request.body.tools ?? [],
        usage: {
          input_tokens,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: input_tokens + output_tokens
        }
      }
    }

    const server = yield* Scripted.serve<Reply>({
      replies: options.replies,
      handler: options.handler,
      requestIdHeader: "x-request-id",
      refuse: (request) => {
        if (request.method !== "POST" || request.path !== "/v1/responses") {
          return {
            status: 404,
            body: errorBody("invalid_request_error", `Invalid URL (${request.method} ${request.path})`)
          }
        }
        if (options.apiKey !== undefined && request.headers["authorization"] !== `Bearer ${options.apiKey}`) {
          return {
            status: 401,
            body: errorBody("invalid_request_error", "Incorrect API key provided.", "invalid_api_key")
          }
        }
        const invalid = request.body === undefined ?
          "We could not parse the JSON body of your request." :
          invalidBody(request.body)
        return invalid === undefined ? undefined : { status: 400, body: errorBody("invalid_request_error", invalid) }
      },
      unscripted: (index) =>
        apiError(500, "server_error", `ResponsesApiServer: no scripted reply for request ${index + 1}`),
      render: (reply, request) => {
        const streamed = request.body.stream === true
        switch (reply.kind) {
          case "response": {
            const body = responseObject(request, reply)
            return streamed
              ? { status: 200, body: streamBody(body), headers: reply.headers, contentType: "text/event-stream" }
              : { status: 200, body: JSON.stringify(body), headers: reply.headers }
          }
          case "error":
            return {
              status: reply.status,
              body: errorBody(reply.type, reply.message, reply.code),
              headers: reply.headers
            }
          case "failed": {
            const body = {
              ...responseObject(request),
              status: "failed",
              error: { code: reply.code, message: reply.message }
            }
            return streamed
              ? {
                status: 200,
                body: failedStreamBody(body, reply.code, reply.message),
                headers: reply.headers,
                contentType: "text/event-stream"
              }
              : { status: 200, body: JSON.stringify(body), headers: reply.headers }
          }
          case "raw":
            return { status: reply.status, body: reply.body, headers: reply.headers, contentType: reply.contentType }
        }
      },
      // a handler that threw: answer like the API's own failure
      crashed: (error) => ({
        status: 500,
        body: errorBody("server_error", `ResponsesApiServer handler: ${error}`)
      })
    })

    const url = `http://127.0.0.1:${server.port}`
    return { ...server, url, baseUrl: `${url}/v1` }
  })

/** The server as a layer (one per test file or suite). */
export const layer = (options: ResponsesApiServerOptions = {}): Layer.Layer<ResponsesApiServer> =>
  Layer.effect(ResponsesApiServer, make(options))
