import type Anthropic from "@anthropic-ai/sdk"
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import { defineTool, run, ToolFailure, toolOk } from "../src/Agent.js"
import { ModelError } from "../src/Errors.js"
import * as Model from "../src/Model.js"
import { type ModelRequest, ModelRequests, type ScriptedReply, textReply } from "../src/Model.js"

type Reply = ScriptedReply | ((request: ModelRequest) => ScriptedReply)

const usage = { inputTokens: 10, outputTokens: 5, cacheReadInputTokens: 1, cacheCreationInputTokens: 2 }

const respond = (content: ReadonlyArray<Anthropic.ContentBlock>, stopReason: string): ScriptedReply => ({
  content,
  stopReason,
  usage
})
const text = (value: string): Anthropic.TextBlock => ({ type: "text", text: value, citations: null })
const toolUse = (id: string, name: string, input: unknown): Anthropic.ToolUseBlock => ({
  type: "tool_use",
  id,
  name,
  input,
  caller: { type: "direct" }
})

/** The scripted model of `Model.layerTest`, built in the test's scope, with the requests it recorded. */
const scriptedModel = (replies: ReadonlyArray<Reply>) =>
  Effect.gen(function*() {
    const context = yield* Layer.build(Model.layerTest((request, index) => {
      const reply = replies[index] ?? textReply("(script exhausted)")
      return typeof reply === "function" ? reply(request) : reply
    }))
    return { layer: context, requests: Context.get(context, ModelRequests).all }
  })

const echo = defineTool({
  name: "echo",
  description: "Echo the text back",
  input: Schema.Struct({ text: Schema.String }),
  run: ({ text }) =>
    text === "fail" ? Effect.fail(new ToolFailure({ message: "echo refuses to fail" })) : Effect.succeed(text)
})

const baseOptions = {
  role: "extractor" as const,
  system: "You are a test.",
  messages: [{ role: "user" as const, content: "hello" }],
  maxTokens: 100
}

