/**
 * Run before every test file of a shared project (vitest.projects.ts): gives `@effect/vitest`'s `it` back its own
 * methods. `layer(…)` of @effect/vitest 0.x installs its runtime's `effect`, `scoped`, `prop`, `flakyTest` and
 * `layer` on the global `it` object itself (`Object.assign(it, …)` in its `makeIt`), so in a worker that keeps its
 * modules, every file after one that calls `layer(…)` ran its `it.effect` tests in that layer's runtime: the live
 * clock instead of the TestClock ("testClock.adjust is not a function") with `excludeTestServices`, one TestClock
 * shared by the tests otherwise. The first run keeps the pristine methods; every later one puts them back.
 */
import { it } from "@effect/vitest"

const METHODS = ["effect", "scoped", "live", "scopedLive", "prop", "flakyTest", "layer"] as const
const KEY = Symbol.for("memdir/effect-vitest-it")

type Methods = Partial<Record<(typeof METHODS)[number], unknown>>
const store = globalThis as { [KEY]?: Methods }
store[KEY] ??= Object.fromEntries(METHODS.map((name) => [name, (it as unknown as Methods)[name]]))
Object.assign(it, store[KEY])
