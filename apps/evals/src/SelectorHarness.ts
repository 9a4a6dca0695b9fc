/**
 * Selector suites: labelled queries over realistic memory directories (one, or several as sub-directories with
 * each query naming its own). The fixture is written to a scratch
 * directory with its ages and read back by the real scanner (so the real frontmatter parser and the real
 * newest-first order), then each variant selects for each query:
 * - `offline`: core's offline selector (multilingual term evidence with a relevance bar) over the whole bodies' terms
 *   (what recall's `TermCache` gives it), with the variant's knobs;
 *   no key, no network;
 * - `bm25`: the textbook baseline memdir is measured against (Bm25Baseline.ts: MiniSearch BM25+ over name,
 *   description and whole body, the best five above the variant's score threshold), on the same candidates;
 *   no key, no network;
 * - `llm`: core's model selector alone (no offline fallback: a model error is an errored trial, not a silent
 *   offline answer), with the variant's system prompt.
 */
import type { BodyTerms } from "@memdir/core/internal/text/selectorIndex"
import type { MemoryHeader } from "@memdir/core/Memory"
import { Model } from "@memdir/core/Model"
import { selectWithModel } from "@memdir/core/ModelSelector"
import { Scanner } from "@memdir/core/Scanner"
import {
  defaultOfflineOptions,
  explainSelection,
  matchedTermText,
  type OfflineSelectorOptions,
  type SelectionExplanation
} from "@memdir/core/Selector"
import { bodyTermsOf } from "@memdir/core/TermCache"
import * as Effect from "effect/Effect"
import * as Path from "effect/Path"
import * as Result from "effect/Result"
import * as NodeFs from "node:fs"
import {
  BM25_DEFAULT_THRESHOLD,
  type Bm25Index,
  bodyOfMemoryFile,
  documentsOf,
  explainBm25,
  makeBm25Index
} from "./Bm25Baseline.js"
import { InvalidSuiteError } from "./Errors.js"
import type { TrialOutcome, TrialSpec } from "./Runner.js"
import { makeSandbox } from "./Sandbox.js"
import { scoreSelection } from "./Scoring.js"
import type { SelectorSuite, SelectorVariant } from "./Suite.js"
import { harnessCatalog, resolveVariant, type SectionSource } from "./Variants.js"

/** Candidates with evidence kept in a trial's output (the report shows why each was kept or cut). */
export const EXPLAINED_CANDIDATES = 10

/** An offline trial's explanation, trimmed for `results.json`: the summary and the best candidates. */
export const trialExplanation = (explanation: SelectionExplanation) => ({
  summary: explanation.summary,
  queryTerms: explanation.queryTerms,
  candidates: explanation.considered.slice(0, EXPLAINED_CANDIDATES).map((c) => ({
    path: c.path,
    score: Math.round(c.score * 100) / 100,
    verdict: c.verdict,
    reason: c.reason,
    matched: c.matched.map(matchedTermText)
  })),
  more: Math.max(0, explanation.considered.length - EXPLAINED_CANDIDATES),
  unmatched: explanation.unmatched
})

/** The offline selector's options with a variant's knobs applied. */
export const offlineOptionsFor = (variant: SelectorVariant): OfflineSelectorOptions => {
  const { threshold: _bm25Only, ...knobs } = variant.options ?? {}
  return {
    ...defaultOfflineOptions,
    ...Object.fromEntries(Object.entries(knobs).filter(([, value]) => value !== undefined))
  }
}

/** The BM25 baseline's score threshold for a variant (default: the one the generalization run chooses). */
export const bm25ThresholdFor = (variant: SelectorVariant): number =>
  variant.options?.threshold ?? BM25_DEFAULT_THRESHOLD

/** Whether running these variants needs a model (or a cassette). */
export const selectorNeedsModel = (variants: ReadonlyArray<SelectorVariant>): boolean =>
  variants.some((v) => v.selector === "llm")

/** The model selector's built-in system prompts (the catalog's section), for the suite's `llm` variants. */
export const selectorPrompts: SectionSource = harnessCatalog["selector"]!

/**
 * Prepares a selector suite (scratch memory dir, one scan) and returns the function that runs one trial.
 * `nowMs` is the suite's pinned "now" (ages of the fixture files).
 */
