import * as os from "node:os"
import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    projects: ["packages/*", "apps/*", "test"],
    reporters: ["default", "./scripts/summary-reporter.ts"],
    // Vitest's default is one worker per core minus one: a single worker on a 2-core machine, idle while a test
    // waits for git or a child process. Two workers at least keep both cores busy.
    maxWorkers: Math.max(2, os.availableParallelism() - 1),
    // real git repos, child processes and temp trees: give them room on a 2-core machine
    testTimeout: 60_000,
    hookTimeout: 60_000
  }
})
