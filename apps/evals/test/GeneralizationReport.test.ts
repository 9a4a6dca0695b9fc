import { assert, describe, it } from "@effect/vitest"
import {
  figures,
  type LabelledDirectory,
  leaveOneDirectoryOut,
  renderReport,
  type SystemResult,
  ZERO_COUNTS
} from "../src/Generalization.js"

describe("the generalization report", () => {
  it("gives each language's recall with its Wilson 95% interval over the memories expected", () => {
    // 6 of 8 expected memories found: 0.75, whose interval is [0.41, 0.93]; 40 of 50: [0.67, 0.89]
    const ja = figures({ ...ZERO_COUNTS, queries: 8, expected: 8, found: 6, produced: 7, correct: 6 })
    const en = figures({ ...ZERO_COUNTS, queries: 60, expected: 50, found: 40, produced: 50, correct: 40 })
    const result: SystemResult = {
      system: { name: "memdir", description: "", settings: [] },
      folds: [],
      overall: figures({ ...ZERO_COUNTS, queries: 68 }),
      byLanguage: [{ language: "en", figures: en }, { language: "ja", figures: ja }],
      byKind: []
    }
    const report = renderReport([result])
    assert.include(report, "| memdir | 0.80 [0.67, 0.89] / 0.80 / 0 (60) | 0.75 [0.41, 0.93] / 0.86 / 0 (8) |")
  })

  it("splits the figures by kind of request, leave-one-directory-out like the rest", () => {
    const directory: LabelledDirectory = { dir: "d", candidates: [], bodies: new Map() }
    const query = (id: string, kind: string, relevant: ReadonlyArray<string>) => ({
      id,
      dir: "d",
      language: "en",
      kind,
      query: id,
      relevant,
      acceptable: []
    })
    const queries = [query("a", "paraphrase", ["x.md"]), query("b", "trap", []), query("c", "negation", ["y.md"])]
    // a system that answers x.md to everything: the paraphrase found, the trap an off-topic pick, the negation missed
    const system = { name: "always x", description: "", settings: [{ label: "x", select: () => ["x.md"] }] }
    const [result] = leaveOneDirectoryOut([system], new Map([["d", directory]]), queries)
    assert.deepStrictEqual(
      result!.byKind.map((k) => [k.kind, k.figures.found, k.figures.expected, k.figures.offTopicPicks]),
      [["negation", 0, 1, 0], ["paraphrase", 1, 1, 0], ["trap", 0, 0, 1]]
    )
    assert.include(
      renderReport([result!]),
      "| always x | 0.00 / 0.00 / 0 (1) | 1.00 / 1.00 / 0 (1) | 1.00 / 0.00 / 1 (1) |"
    )
  })

  it("says per directory how many off-topic picks answer a trap and how many a request about nothing here", () => {
    const directory: LabelledDirectory = { dir: "d", candidates: [], bodies: new Map() }
    const query = (id: string, kind: string) => ({
      id,
      dir: "d",
      language: "en",
      kind,
      query: id,
      relevant: [],
      acceptable: []
    })
    const queries = [query("a", "trap"), query("b", "trap"), query("c", "none")]
    const system = { name: "always x", description: "", settings: [{ label: "x", select: () => ["x.md"] }] }
    const [result] = leaveOneDirectoryOut([system], new Map([["d", directory]]), queries)
    assert.include(renderReport([result!]), "| d | 1.00 / 0.00 / 3 (2 in traps) |")
  })
})
