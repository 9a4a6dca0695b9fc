import { defineProject } from "vitest/config"

export default defineProject({
  test: {
    include: ["**/*.test.ts"],
    exclude: ["node_modules/**", "build/**"],
    testTimeout: 60_000,
    hookTimeout: 60_000
  }
})
