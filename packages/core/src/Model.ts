/**
 * Model: memdir's only door to a language model, over `@anthropic-ai/sdk` (Messages API).
 * CONTRACT (owned by the model helper; implementation to be filled in). Nothing here may need a key to
 * build, test or run the offline default: without `ANTHROPIC_API_KEY`, `available` is false and callers
 * fall back to their offline behaviour.
 */
import type Anthropic from "@anthropic-ai/sdk"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Schema from "effect/Schema"
import type { ModelError } from "./Errors.js"

/** Which job a call is for: each role has its own configured model. */
export type ModelRole = "selector" | "extractor" | "dreamer" | "grader" | "agent"

export interface ModelRequest {
  readonly role: ModelRole
  /** System prompt; blocks marked `cache: true` get a prompt-cache breakpoint. */
  readonly system: string | ReadonlyArray<{ readonly text: string; readonly cache?: boolean }>
  readonly messages: ReadonlyArray<Anthropic.MessageParam>
  readonly tools?: ReadonlyArray<Anthropic.Tool> | undefined
  readonly toolChoice?: Anthropic.ToolChoice | undefined
  readonly maxTokens: number
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
  readonly latencyMs: number
}

export class Model extends Context.Tag("@memdir/core/Model")<Model, {
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
    output: { readonly name: string; readonly description: string; readonly schema: Schema.Schema<A, I> }
  ) => Effect.Effect<{ readonly value: A; readonly response: ModelResponse }, ModelError>
}>() {}
