/**
 * Selector: which memories will clearly help with this query (SPEC §6.3).
 *
 * `layer` is the offline selector, the default when no model is configured: no key, no network. It ranks
 * the candidates' headers (name, description, type, path) with BM25F and keeps only those that clear a
 * relevance bar both relative to the best match and in absolute terms, because surfacing nothing is better
 * than surfacing noise. Its quality is measured against a labelled set in `test/Selector.test.ts`
 * (fixtures `selector-memories/` + `selector-labels.json`).
 *
 * What it cannot do, and an LLM selector can: understand intent beyond shared words ("ship on Friday" vs a
 * memory about release days), and negation beyond the explicit "not about X" / "ignore X" phrasing.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { buildCorpus, scoreCorpus } from "./internal/bm25.js"
import type { Bm25Options } from "./internal/bm25.js"
import { analyze, removeExcludedTopics } from "./internal/bm25Text.js"
import type { MemoryHeader } from "./Memory.js"

export const MAX_SELECTED = 5

export interface SelectionRequest {
  readonly query: string
  readonly candidates: ReadonlyArray<MemoryHeader>
  /** Tools the agent used recently: skip their usage docs, keep their warnings/gotchas. */
  readonly recentTools?: ReadonlyArray<string> | undefined
  /** At most this many (never more than MAX_SELECTED). */
  readonly max?: number | undefined
}

export interface Selection {
  /** Relative paths of chosen memories, best first; always a subset of the candidates. */
  readonly selected: ReadonlyArray<string>
  readonly selector: string
  /** Set when a better selector failed and this result is a fallback; says why. */
  readonly degraded?: string | undefined
}

export class Selector extends Context.Tag("@memdir/core/Selector")<Selector, {
  readonly select: (request: SelectionRequest) => Effect.Effect<Selection>
}>() {}

/** The selector name the offline selector reports in `Selection.selector` and telemetry. */
export const OFFLINE_SELECTOR = "offline"

/** A selection can never exceed MAX_SELECTED; a negative or fractional `max` is clamped. */
export const effectiveMax = (max: number | undefined): number =>
  max === undefined || Number.isNaN(max) ? MAX_SELECTED : Math.max(0, Math.min(MAX_SELECTED, Math.floor(max)))

type MemoryField = "name" | "description" | "type" | "path"

export interface OfflineSelectorOptions {
  readonly bm25: Bm25Options<MemoryField>
  /** A memory is kept only if it explains at least this share of the query (0 … 1). */
  readonly minCoverage: number
  /** …and scores at least this fraction of the best candidate's score (0 … 1). */
  readonly relativeToTop: number
  /**
   * A warning/gotcha about a tool the agent is using right now counts as if it matched this share of the
   * query (0 … 1) on top of its own score: the tool in use is context the query text does not repeat.
   */
  readonly recentToolWarningBonus: number
}

/** Measured on the labelled set (see the test); change only with the measurement. */
export const defaultOfflineOptions: OfflineSelectorOptions = {
  bm25: {
    fields: [
      { field: "description", weight: 1.5, b: 0.5 },
      { field: "name", weight: 1, b: 0.3 },
      { field: "path", weight: 0.6, b: 0.3 },
      { field: "type", weight: 0.2, b: 0 }
    ],
    k1: 1.2,
    weakTermWeight: 0.35
  },
  minCoverage: 0.2,
  relativeToTop: 0.7,
  recentToolWarningBonus: 0.25
}

/**
 * Built-in agent tools whose names are ordinary words ("Read", "Edit", "Bash"): memories are never usage
 * docs for them, and matching the word would drop any memory that says "read the runbook".
 */
const GENERIC_AGENT_TOOLS: ReadonlySet<string> = new Set(
  `read write edit multiedit glob grep ls task agent todowrite todoread webfetch websearch notebookedit
  notebookread exitplanmode bash bashoutput killshell skill shell`.split(/\s+/)
)

/**
 * Names a memory would use for a tool: `mcp__github__create_pr` is "github" or "create_pr", `redis-cli` is
 * also "redis"; otherwise the name itself.
 */
export const toolMentionNames = (tool: string): ReadonlyArray<string> => {
  const name = tool.trim().toLowerCase()
  if (name.length === 0 || GENERIC_AGENT_TOOLS.has(name)) return []
  const mcp = /^mcp__(.+?)__(.+)$/.exec(name)
  const names = mcp !== null ? [mcp[1]!, mcp[2]!] : [name]
  const cliOf = /^(.+?)[-_]?cli$/.exec(name)
  if (mcp === null && cliOf !== null) names.push(cliOf[1]!)
  return names.filter((n) => n.length > 1 && !GENERIC_AGENT_TOOLS.has(n))
}

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** Lower-cased header with `_` as a word break (paths are `reference_redis-cli.md`). */
const headerText = (memory: Pick<MemoryHeader, "name" | "description" | "path">): string =>
  `${memory.name} \n ${memory.description} \n ${memory.path}`.toLowerCase().replace(/_/g, " ")

/** One whole-word matcher per tool (`redis-cli`, `gh`, `kubectl`), or undefined for a tool that never matches. */
const toolMatcher = (tool: string): RegExp | undefined => {
  const names = toolMentionNames(tool)
  if (names.length === 0) return undefined
  // Headers are matched with `_` read as a space (see headerText), so tool names are too.
  const alternatives = names.map((name) => escapeRegExp(name.replace(/_/g, " "))).join("|")
  return new RegExp(`(?:^|[^a-z0-9-])(?:${alternatives})(?:$|[^a-z0-9-])`)
}

