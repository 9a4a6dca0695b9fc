/**
 * Deterministic scorers: pure functions of what a run left behind (the transcript's tool calls, the final answer,
 * the memory directory before and after). The model-graded rubric lives in `Grader.ts` and is marked as such.
 */
import { parseIndexLine } from "@memdir/core/Memory"
import { INDEX_FILE } from "@memdir/core/MemoryIndex"
import type { ScoreResult } from "./Results.js"
import { type Scorer, scorerIds, type SelectionScorer, type SelectorScenario } from "./Suite.js"

/** One tool call as the transcript records it. */
export interface RunToolCall {
  /** 1-based model turn that asked for it. */
  readonly turn: number
  readonly name: string
  readonly input: unknown
  readonly isError: boolean
  /** What the tool answered (a search's hits name the files it looked in). */
  readonly content?: string | undefined
}

/** What a model run left behind, as scorers see it. */
export interface RunOutcome {
  readonly finalText: string
  readonly toolCalls: ReadonlyArray<RunToolCall>
  /** Model turns; the final answer is the last one. */
  readonly turns: number
  /** `end_turn`, `max-turns`… */
  readonly stop: string
  /** Memory directory contents (relative path → text) before and after the run, MEMORY.md included. */
  readonly memoryBefore: ReadonlyMap<string, string>
  readonly memoryAfter: ReadonlyMap<string, string>
}

export interface ScoreOutput {
  readonly result: ScoreResult
  readonly metrics: Readonly<Record<string, number>>
}

const regex = (pattern: string) => new RegExp(pattern, "iu")

/** Memory files (not MEMORY.md) created or changed by the run. */
export const changedMemories = (outcome: RunOutcome): ReadonlyArray<string> =>
  [...outcome.memoryAfter.keys()].filter((p) =>
    p !== INDEX_FILE && !p.endsWith(`/${INDEX_FILE}`) && outcome.memoryBefore.get(p) !== outcome.memoryAfter.get(p)
  ).sort()

const memoryFiles = (files: ReadonlyMap<string, string>): ReadonlyArray<string> =>
  [...files.keys()].filter((p) => p !== INDEX_FILE && !p.endsWith(`/${INDEX_FILE}`)).sort()

const textsOf = (outcome: RunOutcome, which: "changed" | "all"): ReadonlyArray<[string, string]> =>
  (which === "changed" ? changedMemories(outcome) : memoryFiles(outcome.memoryAfter))
    .map((p) => [p, outcome.memoryAfter.get(p) ?? ""])

