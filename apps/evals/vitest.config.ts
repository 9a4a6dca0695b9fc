import { defineProject } from "vitest/config"

export default defineProject({
  test: {
    include: ["test/**/*.test.ts"],
    // the bundle `pnpm evals` runs is brought up to date once per run, before any test spawns it
    globalSetup: ["./test/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000
  }
})
