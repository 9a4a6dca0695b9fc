/**
 * What a run leaves behind (`evals/runs/<timestamp>-<suite>/results.json`) and the figures derived from it: per
 * variant a pass rate with its Wilson 95% interval, summed metrics (precision/recall, capture rate…), tokens, cost
 * and latency; between each variant and the baseline variant a paired comparison on the same scenarios × trials.
 *
 * The summary is always recomputed from the trials, so a report, a baseline gate and the terminal table can never
 * disagree with the raw results.
 */
import * as Schema from "effect/Schema"
import {
  type Interval,
  type PairedComparison,
  pairedComparison,
  type RetrievalScores,
  retrievalScores,
  wilsonInterval
} from "./Stats.js"

export const RESULTS_FORMAT = "memdir-eval-run/1"

export const ScoreResult = Schema.Struct({
  id: Schema.String,
  type: Schema.String,
  passed: Schema.Boolean,
  /** Whether it decides the trial's pass (model-graded rubrics do not, unless asked). */
  required: Schema.Boolean,
  /** Judged by a model, not by code. */
  modelGraded: Schema.Boolean,
  detail: Schema.String
})
export type ScoreResult = typeof ScoreResult.Type

export const Usage = Schema.Struct({
  inputTokens: Schema.Number,
  outputTokens: Schema.Number,
  cacheReadInputTokens: Schema.Number,
  cacheCreationInputTokens: Schema.Number
})
export type Usage = typeof Usage.Type

export const emptyUsage: Usage = {
  inputTokens: 0,
  outputTokens: 0,
  cacheReadInputTokens: 0,
  cacheCreationInputTokens: 0
}

export const addUsage = (a: Usage, b: Usage): Usage => ({
  inputTokens: a.inputTokens + b.inputTokens,
  outputTokens: a.outputTokens + b.outputTokens,
  cacheReadInputTokens: a.cacheReadInputTokens + b.cacheReadInputTokens,
  cacheCreationInputTokens: a.cacheCreationInputTokens + b.cacheCreationInputTokens
})

export const TrialResult = Schema.Struct({
  variant: Schema.String,
  scenario: Schema.String,
  /** 1-based. */
  trial: Schema.Number,
  passed: Schema.Boolean,
  /** The run could not be scored (model failure…): left out of pass rates, counted apart. */
  error: Schema.optional(Schema.String),
  scores: Schema.Array(ScoreResult),
  /** Counts summed per variant (selected, correct, relevant, found, factsCaptured…). */
  metrics: Schema.Record(Schema.String, Schema.Number),
  model: Schema.optional(Schema.String),
  usage: Schema.optional(Usage),
  /** USD from the price table; null when the model's price is unknown. */
  costUsd: Schema.optional(Schema.NullOr(Schema.Number)),
  latencyMs: Schema.Number,
  /** Model calls made. */
  calls: Schema.optional(Schema.Number),
  /** What the run produced: the selection, or the transcript, final answer and memory changes. */
  output: Schema.optional(Schema.Unknown)
})
export type TrialResult = typeof TrialResult.Type

export const RunMode = Schema.Literals(["offline", "live", "record", "replay"])
export type RunMode = typeof RunMode.Type

/** Where the numbers came from: the one thing a reader must not get wrong. */
export const Provenance = Schema.Struct({
  mode: RunMode,
  /** Model ids the responses named (empty for offline runs). */
  models: Schema.Array(Schema.String),
  /** The Messages API endpoint (live/record) or the one the cassette was recorded against (replay). */
  endpoint: Schema.optional(Schema.String),
  /** True only when the answers came from a real model behind a real API. */
  realModel: Schema.Boolean,
  cassette: Schema.optional(Schema.String),
  /** One sentence for the report header. */
  note: Schema.String
})
export type Provenance = typeof Provenance.Type

