/**
 * A vitest setup file of every project (vitest.projects.ts): fails the test during which `@anthropic-ai/sdk` warns
 * that a request names a deprecated model ("The model '…' is deprecated and will reach end-of-life on …"). Such a
 * warning in the suite's output means a test, an example or a default sends a model past its end of life; the one
 * table of current models is `ModelCatalog`. test/sdk-deprecation-guard.test.ts runs vitest on a fixture to show a
 * test failing on it.
 *
 * The SDK prints the warning with `console.warn` before it sends the request; a warning outside any test (in a
 * `beforeAll`, a shared layer) fails the next test or the file's `afterAll`.
 */
import { DEPRECATION_WARNING } from "@memdir/testing/SdkModels"
import { format } from "node:util"
import { afterAll, afterEach } from "vitest"

const GUARD = Symbol.for("@memdir/system-tests/sdk-deprecation-guard")

interface GuardState {
  readonly warnings: Array<string>
}

type Guarded = { [GUARD]?: GuardState }

// One list per worker: a worker that runs several files (`isolate: false`) runs this file before each of them
const state: GuardState = (globalThis as Guarded)[GUARD] ??= { warnings: [] }

// One wrapper per console: vitest may give a file a console of its own
if (!(GUARD in console.warn)) {
  const warn = console.warn
  console.warn = Object.assign((...args: Array<unknown>) => {
    const text = format(...args)
    if (DEPRECATION_WARNING.test(text)) state.warnings.push(text.split("\n")[0]!)
    warn.apply(console, args)
  }, { [GUARD]: true })
}

const failOnDeprecationWarnings = (): void => {
  const warnings = state.warnings.splice(0)
  if (warnings.length === 0) return
  throw new Error(
    `@anthropic-ai/sdk warned of a deprecated model:\n${warnings.map((w) => `  ${w}`).join("\n")}\n` +
      "Use a current model of ModelCatalog (packages/core/src/ModelCatalog.ts, docs/configuration.md, \"Which models\")."
  )
}

afterEach(failOnDeprecationWarnings)
afterAll(failOnDeprecationWarnings)
