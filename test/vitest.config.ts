import { defineProject } from "vitest/config"

export default defineProject({
  test: {
    include: ["**/*.test.ts"],
    exclude: ["node_modules/**", "build/**"],
    // the CLI is bundled once per run, before any system test starts (test/support/cli.ts only checks it)
    globalSetup: ["./support/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000
  }
})
