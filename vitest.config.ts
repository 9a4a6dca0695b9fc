import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    projects: ["packages/*", "apps/*", "test"],
    reporters: ["default", "./scripts/summary-reporter.ts"],
    // real git repos, child processes and temp trees: give them room on a 2-core machine
    testTimeout: 60_000,
    hookTimeout: 60_000
  }
})
