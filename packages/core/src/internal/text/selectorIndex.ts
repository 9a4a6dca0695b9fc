/**
 * The offline selector's index: each memory analysed once (name, description, path, type and the head of its body
 * that the scan already read), kept while its mtime and header are unchanged, and per candidate set an inverted
 * index with the field-weighted, length-normalised term frequencies, so scoring a query touches only the memories
 * that share a term with it. Pure apart from the two bounded caches.
 */
import type { MemoryHeader } from "../../Memory.js"
import { analyzeWords, countTerms, detectLanguageOfTallies, isAscii, segmentWords, tallyWords } from "./analysis.js"
import type { Language } from "./language.js"

export type MemoryField = "name" | "description" | "path" | "body" | "type"

export interface FieldWeight {
  readonly field: MemoryField
  /** How much a match in this field counts. */
  readonly weight: number
  /** Length normalisation, 0 (none) … 1 (full). */
  readonly b: number
  /**
   * The most a field's length counts against it, as a multiple of the average length (default: no limit): a long
   * memory among short ones stays findable by a rare word its body names, instead of being diluted to nothing.
   */
  readonly maxLengthRatio?: number | undefined
}

/** The analysed terms of a memory's whole body (`analyzeBody`; cached across processes by `TermCache`). */
export interface BodyTerms {
  /** How often each term and each gram occurs. */
  readonly counts: ReadonlyMap<string, number>
  /** How many terms (grams not counted). */
  readonly words: number
  /** The body's language: the memory's, for stemming its name and description alike. */
  readonly language: Language
  /**
   * The header's fields analysed in the body's language (`headerTermsOf`), kept with the body's terms so a recall
   * in a fresh process analyses no unchanged memory at all; used only for the header they were made from.
   */
  readonly header?: HeaderTerms | undefined
  /**
   * Where in the body a term occurs: the `BLOCK_WORDS`-word blocks holding it, ascending (a term and its grams
   * alike; none for a term it does not hold). Absent for a body of at most two blocks, which the selector reads as
   * one passage whole. Asked term by term: the term cache keeps them for every memory, the selector asks a few
   * memories for a few terms (`proximityWeight`).
   */
  readonly blocks?: ((term: string) => ReadonlyArray<number>) | undefined
}

/** Term counts of a header's short fields, in the body's language: name, description, path, type. */
export interface HeaderTerms {
  /** `headerKey` of the header they were made from. */
  readonly key: string
  readonly fields: ReadonlyArray<{ readonly counts: ReadonlyMap<string, number>; readonly words: number }>
}

/**
 * What the index needs of a memory header (the body head is optional: in-memory headers may lack it). With
 * `bodyTerms`, the body field is the whole body's terms instead of the head's.
 */
export type IndexableMemory = Pick<MemoryHeader, "path" | "name" | "description" | "type" | "mtime"> & {
  readonly absolutePath?: string | undefined
  readonly bodyHead?: string | undefined
  readonly bodyTerms?: BodyTerms | undefined
}

/**
 * A body's words are read in blocks of this many terms; a passage is two neighbouring blocks (20 to 40 words: a
 * paragraph, a list of a few items), where the request's words found together are one thing the body says.
 */
export const BLOCK_WORDS = 20

/** A term's blocks where it occurs nowhere. */
export const NO_BLOCKS: ReadonlyArray<number> = []

/** Each term's blocks (`BodyTerms.blocks`) in a body of more than two blocks, none otherwise. */
const blocksOf = (tokens: ReadonlyArray<string>, language: Language, words: number) => {
  if (words <= 2 * BLOCK_WORDS) return undefined
  const analyzed = analyzeWords(tokens, language)
  const blocks = new Map<string, Array<number>>()
  const note = (term: string, block: number): void => {
    const list = blocks.get(term)
    if (list === undefined) blocks.set(term, [block])
    else if (list[list.length - 1] !== block) list.push(block)
  }
  for (let i = 0; i < analyzed.words.length; i++) {
    const block = Math.floor(i / BLOCK_WORDS)
    note(analyzed.words[i]!, block)
    const grams = analyzed.grams[i]!
    for (let g = 0; g < grams.length; g++) note(grams[g]!, block)
  }
  return (term: string): ReadonlyArray<number> => blocks.get(term) ?? NO_BLOCKS
}

/** The terms of a whole body, in the body's own language, and where they occur (what `TermCache` keeps). */
export const analyzeBody = (body: string): BodyTerms => {
  const tokens = segmentWords(body)
  const tally = tallyWords(tokens)
  const language = detectLanguageOfTallies([tally], [isAscii(body)])
  const counted = countTerms(tokens, tally, language)
  const blocks = blocksOf(tokens, language, counted.words)
  return { counts: counted.counts, words: counted.words, language, ...(blocks === undefined ? {} : { blocks }) }
}

