/**
 * The runner: every (variant, scenario, trial) of a suite through its harness, `concurrency` at a time, with
 * progress, timing and cost per trial, into one `RunResults`.
 *
 * A trial passes when every required scorer passes. A trial whose run failed (a model error after retries) is
 * kept as errored and left out of pass rates; a replay that meets a request its cassette has no answer for stops
 * the whole run with `CassetteMissError` (a silent fallback would score a different program).
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import { Cassette, inTrial, missError } from "./Cassette.js"
import { InvalidRunOptionError } from "./Errors.js"
import { metered, meterUsage } from "./Metering.js"
import { costOfRequests, type Price } from "./Pricing.js"
import { type Provenance, RESULTS_FORMAT, type RunResults, type TrialResult } from "./Results.js"
import { scenarioInputs, variantPrompts } from "./RunInputs.js"
import type { ScoreOutput } from "./Scoring.js"
import type { LoadedSuite } from "./Suite.js"

export interface TrialSpec {
  readonly variant: string
  readonly scenario: string
  /** 1-based. */
  readonly trial: number
}

/** What a harness hands back for one trial. */
export interface TrialOutcome {
  readonly scores: ReadonlyArray<ScoreOutput>
  /** The run failed before it could be scored. */
  readonly error?: string | undefined
  readonly output?: unknown
}

/**
 * A harness's trial runner. It runs inside `inTrial({ trial: trialKey })`; a harness with a scratch directory
 * re-enters `inTrial` with its `sandboxRoot` around its model calls.
 */
export type TrialRunner<R> = (
  spec: TrialSpec,
  trialKey: string
) => Effect.Effect<TrialOutcome, never, R>

export interface RunOptions {
  /** Variants to run (default: all of the suite's). */
  readonly variants?: ReadonlyArray<string> | undefined
  readonly trials?: number | undefined
  readonly concurrency: number
  readonly price?: Price | undefined
  readonly onTrial?: ((progress: TrialProgress) => Effect.Effect<void>) | undefined
}

export interface TrialProgress {
  readonly done: number
  readonly total: number
  /** Trials of each variant in this round (the same for every variant). */
  readonly perVariant: number
  readonly result: TrialResult
}

/** The variants to run, in the suite's order; an unknown name is an error listing the known ones. */
export const selectVariants = (suite: LoadedSuite, wanted: ReadonlyArray<string> | undefined) =>
  Effect.gen(function*() {
    const known = suite.variants.map((v) => v.name)
    if (wanted === undefined || wanted.length === 0) return known
    for (const name of wanted) {
      if (!known.includes(name)) {
        return yield* new InvalidRunOptionError({
          option: "--variants",
          value: name,
          reason: `no such variant in suite ${suite.name} (variants: ${known.join(", ")})`
        })
      }
    }
    return known.filter((name) => wanted.includes(name))
  })

/** The baseline the others are compared with: the suite's, if run, else the first variant run. */
export const baselineOf = (suite: LoadedSuite, variants: ReadonlyArray<string>): string =>
  suite.baseline !== undefined && variants.includes(suite.baseline) ? suite.baseline : variants[0]!

/** Cassette key of a trial. */
export const trialKeyOf = (suite: string, spec: TrialSpec): string =>
  `${suite}/${spec.variant}/${spec.scenario}#${spec.trial}`

/** Pure: a trial passes when it ran, has at least one required score, and every required score passed. */
export const trialPassed = (outcome: TrialOutcome): boolean => {
  const required = outcome.scores.filter((s) => s.result.required)
  return outcome.error === undefined && required.length > 0 && required.every((s) => s.result.passed)
}

const sumMetrics = (scores: ReadonlyArray<ScoreOutput>): Record<string, number> => {
  const metrics: Record<string, number> = {}
  for (const s of scores) for (const [k, v] of Object.entries(s.metrics)) metrics[k] = (metrics[k] ?? 0) + v
  return metrics
}

const isoOf = (ms: number): string => new Date(ms).toISOString()

/**
 * Runs `runTrial` for every (variant, scenario, trial), in that order, `concurrency` at a time. The provenance
 * is computed at the end from the model ids the trials met.
 */