/** Whether a tool input names `path` (any string in it contains it, ignoring case: `src/db/pool.ts:14` does). */
export const inputMentionsPath = (input: unknown, path: string): boolean => {
  const wanted = path.replace(/^\.\//, "")
  const strings: Array<string> = []
  const walk = (value: unknown): void => {
    if (typeof value === "string") strings.push(value)
    else if (Array.isArray(value)) value.forEach(walk)
    else if (typeof value === "object" && value !== null) Object.values(value).forEach(walk)
  }
  walk(input)
  return strings.some((s) => s.toLowerCase().includes(wanted.toLowerCase()))
}

/** A search tool (grep-like) whose hits include the file looked in it, even when given a directory. */
const searchHit = (call: RunToolCall, path: string): boolean =>
  /grep|search/i.test(call.name) && !call.isError &&
  (call.content ?? "").toLowerCase().includes(path.replace(/^\.\//, "").toLowerCase())

/** The call looked at `path`: named it, or searched and hit it. */
export const callLooksAt = (call: RunToolCall, path: string): boolean =>
  inputMentionsPath(call.input, path) || searchHit(call, path)

/** Prose without fenced code (a `?` in a regex or a URL is not a question). */
const prose = (text: string): string => text.replace(/```[\s\S]*?```/g, "").replace(/`[^`]*`/g, "")

/** A question to the user: a sentence ending in "?". */
export const asksAQuestion = (text: string): boolean => /\?(?=\s|$|["'’)\]*_])/u.test(prose(text))

const WEEKDAY = "(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
const RELATIVE_DATE = new RegExp(
  [
    "\\b(?:yesterday|today|tomorrow|tonight)\\b",
    `\\b(?:last|next|this|coming)\\s+(?:week|month|year|quarter|sprint|${WEEKDAY})\\b`,
    `\\b(?:on|by|until|before|after)\\s+${WEEKDAY}\\b`,
    "\\b(?:\\d+|a|an|one|two|three|few|couple of)\\s+(?:days?|weeks?|months?)\\s+(?:ago|from now)\\b",
    "\\bin\\s+(?:\\d+|a|an|one|two|three|a few)\\s+(?:days?|weeks?|months?)\\b"
  ].join("|"),
  "iu"
)

/** Relative date phrases ("yesterday", "next Thursday", "3 days ago") that rot once written down. */
export const relativeDates = (text: string): ReadonlyArray<string> => {
  const found: Array<string> = []
  const global = new RegExp(RELATIVE_DATE.source, "giu")
  for (const m of text.matchAll(global)) found.push(m[0])
  return found
}

const result = (
  id: string,
  type: string,
  passed: boolean,
  detail: string,
  metrics: Readonly<Record<string, number>> = {}
): ScoreOutput => ({ result: { id, type, passed, required: true, modelGraded: false, detail }, metrics })

const describeCall = (call: RunToolCall): string => {
  const input = JSON.stringify(call.input)
  return `${call.name}(${input.length > 80 ? input.slice(0, 77) + "…" : input}) in turn ${call.turn}`
}

/**
 * Pure: score one deterministic scorer. Returns undefined for a model-graded rubric (see Grader).
 */
export const scoreOutcome = (scorer: Scorer, id: string, outcome: RunOutcome): ScoreOutput | undefined => {
  const scored = scoreDeterministic(scorer, id, outcome)
  return scored === undefined ? undefined : { ...scored, result: { ...scored.result, required: scorer.required } }
}

const scoreDeterministic = (scorer: Scorer, id: string, outcome: RunOutcome): ScoreOutput | undefined => {
  const answered = outcome.stop !== "max-turns" && outcome.finalText.trim().length > 0
  switch (scorer.type) {
    case "tool-before-answer": {
      if (!answered) return result(id, scorer.type, false, `no final answer (stopped: ${outcome.stop})`)
      const calls = outcome.toolCalls.filter((c) =>
        (scorer.tools === undefined || scorer.tools.includes(c.name)) && callLooksAt(c, scorer.path) &&
        c.turn < outcome.turns
      )
      return calls.length > 0 ?
        result(id, scorer.type, true, `${describeCall(calls[0]!)}, answer in turn ${outcome.turns}`) :
        result(
          id,
          scorer.type,
          false,
          `answered in turn ${outcome.turns} without ${scorer.tools?.join("/") ?? "any tool"} on ${scorer.path}` +
            (outcome.toolCalls.length === 0
              ? " (no tool calls)"
              : ` (calls: ${outcome.toolCalls.map(describeCall).join("; ")})`)
        )
    }
    case "tool-called": {
      const calls = outcome.toolCalls.filter((c) =>
        (scorer.tool === undefined || c.name === scorer.tool) &&
        (scorer.path === undefined || callLooksAt(c, scorer.path))
      )
      const what = `${scorer.tool ?? "a tool"}${scorer.path === undefined ? "" : ` on ${scorer.path}`}`
      return result(
        id,
        scorer.type,
        (calls.length > 0) === scorer.expect,
        calls.length > 0 ? `called ${what}: ${describeCall(calls[0]!)}` : `never called ${what}`
      )
    }
    case "answer-matches": {
      const match = regex(scorer.pattern).exec(outcome.finalText)
      return result(
        id,
        scorer.type,
        (match !== null) === scorer.expect,
        match !== null ? `answer contains ${JSON.stringify(match[0])}` : `answer does not match /${scorer.pattern}/i`
      )
    }
    case "asks-question": {
      const asks = asksAQuestion(outcome.finalText)
      return result(id, scorer.type, asks === scorer.expect, asks ? "the answer asks a question" : "no question asked")
    }
    case "memory-written": {
      const changed = changedMemories(outcome).filter((p) => scorer.path === undefined || regex(scorer.path).test(p))
      return result(
        id,
        scorer.type,
        (changed.length > 0) === scorer.expect,
        changed.length > 0 ? `written: ${changed.join(", ")}` : "no memory file written"
      )
    }
    case "memory-matches": {
      const hits = textsOf(outcome, scorer.in).filter(([, text]) => regex(scorer.pattern).test(text)).map(([p]) => p)
      return result(
        id,
        scorer.type,
        (hits.length > 0) === scorer.expect,
        hits.length > 0 ?
          `/${scorer.pattern}/i found in ${hits.join(", ")}` :
          `/${scorer.pattern}/i in no ${scorer.in === "changed" ? "written" : ""} memory file`.replace("  ", " ")
      )
    }
    case "facts-captured": {
      const texts = textsOf(outcome, scorer.in).map(([, t]) => t)
      const captured = scorer.facts.filter((f) => texts.some((t) => regex(f.pattern).test(t)))
      const missed = scorer.facts.filter((f) => !captured.includes(f)).map((f) => f.id)
      const rate = captured.length / scorer.facts.length
      return result(
        id,
        scorer.type,
        rate >= scorer.minRate,
        `${captured.length}/${scorer.facts.length} facts captured${
          missed.length > 0 ? ` (missed: ${missed.join(", ")})` : ""
        }`,
        { factsExpected: scorer.facts.length, factsCaptured: captured.length }
      )
    }
    case "false-saves": {
      const texts = textsOf(outcome, "changed").map(([, t]) => t)
      const saved = scorer.noise.filter((n) => texts.some((t) => regex(n.pattern).test(t))).map((n) => n.id)
      return result(
        id,
        scorer.type,
        saved.length <= scorer.max,
        saved.length === 0 ? "no noise saved" : `noise saved: ${saved.join(", ")}`,
        { falseSaves: saved.length, noiseItems: scorer.noise.length }
      )
    }
    case "no-relative-dates": {
      const found = textsOf(outcome, "changed").flatMap(([p, t]) => relativeDates(t).map((d) => `${p}: "${d}"`))
      return result(
        id,
        scorer.type,
        found.length === 0,
        found.length === 0 ? "written memories use absolute dates" : `relative dates: ${found.join("; ")}`,
        { relativeDates: found.length }
      )
    }
    case "memory-count": {
      const count = memoryFiles(outcome.memoryAfter).length
      const ok = (scorer.min === undefined || count >= scorer.min) && (scorer.max === undefined || count <= scorer.max)
      const bounds = [
        scorer.min === undefined ? "" : `≥ ${scorer.min}`,
        scorer.max === undefined ? "" : `≤ ${scorer.max}`
      ]
        .filter((b) => b !== "").join(" and ")
      return result(id, scorer.type, ok, `${count} memory files (want ${bounds || "any"})`, { memoryFiles: count })
    }
    case "index-consistent": {
      const index = outcome.memoryAfter.get(INDEX_FILE) ?? ""
      const linked = new Set(
        index.split("\n").flatMap((line) => {
          const entry = parseIndexLine(line)
          return entry === undefined ? [] : [entry.file.replace(/^\.\//, "")]
        })
      )
      const files = memoryFiles(outcome.memoryAfter)
      const unindexed = files.filter((f) => !linked.has(f))
      const dead = [...linked].filter((l) => !outcome.memoryAfter.has(l))
      const problems = [
        unindexed.length > 0 ? `not in ${INDEX_FILE}: ${unindexed.join(", ")}` : "",
        dead.length > 0 ? `dead links: ${dead.join(", ")}` : ""
      ].filter((p) => p !== "")
      return result(
        id,
        scorer.type,
        problems.length === 0,
        problems.length === 0 ? "index and files agree" : problems.join("; ")
      )
    }
    case "rubric":
      return undefined
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Selector suites
// ---------------------------------------------------------------------------------------------------------------

/**
 * Pure: a selection against its labels. Pass = at least `minRecall` of the relevant memories and at most
 * `maxIrrelevant` memories that are neither relevant nor acceptable. Metrics sum to micro-averaged precision
 * (correct / produced) and recall (found / expected).
 */
export const scoreSelection = (
  scorer: SelectionScorer,
  id: string,
  scenario: SelectorScenario,
  selected: ReadonlyArray<string>
): ScoreOutput => {
  const ok = new Set([...scenario.relevant, ...scenario.acceptable])
  const found = selected.filter((p) => scenario.relevant.includes(p))
  const irrelevant = selected.filter((p) => !ok.has(p))
  const recall = scenario.relevant.length === 0 ? 1 : found.length / scenario.relevant.length
  const nothingRelevant = ok.size === 0
  const missed = scenario.relevant.filter((p) => !selected.includes(p))
  const detail = [
    selected.length === 0 ? "selected nothing" : `selected ${selected.join(", ")}`,
    missed.length > 0 ? `missed ${missed.join(", ")}` : "",
    irrelevant.length > 0 ? `irrelevant ${irrelevant.join(", ")}` : ""
  ].filter((s) => s !== "").join("; ")
  return result(id, scorer.type, recall >= scorer.minRecall && irrelevant.length <= scorer.maxIrrelevant, detail, {
    produced: selected.length,
    correct: selected.length - irrelevant.length,
    expected: scenario.relevant.length,
    found: found.length,
    nothingRelevant: nothingRelevant ? 1 : 0,
    emptyWhenNothingRelevant: nothingRelevant && selected.length === 0 ? 1 : 0
  })
}

/** Pure: the scores of every deterministic scorer in `scorers` (model-graded rubrics are the Grader's). */
export const scoreDeterministicScorers = (scorers: ReadonlyArray<Scorer>, outcome: RunOutcome): Array<ScoreOutput> => {
  const ids = scorerIds(scorers)
  return scorers.flatMap((scorer, i): Array<ScoreOutput> => {
    const score = scoreOutcome(scorer, ids[i]!, outcome)
    return score === undefined ? [] : [score]
  })
}

/** A JSON copy of a trial's output with its scratch path replaced by `<sandbox>`, so results replay anywhere. */
export const hideSandbox = (root: string, output: unknown): unknown =>
  JSON.parse(JSON.stringify(output).split(root).join("<sandbox>"))
