import type Anthropic from "@anthropic-ai/sdk"
import { assert, describe, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { defineTool, run, TOOL_TIMEOUT } from "../src/Agent.js"
import * as Model from "../src/Model.js"

const toolCall = (name: string): Model.ScriptedReply => ({
  content: [
    { type: "tool_use", id: `toolu_${name}`, name, input: {}, caller: { type: "direct" } }
  ] as unknown as ReadonlyArray<Anthropic.ContentBlock>,
  stopReason: "tool_use"
})

/** A tool that waits far longer than any bound: stands for a slow disk, a FIFO, a remote that never answers. */
const stuck = defineTool({
  name: "stuck",
  description: "Never finishes",
  input: Schema.Struct({}),
  run: () => Effect.as(Effect.sleep("1 hour"), "finished")
})
const quick = defineTool({
  name: "quick",
  description: "Answers",
  input: Schema.Struct({}),
  run: () => Effect.succeed("ok")
})

describe("Agent.run bounds every tool call in time", () => {
  it.live("a tool call past its time bound is stopped and answered as an error; the loop goes on", () =>
    Effect.gen(function*() {
      assert.strictEqual(Duration.toMillis(TOOL_TIMEOUT), 60_000)
      const started = Date.now()
      const result = yield* run({
        role: "extractor",
        system: "test",
        messages: [{ role: "user", content: "go" }],
        tools: [stuck, quick],
        maxTurns: 3,
        maxTokens: 100,
        toolTimeout: "300 millis"
      }).pipe(Effect.provide(Model.layerTest([toolCall("stuck"), toolCall("quick"), Model.textReply("done")])))
      assert.isBelow(Date.now() - started, 5_000)
      assert.strictEqual(result.stop, "end_turn")
      assert.deepStrictEqual(result.toolCalls.map((c) => [c.name, c.isError]), [["stuck", true], ["quick", false]])
      assert.include(result.toolCalls[0]!.content, "stuck did not finish within 300ms and was stopped")
      assert.include(result.toolCalls[0]!.content, "ask for less")
      assert.strictEqual(result.toolCalls[1]!.content, "ok")
    }))
})