export const ScenarioInputs = Schema.Struct({
  description: Schema.optional(Schema.String),
  /** Labels to filter by (a selector query's kind, a model scenario's tags). */
  tags: Schema.Array(Schema.String),
  /** The selector's query, or the agent's task (the user's message). */
  query: Schema.optional(Schema.String),
  conversation: Schema.optional(Schema.Array(Schema.Struct({ role: Schema.String, content: Schema.String }))),
  recentTools: Schema.optional(Schema.Array(Schema.String)),
  /** Selector suites: what should be surfaced, and what may be. */
  relevant: Schema.optional(Schema.Array(Schema.String)),
  acceptable: Schema.optional(Schema.Array(Schema.String)),
  /** Model suites: one line per scorer, what a pass means. */
  expected: Schema.optional(Schema.Array(Schema.String)),
  /** The memory fixture (path, age, description) and the project's files. */
  memories: Schema.optional(
    Schema.Array(Schema.Struct({ path: Schema.String, ageDays: Schema.Number, description: Schema.String }))
  ),
  recalled: Schema.optional(Schema.Array(Schema.String)),
  projectFiles: Schema.optional(Schema.Array(Schema.String)),
  note: Schema.optional(Schema.String)
})
export type ScenarioInputs = typeof ScenarioInputs.Type

/** A variant's text, and the default it is diffed against in the report. */
export const VariantPrompt = Schema.Struct({
  /** What the text is: "section recall-trust", "selector prompt", "offline selector options". */
  of: Schema.String,
  text: Schema.String,
  /** The default's name and text. */
  defaultName: Schema.String,
  defaultText: Schema.String
})
export type VariantPrompt = typeof VariantPrompt.Type

export const RunVariant = Schema.Struct({
  name: Schema.String,
  description: Schema.optional(Schema.String),
  /** Its text and the default's (runs made before this field have none). */
  prompt: Schema.optional(VariantPrompt),
  /**
   * A textbook system run beside memdir's for comparison (a selector suite's `bm25`), not memdir: shown in every
   * table and compared with its stored baseline, but not held to `--min-pass-rate`.
   */
  reference: Schema.optional(Schema.Boolean)
})

export const RunResults = Schema.Struct({
  format: Schema.Literal(RESULTS_FORMAT),
  suite: Schema.String,
  kind: Schema.String,
  section: Schema.String,
  description: Schema.String,
  startedAt: Schema.String,
  finishedAt: Schema.String,
  trials: Schema.Number,
  variants: Schema.Array(RunVariant),
  /** The variant the others are compared with. */
  baseline: Schema.String,
  scenarios: Schema.Array(Schema.Struct({
    id: Schema.String,
    kind: Schema.optional(Schema.String),
    /** What the scenario gave the variant and expected of it (runs made before this field have none). */
    inputs: Schema.optional(ScenarioInputs)
  })),
  provenance: Provenance,
  results: Schema.Array(TrialResult)
})
export type RunResults = typeof RunResults.Type

// ---------------------------------------------------------------------------------------------------------------
// Summary
// ---------------------------------------------------------------------------------------------------------------

export interface VariantSummary {
  readonly name: string
  readonly description?: string | undefined
  /** Trials scored (errored trials excluded). */
  readonly total: number
  readonly passed: number
  readonly errored: number
  readonly passRate: number
  readonly interval: Interval
  /** Summed trial metrics. */
  readonly metrics: Readonly<Record<string, number>>
  /** Precision/recall when the trials counted produced/correct/expected/found. */
  readonly retrieval?: RetrievalScores | undefined
  /** Share of nothing-relevant queries answered with nothing (selector suites). */
  readonly emptyWhenNothingRelevant?: number | undefined
  /** Memorable facts found / expected (extraction and dream suites). */
  readonly captureRate?: number | undefined
  readonly usage: Usage
  /** Null when some trial's model price is unknown. */
  readonly costUsd: number | null
  readonly latencyMs: { readonly mean: number; readonly max: number }
  readonly calls: number
}

export interface VariantComparison extends PairedComparison {
  readonly variant: string
  readonly baseline: string
}

export interface ScenarioRow {
  readonly scenario: string
  /** Variant → passed / scored trials. */
  readonly byVariant: Readonly<Record<string, { readonly passed: number; readonly total: number }>>
}

export interface RunSummary {
  readonly variants: ReadonlyArray<VariantSummary>
  readonly comparisons: ReadonlyArray<VariantComparison>
  readonly scenarios: ReadonlyArray<ScenarioRow>
  readonly errored: number
}

/**
 * Pure: the trials that got an answer from a model: they ran to their scores (no error) and at least one model
 * call was answered (`calls` counts answered calls only).
 */
