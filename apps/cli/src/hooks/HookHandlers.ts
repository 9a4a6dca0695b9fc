/**
 * What `memdir hook` does for each event (docs/hooks.md), as effects over the live memdir services:
 * - `SessionStart`: the memory section of the system prompt with its compact rules (index under its caps), fitted
 *   under the agent's 10,000-character limit (pinned and newest index lines kept, the cut stated: `IndexBudget`);
 * - `UserPromptSubmit`: recall for the prompt, minus what this session already surfaced (`HookSessionState`),
 *   nothing for one-word prompts;
 * - `Stop` / `SessionEnd`: extraction and the dream gates in a detached background process (only with a key and
 *   automatic model calls turned on, `ModelCalls.ts`), nothing when `stop_hook_active`.
 * A handler answers `None` when it has nothing to say; the command turns every failure into "nothing" too.
 */
import * as BackgroundRuns from "@memdir/core/BackgroundRuns"
import { HookSessionState, type SessionId } from "@memdir/core/HookSessionState"
import { describeFiles, headBuffer } from "@memdir/core/internal/scan/listHeads"
import { MemoryFs } from "@memdir/core/MemoryFs"
import { INDEX_FILE, type LoadedIndex, MemoryIndex, normalizeIndexLink } from "@memdir/core/MemoryIndex"
import * as Model from "@memdir/core/Model"
import { AutomaticModelCallsAllowed } from "@memdir/core/ModelSelector"
import { COMPACT_VARIANTS, type MemoryPromptInput, renderMemoryPrompt } from "@memdir/core/Prompt"
import {
  RECALL_SESSION_BUDGET_BYTES,
  type RecalledMemory,
  RecallSession,
  renderRecalledMemory,
  skipReasonFor
} from "@memdir/core/Recall"
import { teamPromptInput } from "@memdir/core/TeamMemory"
import * as Clock from "effect/Clock"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import { spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { locateTeam } from "../commands/teamMemory.js"
import { ensureMemoryDir } from "../MemoryDir.js"
import { automaticModelCallsBy, automaticModelCallsOn, TURN_ON_HINT } from "../ModelCalls.js"
import { thousands, toIoError } from "../Output.js"
import {
  CONTEXT_MAX_CHARS,
  type HookOutput,
  hookOutput,
  type SessionEndInput,
  type SessionStartInput,
  type StopInput,
  type UserPromptSubmitInput
} from "./HookInput.js"
import { factsOfLines, fitIndex, type IndexLineFacts, NO_FACTS } from "./IndexBudget.js"

// ---------------------------------------------------------------------------------------------------------------
// SessionStart: the memory prompt, fitted under the cap
// ---------------------------------------------------------------------------------------------------------------

const leftOutNote = (left: number, total: number, file: string, path: string, max: number) =>
  `[memdir: ${left} of ${total} lines of ${file} are left out here to keep this context under ` +
  `${thousands(max)} characters. Read the whole index with \`memdir show ${file}\` or your file tool: ${path}]`

const keepLines = (index: LoadedIndex, kept: number, file: string, max: number): LoadedIndex => {
  const lines = index.content.replace(/\n+$/, "").split("\n")
  if (kept >= lines.length) return index
  const note = leftOutNote(lines.length - kept, lines.length, file, index.path, max)
  return { ...index, content: [...lines.slice(0, kept), note].join("\n") + "\n" }
}

const lineCount = (index: LoadedIndex) => index.content.replace(/\n+$/, "").split("\n").length

/** The largest `n` in [0, hi] for which `fits(n)`, given `fits` is monotone; -1 when none. */
const largestFitting = (hi: number, fits: (n: number) => boolean): number => {
  let lo = 0
  let best = -1
  let top = hi
  while (lo <= top) {
    const mid = (lo + top) >> 1
    if (fits(mid)) {
      best = mid
      lo = mid + 1
    } else {
      top = mid - 1
    }
  }
  return best
}

/**
 * Pure: the memory prompt at most `max` characters long. Index lines are left out from the end (the private index
 * first, then the team index), with a note saying how many and how to read them; a prompt still too long without
 * any index line is cut, with a note naming `memdir prompt`.
 */
export const fitMemoryPrompt = (input: MemoryPromptInput, max: number = CONTEXT_MAX_CHARS): string => {
  const render = (i: MemoryPromptInput) => Result.getOrThrow(renderMemoryPrompt(i))
  const full = render(input)
  if (full.length <= max) return full
  const team = input.team
  const withPrivate = (kept: number, teamIndex = team?.index): MemoryPromptInput => ({
    ...input,
    index: keepLines(input.index, kept, INDEX_FILE, max),
    team: team === undefined || teamIndex === undefined ? team : { ...team, index: teamIndex }
  })
  const privateLines = lineCount(input.index)
  const kept = largestFitting(privateLines, (n) => render(withPrivate(n)).length <= max)
  if (kept >= 0) return render(withPrivate(kept))
  if (team !== undefined) {
    const teamLines = lineCount(team.index)
    const withTeam = (n: number) => withPrivate(0, keepLines(team.index, n, `team/${INDEX_FILE}`, max))
    const teamKept = largestFitting(teamLines, (n) => render(withTeam(n)).length <= max)
    if (teamKept >= 0) return render(withTeam(teamKept))
  }
  const tail = `\n[memdir: cut at ${thousands(max)} characters; print the whole section with \`memdir prompt\`]\n`
  return render(withPrivate(0)).slice(0, max - tail.length) + tail
}

/** The memory prompt the SessionStart hook sends: the compact rules (`COMPACT_VARIANTS`) and the whole index. */
export const sessionPromptInput = (input: MemoryPromptInput): MemoryPromptInput => ({
  ...input,
  variants: { ...COMPACT_VARIANTS, ...input.variants }
})

/** What the budget knows of each index's memories (pinned, written when). */
export interface SessionFacts {
  readonly private: IndexLineFacts
  readonly team?: IndexLineFacts | undefined
}

const blankIndex = (index: LoadedIndex) => index.content.trim().length === 0

/**
 * Pure: the SessionStart context in at most `max` characters (docs/hooks.md#the-10000-character-cap): the compact
 * rules, then the index in what they leave. An index that fits is whole; else its pinned and newest lines are kept
 * (`IndexBudget.fitIndex`), the private index first, then the team index in what is left, each ending with a line
 * that says what was cut. Rules too long for `max` themselves (a tiny `max`): `fitMemoryPrompt`'s hard cut.
 */
export const fitSessionContext = (
  input: MemoryPromptInput,
  facts: SessionFacts = { private: NO_FACTS },
  max: number = CONTEXT_MAX_CHARS
): string => {
  const compact = sessionPromptInput(input)
  const render = (i: MemoryPromptInput) => Result.getOrThrow(renderMemoryPrompt(i))
  const whole = render(compact)
  if (whole.length <= max) return whole
  // The rules' length: the prompt with each non-blank index as one character (a blank one says so in a note).
  const placeholder = (index: LoadedIndex): LoadedIndex => blankIndex(index) ? index : { ...index, content: "x\n" }
  const team = compact.team
  const placeholders = (blankIndex(compact.index) ? 0 : 1) + (team === undefined || blankIndex(team.index) ? 0 : 1)
  const rules = render({
    ...compact,
    index: placeholder(compact.index),
    team: team === undefined ? undefined : { ...team, index: placeholder(team.index) }
  }).length - placeholders
  const room = max - rules
  // What an index adds to the prompt: its trimmed text (`Prompt.promptSlots`); fitIndex's budget counts one newline.
  const added = (index: LoadedIndex) => blankIndex(index) ? 0 : index.content.trim().length
  const teamFile = `team/${INDEX_FILE}`
  // Room kept for the team index: the least it can be (its cut line), or its whole text when that is less.
  const teamLeast = team === undefined ? 0 : Math.min(
    added(team.index),
    added({ ...team.index, content: fitIndex(team.index, 0, NO_FACTS, teamFile, max).content })
  )
  const ownIndex = fitIndex(
    compact.index,
    room - teamLeast + 1,
    facts.private,
    INDEX_FILE,
    max
  )
  const fitted: MemoryPromptInput = {
    ...compact,
    index: { ...compact.index, content: ownIndex.content },
    team: team === undefined ? undefined : {
      ...team,
      index: {
        ...team.index,
        content: fitIndex(
          team.index,
          room - added({ ...compact.index, content: ownIndex.content }) + 1,
          facts.team ?? NO_FACTS,
          teamFile,
          max
        ).content
      }
    }
  }
  const text = render(fitted)
  return ownIndex.fits && text.length <= max ? text : fitMemoryPrompt(compact, max)
}

/**
 * The facts the budget needs, read only when the whole index does not fit: the heads of the files the index links
 * to (at most its 200 lines), not a scan of the directory, which may hold thousands. A link out of the directory,
 * into a hidden one, or to something that is not a memory gives no facts (its line ranks last).
 */
const linkedFacts = (directory: string, index: LoadedIndex) =>
  Effect.gen(function*() {
    const keys = [
      ...new Set(
        index.entries.flatMap((entry) => {
          const key = normalizeIndexLink(entry.file)
          const inside = key !== undefined && !NodePath.isAbsolute(key) &&
            key.split("/").every((segment) => segment !== ".." && !segment.startsWith("."))
          return inside ? [key] : []
        })
      )
    ]
    if (keys.length === 0) return NO_FACTS
    const fs = yield* MemoryFs
    const files = keys.map((key) => ({ key, path: NodePath.join(directory, key), candidate: true }))
    return factsOfLines(keys, yield* describeFiles(fs, headBuffer(), files))
  })

const sessionFacts = (prompt: MemoryPromptInput) =>
  Effect.gen(function*() {
    const own = yield* linkedFacts(prompt.memoryDir, prompt.index)
    const team = prompt.team === undefined ? undefined : yield* linkedFacts(prompt.team.teamDir, prompt.team.index)
    return { private: own, team }
  })

export const sessionStart = Effect.fn("Hook.sessionStart")(function*(input: typeof SessionStartInput.Type) {
  const team = yield* locateTeam(Option.some(input.cwd))
  const location = team.memory
  if (!location.enabled) return Option.none<HookOutput>()
  // The directory exists before the prompt says so (docs/configuration.md).
  yield* ensureMemoryDir(location.memoryDir).pipe(Effect.mapError(toIoError("init", location.memoryDir)))
  // A new session is the moment to forget old ones; a failure here must not cost the session its memory.
  yield* (yield* HookSessionState).cleanup(location.memoryDir).pipe(
    Effect.catch((error) => Effect.logWarning(`memdir hook: session cleanup failed: ${error.message}`))
  )
  const index = yield* (yield* MemoryIndex).load(location.memoryDir)
  const teamInput = yield* teamPromptInput(team)
  const prompt: MemoryPromptInput = { memoryDir: location.memoryDir, index, team: teamInput }
  // The compact rules leave the index most of the 10,000 characters; the scan only when it still does not fit.
  const whole = Result.getOrThrow(renderMemoryPrompt(sessionPromptInput(prompt)))
  const context = whole.length <= CONTEXT_MAX_CHARS ?
    whole :
    fitSessionContext(prompt, yield* sessionFacts(prompt))
  return Option.some(hookOutput("SessionStart", context))
})

// ---------------------------------------------------------------------------------------------------------------
// UserPromptSubmit: recall, once per memory per session
// ---------------------------------------------------------------------------------------------------------------

const RECALL_HEADER = "Memories from memdir that may help with this prompt (saved earlier; check before relying on " +
  "them):"

/**
 * Pure: the recalled memories as one context of at most `max` characters. Memories that do not fit are named
 * with their file, so the model can read them.
 */
export const fitRecall = (
  memories: ReadonlyArray<RecalledMemory>,
  max: number = CONTEXT_MAX_CHARS
): { readonly text: string; readonly shown: ReadonlyArray<RecalledMemory> } => {
  const parts: Array<string> = [RECALL_HEADER]
  const shown: Array<RecalledMemory> = []
  const notShown: Array<RecalledMemory> = []
  let length = RECALL_HEADER.length
  // Room kept for the note naming what did not fit.
  const reserve = 200 + memories.length * 300
  for (const memory of memories) {
    const part = renderRecalledMemory(memory)
    if (notShown.length === 0 && length + 2 + part.length <= max - reserve) {
      parts.push(part)
      shown.push(memory)
      length += 2 + part.length
    } else {
      notShown.push(memory)
    }
  }
  if (notShown.length > 0) {
    const names = notShown.map((m) => `- ${m.path} (${m.type}): ${m.description.slice(0, 150)} — ${m.absolutePath}`)
    parts.push(
      `Also relevant, not shown to stay under ${thousands(max)} characters (read with your file tool):\n` +
        names.join("\n")
    )
  }
  return { text: parts.join("\n\n").slice(0, max), shown }
}

const utf8Length = (text: string) => Buffer.byteLength(text, "utf8")

export interface PromptHookOptions {
  /** The hook was asked for the model selector (`--selector model|auto`): said once when the switch keeps it off. */
  readonly wantsModel?: boolean | undefined
}

export const userPromptSubmit = Effect.fn("Hook.userPromptSubmit")(
  function*(input: typeof UserPromptSubmitInput.Type, sessionId: SessionId, options: PromptHookOptions = {}) {
    // One-word, empty and "ignore memory" prompts: nothing, before touching the disk.
    if (skipReasonFor(input.prompt) !== undefined) return Option.none<HookOutput>()
    const team = yield* locateTeam(Option.some(input.cwd))
    const location = team.memory
    if (!location.enabled) return Option.none<HookOutput>()
    const state = yield* HookSessionState
    const before = yield* state.load(location.memoryDir, sessionId)
    if (before.bytes >= RECALL_SESSION_BUDGET_BYTES) return Option.none<HookOutput>()
    // The model picks only when the user turned automatic model calls on: an inherited key alone never does.
    const allowed = automaticModelCallsOn(location)
    if (options.wantsModel === true && !allowed) {
      yield* Console.error(
        `memdir hook: automatic model calls are off (${automaticModelCallsBy(location)}): recalled with the offline ` +
          `selector; ${TURN_ON_HINT}`
      )
    }
    const result = yield* (yield* RecallSession).recall({
      memoryDir: location.memoryDir,
      query: input.prompt,
      teamEnabled: team.enabled,
      alreadyRead: before.surfaced
    }).pipe(Effect.provideService(AutomaticModelCallsAllowed, allowed))
    if (result.selected.length === 0) return Option.none<HookOutput>()
    const { shown, text } = fitRecall(result.selected)
    // Named but not shown counts as surfaced too: the model was told where it is.
    yield* state.record(
      location.memoryDir,
      sessionId,
      result.selected.map((m) => m.path),
      shown.reduce((sum, m) => sum + utf8Length(m.content), 0),
      // which prompt it answered, for `memdir ui`'s activity (one redacted line, as the record keeps it)
      { event: "UserPromptSubmit", prompt: input.prompt }
    )
    return Option.some(hookOutput("UserPromptSubmit", text))
  }
)

// ---------------------------------------------------------------------------------------------------------------
// Stop / SessionEnd: background extraction and dream, detached
// ---------------------------------------------------------------------------------------------------------------

/** The environment variable that carries the background job's input (small: ids and paths only). */
export const BACKGROUND_INPUT_ENV = "MEMDIR_HOOK_BACKGROUND_INPUT"

export interface BackgroundJob {
  readonly session_id: string
  readonly cwd: string
  readonly transcript_path?: string | null | undefined
  /** The id of the run's trace (`.runs/background.jsonl`, BackgroundRuns). */
  readonly run?: string | undefined
}

/**
 * The child's stderr: `.runs/background.stderr`, appended to, opened without following a link or blocking on a FIFO,
 * and only when it is a regular file of one link; else nothing (`ignore`, as before). The one file the CLI opens
 * with `node:fs` itself: `spawn` needs a descriptor, which `MemoryFs` does not hand out.
 */
const openStderr = (path: string | undefined): number | "ignore" => {
  if (path === undefined) return "ignore"
  const { O_APPEND, O_CREAT, O_NOFOLLOW, O_NONBLOCK, O_WRONLY } = NodeFs.constants
  let fd: number | undefined
  try {
    fd = NodeFs.openSync(path, O_WRONLY | O_APPEND | O_CREAT | (O_NOFOLLOW ?? 0) | (O_NONBLOCK ?? 0), 0o600)
    const stat = NodeFs.fstatSync(fd)
    if (stat.isFile() && stat.nlink === 1) return fd
  } catch {
    // a FIFO without a reader (ENXIO), a link (ELOOP), no permission: the child's stderr is not kept
  }
  if (fd !== undefined) NodeFs.closeSync(fd)
  return "ignore"
}

/** Starts `memdir hook --background` detached from this process and returns at once; the child's pid, if it started. */
const spawnJob = (job: BackgroundJob, stderrPath: string | undefined) =>
  Effect.sync(() => {
    const script = process.argv[1]
    if (script === undefined) return undefined
    const stderr = openStderr(stderrPath)
    try {
      const child = spawn(process.execPath, [script, "hook", "--background"], {
        detached: true,
        stdio: ["ignore", "ignore", stderr],
        cwd: job.cwd,
        env: { ...process.env, [BACKGROUND_INPUT_ENV]: JSON.stringify(job) }
      })
      child.on("error", () => {}) // the parent is gone by then: the run's `start` line without an `end` tells it
      child.unref()
      return child.pid
    } catch {
      return undefined
    } finally {
      if (typeof stderr === "number") NodeFs.closeSync(stderr)
    }
  })

/**
 * Starts the background job with its trace (docs/hooks.md#background-runs): the child's stderr to
 * `.runs/background.stderr`, then the run's `start` line with its pid (none: it did not start, and the run reads as
 * died). A trace that cannot be kept never stops the job.
 */
const startBackground = (job: BackgroundJob, memoryDir: string) =>
  Effect.gen(function*() {
    const runs = yield* BackgroundRuns.BackgroundRuns
    const at = yield* Clock.currentTimeMillis
    const run = BackgroundRuns.newRunId(at)
    const stderrPath = yield* runs.prepareStderr(memoryDir).pipe(Effect.option, Effect.map(Option.getOrUndefined))
    const pid = yield* spawnJob({ ...job, run }, stderrPath)
    yield* runs.record(memoryDir, { v: 1, event: "start", run, at, session: job.session_id, ...(pid ? { pid } : {}) })
  }).pipe(
    Effect.catch((error) => Effect.logDebug(`memdir hook: background run not traced: ${error.message}`)),
    Effect.provide(BackgroundRuns.layer)
  )

export const sessionStop = Effect.fn("Hook.sessionStop")(
  function*(input: typeof StopInput.Type | typeof SessionEndInput.Type) {
    if (input.hook_event_name === "Stop" && input.stop_hook_active === true) return Option.none<HookOutput>()
    // Extraction and the dream need a model: without a key there is nothing to start.
    if (!(yield* Model.isConfigured)) return Option.none<HookOutput>()
    const team = yield* locateTeam(Option.some(input.cwd))
    if (!team.memory.enabled) return Option.none<HookOutput>()
    // …and the user's consent: a key inherited from the agent's environment alone never starts billed calls.
    if (!automaticModelCallsOn(team.memory)) return Option.none<HookOutput>()
    yield* startBackground(
      { session_id: input.session_id, cwd: input.cwd, transcript_path: input.transcript_path },
      team.memory.memoryDir
    )
    return Option.none<HookOutput>()
  }
)
