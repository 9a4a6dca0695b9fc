import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as path from "node:path"
import { analyzeWords, detectLanguage, segmentWords } from "../src/internal/text/analysis.js"
import { type FieldWeight, indexCandidates, type MemoryField } from "../src/internal/text/selectorIndex.js"
import type { MemoryHeader } from "../src/Memory.js"
import * as ScannerModule from "../src/Scanner.js"
import { defaultOfflineOptions } from "../src/Selector.js"
import { SELECTOR_SET } from "./support/selectorSet.js"

/** Every memory of the labelled set (five languages, headerless files too), read by the real scanner. */
const loadSet = Effect.gen(function*() {
  const scanner = yield* ScannerModule.Scanner
  const memories: Array<MemoryHeader> = []
  for (const dir of fs.readdirSync(SELECTOR_SET).sort()) {
    if (!fs.statSync(path.join(SELECTOR_SET, dir)).isDirectory()) continue
    const result = yield* scanner.scan(path.join(SELECTOR_SET, dir))
    memories.push(...result.memories, ...(result.headerless ?? []))
  }
  return memories
}).pipe(Effect.provide(ScannerModule.layerNode.pipe(Layer.provide(NodeServices.layer))))

const FIELD_TEXT: Record<MemoryField, (m: MemoryHeader) => string> = {
  name: (m) => m.name,
  description: (m) => m.description,
  path: (m) => m.path.replace(/\.md$/i, "").replace(/[_/-]+/g, " "),
  body: (m) => m.bodyHead ?? "",
  type: (m) => (m.type === "untyped" ? "" : m.type)
}

/**
 * The postings the general path gives: each field analysed into its word and gram arrays (`analyzeWords`), the
 * language of the words of name, description and body together, and per memory a term → weighted frequency map.
 */
const referencePostings = (memories: ReadonlyArray<MemoryHeader>, weights: ReadonlyArray<FieldWeight>) => {
  const analysed = memories.map((m) => {
    const tokens = weights.map((w) => segmentWords(FIELD_TEXT[w.field](m)))
    const own = weights.flatMap((w, f) => (["name", "description", "body"].includes(w.field) ? tokens[f]! : []))
    const language = detectLanguage(own)
    return tokens.map((t) => analyzeWords(t, language))
  })
  const averages = weights.map((_, f) =>
    Math.max(1, analysed.reduce((total, fields) => total + fields[f]!.words.length, 0) / Math.max(1, memories.length))
  )
  const postings = new Map<string, Array<readonly [number, number]>>()
  analysed.forEach((fields, doc) => {
    const weighted = new Map<string, number>()
    weights.forEach(({ b, maxLengthRatio, weight }, f) => {
      // a field's length counts at most `maxLengthRatio` times the average
      const norm = 1 - b + b * Math.min(fields[f]!.words.length / averages[f]!, maxLengthRatio ?? Infinity)
      const tf = new Map<string, number>()
      for (const term of [...fields[f]!.words, ...fields[f]!.grams.flat()]) tf.set(term, (tf.get(term) ?? 0) + 1)
      for (const [term, n] of tf) weighted.set(term, (weighted.get(term) ?? 0) + (weight * n) / norm)
    })
    for (const [term, value] of weighted) postings.set(term, [...(postings.get(term) ?? []), [doc, value]])
  })
  return postings
}

describe("selector index", () => {
  it.effect("holds the postings of the general analysis, term for term, in every language of the set", () =>
    Effect.gen(function*() {
      const memories = yield* loadSet
      assert.isAbove(memories.length, 50)
      // New objects and a field order of its own, so no cached index or analysis of another test is reused.
      const candidates = memories.map((m) => ({ ...m, path: `index-test/${m.path}` }))
      const weights = [...defaultOfflineOptions.fields].reverse()
      const index = indexCandidates(candidates, weights)
      const expected = referencePostings(candidates, weights)
      assert.strictEqual(index.postings.size, expected.size)
      for (const [term, list] of expected) {
        const actual = index.postings.get(term)
        assert.isDefined(actual, term)
        assert.deepStrictEqual(actual!.docs, list.map(([doc]) => doc), term)
        list.forEach(([, value], i) => assert.closeTo(actual!.weighted[i]!, value, 1e-12, term))
      }
    }))
})
