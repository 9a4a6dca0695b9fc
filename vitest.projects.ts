/**
 * The vitest projects of the repository, each package's own `vitest.config.ts` split in two:
 *
 * - a shared project (`isolate: false`): its test files run one after another in a worker that keeps its
 *   modules, so `effect`, the platform and the sources are loaded once per worker, not once per file (loading
 *   them was most of the suite's time on 2 cores);
 * - an isolated project (`<name> (isolated)`): the files that need a fresh module graph of their own, found by
 *   what they contain (`ISOLATION_MARKERS`), so a new file that uses the TestClock or changes the process
 *   environment is isolated without anyone listing it.
 *
 * See docs/development.md ("How the tests run").
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { configDefaults, type TestProjectInlineConfiguration, type UserWorkspaceConfig } from "vitest/config"

/**
 * What makes a test file share nothing with others: writing the process environment or the working directory, or
 * vitest's module and global stubs: a later file in the same worker would inherit them. (The TestClock is safe to
 * share: `@effect/vitest` gives each `it.effect` test its own, and its `layer(…)` leaves the global `it` as it was.)
 */
export const ISOLATION_MARKERS: ReadonlyArray<RegExp> = [
  /process\.env(\.\w+|\[[^\]]+\])\s*=(?!=)/,
  /delete process\.env/,
  /Object\.assign\(process\.env/,
  /process\.chdir/,
  /\bvi\.(mock|doMock|stubEnv|stubGlobal|useFakeTimers)\b/
]

const SKIP = new Set(["node_modules", "build", "dist", ".bench"])

/** Every `*.test.ts` under dir (relative, with `/`), outside node_modules and build output. */
const testFiles = (dir: string, prefix = ""): ReadonlyArray<string> =>
  fs.readdirSync(path.join(dir, prefix), { withFileTypes: true }).flatMap((entry) => {
    const relative = prefix === "" ? entry.name : `${prefix}/${entry.name}`
    if (entry.isDirectory()) return SKIP.has(entry.name) ? [] : testFiles(dir, relative)
    return entry.name.endsWith(".test.ts") ? [relative] : []
  })

/** The test files of dir whose text holds one of the markers. */
export const isolatedFiles = (dir: string): ReadonlyArray<string> =>
  testFiles(dir).filter((file) => {
    const text = fs.readFileSync(path.join(dir, file), "utf8")
    return ISOLATION_MARKERS.some((marker) => marker.test(text))
  })

/**
 * Setup files of every project: a test during which `@anthropic-ai/sdk` warns of a deprecated model fails
 * (test/support/sdk-deprecation-guard.ts).
 */
export const commonSetupFiles = (repoRoot: string): ReadonlyArray<string> => [
  path.join(repoRoot, "test/support/sdk-deprecation-guard.ts")
]

/** A package's project (its vitest.config.ts under `name`), as the shared and the isolated project. */
export const splitProject = (
  repoRoot: string,
  dir: string,
  name: string,
  config: UserWorkspaceConfig
): ReadonlyArray<TestProjectInlineConfiguration> => {
  const root = path.join(repoRoot, dir)
  const isolated = isolatedFiles(root)
  const test = {
    ...config.test,
    setupFiles: [...commonSetupFiles(repoRoot), ...[config.test?.setupFiles ?? []].flat()]
  }
  const shared: TestProjectInlineConfiguration = {
    ...config,
    test: {
      ...test,
      name,
      root,
      isolate: false,
      exclude: [...(test.exclude ?? configDefaults.exclude), ...isolated]
    }
  }
  if (isolated.length === 0) return [shared]
  return [shared, {
    ...config,
    // worker threads, each file in a fresh one: a module graph (effect's included) of its own
    test: { ...test, name: `${name} (isolated)`, root, include: [...isolated], pool: "threads", isolate: true }
  }]
}
