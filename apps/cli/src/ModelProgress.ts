/**
 * Progress while a command waits on a model: a line on stderr when a call starts, one every few seconds while it is
 * still waiting (with how long), and one when it answered. Never on stdout, so `--json` output stays parseable.
 * `MEMDIR_PROGRESS_EVERY` (a duration such as "2 seconds") changes how often; the default is every 5 seconds.
 */
import { Model, type ModelRequest, structuredWith } from "@memdir/core/Model"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import * as Console from "effect/Console"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"

/** How often a "still waiting" line is written while a model call is open. */
export const PROGRESS_EVERY = Duration.seconds(5)

const seconds = (millis: number): string => `${(millis / 1000).toFixed(1)} s`

/**
 * How many model calls a run started and how many were answered: what a command interrupted by a signal knows about
 * what its agent may have done (no answer yet: no tool call ran).
 */
export interface ModelCalls {
  readonly started: Ref.Ref<number>
  readonly answered: Ref.Ref<number>
}

export const makeModelCalls: Effect.Effect<ModelCalls> = Effect.map(
  Effect.all([Ref.make(0), Ref.make(0)]),
  ([started, answered]) => ({ started, answered })
)

/**
 * Runs `effect` with a `Model` that reports each call's wait on stderr, prefixed with `label` (the command), and
 * counts the calls in `calls` (fresh counters when none are given).
 */
export const withModelProgress = (label: string, given?: ModelCalls) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const model = yield* Model
    const every = yield* Config.Duration("MEMDIR_PROGRESS_EVERY").pipe(Config.withDefault(PROGRESS_EVERY))
    const calls = given ?? (yield* makeModelCalls)
    const complete = (request: ModelRequest) =>
      Effect.gen(function*() {
        const call = yield* Ref.updateAndGet(calls.started, (n) => n + 1)
        const name = model.modelFor(request.role)
        const startedAt = yield* Clock.currentTimeMillis
        const elapsed = Effect.map(Clock.currentTimeMillis, (now) => seconds(now - startedAt))
        yield* Console.error(`memdir ${label}: model call ${call} to ${name} started, waiting…`)
        const ticker = elapsed.pipe(
          Effect.flatMap((waited) =>
            Console.error(`memdir ${label}: still waiting on ${name} (call ${call}): ${waited}`)
          ),
          Effect.delay(every),
          Effect.forever
        )
        // The ticker lives as long as the call: interrupted when it answers, fails or is interrupted.
        return yield* Effect.scoped(Effect.gen(function*() {
          yield* Effect.forkScoped(ticker)
          const response = yield* model.complete(request)
          yield* Ref.update(calls.answered, (n) => n + 1)
          yield* Console.error(`memdir ${label}: ${name} answered call ${call} in ${yield* elapsed}`)
          return response
        }))
      })
    return yield* effect.pipe(
      Effect.provideService(
        Model,
        Model.of({ ...model, complete, structured: structuredWith(complete, model.modelFor) })
      )
    )
  })
