/**
 * A latch on "this writer found the lock held and is waiting": `fileLock` logs `WAITING_FOR_LOCK` (debug) the
 * first time an acquire finds the lock busy. A test runs the writer under `observe` and waits on `waiting`
 * instead of sleeping and hoping the writer got that far.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import { WAITING_FOR_LOCK } from "../../src/internal/fs/lock.js"

export const lockWaitLatch = Effect.gen(function*() {
  const waiting = yield* Deferred.make<void>()
  const logger = Logger.make(({ message }) => {
    const parts: ReadonlyArray<unknown> = Array.isArray(message) ? message : [message]
    if (parts.includes(WAITING_FOR_LOCK)) Deferred.unsafeDone(waiting, Effect.void)
  })
  const observe = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    effect.pipe(
      Logger.withMinimumLogLevel(LogLevel.Debug),
      Effect.provide(Logger.replace(Logger.defaultLogger, logger))
    )
  return { waiting: Deferred.await(waiting), observe }
})
