/**
 * What a run cost, from its token counts. Prices are USD per million tokens as published by Anthropic for the
 * models below; a model not listed has an unknown cost (shown as "?", never guessed).
 * `--price IN,OUT` prices every model of a run instead. Cache writes cost 1.25× the input price, cache reads 0.1× (5-minute cache).
 */
import type { Usage } from "./Results.js"

export interface Price {
  readonly inputPerMTok: number
  readonly outputPerMTok: number
}

/**
 * Model id → price; an id also matches its dated snapshots (`claude-sonnet-4-5-20250929`). Only models whose
 * price was published when this table was written: a newer model is "unknown", not priced by resemblance.
 */
export const PRICES: Readonly<Record<string, Price>> = {
  "claude-opus-4-0": { inputPerMTok: 15, outputPerMTok: 75 },
  "claude-opus-4": { inputPerMTok: 15, outputPerMTok: 75 },
  "claude-opus-4-1": { inputPerMTok: 15, outputPerMTok: 75 },
  "claude-opus-4-5": { inputPerMTok: 5, outputPerMTok: 25 },
  "claude-sonnet-4-0": { inputPerMTok: 3, outputPerMTok: 15 },
  "claude-sonnet-4": { inputPerMTok: 3, outputPerMTok: 15 },
  "claude-sonnet-4-5": { inputPerMTok: 3, outputPerMTok: 15 },
  "claude-3-7-sonnet": { inputPerMTok: 3, outputPerMTok: 15 },
  "claude-haiku-4-5": { inputPerMTok: 1, outputPerMTok: 5 },
  "claude-3-5-haiku": { inputPerMTok: 0.8, outputPerMTok: 4 }
}

export const priceOf = (model: string, override?: Price | undefined): Price | undefined => {
  if (override !== undefined) return override
  const undated = model.replace(/-(?:20\d{6}|latest)$/, "")
  return Object.hasOwn(PRICES, undated) ? PRICES[undated] : undefined
}

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
