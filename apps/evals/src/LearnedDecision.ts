/**
 * An experiment beside the shipped selector (`pnpm evals:generalize --learned`, docs/evals.md): the decision of what
 * to keep learned from labels instead of set by hand. memdir's scorer ranks the candidates as shipped; a logistic
 * regression over what the scorer already knows of each of the first ten (its score, its share of the best score,
 * coverage, word share, the share of its score in its header, whether it ranks first, the first one's margin, how
 * many request words it matched) says how likely it is relevant; a request keeps those at or above a threshold
 * (near-duplicates collapsed, at most five), the threshold chosen by F1 on the training requests.
 *
 * Trained per scored directory on the development sets' requests from every other directory (leave one directory
 * out), so a request is never decided by a model that saw its directory's labels; the scored requests themselves
 * are never trained on (a blind set stays blind). Relevant memories are positives, irrelevant ones
 * negatives, acceptable ones left out; the classes are weighed equally.
 */
import { collapseFamilies, effectiveMax, type ScoredMemory, scoreMemories } from "@memdir/core/Selector"
import {
  addCounts,
  bodiesOf,
  type Counts,
  countsOf,
  type Figures,
  figures,
  type LabelledDirectory,
  type LabelledQuery,
  ZERO_COUNTS
} from "./Generalization.js"

/** The candidates a request's decision looks at: the first ten by score. */
const CONSIDERED = 10

/** What the model reads of one candidate, given the request's ranking. */
export const featuresOf = (ranked: ReadonlyArray<ScoredMemory>, i: number): ReadonlyArray<number> => {
  const s = ranked[i]!
  const top = ranked[0]?.score ?? 0
  const second = ranked[1]?.score ?? 0
  return [
    s.score,
    top > 0 ? s.score / top : 0,
    s.coverage,
    s.wordShare,
    s.score > 0 ? s.headerScore / s.score : 0,
    i === 0 ? 1 : 0,
    i === 0 && top > 0 ? (top - second) / top : 0,
    Math.log(1 + s.matched.length)
  ]
}

export interface Example {
  readonly x: ReadonlyArray<number>
  readonly y: 0 | 1
}

export interface TrainOptions {
  /** L2 penalty on the (standardized) weights. */
  readonly l2: number
  readonly iterations: number
  readonly learningRate: number
}

export const defaultTrainOptions: TrainOptions = { l2: 0.1, iterations: 400, learningRate: 0.5 }

const sigmoid = (z: number): number => 1 / (1 + Math.exp(-z))

/**
 * Logistic regression by batch gradient descent on standardized features, both classes weighed equally (there are
 * many more irrelevant candidates than relevant ones). Returns the probability of relevance.
 */
export const train = (
  examples: ReadonlyArray<Example>,
  options: TrainOptions = defaultTrainOptions
): (x: ReadonlyArray<number>) => number => {
  const n = examples.length
  const positives = examples.filter((e) => e.y === 1).length
  if (n === 0 || positives === 0 || positives === n) {
    const p = n === 0 ? 0 : positives / n
    return () => p
  }
  const d = examples[0]!.x.length
  const mean = Array.from({ length: d }, (_, j) => examples.reduce((sum, e) => sum + e.x[j]!, 0) / n)
  const sd = Array.from(
    { length: d },
    (_, j) => Math.sqrt(examples.reduce((sum, e) => sum + (e.x[j]! - mean[j]!) ** 2, 0) / n) || 1
  )
  const standardize = (x: ReadonlyArray<number>) => x.map((v, j) => (v - mean[j]!) / sd[j]!)
  const rows = examples.map((e) => ({
    z: standardize(e.x),
    y: e.y,
    weight: n / (2 * (e.y === 1 ? positives : n - positives))
  }))
  const w = new Array<number>(d).fill(0)
  let bias = 0
  for (let it = 0; it < options.iterations; it++) {
    const gradient = new Array<number>(d).fill(0)
    let gradientBias = 0
    for (const row of rows) {
      const error = row.weight * (sigmoid(bias + row.z.reduce((sum, v, j) => sum + v * w[j]!, 0)) - row.y)
      gradientBias += error
      for (let j = 0; j < d; j++) gradient[j]! += error * row.z[j]!
    }
    bias -= options.learningRate * (gradientBias / n)
    for (let j = 0; j < d; j++) w[j]! -= options.learningRate * (gradient[j]! / n + options.l2 * w[j]!)
  }
  return (x) => sigmoid(bias + standardize(x).reduce((sum, v, j) => sum + v * w[j]!, 0))
}

