/**
 * Staleness: how old a memory is, in words a model reasons well with (SPEC §7).
 * CONTRACT (owned by the recall helper; implementation to be filled in).
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"

export interface Age {
  readonly ageDays: number
  /** `today`, `yesterday` or `N days ago`. */
  readonly age: string
  /** null for today/yesterday. */
  readonly caveat: string | null
}

export class Staleness extends Context.Tag("@memdir/core/Staleness")<Staleness, {
  readonly age: (mtimeMs: number) => Effect.Effect<Age>
}>() {}
