/**
 * How the offline selector generalizes to memory directories it has never seen: labelled requests over real memory
 * directories, scored **leave-one-directory-out** (every setting that is chosen is chosen on the other directories,
 * never on the one being scored), beside a textbook baseline run on the same queries in the same run: BM25+
 * (Bm25Baseline.ts: MiniSearch over name + description + the whole body, words from `Intl.Segmenter`), one absolute
 * score threshold chosen the same way.
 *
 * A fold picks, for each system, the grid point with the best F1 over the other directories' queries (micro counts:
 * a pick that is neither relevant nor acceptable is a false positive, a missed relevant memory a false negative),
 * then scores the held-out directory with it. Reported per directory, per language and overall: recall, precision,
 * off-topic picks (memories surfaced for a request where nothing should surface).
 */
import { analyzeBody, type BodyTerms } from "@memdir/core/internal/text/selectorIndex"
import type { MemoryHeader } from "@memdir/core/Memory"
import {
  defaultOfflineOptions,
  type OfflineSelectorOptions,
  scoreMemories,
  selectRelevantMemories
} from "@memdir/core/Selector"
import { BM25_THRESHOLDS, type Bm25Index, documentsOf, makeBm25Index, selectWithBm25 } from "./Bm25Baseline.js"
import { wilsonInterval } from "./Stats.js"

/** One labelled request (the shape of `evals/selector/labels.json`). */
export interface LabelledQuery {
  readonly id: string
  readonly dir: string
  readonly language: string
  readonly kind: string
  readonly query: string
  readonly relevant: ReadonlyArray<string>
  readonly acceptable: ReadonlyArray<string>
}

/** A directory's candidates as recall offers them, and each one's whole body (for the baseline). */
export interface LabelledDirectory {
  readonly dir: string
  readonly candidates: ReadonlyArray<MemoryHeader>
  readonly bodies: ReadonlyMap<string, string>
}

export interface Counts {
  readonly queries: number
  readonly produced: number
  readonly correct: number
  readonly expected: number
  readonly found: number
  readonly offTopicPicks: number
}

export interface Figures extends Counts {
  readonly recall: number
  readonly precision: number
  readonly f1: number
}

/** No query counted yet. */
export const ZERO_COUNTS: Counts = { queries: 0, produced: 0, correct: 0, expected: 0, found: 0, offTopicPicks: 0 }

/** Two tallies as one. */
export const addCounts = (a: Counts, b: Counts): Counts => ({
  queries: a.queries + b.queries,
  produced: a.produced + b.produced,
  correct: a.correct + b.correct,
  expected: a.expected + b.expected,
  found: a.found + b.found,
  offTopicPicks: a.offTopicPicks + b.offTopicPicks
})

/** Micro figures; precision of nothing produced is 1 (nothing wrong was said). */
export const figures = (c: Counts): Figures => {
  const recall = c.expected === 0 ? 1 : c.found / c.expected
  const precision = c.produced === 0 ? 1 : c.correct / c.produced
  const f1 = recall + precision === 0 ? 0 : (2 * recall * precision) / (recall + precision)
  return { ...c, recall, precision, f1 }
}

/** The counts of one answer to one query. */
export const countsOf = (query: LabelledQuery, selected: ReadonlyArray<string>): Counts => {
  const ok = new Set([...query.relevant, ...query.acceptable])
  const correct = selected.filter((p) => ok.has(p)).length
  return {
    queries: 1,
    produced: selected.length,
    correct,
    expected: query.relevant.length,
    found: query.relevant.filter((p) => selected.includes(p)).length,
    offTopicPicks: ok.size === 0 ? selected.length : 0
  }
}

/** A system: named settings, each answering a query over a directory. */
export interface System {
  readonly name: string
  readonly description: string
  readonly settings: ReadonlyArray<{ readonly label: string; readonly select: Selecting }>
}

