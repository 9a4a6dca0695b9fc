import { assert, describe, it } from "@effect/vitest"
import { figures, renderReport, type SystemResult, ZERO_COUNTS } from "../src/Generalization.js"

describe("the generalization report", () => {
  it("gives each language's recall with its Wilson 95% interval over the memories expected", () => {
    // 6 of 8 expected memories found: 0.75, whose interval is [0.41, 0.93]; 40 of 50: [0.67, 0.89]
    const ja = figures({ ...ZERO_COUNTS, queries: 8, expected: 8, found: 6, produced: 7, correct: 6 })
    const en = figures({ ...ZERO_COUNTS, queries: 60, expected: 50, found: 40, produced: 50, correct: 40 })
    const result: SystemResult = {
      system: { name: "memdir", description: "", settings: [] },
      folds: [],
      overall: figures({ ...ZERO_COUNTS, queries: 68 }),
      byLanguage: [{ language: "en", figures: en }, { language: "ja", figures: ja }]
    }
    const report = renderReport([result])
    assert.include(report, "| memdir | 0.80 [0.67, 0.89] / 0.80 / 0 (60) | 0.75 [0.41, 0.93] / 0.86 / 0 (8) |")
  })
})
