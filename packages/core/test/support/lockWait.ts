/**
 * A latch on "this writer found the lock held and is waiting": `fileLock` logs `WAITING_FOR_LOCK` (debug) the
 * first time an acquire finds the lock busy. A test runs the writer under `observe` and waits on `waiting`
 * instead of sleeping and hoping the writer got that far.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as References from "effect/References"
import { WAITING_FOR_LOCK } from "../../src/internal/fs/lock.js"

export const lockWaitLatch = Effect.gen(function*() {
  const waiting = yield* Deferred.make<void>()
  const logger = Logger.make(({ message }) => {
    const parts: ReadonlyArray<unknown> = Array.isArray(message) ? message : [message]
    if (parts.includes(WAITING_FOR_LOCK)) Deferred.doneUnsafe(waiting, Effect.void)
  })
  const observe = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    effect.pipe(
      Effect.provideService(References.MinimumLogLevel, "Debug"),
      // in place of the default logger: the set keeps the tracer's logger, as the default set has it
      Effect.provide(Logger.layer([logger, Logger.tracerLogger]))
    )
  return { waiting: Deferred.await(waiting), observe }
})
