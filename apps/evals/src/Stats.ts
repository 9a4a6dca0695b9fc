/**
 * The statistics an eval report stands on (docs/evals.md): a pass rate is shown with its Wilson 95% interval, and
 * two variants run on the same scenarios × trials are compared as pairs (McNemar's exact test on the
 * discordant pairs), so "3/3 vs 0/3" is shown for what it is: p = 0.25, not a proven win.
 *
 * Everything here is pure and total.
 */

/** The normal quantile for a two-sided 95% interval. */
export const Z_95 = 1.959963984540054

export interface Interval {
  readonly low: number
  readonly high: number
}

/**
 * Wilson score interval for `passed` successes out of `total` trials. Unlike the normal ("Wald") interval it
 * stays inside [0, 1] and is honest for tiny samples: 3/3 gives [0.44, 1], not [1, 1]. No trials: [0, 1].
 */
export const wilsonInterval = (passed: number, total: number, z: number = Z_95): Interval => {
  if (total <= 0) return { low: 0, high: 1 }
  const p = passed / total
  const z2 = z * z
  const denominator = 1 + z2 / total
  const center = (p + z2 / (2 * total)) / denominator
  const half = (z / denominator) * Math.sqrt((p * (1 - p)) / total + z2 / (4 * total * total))
  // Clamp the rounding noise at the edges (0/n must give exactly 0, n/n exactly 1).
  return {
    low: passed === 0 ? 0 : Math.max(0, center - half),
    high: passed === total ? 1 : Math.min(1, center + half)
  }
}

/** Natural log of the binomial coefficient C(n, k). */
const logChoose = (n: number, k: number): number => {
  let sum = 0
  const m = Math.min(k, n - k)
  for (let i = 1; i <= m; i++) sum += Math.log(n - m + i) - Math.log(i)
  return sum
}

/**
 * Exact two-sided binomial test of H0 "p = 1/2" for `b` against `c` (McNemar's exact test when b and c are the
 * discordant pairs): 2 · P(X ≤ min(b, c)) with X ~ Binomial(b + c, 1/2), capped at 1. No discordant pairs: 1.
 */
export const mcnemarExactPValue = (b: number, c: number): number => {
  const n = b + c
  if (n === 0) return 1
  const k = Math.min(b, c)
  // Sum in log space: 0.5^n underflows past n ≈ 1074.
  const logHalfN = n * Math.log(0.5)
  let tail = 0
  for (let i = 0; i <= k; i++) tail += Math.exp(logChoose(n, i) + logHalfN)
  return Math.min(1, 2 * tail)
}

/** One variant's outcome on one (scenario, trial) pair. */
export interface PairedOutcome {
  readonly key: string
  readonly passed: boolean
}

export interface PairedComparison {
  /** Pairs where both variants were run. */
  readonly pairs: number
  readonly bothPassed: number
  /** Discordant pairs: only the first variant passed (b) / only the second did (c). */
  readonly onlyFirstPassed: number
  readonly onlySecondPassed: number
  readonly bothFailed: number
  /** Pass rate of the first minus the second, over the pairs. */
  readonly difference: number
  /** McNemar's exact two-sided p-value. */
  readonly pValue: number
}

/**
 * Pairs two variants' outcomes by key (`scenario#trial`); keys present in only one of them are left out (an
 * unpaired trial says nothing about the difference).
 */
export const pairedComparison = (
  first: ReadonlyArray<PairedOutcome>,
  second: ReadonlyArray<PairedOutcome>
): PairedComparison => {
  const secondByKey = new Map(second.map((o) => [o.key, o.passed]))
  let bothPassed = 0, onlyFirstPassed = 0, onlySecondPassed = 0, bothFailed = 0
  for (const outcome of first) {
    const other = secondByKey.get(outcome.key)
    if (other === undefined) continue
    if (outcome.passed && other) bothPassed++
    else if (outcome.passed) onlyFirstPassed++
    else if (other) onlySecondPassed++
    else bothFailed++
  }
  const pairs = bothPassed + onlyFirstPassed + onlySecondPassed + bothFailed
  return {
    pairs,
    bothPassed,
    onlyFirstPassed,
    onlySecondPassed,
    bothFailed,
    difference: pairs === 0 ? 0 : (onlyFirstPassed - onlySecondPassed) / pairs,
    pValue: mcnemarExactPValue(onlyFirstPassed, onlySecondPassed)
  }
}

