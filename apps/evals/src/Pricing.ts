/**
 * What a run cost, from its token counts, at the prices of `@memdir/core`'s `ModelCatalog` (the one table of model
 * ids and prices, also docs/configuration.md#models-what-needs-a-key); a model it does not price has an unknown
 * cost (shown as "unpriced", never guessed). `--price IN,OUT` prices every model of a run instead. Cache writes cost
 * 1.25× the input price, cache reads 0.1× (5-minute cache).
 *
 * Each request is priced on its own: a model priced in bands by prompt length (Claude Haiku 5.5) charges a
 * request whose prompt is longer than the band's threshold at the upper band, whatever the run's other requests.
 */
import * as ModelCatalog from "@memdir/core/ModelCatalog"
import type { Usage } from "./Results.js"

export type Price = ModelCatalog.TokenPrice

/** One model response's tokens, as the evals meter them. */
export interface PricedRequest {
  readonly model: string
  readonly usage: Usage
}

/** A request's prompt, the length a price band is chosen by: input, cache reads and cache writes. */
export const promptTokens = (usage: Usage): number =>
  usage.inputTokens + usage.cacheReadInputTokens + usage.cacheCreationInputTokens

/** The price a request of `promptTokens` pays on `model`: `override` (`--price`), else the catalog's band. */
export const priceOf = (model: string, override?: Price | undefined, prompt = 0): Price | undefined =>
  override ?? ModelCatalog.requestPriceOf(model, prompt)

/** USD for one request's `usage` on `model`; undefined when the model's price is unknown. */
export const costOf = (model: string, usage: Usage, override?: Price | undefined): number | undefined => {
  const price = priceOf(model, override, promptTokens(usage))
  if (price === undefined) return undefined
  return (
    usage.inputTokens * price.inputPerMTok +
    usage.cacheCreationInputTokens * price.inputPerMTok * 1.25 +
    usage.cacheReadInputTokens * price.inputPerMTok * 0.1 +
    usage.outputTokens * price.outputPerMTok
  ) / 1_000_000
}

/** USD for a trial's requests, each at its own price; undefined when one of them is unpriced. */
export const costOfRequests = (
  requests: ReadonlyArray<PricedRequest>,
  override?: Price | undefined
): number | undefined => {
  let total = 0
  for (const request of requests) {
    const cost = costOf(request.model, request.usage, override)
    if (cost === undefined) return undefined
    total += cost
  }
  return total
}