export const runTrials = <R>(options: {
  readonly suite: LoadedSuite
  readonly variants: ReadonlyArray<string>
  readonly trials: number
  /** The first trial number to run (default 1): a later round of `--until-ci-width` continues the numbering. */
  readonly fromTrial?: number | undefined
  readonly concurrency: number
  readonly runTrial: TrialRunner<R>
  readonly provenance: (models: ReadonlyArray<string>) => Effect.Effect<Provenance>
  readonly price?: Price | undefined
  readonly onTrial?: ((progress: TrialProgress) => Effect.Effect<void>) | undefined
}) =>
  Effect.gen(function*() {
    const { suite } = options
    const cassette = yield* Effect.serviceOption(Cassette)
    const startedAt = yield* Clock.currentTimeMillis
    const specs: Array<TrialSpec> = []
    for (const variant of options.variants) {
      for (const scenario of suite.scenarios) {
        for (let trial = options.fromTrial ?? 1; trial <= options.trials; trial++) {
          specs.push({ variant, scenario: scenario.id, trial })
        }
      }
    }
    const done = yield* Ref.make(0)
    const results = yield* Effect.forEach(specs, (spec) =>
      Effect.gen(function*() {
        const key = trialKeyOf(suite.name, spec)
        const trialStart = yield* Clock.currentTimeMillis
        const [outcome, meter] = yield* metered(options.runTrial(spec, key).pipe(inTrial({ trial: key })))
        const latencyMs = (yield* Clock.currentTimeMillis) - trialStart
        if (Option.isSome(cassette) && cassette.value.mode === "replay") {
          const misses = yield* cassette.value.misses
          const mine = misses.find((m) => m.trial === key)
          if (mine !== undefined) return yield* missError(cassette.value.path ?? "cassette", mine)
        }
        const models = [...meter.byModel.keys()].sort()
        const cost = costOfRequests(meter.requests, options.price) ?? null
        const result: TrialResult = {
          variant: spec.variant,
          scenario: spec.scenario,
          trial: spec.trial,
          passed: trialPassed(outcome),
          ...(outcome.error === undefined ? {} : { error: outcome.error }),
          scores: outcome.scores.map((s) => s.result),
          metrics: sumMetrics(outcome.scores),
          ...(meter.calls === 0 ? {} : {
            model: models.join(", "),
            usage: meterUsage(meter),
            costUsd: cost,
            calls: meter.calls
          }),
          latencyMs,
          ...(outcome.output === undefined ? {} : { output: outcome.output })
        }
        const n = yield* Ref.updateAndGet(done, (x) => x + 1)
        if (options.onTrial !== undefined) {
          yield* options.onTrial({
            done: n,
            total: specs.length,
            perVariant: specs.length / options.variants.length,
            result
          })
        }
        return result
      }), { concurrency: options.concurrency })
    const finishedAt = yield* Clock.currentTimeMillis
    const prompts = variantPrompts(suite)
    const inputs = scenarioInputs(suite)
    const models = [...new Set(results.flatMap((r) => r.model === undefined ? [] : r.model.split(", ")))].sort()
    const run: RunResults = {
      format: RESULTS_FORMAT,
      suite: suite.name,
      kind: suite.kind,
      section: suite.section,
      description: suite.description,
      startedAt: isoOf(startedAt),
      finishedAt: isoOf(finishedAt),
      trials: options.trials,
      variants: options.variants.map((name) => {
        const v = suite.variants.find((x) => x.name === name)!
        const prompt = prompts[name]
        return {
          name,
          ...(v.description === undefined ? {} : { description: v.description }),
          ...(prompt === undefined ? {} : { prompt }),
          ...("selector" in v && v.selector === "bm25" ? { reference: true } : {})
        }
      }),
      baseline: baselineOf(suite, options.variants),
      scenarios: suite.scenarios.map((s) => ({
        id: s.id,
        ...("kind" in s && typeof s.kind === "string" ? { kind: s.kind } : {}),
        ...(inputs[s.id] === undefined ? {} : { inputs: inputs[s.id] })
      })),
      provenance: yield* options.provenance(models),
      results
    }
    return run
  })
