/**
 * The team/private contradiction cross-check: before a private feedback memory is saved, the team feedback it
 * seems to contradict is looked up (offline, transparent: topic-word overlap plus exactly one side prohibiting).
 * It advises; it never blocks a write.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as NodePath from "node:path"
import { parseMemoryFile } from "./Frontmatter.js"
import { analyzeText, WEAK_TERMS } from "./internal/text/analysis.js"
import { TEAM_DIR } from "./Memory.js"
import { MemoryStore } from "./MemoryStore.js"
import { Scanner } from "./Scanner.js"

const inTeam = (relative: string): string => `${TEAM_DIR}/${relative}`

/** A team feedback memory that a private feedback memory seems to contradict. */
export interface Contradiction {
  /** `team/…`. */
  readonly path: string
  readonly name: string
  readonly description: string
  /** Share of the smaller memory's topic words that the other one has too (0–1). */
  readonly similarity: number
  /** The topic words both mention (stems). */
  readonly shared: ReadonlyArray<string>
  /** Which one prohibits: "private says never/avoid…, team says to do it", or the reverse. */
  readonly reason: string
}

export interface FeedbackText {
  readonly name: string
  readonly description: string
  readonly body: string
}

/** Words that turn a rule into a prohibition. */
const PROHIBITION =
  /\b(?:never|don'?t|do not|does not|doesn'?t|must not|mustn'?t|should not|shouldn'?t|shall not|cannot|can'?t|avoid(?:s|ed|ing)?|no longer|stop(?:ped)? (?:using|doing|adding|writing)|refrain|forbid(?:den)?|prohibit(?:ed)?|disallow(?:ed)?|not allowed|instead of)\b/i

/** The rule of a feedback memory: name, description and the body before **Why:** / **How to apply:**. */
const ruleText = (memory: FeedbackText): string => {
  const rule = memory.body.split(/\*\*(?:why|how to apply)\b/i)[0] ?? ""
  return `${memory.name}\n${memory.description}\n${rule}`
}

/** Whether a rule prohibits (never/don't/avoid/must not…) rather than prescribes. */
export const isProhibition = (memory: FeedbackText): boolean =>
  PROHIBITION.test(`${memory.description}\n${memory.body.split(/\*\*(?:why|how to apply)\b/i)[0] ?? ""}`)

/** Topic words of a rule (stemmed; stopwords, negations and weak verbs such as "use" or "make" removed). */
const topicWords = (memory: FeedbackText): ReadonlySet<string> =>
  new Set(analyzeText(ruleText(memory)).words.filter((word) => !WEAK_TERMS.has(word)))

/** Similarity at or above which two rules are about the same thing. */
export const CONTRADICTION_MIN_SIMILARITY = 0.5
/** And at least this many shared topic words (one shared word is a coincidence). */
export const CONTRADICTION_MIN_SHARED = 2

/**
 * The offline cross-check (transparent on purpose): two feedback rules contradict when they are about the same
 * thing (overlap of topic words ≥ 0.5 of the smaller rule, at least 2 words) and exactly one of them prohibits
 * (never / don't / avoid / must not …). "Never mock the DB" vs "mock the DB in unit tests" is caught; "never mock
 * the DB" vs "don't mock the database" agree. A model-backed check can replace it later.
 */
export const findContradictions = (
  candidate: FeedbackText,
  team: ReadonlyArray<FeedbackText & { readonly path: string }>
): Array<Contradiction> => {
  const words = topicWords(candidate)
  const prohibits = isProhibition(candidate)
  const found: Array<Contradiction> = []
  for (const memory of team) {
    if (isProhibition(memory) === prohibits) continue
    const theirs = topicWords(memory)
    const shared = [...words].filter((word) => theirs.has(word))
    const smaller = Math.min(words.size, theirs.size)
    const similarity = smaller === 0 ? 0 : shared.length / smaller
    if (shared.length < CONTRADICTION_MIN_SHARED || similarity < CONTRADICTION_MIN_SIMILARITY) continue
    found.push({
      path: memory.path,
      name: memory.name,
      description: memory.description,
      similarity: Math.round(similarity * 100) / 100,
      shared: shared.sort(),
      reason: prohibits
        ? "the new memory prohibits what this team memory prescribes"
        : "the new memory prescribes what this team memory prohibits"
    })
  }
  return found.sort((a, b) => b.similarity - a.similarity || (a.path < b.path ? -1 : 1))
}

/** Team feedback memories read at most: the cross-check must stay cheap on a large team directory. */
const CROSS_CHECK_MAX_MEMORIES = 200

/**
 * The team feedback memories (read through the guard) that `candidate` seems to contradict. Files the guard
 * refuses or that do not parse are skipped: the check advises, it never blocks a write.
 */
export const checkTeamContradictions = Effect.fn("TeamContradiction.checkTeamContradictions")(function*(
  memoryDir: string,
  candidate: FeedbackText
) {
  const scanner = yield* Scanner
  const store = yield* MemoryStore
  const scan = yield* scanner.scan(NodePath.join(memoryDir, TEAM_DIR), { limit: CROSS_CHECK_MAX_MEMORIES })
  const feedback = scan.memories.filter((m) => m.type === "feedback")
  const team = yield* Effect.forEach(feedback, (m) =>
    store.read({ memoryDir, teamEnabled: true }, inTeam(m.path)).pipe(
      Effect.map(({ text }) =>
        Result.match(parseMemoryFile(text, m.path), {
          onFailure: () => [],
          onSuccess: (parsed) => [{ path: inTeam(m.path), name: m.name, description: m.description, body: parsed.body }]
        })
      ),
      Effect.orElseSucceed(() => [])
    ))
  return findContradictions(candidate, team.flat())
})
