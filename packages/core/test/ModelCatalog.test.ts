/**
 * The model catalog against the installed SDK's own lists: every id one the SDK names, none it lists as deprecated
 * (its requests would print an end-of-life warning), the default a current model, and the defaults of every role
 * and the prices read from it.
 */
import { assert, describe, it } from "@effect/vitest"
import * as SdkModels from "../../testing/src/SdkModels.js"
import * as Model from "../src/Model.js"
import * as ModelCatalog from "../src/ModelCatalog.js"

describe("ModelCatalog", () => {
  it("names only models of the installed SDK's Model list, none that it lists as deprecated", () => {
    const known = SdkModels.knownModelIds()
    const deprecated = Object.keys(SdkModels.deprecatedModels())
    // the lists were read: a change of the SDK's layout must fail here, not pass vacuously
    assert.isAbove(known.length, 5)
    assert.isAbove(deprecated.length, 0)
    const ids = ModelCatalog.models.map((m) => m.id)
    assert.strictEqual(new Set(ids).size, ids.length, "an id is listed twice")
    for (const id of ids) {
      assert.include(known, id, `${id} is not in the SDK's Model list`)
      assert.notInclude(deprecated, id, `${id} is deprecated: the SDK warns on every request`)
    }
  })

  it("the current lineup is the SDK's newest models: every non-deprecated SDK model is in the catalog", () => {
    const deprecated = SdkModels.deprecatedModels()
    const missing = SdkModels.knownModelIds()
      .filter((id) => !Object.hasOwn(deprecated, id) && ModelCatalog.modelInfo(id) === undefined)
    assert.deepStrictEqual(missing, [])
  })

  it("the default is a current, priced model, and every role defaults to it", () => {
    const info = ModelCatalog.modelInfo(ModelCatalog.DEFAULT_MODEL)
    assert.strictEqual(info?.status, "current")
    assert.isDefined(info?.price)
    for (const role of Model.modelRoles) assert.strictEqual(Model.DEFAULT_MODELS[role], ModelCatalog.DEFAULT_MODEL)
  })

  it("prices a model by its alias and its dated snapshots, and nothing it does not list", () => {
    assert.deepStrictEqual(ModelCatalog.priceOf("claude-haiku-4-5-20251001"), ModelCatalog.priceOf("claude-haiku-4-5"))
    assert.deepStrictEqual(ModelCatalog.priceOf("claude-sonnet-5-5"), { inputPerMTok: 2, outputPerMTok: 10 })
    for (const id of Object.keys(SdkModels.deprecatedModels())) assert.isUndefined(ModelCatalog.priceOf(id))
    assert.isUndefined(ModelCatalog.priceOf("model-x"))
    for (const m of ModelCatalog.models.filter((m) => m.status === "current")) {
      assert.isDefined(m.price, `${m.id} is current and has a published price`)
    }
  })

  it("prices a request at the band of its own prompt length", () => {
    // Claude Haiku 5.5: $0.10 / $0.50 for prompts up to 100,000 tokens, $0.50 / $2.50 above
    const lower = { inputPerMTok: 0.1, outputPerMTok: 0.5 }
    assert.deepStrictEqual(ModelCatalog.requestPriceOf("claude-haiku-5-5", 0), lower)
    assert.deepStrictEqual(ModelCatalog.requestPriceOf("claude-haiku-5-5", 100_000), lower)
    assert.deepStrictEqual(ModelCatalog.requestPriceOf("claude-haiku-5-5", 100_001), {
      inputPerMTok: 0.5,
      outputPerMTok: 2.5
    })
    // a model priced in one band pays it at any length; an unpriced one has no price
    assert.deepStrictEqual(ModelCatalog.requestPriceOf("claude-sonnet-5-5", 900_000), {
      inputPerMTok: 2,
      outputPerMTok: 10
    })
    assert.isUndefined(ModelCatalog.requestPriceOf("claude-mythos-5-2", 10))
  })
})
