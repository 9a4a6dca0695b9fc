/**
 * The cost estimate `memdir doctor` prints keeps its own copy of the automatic programs' budgets (doctor must not
 * load the extractor, the dream or the model selector): this holds the copy to the programs' own constants.
 */
import { assert, describe, it } from "@effect/vitest"
import { DREAM_MAX_TOKENS, DREAM_MAX_TURNS } from "@memdir/core/Dream"
import { DEFAULT_MAX_TOKENS, DEFAULT_MAX_TURNS } from "@memdir/core/Extract"
import { SELECTOR_MAX_TOKENS } from "@memdir/core/ModelSelector"
import { BUDGETS } from "../src/ModelCallsReport.js"

describe("doctor's model-call budgets", () => {
  it("are the extractor's, the dream's and the selector's own limits", () => {
    assert.deepStrictEqual(
      [BUDGETS.extraction.calls, BUDGETS.extraction.outputTokensPerCall],
      [DEFAULT_MAX_TURNS, DEFAULT_MAX_TOKENS]
    )
    assert.deepStrictEqual([BUDGETS.dream.calls, BUDGETS.dream.outputTokensPerCall], [
      DREAM_MAX_TURNS,
      DREAM_MAX_TOKENS
    ])
    assert.deepStrictEqual([BUDGETS.recall.calls, BUDGETS.recall.outputTokensPerCall], [1, SELECTOR_MAX_TOKENS])
  })
})
