/**
 * The scripted responder: a deterministic stand-in for a model, served by the local Messages API server of
 * `@memdir/testing` so that the real SDK, the real agent loop, the real tools and the scorers all run end to end
 * with no key. It is NOT a model and measures nothing about prompts: its rules read the prompt literally and are
 * written to exercise every path of the harness (tool calls, failed tool calls, memory writes, questions). Runs and
 * cassettes made with it say so (`--scripted`), and the report shows their numbers as not coming from a model.
 *
 * Its rules:
 * - selector calls: the offline selector over the manifest it is sent, with a looser or stricter bar when the
 *   system prompt asks for that;
 * - grader calls: always "fail, not graded";
 * - agent, a memory with a file citation recalled: verifies (reads the cited file; greps for it if it is gone;
 *   reads what the grep found) only when the recall-trust heading starts with an action verb ("Before…",
 *   "Check…", "Verify…"), then answers from what it read; otherwise answers from the memory;
 * - agent, "remember/save …": with the push-back instruction in the prompt, asks what was surprising about a PR
 *   list, a day's log or a fix recipe; otherwise saves the message as it is;
 * - dream: merges memory files whose descriptions share most words, and rewrites "yesterday"/"today"/"last
 *   week" as dates, with the memory tools;
 * - extraction: saves each of the user's sentences that states a rule, a preference, an introduction, a deadline or
 *   an owner as a feedback memory.
 * Tool-use ids derive from a hash of the request, so re-recording gives identical cassettes.
 */
import type { MemoryHeader } from "@memdir/core/Memory"
import { defaultOfflineOptions, selectRelevantMemories } from "@memdir/core/Selector"
import type { RecordedRequest, Reply, ReplyContent } from "@memdir/testing/MessagesApiServer"
import { createHash } from "node:crypto"

/** The model id the scripted responder answers with: it never claims to be a real model. */
export const SCRIPTED_MODEL = "scripted-responder"

export const SCRIPTED_NOTE = "scripted responder (apps/evals/src/Scripted.ts) on the local Messages API server of " +
  "@memdir/testing: not a model; these figures test the harness, not a prompt"

type Body = {
  readonly system?: string | ReadonlyArray<{ readonly text: string }>
  readonly messages: ReadonlyArray<{ readonly role: string; readonly content: string | ReadonlyArray<any> }>
  readonly tools?: ReadonlyArray<{ readonly name: string }>
  readonly tool_choice?: { readonly type: string; readonly name?: string }
}

const systemText = (body: Body): string =>
  typeof body.system === "string" ? body.system : (body.system ?? []).map((b) => b.text).join("\n")

const blocksOf = (content: string | ReadonlyArray<any>): ReadonlyArray<any> =>
  typeof content === "string" ? [{ type: "text", text: content }] : content

const textOf = (content: string | ReadonlyArray<any>): string =>
  blocksOf(content).filter((b) => b.type === "text").map((b) => b.text as string).join("\n")

/**
 * A trial's scratch directory (`<tmp>/memdir-eval-XXXXXX`) differs on every run: tool-use ids digest the messages
 * without it, so recording the same trial twice gives the same ids, the same next requests and the same cassette.
 */
const SCRATCH_PATH = /[^\s"'`]*memdir-eval-[A-Za-z0-9]+/g

const reply = (body: Body, content: ReadonlyArray<ReplyContent>): Reply => {
  const messages = JSON.stringify(body.messages).replace(SCRATCH_PATH, "<sandbox>")
  const digest = createHash("sha256").update(messages).digest("hex").slice(0, 16)
  return {
    kind: "message",
    model: SCRIPTED_MODEL,
    content: content.map((block, i) =>
      block.type === "tool_use" ? { ...block, id: `toolu_scripted_${digest}_${i}` } : block
    )
  }
}

const say = (body: Body, text: string) => reply(body, [{ type: "text", text }])
const call = (body: Body, name: string, input: unknown) => reply(body, [{ type: "tool_use", name, input }])

// ---------------------------------------------------------------------------------------------------------------
// Selector and grader
// ---------------------------------------------------------------------------------------------------------------

const MANIFEST_LINE = /^- \[(\w+)\] (.+?) \(([^)]*)\): (.*)$/

