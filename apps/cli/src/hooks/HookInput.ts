/**
 * What an agent CLI writes on a hook's stdin and what memdir answers (docs/hooks.md). Claude Code and Codex share
 * the shape: common fields (`session_id`, `transcript_path`, `cwd`, `hook_event_name`) plus per-event ones
 * (`source`, `prompt`, `stop_hook_active`, `reason`). Fields memdir does not use are ignored; the input is hostile
 * until decoded (a relative `cwd`, a NUL byte, an over-long value, a malformed session id are refused).
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as NodePath from "node:path"

/** Larger stdin is refused unread past this; defined beside the hook daemon's client, which reads it first. */
export { HOOK_INPUT_MAX_BYTES } from "../hookd/HookSocket.js"

const NoNul = Schema.String.check(Schema.makeFilter((s) => !s.includes("\0") || "contains a NUL byte"))
const AbsolutePath = NoNul.check(
  Schema.isMaxLength(4096),
  Schema.makeFilter((s) => NodePath.isAbsolute(s) || "must be an absolute path")
)

const common = {
  session_id: Schema.String.check(Schema.isMaxLength(256)),
  cwd: AbsolutePath,
  // Codex sends null when the session has no transcript file yet
  transcript_path: Schema.optional(Schema.NullOr(AbsolutePath))
}

export const SessionStartInput = Schema.Struct({
  ...common,
  hook_event_name: Schema.Literal("SessionStart"),
  /** startup | resume | clear | compact */
  source: Schema.optional(Schema.String)
})

export const UserPromptSubmitInput = Schema.Struct({
  ...common,
  hook_event_name: Schema.Literal("UserPromptSubmit"),
  prompt: Schema.String
})

export const StopInput = Schema.Struct({
  ...common,
  hook_event_name: Schema.Literal("Stop"),
  /** True when the agent is already continuing because of a Stop hook: memdir then does nothing. */
  stop_hook_active: Schema.optional(Schema.Boolean)
})

export const SessionEndInput = Schema.Struct({
  ...common,
  hook_event_name: Schema.Literal("SessionEnd"),
  reason: Schema.optional(Schema.String)
})

export const HookInput = Schema.Union([SessionStartInput, UserPromptSubmitInput, StopInput, SessionEndInput])
export type HookInput = typeof HookInput.Type

/** The events memdir handles; any other `hook_event_name` is answered with nothing. */
export const HOOK_EVENTS = ["SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"] as const
export type HookEvent = typeof HOOK_EVENTS[number]

const EventName = Schema.fromJsonString(Schema.Struct({ hook_event_name: Schema.String }))
const decodeInput = Schema.decodeUnknownResult(Schema.fromJsonString(HookInput), { errors: "first" })

/** Why stdin was not a hook input memdir acts on. */
export type HookInputProblem =
  | { readonly _tag: "NotJson" | "Invalid"; readonly detail: string }
  | { readonly _tag: "OtherEvent"; readonly event: string }

/** Decodes stdin: an input memdir handles, or the reason it does nothing. */
export const parseHookInput = (text: string): Result.Result<HookInput, HookInputProblem> => {
  const named = Schema.decodeUnknownResult(EventName)(text)
  if (Result.isFailure(named)) return Result.fail({ _tag: "NotJson", detail: "stdin is not a JSON hook input" })
  const event = named.success.hook_event_name
  if (!(HOOK_EVENTS as ReadonlyArray<string>).includes(event)) {
    return Result.fail({ _tag: "OtherEvent", event: event.slice(0, 100) })
  }
  return Result.mapError(decodeInput(text), (error) => ({ _tag: "Invalid", detail: oneLine(error.message) }))
}

/** A decoding failure in one short line: the problem, then where (`… at ["cwd"]`). */
const oneLine = (text: string): string =>
  text.split("\n").map((line) => line.trim()).filter((line) => line !== "").join(" ").slice(0, 300)

/** The answer an agent CLI reads on stdout: context for the model. Exactly these keys (Codex rejects others). */
export interface HookOutput {
  readonly hookSpecificOutput: {
    readonly hookEventName: "SessionStart" | "UserPromptSubmit"
    readonly additionalContext: string
  }
}

export const hookOutput = (
  hookEventName: HookOutput["hookSpecificOutput"]["hookEventName"],
  additionalContext: string
): HookOutput => ({ hookSpecificOutput: { hookEventName, additionalContext } })

/**
 * Claude Code cuts injected text over this to a short preview (docs/hooks.md): memdir never sends more, to either agent.
 * Its check is `text.length <= 10_000` on the JavaScript string, so the unit is UTF-16 code units and exactly 10,000
 * passes (claude-code issues #44086, #51537; the constant read from its bundle in claude-supertool issue #2029).
 */
export const CONTEXT_MAX_CHARS = 10_000
