/**
 * What a run cost, from its token counts, at the prices of `@memdir/core`'s `ModelCatalog` (the one table of model
 * ids and prices, also docs/configuration.md#models); a model it does not price has an unknown cost (shown as
 * "unpriced", never guessed). `--price IN,OUT` prices every model of a run instead. Cache writes cost 1.25× the
 * input price, cache reads 0.1× (5-minute cache).
 *
 * A run's tokens are summed per model, not per request, so a model priced in bands by prompt length (Claude Haiku
 * 5.5) is priced at its lower band: the cost of a run whose prompts exceed the band is a lower bound.
 */
import * as ModelCatalog from "@memdir/core/ModelCatalog"
import type { Usage } from "./Results.js"

export interface Price {
  readonly inputPerMTok: number
  readonly outputPerMTok: number
}

export const priceOf = (model: string, override?: Price | undefined): Price | undefined =>
  override ?? ModelCatalog.priceOf(model)

/** USD for `usage` on `model`; undefined when the model's price is unknown. */
export const costOf = (model: string, usage: Usage, override?: Price | undefined): number | undefined => {
  const price = priceOf(model, override)
  if (price === undefined) return undefined
  return (
    usage.inputTokens * price.inputPerMTok +
    usage.cacheCreationInputTokens * price.inputPerMTok * 1.25 +
    usage.cacheReadInputTokens * price.inputPerMTok * 0.1 +
    usage.outputTokens * price.outputPerMTok
  ) / 1_000_000
}
