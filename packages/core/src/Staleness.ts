/**
 * Staleness: how old a memory is, in words a model reasons well with (docs/file-format.md#age-and-staleness).
 *
 * Models reason badly with raw timestamps, so age is given as `today`, `yesterday` or `N days ago`, and
 * anything older than a day carries a caveat that the memory is a point-in-time observation. Old memories
 * are never expired here: they are flagged as hypotheses to verify.
 *
 * Time comes from `Clock`, so tests drive `layer` with `TestClock.setTime` / `TestClock.adjust` (that is
 * the test story: `it.effect` provides a `TestClock` starting at epoch 0). `layerTest(nowMs)` pins "now"
 * for callers that cannot touch the clock (e.g. an eval replaying a recorded session).
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

export interface Age {
  readonly ageDays: number
  /** `today`, `yesterday` or `N days ago`. */
  readonly age: string
  /** null for today/yesterday. */
  readonly caveat: string | null
}

export const MS_PER_DAY = 86_400_000

/** Whole days between `mtimeMs` and `nowMs`, floored, never negative (a file from the future is "today"). */
export const ageInDays = (nowMs: number, mtimeMs: number): number =>
  Math.max(0, Math.floor((nowMs - mtimeMs) / MS_PER_DAY))

/** The caveat placed beside the body of a memory older than a day. */
export const staleCaveat = (ageDays: number): string =>
  `This memory is ${ageDays} days old. Memories are point-in-time observations, not live state — ` +
  `claims about code behavior or file:line citations may be outdated. ` +
  `Verify against current code before asserting as fact.`

/** Pure: the age of a memory modified at `mtimeMs`, as seen at `nowMs`. */
export const describeAge = (nowMs: number, mtimeMs: number): Age => {
  const ageDays = ageInDays(nowMs, mtimeMs)
  if (ageDays === 0) return { ageDays, age: "today", caveat: null }
  if (ageDays === 1) return { ageDays, age: "yesterday", caveat: null }
  return { ageDays, age: `${ageDays} days ago`, caveat: staleCaveat(ageDays) }
}

export class Staleness extends Context.Service<Staleness, {
  readonly age: (mtimeMs: number) => Effect.Effect<Age>
  /** Many ages against one "now": one call (and one span) for a whole listing of thousands of memories. */
  readonly ages: (mtimesMs: ReadonlyArray<number>) => Effect.Effect<ReadonlyArray<Age>>
}>()("@memdir/core/Staleness") {}

/** Reads "now" from `Clock` on every call, so a long session keeps ageing its memories correctly. */
export const make: Effect.Effect<Staleness["Service"]> = Effect.sync(() => ({
  age: Effect.fn("Staleness.age")(function*(mtimeMs: number) {
    const nowMs = yield* Clock.currentTimeMillis
    return describeAge(nowMs, mtimeMs)
  }),
  ages: Effect.fn("Staleness.ages")(function*(mtimesMs: ReadonlyArray<number>) {
    const nowMs = yield* Clock.currentTimeMillis
    return mtimesMs.map((mtimeMs) => describeAge(nowMs, mtimeMs))
  })
}))

export const layer: Layer.Layer<Staleness> = Layer.effect(Staleness, make)

/** A fixed "now", independent of the clock. */
export const layerTest = (nowMs: number): Layer.Layer<Staleness> =>
  Layer.succeed(Staleness, {
    age: (mtimeMs: number) => Effect.succeed(describeAge(nowMs, mtimeMs)),
    ages: (mtimesMs: ReadonlyArray<number>) => Effect.succeed(mtimesMs.map((mtimeMs) => describeAge(nowMs, mtimeMs)))
  })
