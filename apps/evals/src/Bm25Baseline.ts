/**
 * The textbook retriever memdir's offline selector is measured against, written once for every report that shows
 * it: the generalization run (Generalization.ts, `pnpm evals:generalize`), suite (c)'s `bm25` variant
 * (SelectorHarness.ts, `pnpm evals run selector`) and the bench (bench/selector-vs-bm25.bench.ts).
 *
 * BM25+ as MiniSearch 7.2 scores it (a well-kept npm full-text library; its defaults k = 1.2, b = 0.7, d = 0.5,
 * every field weighted 1) over a memory's name, description and whole body (the frontmatter left out; a file
 * without one is all body). Words come from core's `segmentWords` (lower-cased, identifiers split, `Intl.Segmenter`
 * for scripts written without spaces), with no stemming and no stopwords; the request's words are OR-ed. The answer
 * is the best five hits whose score reaches one absolute threshold: the generalization run chooses it per fold on
 * the other directories from `BM25_THRESHOLDS`; the suite and the bench use the one it chooses in most folds over all
 * 22 directories (`BM25_DEFAULT_THRESHOLD`).
 */
import { parseMemoryFile } from "@memdir/core/Frontmatter"
import { segmentWords } from "@memdir/core/internal/text/analysis"
import type { MemoryHeader } from "@memdir/core/Memory"
import * as Result from "effect/Result"
import MiniSearch from "minisearch"

/** At most this many memories are selected. */
export const BM25_TOP = 5

/** The score thresholds the generalization run chooses from (on the other directories, by F1). */
export const BM25_THRESHOLDS: ReadonlyArray<number> = [
  1,
  2,
  3,
  4,
  5,
  6,
  7,
  8,
  10,
  12,
  14,
  17,
  20,
  25,
  30,
  36,
  43,
  52,
  62,
  75
]

/**
 * The threshold `pnpm evals:generalize --written` (leave-one-directory-out over all 22 labelled directories)
 * chooses in most folds: the suite's and the bench's baseline, chosen without their queries' labels in view.
 */
export const BM25_DEFAULT_THRESHOLD = 52

/** What the baseline indexes of one memory. */
export interface Bm25Document {
  readonly path: string
  readonly name: string
  readonly description: string
  readonly body: string
}

/** One scored memory: its score and which request words matched in which fields. */
export interface Bm25Hit {
  readonly path: string
  readonly score: number
  readonly match: Readonly<Record<string, ReadonlyArray<string>>>
}

export interface Bm25Index {
  readonly documents: number
  /** Every memory sharing a word with the request, best first. */
  readonly search: (query: string) => ReadonlyArray<Bm25Hit>
}

/** A memory file's body as the baseline indexes it: without its frontmatter; a file without one is all body. */
export const bodyOfMemoryFile = (text: string, path: string): string => {
  const parsed = parseMemoryFile(text, path)
  return Result.isSuccess(parsed) ? parsed.success.body : text
}

/** The documents of scanned candidates, each with its whole body (`bodyOf`), or its head when that is unknown. */
export const documentsOf = (
  candidates: ReadonlyArray<MemoryHeader>,
  bodyOf: (memory: MemoryHeader) => string | undefined
): ReadonlyArray<Bm25Document> =>
  candidates.map((m) => ({
    path: m.path,
    name: m.name,
    description: m.description,
    body: bodyOf(m) ?? m.bodyHead ?? ""
  }))

const tokenize = (text: string): Array<string> => segmentWords(text)

/** Indexes `documents` (MiniSearch BM25+ over name, description and body). */
export const makeBm25Index = (documents: ReadonlyArray<Bm25Document>): Bm25Index => {
  const index = new MiniSearch<{ id: string }>({
    fields: ["name", "description", "body"],
    tokenize,
    processTerm: (term) => term
  })
  index.addAll(documents.map((d) => ({ id: d.path, name: d.name, description: d.description, body: d.body })))
  return {
    documents: documents.length,
    search: (query) =>
      index.search(query, { combineWith: "OR" }).map((hit) => ({
        path: String(hit.id),
        score: hit.score,
        match: hit.match
      }))
  }
}

/** The baseline's answer: the best `BM25_TOP` hits whose score reaches `threshold`. */
export const selectWithBm25 = (index: Bm25Index, query: string, threshold: number): ReadonlyArray<string> =>
  keptHits(index.search(query), threshold).map((hit) => hit.path)

const keptHits = (hits: ReadonlyArray<Bm25Hit>, threshold: number): ReadonlyArray<Bm25Hit> =>
  hits.filter((hit) => hit.score >= threshold).slice(0, BM25_TOP)

/** Candidates with a score kept in a trial's explanation (as the offline selector's). */
const EXPLAINED_HITS = 10

const round2 = (x: number) => Math.round(x * 100) / 100

/**
 * The baseline's answer with why, in the shape of an offline trial's explanation (SelectorHarness.trialExplanation),
 * so the evals report shows both the same way: each scored memory's score, matched words (fields) and verdict.
 */
export const explainBm25 = (index: Bm25Index, query: string, threshold: number) => {
  const hits = index.search(query)
  const kept = keptHits(hits, threshold)
  const selected = kept.map((hit) => hit.path)
  const rule = `score ≥ ${threshold}, best ${BM25_TOP}`
  const summary = kept.length > 0 ?
    `kept ${kept.length} of ${hits.length} sharing a word with the request (${rule})` :
    hits.length === 0 ?
    "nothing kept: no memory shares a word with the request" :
    `nothing kept: the best score is ${round2(hits[0]!.score)} (${rule})`
  return {
    selected,
    explain: {
      selector: "BM25 baseline",
      summary,
      queryTerms: [...new Set(segmentWords(query))],
      candidates: hits.slice(0, EXPLAINED_HITS).map((hit, rank) => {
        const isKept = selected.includes(hit.path)
        return {
          path: hit.path,
          score: round2(hit.score),
          verdict: isKept ? "kept" : "cut",
          reason: isKept ?
            `score ${round2(hit.score)} ≥ ${threshold}, rank ${rank + 1}` :
            hit.score < threshold ?
            `score ${round2(hit.score)} < ${threshold}` :
            `rank ${rank + 1}: only the best ${BM25_TOP} are kept`,
          matched: Object.entries(hit.match).map(([term, fields]) => `${term} (${fields.join(", ")})`)
        }
      }),
      more: Math.max(0, hits.length - EXPLAINED_HITS),
      unmatched: index.documents - hits.length
    }
  }
}

/** The baseline's settings as text (what a run stores as the variant's "prompt" and the report diffs). */
export const bm25SettingsText = (threshold: number): string =>
  [
    "library: MiniSearch 7.2, BM25+ (k 1.2, b 0.7, d 0.5)",
    "fields: name, description, whole body (weight 1 each)",
    "words: segmentWords (Intl.Segmenter for unspaced scripts), no stemming, no stopwords, request words OR-ed",
    `selected: the best ${BM25_TOP} with score >= ${threshold}`
  ].join("\n")