export type Selecting = (directory: LabelledDirectory, query: string) => ReadonlyArray<string>

// ---------------------------------------------------------------------------------------------------------------
// The systems
// ---------------------------------------------------------------------------------------------------------------

const grid = <A>(axes: ReadonlyArray<ReadonlyArray<A>>): Array<Array<A>> =>
  axes.reduce<Array<Array<A>>>((acc, axis) => acc.flatMap((prefix) => axis.map((v) => [...prefix, v])), [[]])

/** memdir's offline selector, as shipped: one setting, nothing chosen (`whole`: with TermCache's bodies, as recall). */
export const memdirAsShipped = (
  options: OfflineSelectorOptions = defaultOfflineOptions,
  body: BodySource = "head",
  name = "memdir"
): System => ({
  name,
  description: "the offline selector as shipped",
  settings: [{
    label: "shipped",
    select: (directory, query) =>
      selectRelevantMemories({ query, candidates: directory.candidates, bodies: bodiesOf(directory, body) }, options)
  }]
})

/** What the selector reads of a memory's body: the head the scan keeps (1 KiB), or all of it. */
export type BodySource = "head" | "whole"

const wholeBodies = new WeakMap<LabelledDirectory, ReadonlyMap<string, BodyTerms>>()

/** The whole bodies' terms of a directory's candidates, as `TermCache` gives them to recall (`head`: none). */
export const bodiesOf = (
  directory: LabelledDirectory,
  body: BodySource
): ReadonlyMap<string, BodyTerms> | undefined => {
  if (body === "head") return undefined
  let terms = wholeBodies.get(directory)
  if (terms === undefined) {
    terms = new Map([...directory.bodies].map(([path, text]) => [path, analyzeBody(text)] as const))
    wholeBodies.set(directory, terms)
  }
  return terms
}

/** memdir's offline selector with its decision knobs chosen per fold. */
export const memdirTuned = (
  base: OfflineSelectorOptions = defaultOfflineOptions,
  body: BodySource = "head",
  name = "memdir (knobs per fold)"
): System => ({
  name,
  description: "the offline selector, minEvidence / relativeToTop / the body-only bar chosen on the other directories",
  settings: grid<number>([[0.3, 0.4, 0.5, 0.6], [0.7, 0.8, 0.9, 1], [0, 0.8, 1, 1.2], [0.1, 0.2], [0.4, 0.5, 0.6, 0.7]])
    .map(([minEvidence, relativeToTop, bodyOnlyEvidence, headerEvidence, bodyOnlyCoverage]) => {
      const options = {
        ...base,
        minEvidence: minEvidence!,
        relativeToTop: relativeToTop!,
        bodyOnlyEvidence: bodyOnlyEvidence!,
        headerEvidence: headerEvidence!,
        bodyOnlyCoverage: bodyOnlyCoverage!
      }
      return {
        label: `minEvidence ${minEvidence} relativeToTop ${relativeToTop} body-only ${bodyOnlyEvidence} under ` +
          `${headerEvidence} unless ${bodyOnlyCoverage}`,
        select: (directory: LabelledDirectory, query: string) =>
          selectRelevantMemories(
            { query, candidates: directory.candidates, bodies: bodiesOf(directory, body) },
            options
          )
      }
    })
})

/**
 * memdir's offline selector with the relative cut and the bar of the request's unknown words (`unknownWordsShare`,
 * `unknownWordsCap`) chosen per fold, as their defaults were chosen (`--unknown-words`, docs/evals.md).
 */
