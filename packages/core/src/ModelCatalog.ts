/**
 * ModelCatalog: the Claude models memdir knows, in one table — each id, its name, whether Anthropic lists it in
 * the current lineup or as legacy, and its published price. Everything that names a model reads it: the default
 * model of every role (`Model.DEFAULT_MODELS`, so the CLI and the library), the evals' cost of a run
 * (apps/evals `Pricing.ts`) and the table of docs/configuration.md#models.
 *
 * Only ids of the installed `@anthropic-ai/sdk`'s `Model` list that the SDK does not list as deprecated (a
 * deprecated model makes the SDK print an end-of-life warning on every request): `test/ModelCatalog.test.ts` reads
 * both lists, and `test/models.test.ts` (at the repository root) fails on a deprecated id anywhere in the sources,
 * examples, tests or docs. Prices are USD per million tokens as Anthropic publishes them (platform.claude.com,
 * models overview and each model's page, 2026-12); a model whose price was not published is unpriced, never
 * priced by resemblance.
 */

/** USD per million tokens. */
export interface TokenPrice {
  readonly inputPerMTok: number
  readonly outputPerMTok: number
}

export interface ModelPrice extends TokenPrice {
  /**
   * A model priced in bands by prompt length (Claude Haiku 5.5): the price of a request whose prompt (cache reads
   * and writes included) is longer than `aboveInputTokens`. `inputPerMTok` / `outputPerMTok` are the lower band.
   */
  readonly longPrompt?: (TokenPrice & { readonly aboveInputTokens: number }) | undefined
}

/** `current`: in Anthropic's current lineup; `legacy`: still served, with a newer model of its family. */
export type ModelStatus = "current" | "legacy"

export interface CatalogModel {
  /** The API id (the alias, without a date suffix). */
  readonly id: string
  readonly name: string
  readonly status: ModelStatus
  /** Undefined when Anthropic has published no price for it. */
  readonly price: ModelPrice | undefined
}

const price = (inputPerMTok: number, outputPerMTok: number): ModelPrice => ({ inputPerMTok, outputPerMTok })

/** Newest first within each status; the current lineup first. */
export const models: ReadonlyArray<CatalogModel> = [
  { id: "claude-fable-5-2", name: "Claude Fable 5.2", status: "current", price: price(8, 40) },
  { id: "claude-opus-5-5", name: "Claude Opus 5.5", status: "current", price: price(4, 20) },
  { id: "claude-sonnet-5-5", name: "Claude Sonnet 5.5", status: "current", price: price(2, 10) },
  {
    id: "claude-haiku-5-5",
    name: "Claude Haiku 5.5",
    status: "current",
    price: { ...price(0.1, 0.5), longPrompt: { aboveInputTokens: 100_000, inputPerMTok: 0.5, outputPerMTok: 2.5 } }
  },
  // Mythos models are offered by invitation only; no price of 5.1 or 5.2 was published
  { id: "claude-mythos-5-2", name: "Claude Mythos 5.2", status: "legacy", price: undefined },
  { id: "claude-fable-5-1", name: "Claude Fable 5.1", status: "legacy", price: price(10, 50) },
  { id: "claude-mythos-5-1", name: "Claude Mythos 5.1", status: "legacy", price: undefined },
  { id: "claude-sonnet-5", name: "Claude Sonnet 5", status: "legacy", price: price(2, 10) },
  { id: "claude-fable-5", name: "Claude Fable 5", status: "legacy", price: price(10, 50) },
  { id: "claude-mythos-5", name: "Claude Mythos 5", status: "legacy", price: price(10, 50) },
  { id: "claude-opus-5", name: "Claude Opus 5", status: "legacy", price: price(5, 25) },
  { id: "claude-opus-4-8", name: "Claude Opus 4.8", status: "legacy", price: price(5, 25) },
  { id: "claude-opus-4-7", name: "Claude Opus 4.7", status: "legacy", price: price(5, 25) },
  { id: "claude-opus-4-6", name: "Claude Opus 4.6", status: "legacy", price: price(5, 25) },
  { id: "claude-sonnet-4-6", name: "Claude Sonnet 4.6", status: "legacy", price: price(3, 15) },
  { id: "claude-haiku-4-5", name: "Claude Haiku 4.5", status: "legacy", price: price(1, 5) }
]

/**
 * The model memdir uses for every role unless configured (`MEMDIR_MODEL_<ROLE>`): a current Sonnet-class model,
 * as the reference uses for its selector; extraction and dreaming write memory files, where a wrong fact costs
 * more than a token.
 */
export const DEFAULT_MODEL = "claude-sonnet-5-5"

/** `claude-haiku-4-5-20251001` → `claude-haiku-4-5`: a dated snapshot is its alias's model. */
export const undatedId = (id: string): string => id.replace(/-(?:20\d{6}|latest)$/, "")

const byId: ReadonlyMap<string, CatalogModel> = new Map(models.map((m) => [m.id, m]))

/** The catalog's entry for an id or one of its dated snapshots. */
export const modelInfo = (id: string): CatalogModel | undefined => byId.get(undatedId(id))

/** The published price of a model, when there is one. */
export const priceOf = (id: string): ModelPrice | undefined => modelInfo(id)?.price

/**
 * What one request pays per million tokens: the model's price, or its long-prompt band when the request's prompt
 * (`promptTokens`: input, cache reads and cache writes) is longer than the band's threshold. A band applies to a
 * request, never to tokens summed over several.
 */
export const requestPriceOf = (id: string, promptTokens: number): TokenPrice | undefined => {
  const price = priceOf(id)
  const long = price?.longPrompt
  const band = long !== undefined && promptTokens > long.aboveInputTokens ? long : price
  return band === undefined ? undefined : { inputPerMTok: band.inputPerMTok, outputPerMTok: band.outputPerMTok }
}
