/**
 * The evals' cost of a run at ModelCatalog's prices: the default model is priced (it once showed "unpriced"), a
 * dated snapshot costs what its alias costs, `--price` wins, and a model the catalog does not price stays unknown.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ModelCatalog from "@memdir/core/ModelCatalog"
import { costOf, priceOf } from "../src/Pricing.js"

const usage = { inputTokens: 1_000_000, outputTokens: 100_000, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 }

describe("Pricing", () => {
  it("prices the default model and every current one from the catalog", () => {
    assert.strictEqual(costOf(ModelCatalog.DEFAULT_MODEL, usage), 2 + 0.1 * 10)
    for (const m of ModelCatalog.models.filter((m) => m.status === "current")) {
      assert.isDefined(costOf(m.id, usage), m.id)
    }
  })

  it("counts cache writes at 1.25× and cache reads at 0.1× the input price", () => {
    const cached = {
      inputTokens: 0,
      outputTokens: 0,
      cacheReadInputTokens: 1_000_000,
      cacheCreationInputTokens: 1_000_000
    }
    assert.closeTo(costOf("claude-opus-5-5", cached)!, 4 * 1.25 + 4 * 0.1, 1e-9)
  })

  it("a dated snapshot costs what its alias costs; --price prices any model; unknown models stay unpriced", () => {
    assert.strictEqual(costOf("claude-haiku-4-5-20251001", usage), costOf("claude-haiku-4-5", usage))
    assert.deepStrictEqual(priceOf("model-x", { inputPerMTok: 1, outputPerMTok: 2 }), {
      inputPerMTok: 1,
      outputPerMTok: 2
    })
    assert.isUndefined(costOf("model-x", usage))
    assert.isUndefined(costOf("claude-mythos-5-2", usage))
  })
})