export const memdirUnknownWordsTuned = (base: OfflineSelectorOptions = defaultOfflineOptions): System => ({
  name: "memdir whole body (unknown-words bar per fold)",
  description:
    "the offline selector, relativeToTop / unknownWordsShare / unknownWordsCap chosen on the other directories",
  settings: grid<number>([[0.8, 0.85, 0.9], [0, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4], [0.6, 0.8, 1, 1.2, Infinity]])
    .map(([relativeToTop, unknownWordsShare, unknownWordsCap]) => {
      const options = {
        ...base,
        relativeToTop: relativeToTop!,
        unknownWordsShare: unknownWordsShare!,
        unknownWordsCap: unknownWordsCap!
      }
      return {
        label: `relativeToTop ${relativeToTop} unknown words ${unknownWordsShare} up to ${unknownWordsCap}`,
        select: (directory: LabelledDirectory, query: string) =>
          selectRelevantMemories(
            { query, candidates: directory.candidates, bodies: bodiesOf(directory, "whole") },
            options
          )
      }
    })
})

/** One weight of the offline selector and the relative cut chosen per fold (whole bodies, as recall reads them). */
const memdirWeightTuned = (
  knob: "translationWeight" | "proximityWeight",
  label: string,
  values: ReadonlyArray<number>,
  base: OfflineSelectorOptions
): System => ({
  name: `memdir whole body (${label} per fold)`,
  description: `the offline selector, ${knob} / relativeToTop chosen on the other directories`,
  settings: grid<number>([values, [0.8, 0.85, 0.9]]).map(([weight, relativeToTop]) => {
    const options = { ...base, [knob]: weight!, relativeToTop: relativeToTop! }
    return {
      label: `${label} ${weight} relativeToTop ${relativeToTop}`,
      select: (directory: LabelledDirectory, query: string) =>
        selectRelevantMemories(
          { query, candidates: directory.candidates, bodies: bodiesOf(directory, "whole") },
          options
        )
    }
  })
})

/**
 * memdir's offline selector with the weight of a request word's translations (`translationWeight`, the glossary of
 * core's `translation.ts`) and the relative cut chosen per fold (`--translations`, docs/evals.md).
 */
export const memdirTranslationsTuned = (base: OfflineSelectorOptions = defaultOfflineOptions): System =>
  memdirWeightTuned("translationWeight", "translations", [0, 0.4, 0.55, 0.7, 0.85, 1], base)

/**
 * memdir's offline selector with the weight of the request's words found together in one passage of a body
 * (`proximityWeight`) and the relative cut chosen per fold (`--proximity`, docs/evals.md).
 */
export const memdirProximityTuned = (base: OfflineSelectorOptions = defaultOfflineOptions): System =>
  memdirWeightTuned("proximityWeight", "proximity", [0, 0.15, 0.3, 0.45, 0.6], base)

/**
 * memdir's offline selector with the evidence a request phrased as a general question needs
 * (`generalQuestionEvidence`, core's `questionForm.ts`) chosen per fold (`--general-questions`, docs/evals.md); 0 is
 * the floor alone.
 */
export const memdirGeneralQuestionsTuned = (base: OfflineSelectorOptions = defaultOfflineOptions): System => ({
  name: "memdir whole body (general questions per fold)",
  description: "the offline selector, generalQuestionEvidence chosen on the other directories",
  settings: [0, 0.8, 1, 1.2, 1.4, 1.6, 2].map((evidence) => {
    const options = { ...base, generalQuestionEvidence: evidence }
    return {
      label: `general questions ${evidence}`,
      select: (directory: LabelledDirectory, query: string) =>
        selectRelevantMemories(
          { query, candidates: directory.candidates, bodies: bodiesOf(directory, "whole") },
          options
        )
    }
  })
})

