/**
 * What `memdir doctor` says about automatic model calls (docs/configuration.md#automatic-model-calls): on or off,
 * who decided, what runs, with which model, at what cost. Apart from `ModelCalls.ts` so that the commands that only
 * need the switch (`hooks install`) never load the model code.
 */
import { switchSourceText } from "@memdir/core/Errors"
import type { MemoryLocation } from "@memdir/core/MemoryPaths"
import * as Model from "@memdir/core/Model"
import { priceOf } from "@memdir/core/ModelCatalog"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { automaticModelCallsOn, automaticModelCallsSource, TURN_OFF_HINT, TURN_ON_HINT } from "./ModelCalls.js"

/**
 * Token budgets of the automatic programs, for the cost estimate (kept in step with `Extract.DEFAULT_MAX_TURNS`,
 * `DEFAULT_MAX_TOKENS`, `DEFAULT_MAX_MESSAGE_CHARS`, `Dream.DREAM_MAX_TURNS`, `DREAM_MAX_TOKENS` and the selector's
 * `SELECTOR_MAX_TOKENS`; those modules are not loaded by doctor). Input per call is a rough guess: extraction sends
 * at most 60,000 characters of transcript (≈ 15,000 tokens) plus its prompt, manifest and index; a dream call its
 * prompt, index, manifest, 24 KB of logs and its tool results; a recall ~250 tokens plus ~45 per memory (200).
 */
export const BUDGETS = {
  extraction: { calls: 4, inputTokensPerCall: 20_000, outputTokensPerCall: 4_096 },
  dream: { calls: 20, inputTokensPerCall: 30_000, outputTokensPerCall: 8_192 },
  recall: { calls: 1, inputTokensPerCall: 9_250, outputTokensPerCall: 256 }
} as const

export type AutomaticProgram = keyof typeof BUDGETS

export interface ProgramCost {
  readonly program: AutomaticProgram
  /** When it runs. */
  readonly when: string
  readonly model: string
  /** USD per million input / output tokens (the catalog's price; absent for a model it does not price). */
  readonly pricePerMTok?: { readonly input: number; readonly output: number } | undefined
  /** Rough upper bound of one run in USD, uncached (absent without a price): an estimate, not a bill. */
  readonly estimateUsd?: number | undefined
}

export interface ModelCallsReport {
  readonly enabled: boolean
  readonly enabledBy: string
  /** `ANTHROPIC_API_KEY` is set: without it nothing runs, switch or not. */
  readonly keyConfigured: boolean
  /** Both: hooks and the MCP server call the model. */
  readonly active: boolean
  readonly programs: ReadonlyArray<ProgramCost>
  readonly estimateNote: string
  readonly howTo: string
}

const WHEN: Record<AutomaticProgram, string> = {
  extraction: "after each turn (the Stop hook, which `memdir hooks install --model-calls on` adds) and at the end " +
    "of each session (SessionEnd), in the background",
  dream: "after extraction, when the dream's gates open (at most once a day, after 5 sessions)",
  recall: "each memory_recall of the MCP server (and each prompt of a hook run with --selector model|auto)"
}

const round = (usd: number) => Math.round(usd * 100) / 100

/** The report from the location's switch, the model configuration (`Model.config`) and the catalog's prices. */
export const modelCallsReport = (
  location: MemoryLocation,
  config: { readonly keyConfigured: boolean; readonly models: Readonly<Record<string, string>> },
  priceOf: (model: string) => { readonly inputPerMTok: number; readonly outputPerMTok: number } | undefined
): ModelCallsReport => {
  const enabled = automaticModelCallsOn(location)
  const roles: Record<AutomaticProgram, string> = { extraction: "extractor", dream: "dreamer", recall: "selector" }
  const programs = (Object.keys(BUDGETS) as Array<AutomaticProgram>).map((program): ProgramCost => {
    const model = config.models[roles[program]] ?? "unknown"
    const price = priceOf(model)
    const budget = BUDGETS[program]
    return {
      program,
      when: WHEN[program],
      model,
      ...(price === undefined ? {} : {
        pricePerMTok: { input: price.inputPerMTok, output: price.outputPerMTok },
        estimateUsd: round(
          budget.calls * (budget.inputTokensPerCall * price.inputPerMTok +
            budget.outputTokensPerCall * price.outputPerMTok) /
            1_000_000
        )
      })
    }
  })
  return {
    enabled,
    enabledBy: automaticModelCallsSource(location),
    keyConfigured: config.keyConfigured,
    active: enabled && config.keyConfigured,
    programs,
    estimateNote: "estimates: the most one run can cost at its turn and token limits, before prompt caching; " +
      "most runs cost far less",
    howTo: enabled ? TURN_OFF_HINT : TURN_ON_HINT
  }
}

const usd = (n: number) => `$${n.toFixed(2)}`

/** The report as `memdir doctor` prints it, in three lines: on or off and who decided; what runs; what it costs. */
export const modelCallsLines = (report: ModelCallsReport): Array<string> => {
  const state = report.enabled ?
    report.keyConfigured ? "on" : "on, but no ANTHROPIC_API_KEY is set, so nothing runs" :
    `off${report.keyConfigured ? " (an ANTHROPIC_API_KEY is set, but a key alone never turns them on)" : ""}`
  const cost = (p: ProgramCost) => p.estimateUsd === undefined ? "unpriced" : `up to ~${usd(p.estimateUsd)} a run`
  const by = (program: AutomaticProgram) => report.programs.find((p) => p.program === program)!
  const models = [...new Set(report.programs.map((p) => p.model))]
  const prices = models.map((model) => {
    const price = report.programs.find((p) => p.model === model)?.pricePerMTok
    return price === undefined ?
      `${model} (not in the catalog)` :
      `${model} $${price.input} / $${price.output} per million input / output tokens`
  })
  const [extraction, dream, recall] = [by("extraction"), by("dream"), by("recall")]
  return [
    `automatic model calls: ${state} — decided by ${switchSourceText(report.enabledBy)}; ${report.howTo}`,
    `  ${report.enabled ? "running" : "when on"}: extraction with ${extraction.model} after each turn and session ` +
    `(${cost(extraction)}), then the dream with ${dream.model} when its gates open (${cost(dream)}, at most once a ` +
    `day); model recall with ${recall.model} on each MCP memory_recall (${cost(recall)})`,
    `  ${prices.join("; ")}; ${report.estimateNote}; \`memdir recall\`, \`extract\` and \`dream\` use a key ` +
    "whenever you run them"
  ]
}

/** `modelCallsReport` over the configured models (`Model.config`: the environment) and the catalog. */
export const reportFor = (location: MemoryLocation) =>
  Effect.map(
    Model.config,
    (config) =>
      modelCallsReport(location, { keyConfigured: Option.isSome(config.apiKey), models: config.models }, priceOf)
  )