/** Whether the memory's header names the tool as a whole word (`redis-cli`, `gh`, `kubectl`). */
export const mentionsTool = (memory: Pick<MemoryHeader, "name" | "description" | "path">, tool: string): boolean =>
  toolMatcher(tool)?.test(headerText(memory)) ?? false

const WARNING =
  /\b(?:warn(?:ing|s)?|gotcha|caveat|careful|beware|pitfall|bugs?|known issue|broken|breaks?|fail(?:s|ed|ing|ure)?|flak(?:y|es?)|never|don'?t|do not|must not|mustn'?t|avoid|danger(?:ous)?|wipes?|resets?|corrupt\w*|incident|outage|footgun|trap|doesn'?t work|not work(?:ing)?)\b/i

/** A warning, gotcha, known bug or prohibition: the kind of memory to surface even for a tool in use. */
export const isWarningMemory = (memory: Pick<MemoryHeader, "name" | "description" | "path">): boolean =>
  WARNING.test(`${memory.name} ${memory.description}`)

export interface ScoredMemory {
  readonly path: string
  readonly score: number
  readonly coverage: number
  readonly matched: ReadonlyArray<string>
  /** Usage docs for a tool in `recentTools`: never selected. */
  readonly droppedAsToolDoc: boolean
  /** Whether it clears the relevance bar (before the `max` cut). */
  readonly relevant: boolean
}

/**
 * Pure: every candidate with its score and the decision, best first (ties keep the candidates' order,
 * i.e. newest first). For the benchmark and the evals; `selectRelevantMemories` is the decision.
 */
export const scoreMemories = (
  request: Pick<SelectionRequest, "query" | "candidates" | "recentTools">,
  options: OfflineSelectorOptions = defaultOfflineOptions
): ReadonlyArray<ScoredMemory> => {
  const queryTerms = analyze(removeExcludedTopics(request.query))
  if (queryTerms.length === 0 || request.candidates.length === 0) {
    return request.candidates.map((m) => ({
      path: m.path,
      score: 0,
      coverage: 0,
      matched: [],
      droppedAsToolDoc: false,
      relevant: false
    }))
  }
  const corpus = buildCorpus(
    request.candidates.map((m) => ({
      id: m.path,
      fields: { name: m.name, description: m.description, type: m.type, path: m.path.replace(/\.md$/i, "") }
    })),
    options.bm25
  )
  const toolMatchers = (request.recentTools ?? []).flatMap((tool) => toolMatcher(tool) ?? [])
  const { bestPossible, scores } = scoreCorpus(corpus, queryTerms)
  const scored = scores.map((s, i) => {
    const memory = request.candidates[i]!
    const text = toolMatchers.length === 0 ? "" : headerText(memory)
    const aboutRecentTool = toolMatchers.some((matcher) => matcher.test(text))
    const warning = aboutRecentTool && isWarningMemory(memory)
    const score = s.score + (warning ? options.recentToolWarningBonus * bestPossible : 0)
    return {
      path: s.id,
      score,
      coverage: bestPossible > 0 ? Math.min(1, score / bestPossible) : 0,
      matched: s.matched,
      droppedAsToolDoc: aboutRecentTool && !warning
    }
  })
  const order = scored.map((_, i) => i).sort((a, b) => scored[b]!.score - scored[a]!.score || a - b)
  const eligible = (s: typeof scored[number]) => !s.droppedAsToolDoc && s.score > 0
  const top = order.map((i) => scored[i]!).find(eligible)?.score ?? 0
  return order.map((i) => {
    const s = scored[i]!
    return {
      ...s,
      relevant: eligible(s) && s.coverage >= options.minCoverage && s.score >= options.relativeToTop * top
    }
  })
}

/** Pure: the offline decision, best first, at most `max` (≤ 5), only candidate paths, possibly empty. */
export const selectRelevantMemories = (
  request: SelectionRequest,
  options: OfflineSelectorOptions = defaultOfflineOptions
): ReadonlyArray<string> =>
  scoreMemories(request, options)
    .filter((s) => s.relevant)
    .slice(0, effectiveMax(request.max))
    .map((s) => s.path)

/** The offline selector. Never fails. */
export const make: Effect.Effect<Context.Tag.Service<Selector>> = Effect.sync(() => ({
  select: Effect.fn("Selector.select")(function*(request: SelectionRequest) {
    const selected = selectRelevantMemories(request)
    yield* Effect.annotateCurrentSpan({ selector: OFFLINE_SELECTOR, candidates: request.candidates.length })
    return { selected, selector: OFFLINE_SELECTOR }
  })
}))

export const layer: Layer.Layer<Selector> = Layer.effect(Selector, make)

/** What a scripted selector returns: per exact query text, or computed from the request. */
export type SelectorScript =
  | Readonly<Record<string, ReadonlyArray<string>>>
  | ((request: SelectionRequest) => ReadonlyArray<string>)

/**
 * A scripted selector (selector name "scripted"): returns the given paths for a query, keeping only
 * candidates (as a real selector must) and at most `max`. Unknown queries select nothing.
 */
export const layerTest = (script: SelectorScript): Layer.Layer<Selector> =>
  Layer.succeed(Selector, {
    select: (request: SelectionRequest) =>
      Effect.sync(() => {
        const wanted = typeof script === "function" ? script(request) : script[request.query] ?? []
        const known = new Set(request.candidates.map((m) => m.path))
        const selected = [...new Set(wanted)].filter((p) => known.has(p)).slice(0, effectiveMax(request.max))
        return { selected, selector: "scripted" }
      })
  })
