/**
 * Agent: the small tool-use loop the model-backed programs share (extraction, dream). Send the conversation, run
 * every tool the model asked for in that turn in parallel, send the results back, and stop at `end_turn` or after
 * `maxTurns` model calls. The whole exchange is kept as a transcript (Messages API params), with a record of every
 * tool call, so a run can be reported, replayed and asserted on.
 *
 * Tools never fail the loop: a refusal or a failure becomes a `tool_result` with `is_error: true` that tells the
 * model why, which is what lets a sandboxed tool say "no" without ending the run. Only model failures
 * (`ModelError`) end a run early.
 */
import type Anthropic from "@anthropic-ai/sdk"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { ModelError } from "./Errors.js"
import { Model, type ModelRequest, type ModelRole, type ModelUsage, toolInputSchema } from "./Model.js"

/** What a tool hands back to the model: text, flagged as an error when the call was refused or failed. */
export interface ToolResult {
  readonly content: string
  readonly isError: boolean
}

/** A tool the model may call: its definition (name, description, JSON schema) and its handler. */
export interface AgentTool {
  readonly definition: Anthropic.Tool
  /** Never fails: refusals and failures are results with `isError: true`. */
  readonly run: (input: unknown) => Effect.Effect<ToolResult>
}

/** A failure a tool handler reports to the model (not to the caller of the loop). */
export class ToolFailure extends Schema.TaggedError<ToolFailure>()("ToolFailure", {
  message: Schema.String
}) {}

export const toolOk = (content: string): ToolResult => ({ content, isError: false })
export const toolError = (content: string): ToolResult => ({ content, isError: true })

/**
 * A tool whose input is decoded with `input` (an object schema: the Messages API takes no other) before
 * `run` sees it: input that does not decode is answered with an error naming what is wrong, and a `ToolFailure` from
 * `run` becomes an error result with its message.
 */
export const defineTool = <A extends Readonly<Record<string, unknown>>, I>(options: {
  readonly name: string
  readonly description: string
  readonly input: Schema.Codec<A, I>
  readonly run: (input: A) => Effect.Effect<string, ToolFailure>
}): AgentTool => {
  const decode = Schema.decodeUnknownEffect(options.input, { errors: "all", onExcessProperty: "ignore" })
  return {
    definition: {
      name: options.name,
      description: options.description,
      // An object-typed schema always has an object JSON schema.
      input_schema: toolInputSchema(options.input)!
    },
    run: (raw) =>
      decode(raw).pipe(
        Effect.mapError((error) =>
          new ToolFailure({
            message: `invalid input for ${options.name}: ${error.message}`
          })
        ),
        Effect.flatMap(options.run),
        Effect.match({ onFailure: (failure) => toolError(failure.message), onSuccess: toolOk })
      )
  }
}

export interface AgentOptions {
  readonly role: ModelRole
  readonly system: ModelRequest["system"]
  /** The conversation so far; it must end with a user message. */
  readonly messages: ReadonlyArray<Anthropic.MessageParam>
  readonly tools: ReadonlyArray<AgentTool>
  /** Model calls at most (each call plus the tools it asked for is one turn). */
  readonly maxTurns: number
  readonly maxTokens: number
  readonly temperature?: number | undefined
  /** A tool result longer than this is cut, with a note (default `TOOL_RESULT_MAX_CHARS`). */
  readonly toolResultMaxChars?: number | undefined
  /** A tool call still running after this is interrupted and answered as an error (default `TOOL_TIMEOUT`). */
  readonly toolTimeout?: Duration.Input | undefined
}

/** One tool call of a run, as the model made it and as it was answered. */
export interface AgentToolCall {
  /** 1-based turn in which the model asked for it. */
  readonly turn: number
  readonly id: string
  readonly name: string
  readonly input: unknown
  readonly isError: boolean
  readonly content: string
}

/**
 * Why the loop stopped: the model's own stop reason (`end_turn`, `max_tokens`, `refusal`, `stop_sequence`, …) or
 * `max-turns` when it still wanted tools after the last allowed turn.
 */
export type AgentStop = "max-turns" | string

export interface AgentResult {
  /** The transcript: the initial messages, then every assistant turn and tool-result message, in order. */
  readonly messages: ReadonlyArray<Anthropic.MessageParam>
  readonly turns: number
  readonly stop: AgentStop
  readonly toolCalls: ReadonlyArray<AgentToolCall>
  /** Text of the last assistant turn. */
  readonly finalText: string
  /** Summed over every model call of the run. */
  readonly usage: ModelUsage
  /** The model id that answered (from the last response). */
  readonly model: string
}

/** Cap on one tool result sent back to the model (tools bound their own output; this is the safety net). */
export const TOOL_RESULT_MAX_CHARS = 32_000

/**
 * Time one tool call may take: past it the call is interrupted and the model told to narrow it. Interruption
 * reaches a tool at its next asynchronous step, so tools also bound their own synchronous work (a linear-time
 * matcher for `grep`).
 */
export const TOOL_TIMEOUT = Duration.seconds(60)

const emptyUsage: ModelUsage = { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 }

const addUsage = (a: ModelUsage, b: ModelUsage): ModelUsage => ({
  inputTokens: a.inputTokens + b.inputTokens,
  outputTokens: a.outputTokens + b.outputTokens,
  cacheReadInputTokens: a.cacheReadInputTokens + b.cacheReadInputTokens,
  cacheCreationInputTokens: a.cacheCreationInputTokens + b.cacheCreationInputTokens
})

