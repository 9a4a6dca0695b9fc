/**
 * The local Messages API server against the REAL `@anthropic-ai/sdk` client: what the SDK makes of its
 * answers (messages, tool calls, typed errors, retries, timeouts) and what it records of the SDK's requests.
 */
import Anthropic, { type APIError, type ClientOptions } from "@anthropic-ai/sdk"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as MessagesApiServer from "../src/MessagesApiServer.js"

const API_KEY = "sk-test-local"

const clientFor = (server: MessagesApiServer.MessagesApiServerService, options: Partial<ClientOptions> = {}) =>
  new Anthropic({ apiKey: API_KEY, baseURL: server.url, maxRetries: 0, ...options })

const ask = (
  client: Anthropic,
  params: Partial<Anthropic.MessageCreateParamsNonStreaming> = {}
): Effect.Effect<Anthropic.Message, unknown> =>
  Effect.tryPromise({
    try: () =>
      client.messages.create({
        model: "claude-sonnet-5-5",
        max_tokens: 64,
        messages: [{ role: "user", content: "hello" }],
        ...params
      }),
    catch: (error) => error
  })

describe("MessagesApiServer with the real SDK client", () => {
  it.effect("a text reply is a Message the SDK returns as is; the request is recorded", () =>
    Effect.gen(function*() {
      const server = yield* MessagesApiServer.make({ replies: [MessagesApiServer.text("Hi there")] })
      const message = yield* ask(clientFor(server), { system: "Be brief.", max_tokens: 32 })
      assert.strictEqual(message.type, "message")
      assert.strictEqual(message.role, "assistant")
      assert.strictEqual(message.model, "claude-sonnet-5-5")
      assert.match(message.id, /^msg_/)
      assert.deepStrictEqual(message.content, [{ type: "text", text: "Hi there", citations: null }])
      assert.strictEqual(message.stop_reason, "end_turn")
      assert.isAbove(message.usage.input_tokens, 0)
      assert.isAbove(message.usage.output_tokens, 0)

      const [request] = yield* server.requests
      assert.strictEqual(request!.method, "POST")
      assert.strictEqual(request!.path, "/v1/messages")
      assert.strictEqual(MessagesApiServer.apiKeyOf(request!), API_KEY)
      assert.isString(request!.headers["anthropic-version"])
      assert.strictEqual(request!.body.model, "claude-sonnet-5-5")
      assert.strictEqual(request!.body.max_tokens, 32)
      assert.strictEqual(request!.body.system, "Be brief.")
      assert.deepStrictEqual(request!.body.messages, [{ role: "user", content: "hello" }])
    }))

  it.effect("tool_use and JSON replies", () =>
    Effect.gen(function*() {
      const server = yield* MessagesApiServer.make({
        replies: [
          MessagesApiServer.toolUse("pick", { ids: ["a", "b"] }),
          MessagesApiServer.json({ answer: 42 })
        ]
      })
      const client = clientFor(server)
      const tools: Array<Anthropic.Tool> = [{ name: "pick", input_schema: { type: "object", properties: {} } }]
      const withTool = yield* ask(client, { tools, tool_choice: { type: "tool", name: "pick" } })
      assert.strictEqual(withTool.stop_reason, "tool_use")
      const call = withTool.content[0] as Anthropic.ToolUseBlock
      assert.strictEqual(call.type, "tool_use")
      assert.strictEqual(call.name, "pick")
      assert.match(call.id, /^toolu_/)
      assert.deepStrictEqual(call.input, { ids: ["a", "b"] })

      const asJson = yield* ask(client)
      assert.deepStrictEqual(JSON.parse((asJson.content[0] as Anthropic.TextBlock).text), { answer: 42 })
    }))

  it.effect("a forced tool_choice naming a tool that is not offered is refused like the API does", () =>
    Effect.gen(function*() {
      const server = yield* MessagesApiServer.make({ replies: [MessagesApiServer.text("never sent")] })
      const error = yield* Effect.flip(ask(clientFor(server), { tool_choice: { type: "tool", name: "missing" } }))
      assert.instanceOf(error, Anthropic.BadRequestError)
      assert.strictEqual((error as APIError).type, "invalid_request_error")
    }))

  it.effect("error replies become the SDK's typed errors with status, type and headers", () =>
    Effect.gen(function*() {
      const server = yield* MessagesApiServer.make({
        replies: [
          MessagesApiServer.rateLimited(7),
          MessagesApiServer.overloaded(),
          MessagesApiServer.serverError(),
          MessagesApiServer.unauthorized()
        ]
      })
      const client = clientFor(server)
      const rateLimited = (yield* Effect.flip(ask(client))) as APIError
      assert.instanceOf(rateLimited, Anthropic.RateLimitError)
      assert.strictEqual(rateLimited.status, 429)
      assert.strictEqual(rateLimited.type, "rate_limit_error")
      assert.strictEqual(rateLimited.headers?.get("retry-after"), "7")
      assert.match(rateLimited.requestID ?? "", /^req_/)

      const overloaded = (yield* Effect.flip(ask(client))) as APIError
      assert.strictEqual(overloaded.status, 529)
      assert.strictEqual(overloaded.type, "overloaded_error")

      const server500 = (yield* Effect.flip(ask(client))) as APIError
      assert.instanceOf(server500, Anthropic.InternalServerError)
      assert.strictEqual(server500.type, "api_error")

      const unauthorized = yield* Effect.flip(ask(client))
      assert.instanceOf(unauthorized, Anthropic.AuthenticationError)
    }))

  it.effect("the SDK's own retry honours the 429 and the second attempt succeeds", () =>
    Effect.gen(function*() {
      const server = yield* MessagesApiServer.make({
        replies: [MessagesApiServer.rateLimited(0.01), MessagesApiServer.text("after retry")]
      })
      const message = yield* ask(clientFor(server, { maxRetries: 1 }))
      assert.strictEqual((message.content[0] as Anthropic.TextBlock).text, "after retry")
      const requests = yield* server.requests
      assert.strictEqual(requests.length, 2)
      assert.strictEqual(requests[1]!.headers["x-stainless-retry-count"], "1")
    }))

  it.effect("with apiKey set, a request with another key gets a 401", () =>
    Effect.gen(function*() {
      const server = yield* MessagesApiServer.make({ apiKey: "the-right-key", replies: [MessagesApiServer.text("x")] })
      const refused = yield* Effect.flip(ask(clientFor(server)))
      assert.instanceOf(refused, Anthropic.AuthenticationError)
      const accepted = yield* ask(clientFor(server, { apiKey: "the-right-key" }))
      assert.strictEqual(accepted.type, "message")
    }))

  it.live("a slow reply runs into the client's timeout, and the server still closes promptly", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const server = yield* MessagesApiServer.make({
        replies: [MessagesApiServer.slow(MessagesApiServer.text("too late"), 30_000)]
      }).pipe(Scope.provide(scope))
      const error = yield* Effect.flip(ask(clientFor(server, { timeout: 150 })))
      assert.instanceOf(error, Anthropic.APIConnectionTimeoutError)
      // the pending 30 s reply must not keep the server (or the test) alive
      yield* Scope.close(scope, Exit.void).pipe(Effect.timeout("5 seconds"))
      const refused = yield* Effect.flip(ask(clientFor(server)))
      assert.instanceOf(refused, Anthropic.APIConnectionError)
    }))

  it.effect("a malformed body reaches the SDK as a JSON parse failure", () =>
    Effect.gen(function*() {
      const server = yield* MessagesApiServer.make({ replies: [MessagesApiServer.malformedBody()] })
      const error = yield* Effect.flip(ask(clientFor(server)))
      assert.instanceOf(error, SyntaxError)
    }))

  it.effect("a handler answers from the request once the queue is empty", () =>
    Effect.gen(function*() {
      const server = yield* MessagesApiServer.make({
        replies: [MessagesApiServer.text("queued")],
        handler: (request, index) => MessagesApiServer.text(`#${index} ${request.body.messages[0].content}`)
      })
      const client = clientFor(server)
      const first = yield* ask(client)
      const second = yield* ask(client, { messages: [{ role: "user", content: "echo me" }] })
      assert.strictEqual((first.content[0] as Anthropic.TextBlock).text, "queued")
      assert.strictEqual((second.content[0] as Anthropic.TextBlock).text, "#1 echo me")
      yield* server.enqueue(MessagesApiServer.text("enqueued later"))
      const third = yield* ask(client)
      assert.strictEqual((third.content[0] as Anthropic.TextBlock).text, "enqueued later")
    }))

  it.effect("no scripted reply left: a 500 the SDK does not retry (x-should-retry: false)", () =>
    Effect.gen(function*() {
      const server = yield* MessagesApiServer.make({})
      const error = (yield* Effect.flip(ask(clientFor(server, { maxRetries: 2 })))) as APIError
      assert.strictEqual(error.status, 500)
      assert.include(error.message, "no scripted reply")
      assert.strictEqual((yield* server.requests).length, 1)
    }))

  it.effect("a handler that throws answers a 500 instead of hanging", () =>
    Effect.gen(function*() {
      const server = yield* MessagesApiServer.make({
        handler: () => {
          throw new Error("boom")
        }
      })
      const error = (yield* Effect.flip(ask(clientFor(server)))) as APIError
      assert.strictEqual(error.status, 500)
      assert.include(error.message, "boom")
    }))

  it.effect("requests the API would refuse get its 400 / 404 answers", () =>
    Effect.gen(function*() {
      const server = yield* MessagesApiServer.make({ replies: [MessagesApiServer.text("unused")] })
      const post = (path: string, body: string) =>
        Effect.promise(() =>
          fetch(`${server.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body })
            .then(async (res) => ({ status: res.status, body: await res.json() as any }))
        )
      const noMaxTokens = yield* post("/v1/messages", JSON.stringify({ model: "m", messages: [] }))
      assert.strictEqual(noMaxTokens.status, 400)
      assert.deepStrictEqual(noMaxTokens.body.type, "error")
      assert.strictEqual(noMaxTokens.body.error.type, "invalid_request_error")
      const notJson = yield* post("/v1/messages", "{oops")
      assert.strictEqual(notJson.status, 400)
      const elsewhere = yield* post("/v1/complete", "{}")
      assert.strictEqual(elsewhere.status, 404)
      assert.strictEqual(elsewhere.body.error.type, "not_found_error")
      assert.strictEqual((yield* server.requests).length, 3)
    }))

  it.effect("a stream: the SDK's messages.stream assembles the same message, text and tool call", () =>
    Effect.gen(function*() {
      const server = yield* MessagesApiServer.make({
        replies: [
          MessagesApiServer.message([
            { type: "text", text: "Saving it." },
            { type: "tool_use", name: "Write", input: { file_path: "/m/a.md", content: "x\ny" }, id: "toolu_1" }
          ])
        ]
      })
      const client = clientFor(server)
      const deltas: Array<string> = []
      const message = yield* Effect.promise(() => {
        const stream = client.messages.stream({
          model: "claude-sonnet-5-5",
          max_tokens: 64,
          messages: [{ role: "user", content: "save" }]
        })
        stream.on("text", (text) => deltas.push(text))
        return stream.finalMessage()
      })
      assert.deepStrictEqual(deltas, ["Saving it."])
      assert.strictEqual(message.stop_reason, "tool_use")
      assert.strictEqual(message.content[0]?.type === "text" && message.content[0].text, "Saving it.")
      const call = message.content[1]
      assert.isTrue(call?.type === "tool_use")
      assert.deepStrictEqual(call?.type === "tool_use" && [call.id, call.name, call.input], [
        "toolu_1",
        "Write",
        { file_path: "/m/a.md", content: "x\ny" }
      ])
      const [request] = yield* server.requests
      assert.strictEqual(request?.body.stream, true)
    }))

  it.effect("prompt caching: the same prefix up to the last breakpoint is created once, then read", () =>
    Effect.gen(function*() {
      const server = yield* MessagesApiServer.make({
        handler: () => MessagesApiServer.text("ok")
      })
      const client = clientFor(server)
      const system: Array<Anthropic.TextBlockParam> = [
        { type: "text", text: "A long, stable system prompt. ".repeat(20), cache_control: { type: "ephemeral" } }
      ]
      const first = yield* ask(client, { system, messages: [{ role: "user", content: "first question" }] })
      const second = yield* ask(client, { system, messages: [{ role: "user", content: "another question" }] })
      const uncached = yield* ask(client, { system: "no breakpoint" })
      assert.isAbove(first.usage.cache_creation_input_tokens ?? 0, 0)
      assert.strictEqual(first.usage.cache_read_input_tokens, 0)
      assert.strictEqual(second.usage.cache_creation_input_tokens, 0)
      assert.strictEqual(second.usage.cache_read_input_tokens, first.usage.cache_creation_input_tokens)
      assert.strictEqual(uncached.usage.cache_creation_input_tokens, 0)
      assert.strictEqual(uncached.usage.cache_read_input_tokens, 0)
    }))

  it("cachePrefix follows the API's order tools → system → messages and stops at the last breakpoint", () => {
    const body = {
      tools: [{ name: "t", input_schema: { type: "object" } }],
      system: [{ type: "text", text: "sys", cache_control: { type: "ephemeral" } }],
      messages: [{ role: "user", content: [{ type: "text", text: "manifest" }, { type: "text", text: "query" }] }]
    }
    const prefix = JSON.parse(MessagesApiServer.cachePrefix(body)!)
    assert.deepStrictEqual(prefix, [{ name: "t", input_schema: { type: "object" } }, { type: "text", text: "sys" }])
    assert.isUndefined(MessagesApiServer.cachePrefix({ system: "plain", messages: [] }))
    const later = MessagesApiServer.cachePrefix({
      ...body,
      messages: [{
        role: "user",
        content: [{ type: "text", text: "manifest", cache_control: { type: "ephemeral" } }, { type: "text", text: "q" }]
      }]
    })
    assert.include(later!, "manifest")
    assert.notInclude(later!, "\"q\"")
  })
})