describe("Agent.run", () => {
  it.effect("stops at end_turn after one call and records the exchange", () =>
    Effect.gen(function*() {
      const model = yield* scriptedModel([respond([text("done")], "end_turn")])
      const result = yield* run({ ...baseOptions, tools: [echo], maxTurns: 4 }).pipe(Effect.provide(model.layer))
      assert.strictEqual(result.turns, 1)
      assert.strictEqual(result.stop, "end_turn")
      assert.strictEqual(result.finalText, "done")
      assert.deepStrictEqual(result.messages, [
        { role: "user", content: "hello" },
        { role: "assistant", content: [{ type: "text", text: "done" }] }
      ])
      const [request] = yield* model.requests
      assert.strictEqual(request!.role, "extractor")
      assert.strictEqual(request!.maxTokens, 100)
      assert.deepStrictEqual(request!.tools?.map((t) => t.name), ["echo"])
      assert.strictEqual((request!.tools![0]!.input_schema as any).type, "object")
      assert.deepStrictEqual((request!.tools![0]!.input_schema as any).required, ["text"])
      assert.deepStrictEqual(result.usage, usage)
    }))

  it.effect("answers every tool call of a turn in one message, errors flagged, then continues", () =>
    Effect.gen(function*() {
      const model = yield* scriptedModel([
        respond([
          text("let me call tools"),
          toolUse("t1", "echo", { text: "first" }),
          toolUse("t2", "echo", { text: "fail" }),
          toolUse("t3", "nope", {}),
          toolUse("t4", "echo", { wrong: 1 })
        ], "tool_use"),
        respond([text("all done")], "end_turn")
      ])
      const result = yield* run({ ...baseOptions, tools: [echo], maxTurns: 4 }).pipe(Effect.provide(model.layer))
      assert.strictEqual(result.turns, 2)
      assert.strictEqual(result.stop, "end_turn")
      assert.deepStrictEqual(result.toolCalls.map((c) => [c.turn, c.id, c.isError]), [
        [1, "t1", false],
        [1, "t2", true],
        [1, "t3", true],
        [1, "t4", true]
      ])
      const second = (yield* model.requests)[1]!
      const toolResults = second.messages[2]!.content as Array<Anthropic.ToolResultBlockParam>
      assert.strictEqual(second.messages[2]!.role, "user")
      assert.deepStrictEqual(toolResults.map((r) => [r.tool_use_id, r.is_error ?? false]), [
        ["t1", false],
        ["t2", true],
        ["t3", true],
        ["t4", true]
      ])
      assert.strictEqual(toolResults[0]!.content, "first")
      assert.strictEqual(toolResults[1]!.content, "echo refuses to fail")
      assert.include(toolResults[2]!.content as string, "unknown tool \"nope\"")
      assert.include(toolResults[3]!.content as string, "invalid input for echo")
      // The assistant turn is sent back as params (no response-only fields).
      assert.deepStrictEqual(second.messages[1]!.content, [
        { type: "text", text: "let me call tools" },
        { type: "tool_use", id: "t1", name: "echo", input: { text: "first" } },
        { type: "tool_use", id: "t2", name: "echo", input: { text: "fail" } },
        { type: "tool_use", id: "t3", name: "nope", input: {} },
        { type: "tool_use", id: "t4", name: "echo", input: { wrong: 1 } }
      ])
      assert.strictEqual(result.usage.inputTokens, 20)
    }))

  it.live("runs the tools of one turn in parallel", () =>
    Effect.gen(function*() {
      // Each call waits until both have started: run one after the other, the first would wait forever.
      const started = yield* Ref.make(0)
      const bothStarted = yield* Deferred.make<void>()
      const rendezvous = defineTool({
        name: "rendezvous",
        description: "wait for the other call",
        input: Schema.Struct({}),
        run: () =>
          Effect.gen(function*() {
            if ((yield* Ref.updateAndGet(started, (n) => n + 1)) === 2) yield* Deferred.succeed(bothStarted, undefined)
            yield* Deferred.await(bothStarted)
            return "met"
          })
      })
      const model = yield* scriptedModel([
        respond([toolUse("a", "rendezvous", {}), toolUse("b", "rendezvous", {})], "tool_use"),
        respond([text("ok")], "end_turn")
      ])
      const result = yield* run({ ...baseOptions, tools: [rendezvous], maxTurns: 3 }).pipe(
        Effect.provide(model.layer),
        Effect.timeoutOrElse({ duration: "10 seconds", orElse: () => Effect.fail("tools ran one after the other") })
      )
      assert.deepStrictEqual(result.toolCalls.map((c) => c.content), ["met", "met"])
    }).pipe(Effect.scoped))

  it.effect("stops after maxTurns model calls when the model keeps asking for tools", () =>
    Effect.gen(function*() {
      const always = (request: ModelRequest) =>
        respond([toolUse(`call-${request.messages.length}`, "echo", { text: "again" })], "tool_use")
      const model = yield* scriptedModel([always, always, always, always, always])
      const result = yield* run({ ...baseOptions, tools: [echo], maxTurns: 3 }).pipe(Effect.provide(model.layer))
      assert.strictEqual(result.stop, "max-turns")
      assert.strictEqual(result.turns, 3)
      assert.strictEqual((yield* model.requests).length, 3)
      // The tools of the last turn still ran: their writes count.
      assert.strictEqual(result.toolCalls.length, 3)
      assert.strictEqual(result.messages.length, 1 + 3 * 2)
    }))

  it.effect("puts one moving cache breakpoint on the newest block of the request, not in the transcript", () =>
    Effect.gen(function*() {
      const model = yield* scriptedModel([
        respond([toolUse("t1", "echo", { text: "x" })], "tool_use"),
        respond([text("done")], "end_turn")
      ])
      const result = yield* run({ ...baseOptions, tools: [echo], maxTurns: 3 }).pipe(Effect.provide(model.layer))
      const [first, second] = yield* model.requests
      const firstBlocks = first!.messages[0]!.content as Array<Anthropic.TextBlockParam>
      assert.deepStrictEqual(firstBlocks, [{ type: "text", text: "hello", cache_control: { type: "ephemeral" } }])
      const secondResults = second!.messages[2]!.content as Array<Anthropic.ToolResultBlockParam>
      assert.deepStrictEqual(secondResults[0]!.cache_control, { type: "ephemeral" })
      // Older messages lose the breakpoint (at most one moving breakpoint per request).
      assert.strictEqual(second!.messages[0]!.content, "hello")
      assert.isUndefined((result.messages[2]!.content as Array<Anthropic.ToolResultBlockParam>)[0]!.cache_control)
    }))

  it.effect("cuts an oversized tool result and says so", () =>
    Effect.gen(function*() {
      const big = defineTool({
        name: "big",
        description: "a lot of text",
        input: Schema.Struct({}),
        run: () => Effect.succeed("x".repeat(500))
      })
      const model = yield* scriptedModel([
        respond([toolUse("t1", "big", {})], "tool_use"),
        respond([text("done")], "end_turn")
      ])
      const result = yield* run({ ...baseOptions, tools: [big], maxTurns: 2, toolResultMaxChars: 100 }).pipe(
        Effect.provide(model.layer)
      )
      assert.isTrue(result.toolCalls[0]!.content.startsWith("x".repeat(100) + "\n[… cut: 400 more characters"))
    }))

  it.effect("fails with the model's error and runs no further turn", () =>
    Effect.gen(function*() {
      const model = yield* scriptedModel([
        respond([toolUse("t1", "echo", { text: "x" })], "tool_use"),
        new ModelError({ kind: "overloaded", role: "extractor", model: "m", status: 529, detail: "busy" })
      ])
      const error = yield* run({ ...baseOptions, tools: [echo], maxTurns: 4 }).pipe(
        Effect.provide(model.layer),
        Effect.flip
      )
      assert.strictEqual(error._tag, "ModelError")
      assert.strictEqual(error.kind, "overloaded")
      assert.strictEqual((yield* model.requests).length, 2)
    }))

  it.effect("stops on max_tokens without running a truncated tool call", () =>
    Effect.gen(function*() {
      const calls = yield* Ref.make(0)
      const counting = defineTool({
        name: "echo",
        description: "count",
        input: Schema.Struct({ text: Schema.String }),
        run: () => Effect.as(Ref.update(calls, (n) => n + 1), "counted")
      })
      const model = yield* scriptedModel([respond([toolUse("t1", "echo", { text: "x" })], "max_tokens")])
      const result = yield* run({ ...baseOptions, tools: [counting], maxTurns: 4 }).pipe(Effect.provide(model.layer))
      assert.strictEqual(result.stop, "max_tokens")
      assert.strictEqual(yield* Ref.get(calls), 0)
    }))

  it("toolOk wraps text", () => {
    assert.deepStrictEqual(toolOk("x"), { content: "x", isError: false })
  })
})
