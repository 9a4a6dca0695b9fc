/**
 * Ranking apart from the decision (`rankingQuality`, the table `pnpm evals:generalize` prints after its folds): the
 * share of requests whose needed memory comes first, comes in the first two, and the mean reciprocal rank, over the
 * requests that need a memory only.
 */
import { assert, describe, it } from "@effect/vitest"
import {
  type LabelledDirectory,
  type LabelledQuery,
  type Ranker,
  rankingQuality,
  renderRanking
} from "../src/Generalization.js"

const directory: LabelledDirectory = { dir: "d", candidates: [], bodies: new Map() }
const directories = new Map([["d", directory]])

/** A ranker that answers each request with a fixed order. */
const scripted = (orders: Record<string, ReadonlyArray<string>>): Ranker => ({
  name: "scripted",
  rank: (_, query) => orders[query] ?? []
})

const query = (q: string, relevant: ReadonlyArray<string>): LabelledQuery => ({
  id: q,
  dir: "d",
  language: "en",
  kind: relevant.length === 0 ? "none" : "paraphrase",
  query: q,
  relevant,
  acceptable: []
})

describe("rankingQuality", () => {
  it("counts first, first two and the reciprocal rank of the first relevant memory", () => {
    const ranker = scripted({ a: ["x.md", "y.md"], b: ["y.md", "x.md"], c: ["z.md", "w.md", "x.md"], d: [] })
    const figures = rankingQuality(ranker, directories, [
      query("a", ["x.md"]), // first
      query("b", ["x.md"]), // second
      query("c", ["x.md"]), // third
      query("d", ["x.md"]), // not ranked at all
      query("e", []) // needs nothing: not counted
    ])
    assert.strictEqual(figures.queries, 4)
    assert.strictEqual(figures.first, 1 / 4)
    assert.strictEqual(figures.topTwo, 2 / 4)
    assert.closeTo(figures.mrr, (1 + 1 / 2 + 1 / 3 + 0) / 4, 1e-12)
  })

  it("takes any relevant memory of a request needing several", () => {
    const ranker = scripted({ a: ["y.md", "x.md"] })
    assert.strictEqual(rankingQuality(ranker, directories, [query("a", ["x.md", "y.md"])]).first, 1)
  })

  it("renders one row per ranker", () => {
    const figures = { queries: 4, first: 0.25, topTwo: 0.5, mrr: 0.4583 }
    const table = renderRanking([{ name: "memdir", figures }, { name: "BM25+ baseline", figures }])
    assert.include(table, "the 4 requests that need a memory")
    assert.include(table, "| memdir | 0.25 | 0.50 | 0.46 |")
    assert.include(table, "| BM25+ baseline | 0.25 | 0.50 | 0.46 |")
  })
})