/** memdir's offline selector with its body weight and length normalisation chosen per fold too. */
export const memdirFieldsTuned = (base: OfflineSelectorOptions = defaultOfflineOptions): System => {
  const fieldSets = grid<number>([[0.35, 0.6], [0.5, 0.75], [1.5, 2, 3, Infinity]]).map(([weight, b, ratio]) =>
    base.fields.map((f) => f.field === "body" ? { ...f, weight: weight!, b: b!, maxLengthRatio: ratio! } : f)
  )
  return {
    name: "memdir whole body (fields + knobs per fold)",
    description: "the offline selector, body weight / b and the decision knobs chosen on the other directories",
    settings: fieldSets.flatMap((fields) => {
      const body = fields.find((f) => f.field === "body")!
      return grid<number>([[0.3, 0.4, 0.5, 0.6, 0.8, 1, 1.2], [0.6, 0.7, 0.8, 0.9, 1], [1.2, 1.6, 2, 99]]).map((
        [minEvidence, relativeToTop, clearEvidence]
      ) => {
        const options = {
          ...base,
          fields,
          minEvidence: minEvidence!,
          relativeToTop: relativeToTop!,
          clearEvidence: clearEvidence!
        }
        return {
          label:
            `body ${body.weight}/${body.b}/${body.maxLengthRatio} minEvidence ${minEvidence} relativeToTop ${relativeToTop} ` +
            `clearEvidence ${clearEvidence}`,
          select: (directory: LabelledDirectory, query: string) =>
            selectRelevantMemories(
              { query, candidates: directory.candidates, bodies: bodiesOf(directory, "whole") },
              options
            )
        }
      })
    })
  }
}

/** BM25 indexes, one per directory (built once per run). */
const bm25Indexes = new WeakMap<LabelledDirectory, Bm25Index>()

const bm25IndexOf = (directory: LabelledDirectory): Bm25Index => {
  let index = bm25Indexes.get(directory)
  if (index === undefined) {
    index = makeBm25Index(documentsOf(directory.candidates, (m) => directory.bodies.get(m.path)))
    bm25Indexes.set(directory, index)
  }
  return index
}

/** The textbook baseline (Bm25Baseline.ts): its score threshold chosen per fold like memdir's knobs. */
export const bm25Baseline: System = {
  name: "BM25+ baseline",
  description: "MiniSearch BM25+ (name, description, whole body; Intl.Segmenter words), top 5 above a threshold " +
    "chosen on the other directories",
  settings: BM25_THRESHOLDS.map((threshold) => ({
    label: `score >= ${threshold}`,
    select: (directory: LabelledDirectory, query: string) => selectWithBm25(bm25IndexOf(directory), query, threshold)
  }))
}

// ---------------------------------------------------------------------------------------------------------------
// Ranking, apart from the decision
// ---------------------------------------------------------------------------------------------------------------

/** A system's order of the candidates for a request, best first (only those sharing a word with it). */
export interface Ranker {
  readonly name: string
  readonly rank: (directory: LabelledDirectory, query: string) => ReadonlyArray<string>
}

/** memdir's offline scores, whole bodies, as recall ranks before it decides what to keep. */
export const memdirRanker: Ranker = {
  name: "memdir",
  rank: (directory, query) =>
    scoreMemories({ query, candidates: directory.candidates, bodies: bodiesOf(directory, "whole") })
      .filter((s) => s.score > 0).map((s) => s.path)
}

/** The BM25+ baseline's order. */
export const bm25Ranker: Ranker = {
  name: "BM25+ baseline",
  rank: (directory, query) => bm25IndexOf(directory).search(query).map((hit) => hit.path)
}

/** How well a ranker orders, over the requests that need a memory: settings play no part, so no fold is needed. */
export interface RankingFigures {
  readonly queries: number
  /** Share of them whose first-ranked memory is a relevant one. */
  readonly first: number
  /** Share with a relevant memory among the first two. */
  readonly topTwo: number
  /** Mean reciprocal rank of the first relevant memory (0 when none is ranked). */
  readonly mrr: number
}

/**
 * Ranking apart from the decision: whether the memory a request needs comes first, whatever is then kept. A system
 * that ranks well and still misses memories loses them in its cut, not in its scores.
 */