/** The thresholds a fold chooses from. */
export const THRESHOLDS: ReadonlyArray<number> = [0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]

/** One request's first ten candidates with their features (the ranking does not depend on the labels). */
type Ranked = ReadonlyArray<
  { readonly path: string; readonly matched: ReadonlyArray<string>; readonly x: ReadonlyArray<number> }
>

const rankOf = (directory: LabelledDirectory, query: string): Ranked => {
  const ranked = scoreMemories({ query, candidates: directory.candidates, bodies: bodiesOf(directory, "whole") })
    .filter((s) => s.score > 0 && !s.droppedAsToolDoc)
  return ranked.slice(0, CONSIDERED).map((s, i) => ({ path: s.path, matched: s.matched, x: featuresOf(ranked, i) }))
}

const decide = (candidates: Ranked, relevance: (x: ReadonlyArray<number>) => number, threshold: number) =>
  collapseFamilies(candidates.filter((c) => relevance(c.x) >= threshold)).slice(0, effectiveMax(undefined))
    .map((c) => c.path)

export interface LearnedResult {
  readonly overall: Figures
  readonly byDirectory: ReadonlyArray<{ readonly dir: string; readonly threshold: number; readonly counts: Counts }>
}

/**
 * `scored` decided leave-one-directory-out by a model trained on `development` (requests of other directories only;
 * a request in both lists is the same request).
 */
export const learnedLeaveOneDirectoryOut = (
  directories: ReadonlyMap<string, LabelledDirectory>,
  scored: ReadonlyArray<LabelledQuery>,
  development: ReadonlyArray<LabelledQuery>,
  options: TrainOptions = defaultTrainOptions,
  trainer: typeof train = train
): LearnedResult => {
  const rankings = new Map<string, Ranked>()
  const rankingOf = (q: LabelledQuery): Ranked => {
    const key = `${q.dir}\u0000${q.query}`
    let ranked = rankings.get(key)
    if (ranked === undefined) {
      ranked = rankOf(directories.get(q.dir)!, q.query)
      rankings.set(key, ranked)
    }
    return ranked
  }
  const dirs = [...new Set(scored.map((q) => q.dir))].sort()
  const byDirectory = dirs.map((dir) => {
    const training = development.filter((q) => q.dir !== dir)
    const relevance = trainer(
      training.flatMap((q) =>
        rankingOf(q).flatMap((c): Array<Example> =>
          q.relevant.includes(c.path) ? [{ x: c.x, y: 1 }] : q.acceptable.includes(c.path) ? [] : [{ x: c.x, y: 0 }]
        )
      ),
      options
    )
    let threshold = THRESHOLDS[0]!
    let best = -1
    for (const t of THRESHOLDS) {
      const f1 = figures(
        training.map((q) => countsOf(q, decide(rankingOf(q), relevance, t))).reduce(addCounts, ZERO_COUNTS)
      )
        .f1
      if (f1 > best + 1e-12) {
        best = f1
        threshold = t
      }
    }
    const counts = scored.filter((q) => q.dir === dir)
      .map((q) => countsOf(q, decide(rankingOf(q), relevance, threshold)))
      .reduce(addCounts, ZERO_COUNTS)
    return { dir, threshold, counts }
  })
  return { overall: figures(byDirectory.map((d) => d.counts).reduce(addCounts, ZERO_COUNTS)), byDirectory }
}

/** The experiment's lines for the report. */
export const renderLearned = (result: LearnedResult, shipped: Figures | undefined): string => {
  const row = (name: string, f: Figures) =>
    `| ${name} | ${f.recall.toFixed(2)} | ${f.precision.toFixed(2)} | ${f.f1.toFixed(2)} | ${f.offTopicPicks} |`
  const thresholds = [...new Set(result.byDirectory.map((d) => d.threshold))].sort((a, b) => a - b).join(", ")
  return [
    "A learned decision (LearnedDecision.ts: memdir's ranking, a logistic regression on its features trained on the",
    `development sets' other directories; thresholds chosen per fold: ${thresholds}):`,
    "",
    "| system | recall | precision | F1 | off-topic picks |",
    "|---|---|---|---|---|",
    ...(shipped === undefined ? [] : [row("memdir as shipped", shipped)]),
    row("memdir, learned decision", result.overall)
  ].join("\n")
}
