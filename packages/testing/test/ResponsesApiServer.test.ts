/**
 * The local Responses API server over plain HTTP: the events of its streams as Codex reads them (each `event:` line
 * names the `type` of its `data:`; `response.output_item.done` carries the whole item; `response.completed` carries
 * the response id and usage), its JSON answers and errors, and what it records. The real client, Codex 0.171, is
 * driven against it in test/codex.test.ts.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as ResponsesApiServer from "../src/ResponsesApiServer.js"

interface Posted {
  readonly status: number
  readonly contentType: string
  readonly text: string
}

const post = (url: string, body: unknown, headers: Record<string, string> = {}): Effect.Effect<Posted> =>
  Effect.promise(async () => {
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer sk-test", ...headers },
      body: typeof body === "string" ? body : JSON.stringify(body)
    })
    return { status: res.status, contentType: res.headers.get("content-type") ?? "", text: await res.text() }
  })

/** Server-sent events as Codex's reader splits them: blank-line separated, `event:` and one `data:` line each. */
const events = (text: string): ReadonlyArray<{ readonly event: string; readonly data: any }> =>
  text.split("\n\n").filter((block) => block.trim() !== "").map((block) => {
    const lines = block.split("\n")
    const event = lines.find((line) => line.startsWith("event: "))?.slice("event: ".length) ?? ""
    const data = lines.find((line) => line.startsWith("data: "))?.slice("data: ".length) ?? ""
    return { event, data: JSON.parse(data) }
  })

const request = (extra: Record<string, unknown> = {}) => ({
  model: "gpt-test",
  stream: true,
  input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "hello" }] }],
  ...extra
})