export const rankingQuality = (
  ranker: Ranker,
  directories: ReadonlyMap<string, LabelledDirectory>,
  queries: ReadonlyArray<LabelledQuery>
): RankingFigures => {
  const needing = queries.filter((q) => q.relevant.length > 0)
  let first = 0
  let topTwo = 0
  let reciprocal = 0
  for (const q of needing) {
    const order = ranker.rank(directories.get(q.dir)!, q.query)
    const at = order.findIndex((path) => q.relevant.includes(path))
    if (at === 0) first++
    if (at >= 0 && at < 2) topTwo++
    if (at >= 0) reciprocal += 1 / (at + 1)
  }
  const n = needing.length
  return {
    queries: n,
    first: n === 0 ? 0 : first / n,
    topTwo: n === 0 ? 0 : topTwo / n,
    mrr: n === 0 ? 0 : reciprocal / n
  }
}

/** The ranking table, one row per ranker. */
export const renderRanking = (rows: ReadonlyArray<{ readonly name: string; readonly figures: RankingFigures }>) =>
  [
    `Ranking, before any cut (the ${rows[0]?.figures.queries ?? 0} requests that need a memory):`,
    "",
    "| system | relevant first | relevant in the first two | MRR |",
    "|---|---|---|---|",
    ...rows.map(({ figures: f, name }) => `| ${name} | ${pct(f.first)} | ${pct(f.topTwo)} | ${pct(f.mrr)} |`)
  ].join("\n")

// ---------------------------------------------------------------------------------------------------------------
// Leave one directory out
// ---------------------------------------------------------------------------------------------------------------

export interface FoldResult {
  readonly dir: string
  readonly setting: string
  readonly counts: Counts
  readonly perQuery: ReadonlyArray<{ readonly query: LabelledQuery; readonly selected: ReadonlyArray<string> }>
}

export interface SystemResult {
  readonly system: System
  readonly folds: ReadonlyArray<FoldResult>
  readonly overall: Figures
  readonly byLanguage: ReadonlyArray<{ readonly language: string; readonly figures: Figures }>
  /** Per kind of request (paraphrase, negation, trap, none): where a system's misses and off-topic picks are. */
  readonly byKind: ReadonlyArray<{ readonly kind: string; readonly figures: Figures }>
}

/** Every system, leave-one-directory-out over `queries`. */
export const leaveOneDirectoryOut = (
  systems: ReadonlyArray<System>,
  directories: ReadonlyMap<string, LabelledDirectory>,
  queries: ReadonlyArray<LabelledQuery>
): ReadonlyArray<SystemResult> => {
  const dirs = [...new Set(queries.map((q) => q.dir))].sort()
  return systems.map((system) => {
    // every setting's answer to every query, once
    const answers = system.settings.map((setting) =>
      queries.map((query) => setting.select(directories.get(query.dir)!, query.query))
    )
    const countsBy = answers.map((perQuery) => perQuery.map((selected, i) => countsOf(queries[i]!, selected)))
    const folds = dirs.map((dir): FoldResult => {
      let best = 0
      let bestF1 = -1
      countsBy.forEach((perQuery, s) => {
        const f1 = figures(perQuery.filter((_, i) => queries[i]!.dir !== dir).reduce(addCounts, ZERO_COUNTS)).f1
        if (f1 > bestF1 + 1e-12) {
          bestF1 = f1
          best = s
        }
      })
      const inDir = queries.map((q, i) => [q, i] as const).filter(([q]) => q.dir === dir)
      return {
        dir,
        setting: system.settings[best]!.label,
        counts: inDir.map(([, i]) => countsBy[best]![i]!).reduce(addCounts, ZERO_COUNTS),
        perQuery: inDir.map(([query, i]) => ({ query, selected: answers[best]![i]! }))
      }
    })
    const answered = folds.flatMap((f) => f.perQuery)
    const figuresOf = (keep: (query: LabelledQuery) => boolean) =>
      figures(
        answered.filter((a) => keep(a.query)).map((a) => countsOf(a.query, a.selected)).reduce(
          addCounts,
          ZERO_COUNTS
        )
      )
    return {
      system,
      folds,
      overall: figures(folds.map((f) => f.counts).reduce(addCounts, ZERO_COUNTS)),
      byLanguage: [...new Set(queries.map((q) => q.language))].sort().map((language) => ({
        language,
        figures: figuresOf((query) => query.language === language)
      })),
      byKind: [...new Set(queries.map((q) => q.kind))].sort().map((kind) => ({
        kind,
        figures: figuresOf((query) => query.kind === kind)
      }))
    }
  })
}