export const prepareSelectorSuite = Effect.fn("SelectorHarness.prepare")(function*(
  suite: SelectorSuite & { readonly directory: string; readonly file: string }
) {
  const scanner = yield* Scanner
  const path = yield* Path.Path
  const nowMs = Date.parse(suite.now)
  const sandbox = yield* makeSandbox({ suiteDirectory: suite.directory, nowMs, memories: suite.memories })
  const scan = yield* scanner.scan(sandbox.memoryDir)
  // A file without a readable header is still a candidate (by its name and first lines), as in a real recall;
  // any other problem is a broken fixture.
  const headerless = scan.headerless ?? []
  const offered = new Set(headerless.map((m) => m.path))
  const broken = scan.problems.filter((p) => !offered.has(p.path))
  if (broken.length > 0) {
    return yield* new InvalidSuiteError({
      file: path.join(suite.directory, suite.memories.dir ?? "suite"),
      problems: broken.map((p) => ({ path: p.path, message: `${p.code}: ${p.message}` }))
    })
  }
  const everything = [...scan.memories, ...headerless]
  /** The candidates of a scenario: its directory's files, with paths relative to that directory. */
  const byDir = new Map<string, ReadonlyArray<MemoryHeader>>()
  const candidatesIn = (dir: string | undefined): ReadonlyArray<MemoryHeader> => {
    if (dir === undefined) return everything
    let inDir = byDir.get(dir)
    if (inDir === undefined) {
      const prefix = dir.replace(/\/+$/, "") + "/"
      inDir = everything.filter((m) => m.path.startsWith(prefix)).map((m) => ({
        ...m,
        path: m.path.slice(prefix.length)
      }))
      byDir.set(dir, inDir)
    }
    return inDir
  }
  /** The whole bodies' terms of a directory's candidates, as recall's `TermCache` gives them to the selector. */
  const bodiesByDir = new Map<string, ReadonlyMap<string, BodyTerms>>()
  const bodiesIn = (dir: string | undefined): ReadonlyMap<string, BodyTerms> => {
    const key = dir ?? ""
    let bodies = bodiesByDir.get(key)
    if (bodies === undefined) {
      bodies = new Map(
        candidatesIn(dir).map((m) =>
          [m.path, bodyTermsOf(NodeFs.readFileSync(m.absolutePath, "utf8"), m.path)] as const
        )
      )
      bodiesByDir.set(key, bodies)
    }
    return bodies
  }
  /** The BM25 baseline's index of a directory's candidates, over their whole bodies (built once, on first use). */
  const bm25ByDir = new Map<string, Bm25Index>()
  const bm25In = (dir: string | undefined): Bm25Index => {
    const key = dir ?? ""
    let index = bm25ByDir.get(key)
    if (index === undefined) {
      index = makeBm25Index(
        documentsOf(candidatesIn(dir), (m) => bodyOfMemoryFile(NodeFs.readFileSync(m.absolutePath, "utf8"), m.path))
      )
      bm25ByDir.set(key, index)
    }
    return index
  }
  const scenarios = new Map(suite.scenarios.map((s) => [s.id, s]))
  const variants = new Map(suite.variants.map((v) => [v.name, v]))
  const systemPrompts = new Map<string, string>()
  for (const variant of suite.variants) {
    if (variant.selector !== "llm") continue
    const prompt = variant.prompt ?? selectorPrompts.section.default
    const resolved = resolveVariant(selectorPrompts, typeof prompt === "string" ? { builtin: prompt } : prompt)
    // checked when the suite was loaded
    if (Result.isSuccess(resolved)) systemPrompts.set(variant.name, resolved.success)
  }

  return (spec: TrialSpec): Effect.Effect<TrialOutcome, never, Model> =>
    Effect.gen(function*() {
      const scenario = scenarios.get(spec.scenario)!
      const variant = variants.get(spec.variant)!
      const request = {
        query: scenario.query,
        candidates: candidatesIn(scenario.dir),
        recentTools: scenario.recentTools
      }
      if (variant.selector === "offline") {
        // The explanation's `selected` is the offline selection itself (core's `selectRelevantMemories`).
        const explanation = explainSelection(
          { ...request, bodies: bodiesIn(scenario.dir) },
          offlineOptionsFor(variant)
        )
        const selected = explanation.selected
        const score = scoreSelection(suite.scorer, "selection", scenario, selected)
        return { scores: [score], output: { selected, explain: trialExplanation(explanation) } }
      }
      if (variant.selector === "bm25") {
        // The request alone, as the generalization run asks it (the baseline knows nothing of recent tools).
        const { explain, selected } = explainBm25(bm25In(scenario.dir), scenario.query, bm25ThresholdFor(variant))
        const score = scoreSelection(suite.scorer, "selection", scenario, selected)
        return { scores: [score], output: { selected, explain } }
      }
      // The model alone, without core's offline fallback: a model error is an errored trial, not an offline answer.
      const model = yield* Model
      const answer = yield* selectWithModel(model, request, systemPrompts.get(variant.name)!).pipe(Effect.result)
      if (Result.isFailure(answer)) return { scores: [], error: answer.failure.message }
      const score = scoreSelection(suite.scorer, "selection", scenario, answer.success.selected)
      return { scores: [score], output: { selected: answer.success.selected } }
    })
})
