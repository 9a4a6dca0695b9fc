/**
 * BM25F over a handful of short fields (name, description, type, path): the ranking core of the offline
 * selector. Pure; the corpus is the candidate set of one recall, so IDF adapts to the user's own memories.
 */
import { analyze, WEAK_STEMS } from "./bm25Text.js"

export interface Bm25Field<F extends string> {
  readonly field: F
  /** How much a match in this field counts (description is where recall decides). */
  readonly weight: number
  /** Length normalisation, 0 (none) … 1 (full). */
  readonly b: number
}

export interface Bm25Options<F extends string> {
  readonly fields: ReadonlyArray<Bm25Field<F>>
  /** Term-frequency saturation. */
  readonly k1: number
  /** Weight of a weak query word ("fix", "add", "file"…) relative to an ordinary one. */
  readonly weakTermWeight: number
}

export interface Bm25Document<F extends string> {
  readonly id: string
  readonly fields: Readonly<Record<F, string>>
}

export interface Bm25Score {
  readonly id: string
  /** Raw BM25F score (depends on the corpus: compare within one query only). */
  readonly score: number
  /**
   * Share of the query explained by this document, 0 … 1: the score divided by the best score any document
   * could reach for these query terms (each term saturated, unseen terms at the highest IDF). Comparable
   * across corpora of different sizes, unlike the raw score.
   */
  readonly coverage: number
  /** Query stems this document matched. */
  readonly matched: ReadonlyArray<string>
}

interface AnalyzedDocument {
  readonly id: string
  readonly termFrequencies: ReadonlyArray<ReadonlyMap<string, number>>
  readonly lengths: ReadonlyArray<number>
}

export interface Bm25Corpus<F extends string> {
  readonly size: number
  readonly documents: ReadonlyArray<AnalyzedDocument>
  readonly averageLengths: ReadonlyArray<number>
  readonly documentFrequency: ReadonlyMap<string, number>
  readonly options: Bm25Options<F>
}

export const buildCorpus = <F extends string>(
  documents: ReadonlyArray<Bm25Document<F>>,
  options: Bm25Options<F>
): Bm25Corpus<F> => {
  const analyzed = documents.map((doc): AnalyzedDocument => {
    const termFrequencies = options.fields.map(({ field }) => {
      const counts = new Map<string, number>()
      for (const term of analyze(doc.fields[field])) counts.set(term, (counts.get(term) ?? 0) + 1)
      return counts
    })
    const lengths = termFrequencies.map((tf) => {
      let n = 0
      for (const count of tf.values()) n += count
      return n
    })
    return { id: doc.id, termFrequencies, lengths }
  })
  const documentFrequency = new Map<string, number>()
  for (const doc of analyzed) {
    const seen = new Set<string>()
    for (const tf of doc.termFrequencies) for (const term of tf.keys()) seen.add(term)
    for (const term of seen) documentFrequency.set(term, (documentFrequency.get(term) ?? 0) + 1)
  }
  const averageLengths = options.fields.map((_, f) => {
    if (analyzed.length === 0) return 1
    let total = 0
    for (const doc of analyzed) total += doc.lengths[f]!
    return Math.max(1, total / analyzed.length)
  })
  return { size: analyzed.length, documents: analyzed, averageLengths, documentFrequency, options }
}

/** Robertson–Spärck Jones IDF with the +1 that keeps it positive for terms in most documents. */
export const inverseDocumentFrequency = (size: number, documentFrequency: number): number =>
  Math.log(1 + (size - documentFrequency + 0.5) / (documentFrequency + 0.5))

export interface Bm25Scores {
  /** The most any document could score for this query: every term matched to saturation. */
  readonly bestPossible: number
  /** One per document, in document order. */
  readonly scores: ReadonlyArray<Bm25Score>
}

/** Scores every document for the query terms (already analysed, duplicates ignored). */
export const scoreCorpus = <F extends string>(
  corpus: Bm25Corpus<F>,
  queryTerms: ReadonlyArray<string>
): Bm25Scores => {
  const { fields, k1, weakTermWeight } = corpus.options
  const terms = [...new Set(queryTerms)]
  const termWeights = terms.map((term) => {
    const idf = inverseDocumentFrequency(corpus.size, corpus.documentFrequency.get(term) ?? 0)
    return idf * (WEAK_STEMS.has(term) ? weakTermWeight : 1)
  })
  // The most any document could score: every term matched to saturation (wtf/(k1+wtf) → 1).
  let bestPossible = 0
  for (const w of termWeights) bestPossible += w
  const scores = corpus.documents.map((doc): Bm25Score => {
    let score = 0
    const matched: Array<string> = []
    terms.forEach((term, t) => {
      let weightedTf = 0
      fields.forEach(({ b, weight }, f) => {
        const tf = doc.termFrequencies[f]!.get(term) ?? 0
        if (tf === 0) return
        const norm = 1 - b + b * (doc.lengths[f]! / corpus.averageLengths[f]!)
        weightedTf += (weight * tf) / norm
      })
      if (weightedTf === 0) return
      matched.push(term)
      score += termWeights[t]! * (weightedTf / (k1 + weightedTf))
    })
    return { id: doc.id, score, coverage: bestPossible > 0 ? score / bestPossible : 0, matched }
  })
  return { bestPossible, scores }
}