/** A response block as it is sent back in the next request (response-only fields dropped). */
export const toBlockParam = (block: Anthropic.ContentBlock): Anthropic.ContentBlockParam => {
  switch (block.type) {
    case "text":
      return { type: "text", text: block.text }
    case "tool_use":
      return { type: "tool_use", id: block.id, name: block.name, input: block.input }
    case "thinking":
      return { type: "thinking", thinking: block.thinking, signature: block.signature }
    case "redacted_thinking":
      return { type: "redacted_thinking", data: block.data }
    default:
      // Server-side tool blocks are sent back as they came.
      return block as unknown as Anthropic.ContentBlockParam
  }
}

const cutToolResult = (content: string, maxChars: number): string =>
  content.length <= maxChars ?
    content :
    `${content.slice(0, maxChars)}\n[… cut: ${content.length - maxChars} more characters. Ask for a smaller part.]`

/**
 * The request's copy of the conversation with one prompt-cache breakpoint on the newest block, so every turn
 * reads the previous turns from the cache. The stored transcript stays without it.
 */
const withMovingCacheBreakpoint = (
  messages: ReadonlyArray<Anthropic.MessageParam>
): ReadonlyArray<Anthropic.MessageParam> => {
  const last = messages[messages.length - 1]
  if (last === undefined || last.role === "system") return messages
  const blocks: Array<Anthropic.ContentBlockParam> = typeof last.content === "string" ?
    [{ type: "text", text: last.content }] :
    [...last.content]
  const tail = blocks[blocks.length - 1]
  if (tail === undefined || (tail.type !== "text" && tail.type !== "tool_result")) return messages
  blocks[blocks.length - 1] = { ...tail, cache_control: { type: "ephemeral" } }
  const marked: Anthropic.MessageParam = last.role === "user" ?
    { role: "user", content: blocks } :
    { role: "assistant", content: blocks }
  return [...messages.slice(0, -1), marked]
}

const textOf = (content: ReadonlyArray<Anthropic.ContentBlock>): string =>
  content.flatMap((block) => block.type === "text" ? [block.text] : []).join("\n").trim()

const unknownTool = (name: string, known: ReadonlyArray<string>): ToolResult =>
  toolError(`unknown tool ${JSON.stringify(name)}; the tools are: ${known.join(", ")}`)

/**
 * Run the loop. Fails only with the model's `ModelError`; tool failures are answered to the model and recorded in
 * `toolCalls`.
 */
export const run = Effect.fn("Agent.run")(function*(options: AgentOptions) {
  const model = yield* Model
  const maxChars = options.toolResultMaxChars ?? TOOL_RESULT_MAX_CHARS
  const toolTimeout = Duration.fromInputUnsafe(options.toolTimeout ?? TOOL_TIMEOUT)
  const toolsByName = new Map(options.tools.map((tool) => [tool.definition.name, tool]))
  const definitions = options.tools.map((tool) => tool.definition)
  const messages: Array<Anthropic.MessageParam> = [...options.messages]
  const toolCalls: Array<AgentToolCall> = []
  let usage = emptyUsage
  let turns = 0
  let stop: AgentStop = "max-turns"
  let finalText = ""
  let modelId = model.modelFor(options.role)

  while (turns < options.maxTurns) {
    turns++
    const response = yield* model.complete({
      role: options.role,
      system: options.system,
      messages: withMovingCacheBreakpoint(messages),
      tools: definitions.length === 0 ? undefined : definitions,
      maxTokens: options.maxTokens,
      temperature: options.temperature
    })
    usage = addUsage(usage, response.usage)
    modelId = response.model
    finalText = textOf(response.content)
    messages.push({ role: "assistant", content: response.content.map(toBlockParam) })

    // A paused server-side turn continues with the same conversation.
    if (response.stopReason === "pause_turn") continue
    const toolUses = response.content.filter((block): block is Anthropic.ToolUseBlock => block.type === "tool_use")
    if (response.stopReason !== "tool_use" || toolUses.length === 0) {
      stop = response.stopReason ?? "end_turn"
      break
    }

    const turn = turns
    const results = yield* Effect.forEach(toolUses, (use) => {
      const tool = toolsByName.get(use.name)
      const outcome = tool === undefined ?
        Effect.succeed(unknownTool(use.name, [...toolsByName.keys()])) :
        Effect.withSpan(
          tool.run(use.input).pipe(Effect.timeoutOrElse({
            duration: toolTimeout,
            orElse: () =>
              Effect.succeed(toolError(
                `${use.name} did not finish within ${Duration.format(toolTimeout)} and was stopped: ` +
                  `ask for less (a narrower path, pattern or range)`
              ))
          })),
          "Agent.tool",
          { attributes: { tool: use.name } }
        )
      return Effect.map(
        outcome,
        (result) => ({ use, result: { ...result, content: cutToolResult(result.content, maxChars) } })
      )
    }, { concurrency: "unbounded" })

    for (const { result, use } of results) {
      toolCalls.push({ turn, id: use.id, name: use.name, input: use.input, ...result })
    }
    messages.push({
      role: "user",
      content: results.map(({ result, use }): Anthropic.ToolResultBlockParam => ({
        type: "tool_result",
        tool_use_id: use.id,
        content: result.content,
        ...(result.isError ? { is_error: true } : {})
      }))
    })
  }

  yield* Effect.annotateCurrentSpan({ turns, stop, toolCalls: toolCalls.length })
  return { messages, turns, stop, toolCalls, finalText, usage, model: modelId } satisfies AgentResult
})

export type AgentError = ModelError