const selectorReply = (body: Body): Reply => {
  const text = body.messages.map((m) => textOf(m.content)).join("\n")
  const manifest = /<manifest>\n([\s\S]*?)\n<\/manifest>/.exec(text)?.[1] ?? ""
  const query = /<query>\n([\s\S]*?)\n<\/query>/.exec(text)?.[1] ?? ""
  const tools = /<recently_used_tools>\n([\s\S]*?)\n<\/recently_used_tools>/.exec(text)?.[1] ?? "(none)"
  const candidates: Array<MemoryHeader> = manifest.split("\n").flatMap((line) => {
    const m = MANIFEST_LINE.exec(line)
    if (m === null) return []
    const [, type, path, iso, description] = m
    const name = path!.replace(/\.md$/, "").replace(/^[a-z]+_/, "").replace(/[_-]/g, " ")
    return [{
      path: path!,
      absolutePath: path!,
      name,
      description: description!,
      type: type as any,
      mtime: Date.parse(iso!) || 0,
      extra: {}
    }]
  })
  const system = systemText(body)
  const options = /usually none, one or two/.test(system) ?
    { ...defaultOfflineOptions, relativeToTop: 0.9, minEvidence: 0.6 } :
    /every memory that is plausibly relevant/.test(system) ?
    { ...defaultOfflineOptions, relativeToTop: 0.4, minEvidence: 0.25, clearEvidence: 0.5 } :
    defaultOfflineOptions
  const recentTools = tools === "(none)" ? [] : tools.split(",").map((t) => t.trim())
  const selected = selectRelevantMemories({ query, candidates, recentTools }, options)
  return call(body, body.tool_choice!.name!, { selected_memories: selected })
}

// ---------------------------------------------------------------------------------------------------------------
// Agent
// ---------------------------------------------------------------------------------------------------------------

interface AgentState {
  readonly system: string
  readonly task: string
  /** The recalled memories' text (inside the system reminder), if any. */
  readonly recalled: string
  /** Tool results since the task, oldest first. */
  readonly results: ReadonlyArray<{ readonly content: string; readonly isError: boolean }>
  readonly steps: number
}

const agentState = (body: Body): AgentState => {
  let taskIndex = body.messages.length - 1
  while (
    taskIndex > 0 && !(body.messages[taskIndex]!.role === "user" && textOf(body.messages[taskIndex]!.content) !== "")
  ) {
    taskIndex--
  }
  const full = textOf(body.messages[taskIndex]!.content)
  const reminder = /<system-reminder>([\s\S]*?)<\/system-reminder>/.exec(full)?.[1] ?? ""
  const after = body.messages.slice(taskIndex + 1)
  const results = after.flatMap((m) =>
    blocksOf(m.content).filter((b) => b.type === "tool_result").map((b) => ({
      content: typeof b.content === "string" ? b.content : textOf(b.content ?? []),
      isError: b.is_error === true
    }))
  )
  return {
    system: systemText(body),
    task: full.replace(/<system-reminder>[\s\S]*?<\/system-reminder>\s*/, "").trim(),
    recalled: reminder,
    results,
    steps: after.filter((m) => m.role === "assistant").length
  }
}

/** A path with a directory in it, optionally with `:line` (`src/db/pool.ts:14`). */
const CITATION = /`?((?:[\w.-]+\/)+[\w.-]+\.[A-Za-z]{1,5})(?::\d+)?`?/

const identifiersIn = (text: string): ReadonlyArray<string> => {
  const env = [...text.matchAll(/\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b/g)].map((m) => m[0])
  const exported = [...text.matchAll(/export const (\w+)/g)].map((m) => m[1]!)
  return [...new Set([...env, ...exported])]
}

const commentsIn = (text: string): ReadonlyArray<string> =>
  text.split("\n").map((line) => line.replace(/^\s*\d+\t/, "")).filter((line) => /^\s*\/\//.test(line)).map((l) =>
    l.trim()
  )

