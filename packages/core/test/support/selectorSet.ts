/**
 * The labelled selection set in `fixtures/selector-set/`: natural requests over ten memory directories in five
 * languages, split into a tuning half and a held-out half by a hash of the query id (fixed before any tuning).
 * Shared by the selector's quality test and the benchmark.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import type { MemoryHeader } from "../../src/Memory.js"

export const SELECTOR_SET = path.join(import.meta.dirname, "..", "fixtures", "selector-set")

export interface SetLabel {
  readonly id: string
  /** Sub-directory of the set holding this query's memories. */
  readonly dir: string
  readonly language: string
  /** paraphrase | negation | trap | none */
  readonly kind: string
  readonly query: string
  readonly relevant: ReadonlyArray<string>
  readonly acceptable: ReadonlyArray<string>
}

export const setLabels: ReadonlyArray<SetLabel> =
  JSON.parse(fs.readFileSync(path.join(SELECTOR_SET, "labels.json"), "utf8")).queries

export type Half = "tuning" | "held-out"

/** FNV-1a over the id: a split nobody chose query by query, stable across runs and machines. */
export const halfOf = (id: string): Half => {
  let hash = 0x811c9dc5
  for (let i = 0; i < id.length; i++) {
    hash ^= id.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193) >>> 0
  }
  return hash % 2 === 0 ? "tuning" : "held-out"
}

export interface Metrics {
  readonly queries: number
  /** Selected memories that are relevant or acceptable / all selected (1 when nothing was selected). */
  readonly precision: number
  /** Relevant memories selected / all relevant. */
  readonly recall: number
  readonly f1: number
  /** Share of nothing-relevant queries that got an empty selection. */
  readonly emptyWhenNothingRelevant: number
  readonly selected: number
}

export const measure = (
  labels: ReadonlyArray<SetLabel>,
  select: (label: SetLabel) => ReadonlyArray<string>
): Metrics => {
  let selected = 0, correct = 0, relevant = 0, found = 0, nothingRelevant = 0, empty = 0
  for (const label of labels) {
    const chosen = select(label)
    const ok = new Set([...label.relevant, ...label.acceptable])
    selected += chosen.length
    correct += chosen.filter((p) => ok.has(p)).length
    relevant += label.relevant.length
    found += chosen.filter((p) => label.relevant.includes(p)).length
    if (label.relevant.length === 0) {
      nothingRelevant++
      if (chosen.length === 0) empty++
    }
  }
  const precision = selected === 0 ? 1 : correct / selected
  const recall = relevant === 0 ? 1 : found / relevant
  return {
    queries: labels.length,
    precision,
    recall,
    f1: precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall),
    emptyWhenNothingRelevant: nothingRelevant === 0 ? 1 : empty / nothingRelevant,
    selected
  }
}

export const formatMetrics = (name: string, m: Metrics): string =>
  `${name.padEnd(22)} n ${String(m.queries).padStart(3)}  recall ${m.recall.toFixed(3)}  precision ${
    m.precision.toFixed(3)
  }  F1 ${m.f1.toFixed(3)}  empty-when-nothing-relevant ${m.emptyWhenNothingRelevant.toFixed(3)}`

/** Every row of the report: each half overall, then per language. */
export const report = (
  candidatesOf: (dir: string) => ReadonlyArray<MemoryHeader>,
  select: (query: string, candidates: ReadonlyArray<MemoryHeader>) => ReadonlyArray<string>,
  labels: ReadonlyArray<SetLabel> = setLabels
): Map<string, Metrics> => {
  const rows = new Map<string, Metrics>()
  const run = (label: SetLabel) => select(label.query, candidatesOf(label.dir))
  for (const half of ["tuning", "held-out"] as const) {
    const inHalf = labels.filter((l) => halfOf(l.id) === half)
    rows.set(half, measure(inHalf, run))
    for (const language of [...new Set(labels.map((l) => l.language))].sort()) {
      rows.set(`${half} ${language}`, measure(inHalf.filter((l) => l.language === language), run))
    }
  }
  return rows
}

/** Off-topic queries (nothing relevant, nothing acceptable) that got at least one selection, per directory. */
export const offTopicSelections = (
  candidatesOf: (dir: string) => ReadonlyArray<MemoryHeader>,
  select: (query: string, candidates: ReadonlyArray<MemoryHeader>) => ReadonlyArray<string>,
  labels: ReadonlyArray<SetLabel>
): Map<string, number> => {
  const counts = new Map<string, number>()
  for (const label of labels) {
    if (label.relevant.length > 0 || label.acceptable.length > 0) continue
    const chosen = select(label.query, candidatesOf(label.dir))
    counts.set(label.dir, (counts.get(label.dir) ?? 0) + chosen.length)
  }
  return counts
}