describe("ResponsesApiServer", () => {
  it.effect("a streamed text reply: the API's events in order, the message whole at output_item.done", () =>
    Effect.gen(function*() {
      const server = yield* ResponsesApiServer.make({ replies: [ResponsesApiServer.text("Hi there")] })
      const posted = yield* post(`${server.baseUrl}/responses`, request({ instructions: "Be brief." }))
      assert.strictEqual(posted.status, 200)
      assert.strictEqual(posted.contentType, "text/event-stream")
      const stream = events(posted.text)
      assert.deepStrictEqual(stream.map((e) => e.event), [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed"
      ])
      for (const [i, e] of stream.entries()) {
        assert.strictEqual(e.data.type, e.event)
        assert.strictEqual(e.data.sequence_number, i)
      }
      assert.strictEqual(stream[4]!.data.delta, "Hi there")
      const item = stream[7]!.data.item
      assert.strictEqual(item.type, "message")
      assert.strictEqual(item.role, "assistant")
      assert.deepStrictEqual(item.content, [{ type: "output_text", text: "Hi there", annotations: [] }])
      const completed = stream[8]!.data.response
      assert.match(completed.id, /^resp_/)
      assert.strictEqual(completed.id, stream[0]!.data.response.id)
      assert.strictEqual(completed.status, "completed")
      assert.strictEqual(completed.model, "gpt-test")
      assert.deepStrictEqual(completed.output, [item])
      assert.isAbove(completed.usage.input_tokens, 0)
      assert.strictEqual(
        completed.usage.total_tokens,
        completed.usage.input_tokens + completed.usage.output_tokens
      )

      const [recorded] = yield* server.requests
      assert.strictEqual(recorded!.method, "POST")
      assert.strictEqual(recorded!.path, "/v1/responses")
      assert.strictEqual(recorded!.headers["authorization"], "Bearer sk-test")
      assert.strictEqual(recorded!.body.model, "gpt-test")
      assert.strictEqual(ResponsesApiServer.textOf(recorded!.body), "Be brief.\nhello")
    }))

  it.effect("a function call: its arguments as a JSON string, a call id, the namespace when given", () =>
    Effect.gen(function*() {
      const server = yield* ResponsesApiServer.make({
        replies: [
          ResponsesApiServer.functionCall("memory_write", { name: "Tests" }, { namespace: "mcp__memdir" }),
          ResponsesApiServer.functionCall("exec_command", { cmd: "ls" }, { callId: "call_mine" })
        ]
      })
      const stream = events((yield* post(`${server.baseUrl}/responses`, request())).text)
      assert.deepStrictEqual(stream.map((e) => e.event).slice(2, -1), [
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done"
      ])
      const call = stream.find((e) => e.event === "response.output_item.done")!.data.item
      assert.strictEqual(call.type, "function_call")
      assert.strictEqual(call.namespace, "mcp__memdir")
      assert.strictEqual(call.name, "memory_write")
      assert.strictEqual(call.arguments, "{\"name\":\"Tests\"}")
      assert.match(call.call_id, /^call_/)
      assert.strictEqual(stream[2]!.data.item.arguments, "", "added before its arguments")

      const second = events((yield* post(`${server.baseUrl}/responses`, request())).text)
      const plain = second.find((e) => e.event === "response.output_item.done")!.data.item
      assert.strictEqual(plain.call_id, "call_mine")
      assert.notProperty(plain, "namespace")
    }))

  it.effect("without stream: the response object as JSON", () =>
    Effect.gen(function*() {
      const server = yield* ResponsesApiServer.make({ replies: [ResponsesApiServer.text("plain")] })
      const posted = yield* post(`${server.baseUrl}/responses`, request({ stream: false, input: "hi" }))
      assert.strictEqual(posted.status, 200)
      assert.strictEqual(posted.contentType, "application/json")
      const body = JSON.parse(posted.text)
      assert.strictEqual(body.object, "response")
      assert.strictEqual(body.output[0].content[0].text, "plain")
      assert.deepStrictEqual(ResponsesApiServer.messageTexts((yield* server.requests)[0]!.body, "user"), ["hi"])
    }))

  it.effect("a handler answers from the request once the queue is empty", () =>
    Effect.gen(function*() {
      const server = yield* ResponsesApiServer.make({ replies: [ResponsesApiServer.text("first")] })
      yield* server.setHandler((req, index) => ResponsesApiServer.text(`${index}:${req.body.input[0].content[0].text}`))
      const texts: Array<string> = []
      for (let i = 0; i < 3; i++) {
        const done = events((yield* post(`${server.baseUrl}/responses`, request())).text)
          .find((e) => e.event === "response.output_item.done")!
        texts.push(done.data.item.content[0].text)
      }
      assert.deepStrictEqual(texts, ["first", "1:hello", "2:hello"])
    }))

  it.effect("errors: a failed stream, an HTTP error, no reply left, a handler that throws", () =>
    Effect.gen(function*() {
      const server = yield* ResponsesApiServer.make({
        replies: [
          ResponsesApiServer.failed("context_length_exceeded", "Your input exceeds the context window."),
          ResponsesApiServer.apiError(429, "rate_limit_error", "Rate limit reached", {
            code: "rate_limit_exceeded",
            headers: { "retry-after": "1" }
          })
        ]
      })
      const url = `${server.baseUrl}/responses`
      const failedStream = events((yield* post(url, request())).text)
      assert.deepStrictEqual(failedStream.map((e) => e.event), ["response.created", "response.failed"])
      assert.deepStrictEqual(failedStream[1]!.data.response.error, {
        code: "context_length_exceeded",
        message: "Your input exceeds the context window."
      })
      const limited = yield* post(url, request())
      assert.strictEqual(limited.status, 429)
      assert.deepStrictEqual(JSON.parse(limited.text).error, {
        message: "Rate limit reached",
        type: "rate_limit_error",
        param: null,
        code: "rate_limit_exceeded"
      })
      const none = yield* post(url, request())
      assert.strictEqual(none.status, 500)
      assert.include(JSON.parse(none.text).error.message, "no scripted reply for request 3")
      yield* server.setHandler(() => {
        throw new Error("boom")
      })
      const thrown = yield* post(url, request())
      assert.strictEqual(thrown.status, 500)
      assert.include(JSON.parse(thrown.text).error.message, "boom")
    }))

  it.effect("requests the API would refuse get its 401 / 404 / 400 answers, and are recorded", () =>
    Effect.gen(function*() {
      const server = yield* ResponsesApiServer.make({ apiKey: "sk-test", handler: () => ResponsesApiServer.text("") })
      const url = `${server.baseUrl}/responses`
      assert.strictEqual((yield* post(url, request(), { authorization: "Bearer other" })).status, 401)
      assert.strictEqual((yield* post(`${server.url}/v1/chat/completions`, request())).status, 404)
      assert.strictEqual((yield* post(url, "{not json")).status, 400)
      const noModel = yield* post(url, { input: "hi" })
      assert.strictEqual(noModel.status, 400)
      assert.include(JSON.parse(noModel.text).error.message, "model")
      assert.strictEqual((yield* post(url, { model: "gpt-test" })).status, 400)
      assert.strictEqual((yield* post(url, request())).status, 200)
      assert.strictEqual((yield* server.requests).length, 6)
    }))

  it.effect("reading a Codex request: tools by the name a call uses, function call outputs as text", () =>
    Effect.sync(() => {
      const body = {
        tools: [
          { type: "function", name: "exec_command" },
          { type: "namespace", name: "mcp__memdir", tools: [{ type: "function", name: "memory_write" }] },
          { type: "web_search" }
        ],
        input: [
          { type: "message", role: "developer", content: [{ type: "input_text", text: "# Memory" }] },
          { type: "function_call", call_id: "call_1", name: "memory_write", namespace: "mcp__memdir", arguments: "{}" },
          { type: "function_call_output", call_id: "call_1", output: [{ type: "input_text", text: "Saved x.md" }] },
          { type: "function_call_output", call_id: "call_2", output: "plain" }
        ]
      }
      assert.deepStrictEqual(ResponsesApiServer.toolNames(body), [
        "exec_command",
        "mcp__memdir/memory_write",
        "web_search"
      ])
      assert.deepStrictEqual(ResponsesApiServer.functionCallOutputs(body), [
        { callId: "call_1", text: "Saved x.md" },
        { callId: "call_2", text: "plain" }
      ])
      assert.deepStrictEqual(ResponsesApiServer.messageTexts(body, "developer"), ["# Memory"])
      assert.deepStrictEqual(ResponsesApiServer.messageTexts(body, "user"), [])
    }))

  it.live("a slow reply still in flight: the server closes promptly with its scope", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const server = yield* ResponsesApiServer.make({
        replies: [{ ...ResponsesApiServer.text("late"), delayMs: 60_000 }]
      }).pipe(Scope.provide(scope))
      const pending = fetch(`${server.baseUrl}/responses`, { method: "POST", body: JSON.stringify(request()) })
        .then(() => "answered", () => "dropped")
      while ((yield* server.requests).length === 0) yield* Effect.sleep("10 millis")
      yield* Scope.close(scope, Exit.void).pipe(Effect.timeout("5 seconds"))
      assert.strictEqual(yield* Effect.promise(() => pending), "dropped")
    }))
})