const staleMemoryReply = (body: Body, state: AgentState): Reply => {
  const cited = CITATION.exec(state.recalled)?.[1]
  // The heading of the section whose body starts with the recall-trust sentence (whatever the variant calls it).
  const body0 = state.system.indexOf("A memory is an observation")
  const headings = [...state.system.slice(0, Math.max(0, body0)).matchAll(/^## (.+)$/gm)].map((m) => m[1]!)
  const recallHeading = headings[headings.length - 1] ?? ""
  const verifies = cited !== undefined && /^(Before|Check|Verify)\b/.test(recallHeading)
  const memoryLine = state.recalled.split("\n").find((l) => l.startsWith("Memory ")) ?? "the memory"
  if (!verifies) {
    return say(body, `From memory (${memoryLine.replace(/^Memory /, "")}): ${cited ?? "see the memory"} is the place.`)
  }
  if (state.steps === 0) return call(body, "read_file", { path: cited })
  const last = state.results[state.results.length - 1]
  if (state.steps === 1 && last?.isError === true) {
    const stem = cited.split("/").pop()!.replace(/\.\w+$/, "")
    return call(body, "grep", { pattern: stem, ignore_case: true })
  }
  if (state.steps === 2 && state.results[0]?.isError === true) {
    const hit = /^([\w./-]+\.\w+):\d+:/m.exec(last?.content ?? "")?.[1]
    if (hit !== undefined) return call(body, "read_file", { path: hit })
  }
  const read = state.results.filter((r) => !r.isError).map((r) => r.content).join("\n")
  const names = identifiersIn(read)
  const notes = commentsIn(read).slice(0, 2)
  return say(
    body,
    `I checked the code: the memory is out of date. ${notes.join(" ")}` +
      (names.length > 0 ? ` Use ${names.join(", ")}.` : "")
  )
}

const EXCLUDED = /#\d{2,}|what we did today|summary of what|how we fixed|exactly how/i
const PUSH_BACK = /Ask what was surprising or non-obvious/

const slug = (text: string): string =>
  text.toLowerCase().replace(/[^a-z0-9]+/g, "_").replace(/^_|_$/g, "").split("_").slice(0, 4).join("_") || "note"

const rememberReply = (body: Body, state: AgentState): Reply => {
  const excluded = EXCLUDED.test(state.task) || EXCLUDED.test(body.messages.map((m) => textOf(m.content)).join("\n"))
  if (excluded && PUSH_BACK.test(state.system)) {
    return say(
      body,
      "Before I save anything: what was surprising or non-obvious about it? The details themselves are in git " +
        "and the code; I would only keep the part a future session could not work out again."
    )
  }
  if (state.steps === 0) {
    const body_ = state.task.replace(/^(please\s+)?(remember|save)( that)?\s*/i, "")
    const type = excluded ? "project" : "feedback"
    const firstLine = body_.split("\n")[0]!.replace(/[:.]\s*$/, "")
    return call(body, "memory_write", {
      path: `${type}_${slug(firstLine)}.md`,
      content: `---\nname: ${firstLine.slice(0, 60)}\ndescription: ${JSON.stringify(firstLine.slice(0, 140))}\n` +
        `type: ${type}\n---\n\n${body_}\n`
    })
  }
  return say(body, "Saved.")
}

const agentReply = (body: Body): Reply => {
  const state = agentState(body)
  if (/\b(remember|save)\b/i.test(state.task)) return rememberReply(body, state)
  if (state.recalled !== "") return staleMemoryReply(body, state)
  return say(body, "Done.")
}

// ---------------------------------------------------------------------------------------------------------------
// Dream and extraction
// ---------------------------------------------------------------------------------------------------------------

const STOPWORDS = new Set(
  "the a an and or of to in on for with is are was be it its this that at by from as".split(" ")
)
const words = (text: string) =>
  new Set(text.toLowerCase().split(/[^a-z0-9]+/).filter((w) => w.length > 2 && !STOPWORDS.has(w)))

const overlap = (a: string, b: string): number => {
  const x = words(a), y = words(b)
  const shared = [...x].filter((w) => y.has(w)).length
  return shared / Math.max(1, Math.min(x.size, y.size))
}

const WEEKDAYS = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"]
const RELATIVE = /\b(yesterday|today|last week|next (?:sunday|monday|tuesday|wednesday|thursday|friday|saturday))\b/gi

/** Relative dates as dates, counted from the day the memory was written (as the dream prompt asks). */
const absoluteDates = (text: string, written: string): string => {
  const base = Date.parse(written.slice(0, 10))
  const day = (offset: number) => new Date(base + offset * 86_400_000).toISOString().slice(0, 10)
  return text.replace(RELATIVE, (phrase) => {
    const p = phrase.toLowerCase()
    if (p === "yesterday") return day(-1)
    if (p === "today") return day(0)
    if (p === "last week") return `the week of ${day(-7)}`
    const target = WEEKDAYS.indexOf(p.slice(5))
    const ahead = (target - new Date(base).getUTCDay() + 7) % 7 || 7
    return day(ahead)
  })
}

const dreamReply = (body: Body): Reply => {
  const first = textOf(body.messages[0]!.content)
  const mergeFirst = /Merge rather than duplicate/.test(systemText(body))
  const manifest = first.split("\n").flatMap((line) => {
    const m = MANIFEST_LINE.exec(line)
    return m === null ? [] : [{ path: m[2]!, written: m[3]!, description: m[4]! }]
  })
  const steps = body.messages.filter((m) => m.role === "assistant").length
  const results = body.messages.flatMap((m) =>
    blocksOf(m.content).filter((b) => b.type === "tool_result").map((b) =>
      typeof b.content === "string" ? b.content : textOf(b.content ?? [])
    )
  )
  // Turn 1: read every memory. Turn 2: merge, drop the contradicted, date what is relative. Turn 3: summary.
  if (steps === 0 && manifest.length > 0) {
    return reply(body, manifest.map((m) => ({ type: "tool_use", name: "memory_read", input: { path: m.path } })))
  }
  if (steps === 1) {
    const contents = new Map(manifest.map((m, i) => [m.path, (results[i] ?? "").replace(/^\s*\d+\t/gm, "")]))
    const gone = new Set<string>()
    const calls: Array<ReplyContent> = []
    // A memory that says "moved from X" makes an older memory about X contradicted.
    for (const newer of manifest) {
      const from = /moved from (\w[\w.-]*)/i.exec(contents.get(newer.path) ?? "")?.[1]
      if (from === undefined) continue
      for (const older of manifest) {
        if (older !== newer && older.written < newer.written && older.description.includes(from)) gone.add(older.path)
      }
    }
    for (const path of gone) calls.push({ type: "tool_use", name: "memory_delete", input: { path } })
    for (const [i, a] of manifest.entries()) {
      if (gone.has(a.path)) continue
      const twins = mergeFirst ?
        manifest.slice(i + 1).filter((b) => !gone.has(b.path) && overlap(a.description, b.description) >= 0.5) :
        []
      const text = contents.get(a.path) ?? ""
      if (twins.length > 0) {
        const extra = twins.map((t) =>
          absoluteDates((contents.get(t.path) ?? "").replace(/^---[\s\S]*?---\n/, "").trim(), t.written)
        )
        calls.push({
          type: "tool_use",
          name: "memory_write",
          input: { path: a.path, content: `${absoluteDates(text, a.written).trimEnd()}\n\n${extra.join("\n\n")}\n` }
        })
        for (const t of twins) {
          gone.add(t.path)
          calls.push({ type: "tool_use", name: "memory_delete", input: { path: t.path } })
        }
      } else if (absoluteDates(text, a.written) !== text) {
        calls.push({
          type: "tool_use",
          name: "memory_write",
          input: { path: a.path, content: absoluteDates(text, a.written) }
        })
      }
    }
    if (calls.length > 0) return reply(body, calls)
  }
  return say(body, "Consolidated: merged near-duplicates, removed contradicted memories, dated relative dates.")
}

/** Sentences a literal reader takes for something to keep: rules, preferences, introductions, deadlines, owners. */
const REMEMBERABLE =
  /[^.!?\n]*(?:\b(?:remember|always|never|prefer|from now on|keep doing|exactly like that|reviews anything)\b|\bI'm [A-Z]\w+|before \d{4}-\d{2}-\d{2})[^.!?\n]*[.!?]?/gi

const extractionReply = (body: Body): Reply => {
  const steps = body.messages.filter((m) => m.role === "assistant").length
  if (steps > 0) return say(body, "Saved what was worth keeping.")
  // Only what the user said: the extractor's own instructions and the assistant's turns are not the user's facts.
  const text = body.messages.map((m) => textOf(m.content)).join("\n").split(/\n(?=#|\[)/).filter((part) =>
    /^\[#\d+ user\b/.test(part)
  ).join("\n")
  const sentences = [...new Set([...text.matchAll(REMEMBERABLE)].map((m) => m[0].trim()))].slice(0, 4)
  if (sentences.length === 0) return say(body, "Nothing worth saving.")
  return reply(
    body,
    sentences.map((sentence) => ({
      type: "tool_use",
      name: "memory_write",
      input: {
        path: `feedback_${slug(sentence)}.md`,
        content: `---\nname: ${sentence.slice(0, 50)}\ndescription: ${JSON.stringify(sentence.slice(0, 140))}\n` +
          `type: feedback\n---\n\n${sentence}\n`
      }
    }))
  )
}

/** The MessagesApiServer handler. */
export const scriptedResponder = (request: RecordedRequest): Reply => {
  const body = request.body as Body
  const forced = body.tool_choice?.type === "tool" ? body.tool_choice.name : undefined
  if (forced === "select_memories") return selectorReply(body)
  if (forced !== undefined) {
    return call(body, forced, { passed: false, reason: "the scripted responder does not grade" })
  }
  const system = systemText(body)
  const tools = new Set((body.tools ?? []).map((t) => t.name))
  if (tools.has("memory_delete") && /consolidat/i.test(system)) return dreamReply(body)
  if (/extract/i.test(system) && tools.has("memory_write") && !tools.has("memory_delete")) {
    if (!/You are a coding assistant/.test(system)) return extractionReply(body)
  }
  return agentReply(body)
}