const pct = (x: number) => x.toFixed(2)

/** The report as Markdown tables: overall, per language, per directory (with each fold's chosen setting). */
export const renderReport = (results: ReadonlyArray<SystemResult>): string => {
  const lines: Array<string> = []
  lines.push("| system | recall | precision | F1 | off-topic picks | queries |", "|---|---|---|---|---|---|")
  for (const r of results) {
    const o = r.overall
    lines.push(
      `| ${r.system.name} | ${pct(o.recall)} | ${pct(o.precision)} | ${pct(o.f1)} | ${o.offTopicPicks} | ${o.queries} |`
    )
  }
  lines.push(
    "",
    "Per language (recall [Wilson 95% interval over the memories expected] / precision / off-topic picks " +
      "(requests)): a few dozen memories expected still leave ±0.1 or more; compare languages over sets pooled " +
      "(several --labels).",
    ""
  )
  const languages = results[0]?.byLanguage.map((l) => l.language) ?? []
  lines.push(`| system | ${languages.join(" | ")} |`, `|---|${languages.map(() => "---").join("|")}|`)
  for (const r of results) {
    const cells = r.byLanguage.map(({ figures: f }) => {
      const interval = wilsonInterval(f.found, f.expected)
      return `${pct(f.recall)} [${pct(interval.low)}, ${pct(interval.high)}] / ${pct(f.precision)} / ` +
        `${f.offTopicPicks} (${f.queries})`
    })
    lines.push(`| ${r.system.name} | ${cells.join(" | ")} |`)
  }
  lines.push("", "Per kind of request (recall / precision / off-topic picks (requests)):", "")
  const kinds = results[0]?.byKind.map((k) => k.kind) ?? []
  lines.push(`| system | ${kinds.join(" | ")} |`, `|---|${kinds.map(() => "---").join("|")}|`)
  for (const r of results) {
    const cells = r.byKind.map(({ figures: f }) =>
      `${pct(f.recall)} / ${pct(f.precision)} / ${f.offTopicPicks} (${f.queries})`
    )
    lines.push(`| ${r.system.name} | ${cells.join(" | ")} |`)
  }
  lines.push(
    "",
    "Per directory (recall / precision / off-topic picks, and how many of them answer a trap: a request that names " +
      "what the project uses, about something else; the setting chosen without it):",
    ""
  )
  const dirs = results[0]?.folds.map((f) => f.dir) ?? []
  lines.push(
    `| directory | ${results.map((r) => r.system.name).join(" | ")} |`,
    `|---|${results.map(() => "---").join("|")}|`
  )
  for (const dir of dirs) {
    const cells = results.map((r) => {
      const fold = r.folds.find((f) => f.dir === dir)!
      const f = figures(fold.counts)
      const inTraps = fold.perQuery.filter((a) => a.query.kind === "trap").map((a) => countsOf(a.query, a.selected))
        .reduce((sum, c) => sum + c.offTopicPicks, 0)
      return `${pct(f.recall)} / ${pct(f.precision)} / ${f.offTopicPicks}` +
        (inTraps > 0 ? ` (${inTraps} in traps)` : "") +
        (r.system.settings.length > 1 ? ` (${fold.setting})` : "")
    })
    lines.push(`| ${dir} | ${cells.join(" | ")} |`)
  }
  return lines.join("\n")
}
