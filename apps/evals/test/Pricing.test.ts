/**
 * The evals' cost of a run at ModelCatalog's prices: the default model is priced (it once showed "unpriced"), a
 * dated snapshot costs what its alias costs, `--price` wins, a model the catalog does not price stays unknown, and
 * each request pays the band of its own prompt length (the meter keeps every response, not only per-model sums).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Model from "@memdir/core/Model"
import * as ModelCatalog from "@memdir/core/ModelCatalog"
import * as Effect from "effect/Effect"
import { layerMetered, metered } from "../src/Metering.js"
import { costOf, costOfRequests, priceOf } from "../src/Pricing.js"

/** A scripted Claude Haiku 5.5 answer with these token counts. */
const haikuReply = (usage: Partial<Model.ModelUsage>): Model.ScriptedReply => ({
  content: [{ type: "text", text: "ok", citations: null }],
  model: "claude-haiku-5-5",
  usage
})

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

  it("prices each request at the band of its own prompt, not the run's sum", () => {
    // Claude Haiku 5.5: $0.10 / $0.50 per MTok up to 100,000 prompt tokens, $0.50 / $2.50 above
    const short = { inputTokens: 60_000, outputTokens: 1_000, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 }
    const long = { inputTokens: 20_000, outputTokens: 1_000, cacheReadInputTokens: 90_000, cacheCreationInputTokens: 0 }
    assert.closeTo(costOf("claude-haiku-5-5", short)!, (60_000 * 0.1 + 1_000 * 0.5) / 1e6, 1e-12)
    assert.closeTo(costOf("claude-haiku-5-5", long)!, (20_000 * 0.5 + 90_000 * 0.5 * 0.1 + 1_000 * 2.5) / 1e6, 1e-12)
    // two short requests stay in the lower band although their prompts sum to more than 100,000 tokens
    const twoShort = [{ model: "claude-haiku-5-5", usage: short }, { model: "claude-haiku-5-5", usage: short }]
    assert.closeTo(costOfRequests(twoShort)!, 2 * costOf("claude-haiku-5-5", short)!, 1e-12)
    assert.closeTo(
      costOfRequests([...twoShort, { model: "claude-haiku-5-5", usage: long }])!,
      2 * costOf("claude-haiku-5-5", short)! + costOf("claude-haiku-5-5", long)!,
      1e-12
    )
    assert.isUndefined(costOfRequests([...twoShort, { model: "model-x", usage: short }]))
    assert.strictEqual(
      costOfRequests([{ model: "model-x", usage: short }], { inputPerMTok: 1, outputPerMTok: 2 }),
      (60_000 + 2 * 1_000) / 1e6
    )
    assert.strictEqual(costOfRequests([]), 0)
  })

  it.effect("the meter keeps every response's model and usage, in order", () =>
    Effect.gen(function*() {
      const model = yield* Model.Model
      const ask = model.complete({
        role: "selector",
        system: "s",
        messages: [{ role: "user", content: "q" }],
        maxTokens: 9
      })
      const [, meter] = yield* metered(Effect.all([ask, ask]))
      assert.deepStrictEqual(meter.requests.map((r) => [r.model, r.usage.inputTokens, r.usage.cacheReadInputTokens]), [
        ["claude-haiku-5-5", 60_000, 0],
        ["claude-haiku-5-5", 20_000, 90_000]
      ])
      assert.strictEqual(meter.calls, 2)
    }).pipe(
      Effect.provide(layerMetered),
      Effect.provide(Model.layerTest([
        haikuReply({ inputTokens: 60_000, outputTokens: 10 }),
        haikuReply({ inputTokens: 20_000, cacheReadInputTokens: 90_000, outputTokens: 10 })
      ]))
    ))
})