/** Micro-averaged precision/recall from summed counts (1 when there is nothing to get wrong). */
export interface RetrievalCounts {
  /** Items a selector (or extractor) produced. */
  readonly produced: number
  /** …of which were correct (relevant or acceptable). */
  readonly correct: number
  /** Items it should have produced. */
  readonly expected: number
  /** …of which it did produce. */
  readonly found: number
}

export interface RetrievalScores {
  readonly precision: number
  readonly recall: number
  readonly f1: number
}

export const retrievalScores = (counts: RetrievalCounts): RetrievalScores => {
  const precision = counts.produced === 0 ? 1 : counts.correct / counts.produced
  const recall = counts.expected === 0 ? 1 : counts.found / counts.expected
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall)
  return { precision, recall, f1 }
}

/** Whole percents: a handful of trials does not support decimals ("67%", not "66.67%"). */
export const formatRate = (rate: number): string => `${Math.round(rate * 100)}%`

export const formatInterval = (interval: Interval): string =>
  `[${formatRate(interval.low)}, ${formatRate(interval.high)}]`

/** "0.25", "0.031", "< 0.001". */
export const formatPValue = (p: number): string => p < 0.001 ? "< 0.001" : p >= 0.1 ? p.toFixed(2) : p.toFixed(3)

/** "p = 0.031", "p < 0.001": a p-value in a sentence. */
export const pText = (p: number): string => p < 0.001 ? "p < 0.001" : `p = ${formatPValue(p)}`

/** The normal quantile for 80% power (one-sided β = 0.2). */
export const Z_80 = 0.8416212335729143

export interface PowerPlan {
  /** The pass rate assumed for the variant compared with (observed or given). */
  readonly rate: number
  /** The other rate the difference leads to (rate − difference, or rate + difference when that would be < 0). */
  readonly otherRate: number
  readonly difference: number
  readonly power: number
  /** Scored trials each variant needs. */
  readonly trialsPerVariant: number
}

/**
 * How many scored trials per variant detect a difference in pass rate of `difference` from `rate` at 80% power
 * with a two-sided test at α = 0.05: the two-proportion sample size (normal approximation). Pairing the trials
 * on the same scenarios (McNemar) needs no more than this, usually fewer, so it is a safe plan.
 */
export const trialsToDetect = (rate: number, difference: number): PowerPlan => {
  const p1 = Math.min(1, Math.max(0, rate))
  const d = Math.min(1, Math.abs(difference))
  const p2 = p1 - d >= 0 ? p1 - d : Math.min(1, p1 + d)
  const mean = (p1 + p2) / 2
  const n = d === 0 ?
    Infinity :
    (Z_95 * Math.sqrt(2 * mean * (1 - mean)) + Z_80 * Math.sqrt(p1 * (1 - p1) + p2 * (1 - p2))) ** 2 /
    (p1 - p2) ** 2
  return {
    rate: p1,
    otherRate: p2,
    difference: d,
    power: 0.8,
    trialsPerVariant: Number.isFinite(n) ? Math.max(1, Math.ceil(n)) : Infinity
  }
}

/** Width of the widest Wilson interval among `rates` (passed, total). */
export const widestInterval = (rates: ReadonlyArray<{ readonly passed: number; readonly total: number }>): number =>
  rates.reduce((w, r) => {
    const i = wilsonInterval(r.passed, r.total)
    return Math.max(w, i.high - i.low)
  }, 0)