export const answeredTrials = (run: Pick<RunResults, "results">): number =>
  run.results.filter((r) => r.error === undefined && (r.calls ?? 0) > 0).length

/**
 * Pure: whether a run's figures are evidence about a real model: its provenance says the real API, and some trial
 * got an answer (0 of 0 is no evidence, whatever the endpoint). Every report asks this one question.
 */
export const fromRealModel = (run: Pick<RunResults, "provenance" | "results">): boolean =>
  run.provenance.realModel && answeredTrials(run) > 0

export const trialKey = (result: Pick<TrialResult, "scenario" | "trial">): string =>
  `${result.scenario}#${result.trial}`

const sumMetrics = (results: ReadonlyArray<TrialResult>): Record<string, number> => {
  const sums: Record<string, number> = {}
  for (const r of results) for (const [k, v] of Object.entries(r.metrics)) sums[k] = (sums[k] ?? 0) + v
  return sums
}

const summarizeVariant = (
  variant: { readonly name: string; readonly description?: string | undefined },
  all: ReadonlyArray<TrialResult>
): VariantSummary => {
  const results = all.filter((r) => r.variant === variant.name)
  const scored = results.filter((r) => r.error === undefined)
  const passed = scored.filter((r) => r.passed).length
  const metrics = sumMetrics(scored)
  const has = (...keys: ReadonlyArray<string>) => keys.every((k) => k in metrics)
  const costs = results.map((r) => r.costUsd)
  const latencies = results.map((r) => r.latencyMs)
  return {
    name: variant.name,
    ...(variant.description === undefined ? {} : { description: variant.description }),
    total: scored.length,
    passed,
    errored: results.length - scored.length,
    passRate: scored.length === 0 ? 0 : passed / scored.length,
    interval: wilsonInterval(passed, scored.length),
    metrics,
    ...(has("produced", "correct", "expected", "found") ?
      {
        retrieval: retrievalScores({
          produced: metrics["produced"]!,
          correct: metrics["correct"]!,
          expected: metrics["expected"]!,
          found: metrics["found"]!
        })
      } :
      {}),
    ...(has("nothingRelevant", "emptyWhenNothingRelevant") && metrics["nothingRelevant"]! > 0 ?
      { emptyWhenNothingRelevant: metrics["emptyWhenNothingRelevant"]! / metrics["nothingRelevant"]! } :
      {}),
    ...(has("factsExpected", "factsCaptured") && metrics["factsExpected"]! > 0 ?
      { captureRate: metrics["factsCaptured"]! / metrics["factsExpected"]! } :
      {}),
    usage: results.reduce((u, r) => r.usage === undefined ? u : addUsage(u, r.usage), emptyUsage),
    costUsd: costs.some((c) => c === null) ? null : costs.reduce<number>((s, c) => s + (c ?? 0), 0),
    latencyMs: {
      mean: latencies.length === 0 ? 0 : latencies.reduce((s, l) => s + l, 0) / latencies.length,
      max: latencies.reduce((m, l) => Math.max(m, l), 0)
    },
    calls: results.reduce((s, r) => s + (r.calls ?? 0), 0)
  }
}

/** Pure: every figure a report shows, from the raw trials. */
export const summarize = (run: RunResults): RunSummary => {
  const variants = run.variants.map((v) => summarizeVariant(v, run.results))
  const outcomes = (name: string) =>
    run.results.filter((r) => r.variant === name && r.error === undefined).map((r) => ({
      key: trialKey(r),
      passed: r.passed
    }))
  const baseline = outcomes(run.baseline)
  const comparisons = run.variants
    .filter((v) => v.name !== run.baseline)
    .map((v) => ({ variant: v.name, baseline: run.baseline, ...pairedComparison(outcomes(v.name), baseline) }))
  const scenarios = run.scenarios.map((s) => ({
    scenario: s.id,
    byVariant: Object.fromEntries(run.variants.map((v) => {
      const trials = run.results.filter((r) => r.variant === v.name && r.scenario === s.id && r.error === undefined)
      return [v.name, { passed: trials.filter((r) => r.passed).length, total: trials.length }]
    }))
  }))
  return { variants, comparisons, scenarios, errored: run.results.filter((r) => r.error !== undefined).length }
}
