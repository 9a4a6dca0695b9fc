/**
 * Layers built one after another in one scope, each over the context of those before it, with one memo map: the
 * way `Memdir.layer` and `Memdir.locationLayer` build their services, rather than through a tree of `Layer.merge`
 * and `Layer.provideMerge`. The same services, each built once, but merged layers are built on forked fibers, and
 * a cold process (every CLI command) builds a sequence in a fraction of the time (docs/architecture.md#start-up).
 * The order is checked by the types: a layer whose needs the layers before it do not meet does not compile.
 *
 * The step is `andThen`, never `then`: a module that exports `then` makes its namespace a thenable, so an
 * `await import()` of it (vitest loads every module so, and `Memdir.layer` imports its services so) calls that
 * `then` and never settles.
 *
 *   inOrder<Path>()((start) => pipe(start, andThen(Settings.layer), andThen(GitRoot.layer), …))
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"

/** The services built so far, in the scope and with the memo map of the whole build. */
export interface Built<A, E, S> {
  readonly context: Effect.Effect<Context.Context<A>, E, Scope.Scope | S>
  readonly memoMap: Layer.MemoMap
}

/**
 * One more layer, built over the services before it; it must need nothing else (`never` in `missing` otherwise:
 * the call does not compile).
 */
export const andThen = <ROut, E2, RIn>(layer: Layer.Layer<ROut, E2, RIn>) =>
<A, E, S>(
  built: [Exclude<RIn, A>] extends [never] ? Built<A, E, S> : { readonly missing: Exclude<RIn, A> }
): Built<A | ROut, E | E2, S> => {
  const { context, memoMap } = built as Built<A, E, S>
  return {
    memoMap,
    context: Effect.gen(function*() {
      const before = yield* context
      const scope = yield* Effect.scope
      const added = yield* Layer.buildWithMemoMap(layer, memoMap, scope).pipe(
        Effect.provide(before as Context.Context<unknown>)
      ) as Effect.Effect<Context.Context<ROut>, E2>
      return Context.merge(before, added)
    })
  }
}

/**
 * A layer from the services built in order, starting from the `Start` services it is given (which it provides
 * too): `inOrder<Path>()((start) => pipe(start, andThen(…), …))`.
 */
export const inOrder =
  <Start>() => <A, E>(build: (start: Built<Start, never, Start>) => Built<A, E, Start>): Layer.Layer<A, E, Start> =>
    Layer.effectContext(Effect.gen(function*() {
      const memoMap = yield* Layer.makeMemoMap
      const start: Built<Start, never, Start> = { context: Effect.context<Start>(), memoMap }
      return yield* build(start).context
    }))
