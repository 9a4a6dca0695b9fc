/**
 * Selector: which memories will clearly help with this query (SPEC §6.3).
 * CONTRACT (owned by the recall helper; implementation to be filled in).
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { MemoryHeader } from "./Memory.js"

export const MAX_SELECTED = 5

export interface SelectionRequest {
  readonly query: string
  readonly candidates: ReadonlyArray<MemoryHeader>
  /** Tools the agent used recently: skip their usage docs, keep their warnings/gotchas. */
  readonly recentTools?: ReadonlyArray<string> | undefined
  /** At most this many (never more than MAX_SELECTED). */
  readonly max?: number | undefined
}

export interface Selection {
  /** Relative paths of chosen memories, best first; always a subset of the candidates. */
  readonly selected: ReadonlyArray<string>
  readonly selector: string
  /** Set when a better selector failed and this result is a fallback; says why. */
  readonly degraded?: string | undefined
}

export class Selector extends Context.Tag("@memdir/core/Selector")<Selector, {
  readonly select: (request: SelectionRequest) => Effect.Effect<Selection>
}>() {}
