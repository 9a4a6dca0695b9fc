/**
 * The regression gate CI runs: a floor on every memdir variant's pass rate (`--min-pass-rate`; a reference system
 * run beside them for comparison, such as the selector suite's BM25 baseline, is not held to it), and a comparison
 * with a stored baseline run (`--baseline`), trial by trial on the same scenarios, for every variant.
 *
 * Offline and replayed runs are deterministic, so against a baseline any scenario that passed there and fails now
 * is a regression. Live runs are noisy, so there a variant regresses only when its paired comparison with the
 * baseline shows a significant drop (McNemar exact, p < 0.05).
 */
import { type RunResults, summarize, trialKey } from "./Results.js"
import { pairedComparison } from "./Stats.js"
import { formatRate, pText } from "./Stats.js"

export interface GateOptions {
  /** Every variant run but a reference must pass at least this share of its scored trials (0 … 1). */
  readonly minPassRate?: number | undefined
  /** A stored run to compare with, variant by variant. */
  readonly baseline?: RunResults | undefined
  /** Where the baseline came from, for the messages. */
  readonly baselinePath?: string | undefined
}

export const SIGNIFICANCE = 0.05

/** Pure: why the run fails the gate (empty: it passes). */
export const gateFailures = (run: RunResults, options: GateOptions): ReadonlyArray<string> => {
  const summary = summarize(run)
  const failures: Array<string> = []
  if (options.minPassRate !== undefined) {
    const references = new Set(run.variants.filter((v) => v.reference === true).map((v) => v.name))
    for (const v of summary.variants) {
      if (v.errored > 0) failures.push(`${v.name}: ${v.errored} trial(s) errored, so its pass rate cannot be trusted`)
      if (v.total === 0) failures.push(`${v.name}: no trial was scored`)
      else if (!references.has(v.name) && v.passRate < options.minPassRate) {
        failures.push(
          `${v.name}: pass rate ${v.passed}/${v.total} = ${formatRate(v.passRate)} is under --min-pass-rate ${
            formatRate(options.minPassRate)
          }`
        )
      }
    }
  }
  const baseline = options.baseline
  if (baseline !== undefined) {
    const where = options.baselinePath ?? "the baseline"
    if (baseline.suite !== run.suite) {
      failures.push(`${where} is a run of suite ${baseline.suite}, not ${run.suite}`)
      return failures
    }
    const deterministic = run.provenance.mode === "offline" || run.provenance.mode === "replay"
    for (const v of summary.variants) {
      const outcomes = (r: RunResults) =>
        r.results.filter((t) => t.variant === v.name && t.error === undefined).map((t) => ({
          key: trialKey(t),
          passed: t.passed
        }))
      const before = outcomes(baseline)
      if (before.length === 0) continue
      const now = outcomes(run)
      const comparison = pairedComparison(now, before)
      if (comparison.pairs === 0) continue
      const nowRate = (comparison.bothPassed + comparison.onlyFirstPassed) / comparison.pairs
      const beforeRate = (comparison.bothPassed + comparison.onlySecondPassed) / comparison.pairs
      if (deterministic) {
        if (comparison.onlySecondPassed > 0) {
          const beforeByKey = new Map(before.map((o) => [o.key, o.passed]))
          const lost = now.filter((o) => !o.passed && beforeByKey.get(o.key) === true).map((o) => o.key)
          failures.push(
            `${v.name}: ${lost.length} scenario(s) passed in ${where} and fail now (${lost.slice(0, 5).join(", ")}${
              lost.length > 5 ? ", …" : ""
            }); ${formatRate(beforeRate)} → ${formatRate(nowRate)}`
          )
        }
      } else if (nowRate < beforeRate && comparison.pValue < SIGNIFICANCE) {
        failures.push(
          `${v.name}: pass rate fell from ${formatRate(beforeRate)} to ${formatRate(nowRate)} on ${comparison.pairs} ` +
            `paired trials (${pText(comparison.pValue)}, exact McNemar)`
        )
      }
    }
  }
  return failures
}
