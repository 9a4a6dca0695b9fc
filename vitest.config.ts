import * as os from "node:os"
import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"
import cli from "./apps/cli/vitest.config.js"
import evals from "./apps/evals/vitest.config.js"
import core from "./packages/core/vitest.config.js"
import testing from "./packages/testing/vitest.config.js"
import system from "./test/vitest.config.js"
import { splitProject } from "./vitest.projects.js"

const repoRoot = fileURLToPath(new URL(".", import.meta.url))

export default defineConfig({
  test: {
    // each package's own config, as a project whose files share a worker's modules and one of the files that
    // must not (vitest.projects.ts)
    projects: [
      ...splitProject(repoRoot, "packages/core", "@memdir/core", core),
      ...splitProject(repoRoot, "packages/testing", "@memdir/testing", testing),
      ...splitProject(repoRoot, "apps/cli", "@memdir/cli", cli),
      ...splitProject(repoRoot, "apps/evals", "@memdir/evals", evals),
      ...splitProject(repoRoot, "test", "@memdir/system-tests", system)
    ],
    // forks for the shared projects, whose `isolate: false` keeps a worker's modules from file to file (the
    // isolated projects run in worker threads, a fresh one per file)
    pool: "forks",
    reporters: ["default", "./scripts/summary-reporter.ts"],
    // Vitest's default is one worker per core minus one: a single worker on a 2-core machine, idle while a test
    // waits for git or a child process. Two workers at least keep both cores busy.
    maxWorkers: Math.max(2, os.availableParallelism() - 1),
    // real git repos, child processes and temp trees: give them room on a 2-core machine
    testTimeout: 60_000,
    hookTimeout: 60_000
  }
})