export interface IndexedMemory {
  readonly source: IndexableMemory
  readonly language: Language
  /** Term counts per field (words and bigrams together), in MemoryField order of `FIELDS`. */
  readonly fields: ReadonlyArray<ReadonlyMap<string, number>>
  readonly lengths: ReadonlyArray<number>
}

const FIELDS: ReadonlyArray<MemoryField> = ["name", "description", "path", "body", "type"]

/** The fields of an analysed memory that hold any of `terms` (for an explanation of a score), in `FIELDS` order. */
export const fieldsHolding = (memory: IndexedMemory, terms: ReadonlyArray<string>): ReadonlyArray<MemoryField> =>
  FIELDS.filter((_, slot) => terms.some((term) => memory.fields[slot]!.has(term)))

const fieldText = (memory: IndexableMemory, field: MemoryField): string => {
  switch (field) {
    case "name":
      return memory.name
    case "description":
      return memory.description
    case "path":
      return memory.path.replace(/\.md$/i, "").replace(/[_/-]+/g, " ")
    case "body":
      return memory.bodyHead ?? ""
    case "type":
      return memory.type === "untyped" ? "" : memory.type
  }
}

const analyzeMemory = (memory: IndexableMemory): IndexedMemory => {
  if (memory.bodyTerms !== undefined) return analyzeWithBody(memory, memory.bodyTerms)
  const texts = FIELDS.map((field) => fieldText(memory, field))
  const tokens = texts.map(segmentWords)
  const tallies = tokens.map(tallyWords)
  // One language per memory, guessed from its name, description and body, so a short name is stemmed like its body.
  const language = detectLanguageOfTallies(
    [tallies[0]!, tallies[1]!, tallies[3]!],
    [isAscii(texts[0]!), isAscii(texts[1]!), isAscii(texts[3]!)]
  )
  const counted: Array<{ readonly counts: ReadonlyMap<string, number>; readonly words: number }> = tokens.map((
    words,
    f
  ) =>
    FIELDS[f] === "body" && memory.bodyTerms !== undefined ? memory.bodyTerms : countTerms(words, tallies[f]!, language)
  )
  // Length in words: grams are stand-ins, not more text.
  return { source: memory, language, fields: counted.map((c) => c.counts), lengths: counted.map((c) => c.words) }
}

const HEADER_FIELDS: ReadonlyArray<MemoryField> = ["name", "description", "path", "type"]

/** FNV-1a of the fields a header's terms come from: which header `HeaderTerms` were made from. */
export const headerKey = (memory: Pick<IndexableMemory, "name" | "description" | "path" | "type">): string => {
  const text = `${memory.type}\u0000${memory.path}\u0000${memory.name}\u0000${memory.description}`
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193) >>> 0
  }
  return `${text.length.toString(36)}.${hash.toString(36)}`
}

/** The header's short fields analysed in `language` (the body's), as the index reads them beside a whole body. */
export const headerTermsOf = (memory: IndexableMemory, language: Language): HeaderTerms => ({
  key: headerKey(memory),
  fields: HEADER_FIELDS.map((field) => {
    const tokens = segmentWords(fieldText(memory, field))
    return countTerms(tokens, tallyWords(tokens), language)
  })
})

/**
 * With the whole body already analysed (`TermCache`): only the short fields are, in the body's language, unless
 * the cache kept them for this very header.
 */
const analyzeWithBody = (memory: IndexableMemory, body: BodyTerms): IndexedMemory => {
  const language = body.language
  const header = body.header !== undefined && body.header.key === headerKey(memory) ?
    body.header :
    headerTermsOf(memory, language)
  const counted = FIELDS.map((field) => field === "body" ? body : header.fields[HEADER_FIELDS.indexOf(field)]!)
  return { source: memory, language, fields: counted.map((c) => c.counts), lengths: counted.map((c) => c.words) }
}

/**
 * Same file, same version: a changed mtime or header text is a new version. The body head changes only with the
 * file, so with a real mtime only its length is compared, not its text (the costly part of checking 10k
 * candidates); headers without one (mtime 0, built in memory) are compared whole.
 */
const sameVersion = (a: IndexableMemory, b: IndexableMemory): boolean =>
  a === b ||
  (a.bodyTerms === b.bodyTerms && a.mtime === b.mtime && a.path === b.path && a.absolutePath === b.absolutePath &&
    a.name === b.name &&
    a.description === b.description && a.type === b.type &&
    (a.mtime > 0
      ? (a.bodyHead?.length ?? 0) === (b.bodyHead?.length ?? 0)
      : (a.bodyHead ?? "") === (b.bodyHead ?? "")))

const MEMORY_CACHE_LIMIT = 100_000
const memoryCache = new Map<string, IndexedMemory>()

export const indexMemory = (memory: IndexableMemory): IndexedMemory => {
  const key = memory.absolutePath ?? memory.path
  const cached = memoryCache.get(key)
  if (cached !== undefined && sameVersion(cached.source, memory)) return cached
  if (memoryCache.size >= MEMORY_CACHE_LIMIT) memoryCache.clear()
  const indexed = analyzeMemory(memory)
  memoryCache.set(key, indexed)
  return indexed
}

export interface Postings {
  /** Candidate positions holding the term. */
  readonly docs: Array<number>
  /** Field-weighted, length-normalised term frequency in each of those candidates. */
  readonly weighted: Array<number>
  /** The part of `weighted` from the header's fields (name, description, path, type): the body's left out. */
  readonly header: Array<number>
}

export interface CandidateIndex {
  readonly memories: ReadonlyArray<IndexedMemory>
  readonly postings: ReadonlyMap<string, Postings>
  readonly fieldWeights: ReadonlyArray<FieldWeight>
  /** Whether any term is Chinese or Japanese (a translation into those scripts can match only then). */
  readonly cjk: boolean
}

/** Whether a term (or gram) starts with a Chinese or Japanese character: kana or CJK ideographs. */
const isCjkTerm = (term: string): boolean => {
  const first = term.charCodeAt(term.charCodeAt(0) === 1 ? 1 : 0)
  return (first >= 0x3040 && first <= 0x30ff) || (first >= 0x3400 && first <= 0x9fff)
}

const buildIndex = (memories: ReadonlyArray<IndexedMemory>, fieldWeights: ReadonlyArray<FieldWeight>) => {
  const slots = fieldWeights.map((w) => FIELDS.indexOf(w.field))
  const averages = slots.map((slot) => {
    let total = 0
    for (const m of memories) total += m.lengths[slot]!
    return Math.max(1, total / Math.max(1, memories.length))
  })
  const postings = new Map<string, Postings>()
  let cjk = false
  // Indexed loops and `Map.forEach`, not `for…of` with destructuring: a first run is interpreted, where the
  // iterator protocol costs more than the work.
  for (let doc = 0; doc < memories.length; doc++) {
    const memory = memories[doc]!
    for (let f = 0; f < fieldWeights.length; f++) {
      const { b, maxLengthRatio, weight } = fieldWeights[f]!
      const slot = slots[f]!
      const norm = 1 - b + b * Math.min(memory.lengths[slot]! / averages[f]!, maxLengthRatio ?? Infinity)
      const inHeader = FIELDS[slot] !== "body"
      memory.fields[slot]!.forEach((tf, term) => {
        const value = (weight * tf) / norm
        const list = postings.get(term)
        if (list === undefined) {
          postings.set(term, { docs: [doc], weighted: [value], header: [inHeader ? value : 0] })
          if (!cjk) cjk = isCjkTerm(term)
          return
        }
        // A term of several fields: their weighted frequencies summed in field order (this doc is the last one).
        const last = list.docs.length - 1
        if (list.docs[last] === doc) {
          list.weighted[last] += value
          if (inHeader) list.header[last] += value
        } else {
          list.docs.push(doc)
          list.weighted.push(value)
          list.header.push(inHeader ? value : 0)
        }
      })
    }
  }
  return { memories, postings, fieldWeights, cjk }
}

// A few candidate sets (one per memory directory and scope) stay indexed between recalls.
const INDEX_CACHE_LIMIT = 8
const indexCache: Array<CandidateIndex> = []
const byList = new WeakMap<ReadonlyArray<IndexableMemory>, CandidateIndex>()

/**
 * The index of this candidate set: reused while every candidate is the same version of the same memory, in the
 * same order (so a changed mtime, an added or a removed file builds a new one).
 */
export const indexCandidates = (
  candidates: ReadonlyArray<IndexableMemory>,
  fieldWeights: ReadonlyArray<FieldWeight>
): CandidateIndex => {
  // The very same (read-only) candidate list as last time: nothing to check.
  const known = byList.get(candidates)
  if (known !== undefined && known.fieldWeights === fieldWeights) return known
  // A new scan of an unchanged directory: the same versions in the same order (no lookups, no allocation).
  for (let i = 0; i < indexCache.length; i++) {
    const index = indexCache[i]!
    if (index.fieldWeights !== fieldWeights || index.memories.length !== candidates.length) continue
    let same = true
    for (let j = 0; j < candidates.length && same; j++) same = sameVersion(index.memories[j]!.source, candidates[j]!)
    if (!same) continue
    byList.set(candidates, index)
    return index
  }
  const memories = candidates.map(indexMemory)
  for (let i = 0; i < indexCache.length; i++) {
    const index = indexCache[i]!
    if (index.fieldWeights !== fieldWeights || index.memories.length !== memories.length) continue
    let same = true
    for (let j = 0; j < memories.length && same; j++) same = index.memories[j] === memories[j]
    if (!same) continue
    if (i > 0) {
      indexCache.splice(i, 1)
      indexCache.unshift(index)
    }
    byList.set(candidates, index)
    return index
  }
  const index = buildIndex(memories, fieldWeights)
  indexCache.unshift(index)
  if (indexCache.length > INDEX_CACHE_LIMIT) indexCache.pop()
  byList.set(candidates, index)
  return index
}
