/**
 * Background extraction (docs/extraction.md): after a query loop ends, an agent reads the new messages of the session
 * and writes the memories the main agent missed — the safety net beside the main path.
 *
 * - A cursor per session, `<memdir>/.extract/<session>.json` (atomic), remembers how far the transcript was read.
 *   It moves only after a successful run, so a failed run is retried with the same messages next time.
 * - Only complete query loops are read (no tool call left unanswered, an assistant answer last).
 * - When the main agent wrote memory itself in the new messages, the run is skipped and the cursor advanced: the
 *   main path already did the job, and a second writer would duplicate it.
 * - The extractor: a system prompt from named variants (data, swapped by the evals), the manifest and index of the
 *   existing memories and the new messages in the user turn, the sandboxed `MemoryTools` (read-only project tools,
 *   memory writes only inside the memory directory, no deletes), at most `maxTurns` turns: reads in round 1,
 *   writes in round 2.
 * - `Extractor` is the runtime-facing service (one per session): `onQueryLoopEnd()` starts a run, or — when one is
 *   running — marks ONE trailing run, however many calls arrive meanwhile; `drain(timeout)` waits for both before a
 *   one-shot process exits.
 */
import type Anthropic from "@anthropic-ai/sdk"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Path from "effect/Path"
import * as Ref from "effect/Ref"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SynchronizedRef from "effect/SynchronizedRef"
import * as Agent from "./Agent.js"
import {
  type InvalidMemoryInputError,
  ioErrorOf,
  isMissingFile,
  type LockTimeoutError,
  MemoryIoError,
  ModelError,
  type PathTraversalError,
  type UnknownPromptVariantError
} from "./Errors.js"
import { withLock } from "./internal/fs/lock.js"
import { makeRunTrace } from "./internal/runs/trace.js"
import { manifestLine } from "./Memory.js"
import { FILE_MODE, MemoryFs } from "./MemoryFs.js"
import { MemoryIndex } from "./MemoryIndex.js"
import * as MemoryTools from "./MemoryTools.js"
import { Model, type ModelUsage } from "./Model.js"
import { extractionSection } from "./prompts/ExtractionPrompt.js"
import { typesSection } from "./prompts/MemoryPrompt.js"
import { lookup, paragraphs, renderSection } from "./prompts/PromptSection.js"
import { DEFAULT_CANDIDATE_CAP, Scanner } from "./Scanner.js"
import { TEAM_DIR } from "./TeamGuard.js"
import {
  completePrefixLength,
  type MemoryWriteEvidence,
  memoryWritesIn,
  readTranscript,
  renderMessage,
  type TranscriptMessage
} from "./Transcript.js"
import { shortHash } from "./Write.js"

// ---------------------------------------------------------------------------------------------------------------
// The extractor's prompt (data in prompts/ExtractionPrompt.ts)
// ---------------------------------------------------------------------------------------------------------------

export { DEFAULT_EXTRACTION_PROMPT, EXTRACTION_PROMPT_SECTION, extractionSection } from "./prompts/ExtractionPrompt.js"

/** The extractor's system prompt, by variant name. Slots: memoryDir, projectRoot, maxTurns, types. */
export const extractionPrompts: Readonly<Record<string, string>> = extractionSection.variants

/** The system prompt of a variant; an unknown name is a typed error listing the known ones. */
export const renderExtractionPrompt = (
  variant: string | undefined,
  slots: { readonly memoryDir: string; readonly projectRoot: string; readonly maxTurns: number }
): Result.Result<string, UnknownPromptVariantError> =>
  // The four types are the same text the main agent's prompt uses (one wording per idea).
  Result.flatMap(lookup(typesSection), (types) =>
    renderSection(extractionSection, variant, {
      memoryDir: slots.memoryDir,
      projectRoot: slots.projectRoot,
      maxTurns: String(slots.maxTurns),
      types: types.replace(/^## Types of memory\n\n/, "")
    }))

// ---------------------------------------------------------------------------------------------------------------
// Cursor
// ---------------------------------------------------------------------------------------------------------------

/** Where extraction stopped reading a session's transcript. */
export const ExtractCursor = Schema.Struct({
  version: Schema.Literal(1),
  sessionId: Schema.String,
  /** Messages (as `parseTranscript` counts them) already handled. */
  messageCount: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)),
  /** The `uuid` of the last handled message, when the transcript has them: survives lines being inserted before. */
  lastUuid: Schema.optional(Schema.String),
  transcript: Schema.String,
  updatedAt: Schema.String
})
export type ExtractCursor = typeof ExtractCursor.Type

/** memdir's own state inside the memory directory: hidden, so no scan or tool ever sees it. */
export const CURSOR_DIR = ".extract"

/**
 * A cursor is a few hundred bytes: a larger file at its path is not memdir's cursor and is not read (a typed
 * `TooLarge`, never a hang): the run fails with a `MemoryIoError` naming it, as for any unreadable cursor.
 */
export const CURSOR_MAX_BYTES = 64 * 1024

/**
 * A session id as a file name: `[A-Za-z0-9._-]`, no leading dot, at most 100 characters. An id that needed
 * changes gets a short hash of the original, so two different ids never share a cursor.
 */
export const sessionFileStem = (sessionId: string): string => {
  const safe = sessionId.replace(/[^A-Za-z0-9._-]/g, "-").replace(/^\.+/, "-").slice(0, 100)
  return safe === sessionId && safe !== "" ? safe : `${safe}-${shortHash(sessionId)}`
}

/** Index of the first message not yet handled according to the cursor. */
export const cursorStart = (cursor: ExtractCursor | undefined, messages: ReadonlyArray<TranscriptMessage>): number => {
  if (cursor === undefined) return 0
  if (cursor.lastUuid !== undefined) {
    const at = messages.findIndex((m) => m.uuid === cursor.lastUuid)
    if (at >= 0) return at + 1
  }
  // A transcript shorter than the cursor was rewritten: read it again from the start.
  return cursor.messageCount <= messages.length ? cursor.messageCount : 0
}

// ---------------------------------------------------------------------------------------------------------------
// The program
// ---------------------------------------------------------------------------------------------------------------

export interface ExtractInput {
  readonly memoryDir: string
  /** The project's root (the read-only tools' root). */
  readonly projectRoot: string
  /** Path of the session's JSONL transcript (memdir's format or the reference agent's). */
  readonly transcript: string
  /** Default: the transcript's own session id, else the file name without `.jsonl`. */
  readonly sessionId?: string | undefined
  /** Extraction prompt variant (default `DEFAULT_EXTRACTION_PROMPT`). */
  readonly variant?: string | undefined
  /** Default `DEFAULT_MAX_TURNS`. */
  readonly maxTurns?: number | undefined
  /** Output tokens per turn (default `DEFAULT_MAX_TOKENS`). */
  readonly maxTokens?: number | undefined
  /** Characters of rendered messages per run at most; more is left for the next run (`remaining`). */
  readonly maxMessageChars?: number | undefined
  /**
   * Team memory is on (the resolved team location says so): the extractor may list and write `team/…`, which the
   * `MemoryStore` routes through the `TeamGuard` service like every other team write.
   */
  readonly teamEnabled?: boolean | undefined
  /** The user's home, to recognise `~/…` in the main agent's shell commands (default: `HOME`). */
  readonly homeDir?: string | undefined
}

/** The report a run that saved something leaves beside its backups: `.extract/<session>/<stamp>/report.json`. */
export const EXTRACT_REPORT_FILE = "report.json"

/** What `report.json` holds: when the run started, the messages it read, each memory it changed. */
export interface ExtractReport {
  readonly at: string
  readonly sessionId: string
  readonly range: { readonly from: number; readonly to: number; readonly total: number }
  readonly changes: ReadonlyArray<
    { readonly op: "created" | "updated" | "deleted"; readonly file: string; readonly backup?: string }
  >
  readonly refused: number
}

export const DEFAULT_MAX_TURNS = 4
export const DEFAULT_MAX_TOKENS = 4096
export const DEFAULT_MAX_MESSAGE_CHARS = 60_000

export type ExtractStatus = "extracted" | "skipped-main-agent-wrote" | "up-to-date"

export interface ExtractResult {
  readonly sessionId: string
  readonly status: ExtractStatus
  /** Messages `from` (inclusive) to `to` (exclusive), 0-based, of `total` in the transcript. */
  readonly range: { readonly from: number; readonly to: number; readonly total: number }
  /** Complete messages after `to` left for the next run (the run's size budget). */
  readonly remaining: number
  /**
   * Every memory the extractor created, updated or deleted; an update or deletion names its `backup`, the text it
   * replaced, kept before the change under `backupDir`.
   */
  readonly changes: ReadonlyArray<MemoryTools.MemoryChange>
  /**
   * `.extract/<session>/<stamp>` (relative to the memory directory) when the run changed a memory: its `report.json`
   * (`ExtractReport`) and the backups of what it replaced or deleted.
   */
  readonly backupDir?: string | undefined
  readonly refusals: ReadonlyArray<MemoryTools.ToolRefusal>
  /** Why the run was skipped: the main agent's own memory writes. */
  readonly mainAgentWrites: ReadonlyArray<MemoryWriteEvidence>
  /** Lines of the transcript that could not be read (reported, skipped). */
  readonly transcriptProblems: number
  readonly cursorFile: string
  /** The extractor's run, when there was one. */
  readonly agent?: {
    readonly turns: number
    readonly stop: string
    readonly usage: ModelUsage
    readonly model: string
    readonly toolCalls: ReadonlyArray<Agent.AgentToolCall>
    readonly messages: ReadonlyArray<Anthropic.MessageParam>
  } | undefined
}

export type ExtractError =
  | ModelError
  | PathTraversalError
  | UnknownPromptVariantError
  | MemoryIoError
  | LockTimeoutError
  | InvalidMemoryInputError

/** What `extract` needs: the model, the file system and the memory services. */
export type ExtractRequirements =
  | Model
  | MemoryFs
  | Path.Path
  | MemoryIndex
  | Scanner
  | MemoryTools.MemoryToolsRequirements

/** How long a second extraction of the same session waits for the first (another process) before giving up. */
const SESSION_LOCK = { timeout: Duration.seconds(5), staleAfter: Duration.minutes(15) }

const homeFromConfig: Effect.Effect<string | undefined> = Config.option(Config.String("HOME")).pipe(
  Effect.map(Option.getOrUndefined),
  Effect.orElseSucceed(() => undefined)
)

/** Messages from `start` that fit the budget (at least one, so every run makes progress). */
const takeWithinBudget = (
  messages: ReadonlyArray<TranscriptMessage>,
  start: number,
  end: number,
  maxChars: number
): { readonly to: number; readonly rendered: string } => {
  const parts: Array<string> = []
  let used = 0
  let to = start
  while (to < end) {
    const part = renderMessage(messages[to]!, to)
    if (parts.length > 0 && used + part.length > maxChars) break
    parts.push(part)
    used += part.length + 2
    to++
  }
  return { to, rendered: parts.join("\n\n") }
}

/** Run extraction once for a session. See the module comment for what it does and when the cursor moves. */
export const extract = Effect.fn("Extract.extract")(function*(input: ExtractInput) {
  const model = yield* Model
  const fs = yield* MemoryFs
  const path = yield* Path.Path
  const scanner = yield* Scanner
  const index = yield* MemoryIndex
  const maxTurns = input.maxTurns ?? DEFAULT_MAX_TURNS
  const memoryDir = path.resolve(input.memoryDir)
  const projectRoot = path.resolve(input.projectRoot)

  if (!model.available) {
    return yield* new ModelError({
      kind: "not-configured",
      role: "extractor",
      model: model.modelFor("extractor"),
      detail: "Extraction needs a model; recall, write, ls and doctor work without one."
    })
  }
  const system = yield* Effect.fromResult(renderExtractionPrompt(input.variant, { memoryDir, projectRoot, maxTurns }))
  const transcript = yield* readTranscript(input.transcript)
  const sessionId = input.sessionId ?? transcript.sessionId ?? path.basename(input.transcript).replace(/\.jsonl?$/, "")
  const cursorDir = path.join(memoryDir, CURSOR_DIR)
  const stem = sessionFileStem(sessionId)
  const cursorFile = path.join(cursorDir, `${stem}.json`)
  const homeDir = input.homeDir ?? (yield* homeFromConfig)
  yield* fs.makeDirectory(cursorDir).pipe(Effect.mapError(ioErrorOf("create directory", cursorDir)))

  const readCursor = Effect.gen(function*() {
    const text = yield* fs.readFile(cursorFile, { maxBytes: CURSOR_MAX_BYTES }).pipe(
      Effect.map((file) => Option.some(file.text)),
      Effect.catchIf(isMissingFile, () => Effect.succeedNone),
      Effect.mapError(ioErrorOf("read extraction cursor", cursorFile))
    )
    if (Option.isNone(text)) return undefined
    return yield* Effect.try(() => JSON.parse(text.value) as unknown).pipe(
      Effect.flatMap(Schema.decodeUnknownEffect(ExtractCursor)),
      Effect.mapError(() =>
        new MemoryIoError({
          op: "read extraction cursor",
          path: cursorFile,
          detail: "not a memdir extraction cursor; remove it to read the session again from the start"
        })
      )
    )
  })

  const writeCursor = (messages: ReadonlyArray<TranscriptMessage>, to: number) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const cursor: ExtractCursor = {
        version: 1,
        sessionId,
        messageCount: to,
        ...(messages[to - 1]?.uuid === undefined ? {} : { lastUuid: messages[to - 1]!.uuid! }),
        transcript: path.resolve(input.transcript),
        updatedAt: new Date(now).toISOString()
      }
      yield* fs.writeFileAtomic(cursorFile, JSON.stringify(cursor, null, 2) + "\n", { mode: FILE_MODE }).pipe(
        Effect.mapError(ioErrorOf("write", cursorFile))
      )
    })

  const run: Effect.Effect<ExtractResult, ExtractError, ExtractRequirements> = Effect.gen(function*() {
    const messages = transcript.messages
    const start = cursorStart(yield* readCursor, messages)
    const complete = completePrefixLength(messages)
    const base = {
      sessionId,
      changes: [],
      refusals: [],
      mainAgentWrites: [],
      transcriptProblems: transcript.problems.length,
      cursorFile
    }
    if (start >= complete) {
      return {
        ...base,
        status: "up-to-date" as const,
        range: { from: start, to: start, total: messages.length },
        remaining: 0
      }
    }
    const budget = takeWithinBudget(messages, start, complete, input.maxMessageChars ?? DEFAULT_MAX_MESSAGE_CHARS)
    const range = { from: start, to: budget.to, total: messages.length }
    const remaining = complete - budget.to

    const mainAgentWrites = memoryWritesIn(messages.slice(start, budget.to), memoryDir, { homeDir }, start)
    if (mainAgentWrites.length > 0) {
      yield* writeCursor(messages, budget.to)
      return { ...base, status: "skipped-main-agent-wrote" as const, range, remaining, mainAgentWrites }
    }

    // What the extractor replaces is kept first, under `.extract/<session>/<stamp>/` (created with its first backup).
    const startedAt = yield* Clock.currentTimeMillis
    const trace = yield* makeRunTrace(memoryDir, `${CURSOR_DIR}/${stem}`, startedAt)
    const toolset = yield* MemoryTools.make({ memoryDir, projectRoot, team: input.teamEnabled === true, trace })
    // The manifest lists what the tools can read: team/ only with team memory on.
    const scan = yield* scanner.scan(memoryDir, {
      limit: DEFAULT_CANDIDATE_CAP,
      skipDirs: input.teamEnabled === true ? [] : [TEAM_DIR]
    })
    const loadedIndex = yield* index.load(memoryDir)
    const today = new Date(yield* Clock.currentTimeMillis).toISOString().slice(0, 10)
    const manifest = scan.memories.length === 0 ? "(none yet)" : scan.memories.map(manifestLine).join("\n")
    const user = paragraphs(
      `Today is ${today}.`,
      `## Existing memories (${scan.memories.length})`,
      manifest,
      "## MEMORY.md",
      loadedIndex.content.trim() === "" ? "(empty)" : loadedIndex.content.trim(),
      `## New messages: #${range.from + 1}–#${range.to} of the conversation`,
      budget.rendered
    )
    const agent = yield* Agent.run({
      role: "extractor",
      system: [{ text: system, cache: true }],
      messages: [{ role: "user", content: user }],
      tools: toolset.tools,
      maxTurns,
      maxTokens: input.maxTokens ?? DEFAULT_MAX_TOKENS
    })
    // A write the disk or the lock refused: not a success, so the cursor stays and the next run retries.
    const [ioFailure] = yield* toolset.ioFailures
    if (ioFailure !== undefined) return yield* ioFailure.error
    yield* writeCursor(messages, budget.to)
    const backups = yield* trace.backups
    const changes = yield* toolset.changes
    // what the run saved, beside its backups: what `memdir ui`'s activity view lists (a run that saved nothing
    // leaves no directory). A report that cannot be written is a warning: the memories are saved already.
    if (changes.length > 0) {
      const report: ExtractReport = {
        at: new Date(startedAt).toISOString(),
        sessionId,
        range,
        changes: changes.map((c) => ({
          op: c.op,
          file: c.file,
          ...(c.backup === undefined ? {} : { backup: c.backup })
        })),
        refused: (yield* toolset.refusals).length
      }
      yield* trace.write(EXTRACT_REPORT_FILE, JSON.stringify(report, null, 2) + "\n").pipe(
        Effect.catch((error) => Effect.logWarning(`extraction: its report was not kept: ${error.message}`))
      )
    }
    return {
      ...base,
      status: "extracted" as const,
      range,
      remaining,
      ...(backups.size === 0 && changes.length === 0 ? {} : { backupDir: trace.backupDir }),
      changes,
      refusals: yield* toolset.refusals,
      agent: {
        turns: agent.turns,
        stop: agent.stop,
        usage: agent.usage,
        model: agent.model,
        toolCalls: agent.toolCalls,
        messages: agent.messages
      }
    }
  })

  const result: ExtractResult = yield* withLock(path.join(cursorDir, `${stem}.lock`), run, SESSION_LOCK)
  yield* Effect.annotateCurrentSpan({
    "extract.status": result.status,
    "extract.from": result.range.from,
    "extract.to": result.range.to,
    "extract.changes": result.changes.length,
    "extract.refusals": result.refusals.length
  })
  return result
})

// ---------------------------------------------------------------------------------------------------------------
// Extractor: the runtime-facing service (one per session)
// ---------------------------------------------------------------------------------------------------------------

/** One finished run of an `Extractor`. */
export interface ExtractorRun {
  readonly startedAt: number
  readonly endedAt: number
  readonly outcome: Result.Result<ExtractResult, ExtractError>
}

export interface DrainResult {
  /** False: the timeout passed with a run still going (it is interrupted when the Extractor's scope closes). */
  readonly drained: boolean
  readonly runs: number
}

export class Extractor extends Context.Service<Extractor, {
  /**
   * Call at the end of every complete query loop. Starts a run in the background and returns at once; a call that
   * arrives while a run is going marks one trailing run (several such calls still make one).
   */
  readonly onQueryLoopEnd: () => Effect.Effect<void>
  /** Wait for the running and the trailing run, at most `timeout` (for a one-shot process about to exit). */
  readonly drain: (timeout: Duration.Input) => Effect.Effect<DrainResult>
  /** The runs finished so far, oldest first. */
  readonly runs: Effect.Effect<ReadonlyArray<ExtractorRun>>
}>()("@memdir/core/Extractor") {}

interface ExtractorState {
  readonly running: boolean
  readonly trailing: boolean
  /** Completed when the current busy period (run + trailing runs) ends. */
  readonly idle: Deferred.Deferred<void>
}

/**
 * An Extractor for one session. Runs are forked into the scope: closing it (the session ending) interrupts a run
 * in progress, whose cursor then stays where it was.
 */
export const make = Effect.fn("Extractor.make")(function*(input: ExtractInput) {
  const scope = yield* Effect.scope
  const context = yield* Effect.context<ExtractRequirements>()
  const done = yield* Deferred.make<void>()
  yield* Deferred.succeed(done, undefined)
  const state = yield* SynchronizedRef.make<ExtractorState>({ running: false, trailing: false, idle: done })
  const runs = yield* Ref.make<ReadonlyArray<ExtractorRun>>([])

  const runOnce = Effect.gen(function*() {
    const startedAt = yield* Clock.currentTimeMillis
    const outcome = yield* Effect.result(extract(input).pipe(Effect.provide(context)))
    const endedAt = yield* Clock.currentTimeMillis
    yield* Ref.update(runs, (all) => [...all, { startedAt, endedAt, outcome }])
    if (Result.isFailure(outcome)) {
      yield* Effect.logWarning(
        `memdir extraction failed; the cursor stays for the next run: ${outcome.failure.message}`
      )
    }
    // More complete messages than one run's budget: go on without waiting for the next call.
    return Result.isSuccess(outcome) && outcome.success.remaining > 0 &&
      outcome.success.range.to > outcome.success.range.from
  })

  const busyPeriod = Effect.gen(function*() {
    for (;;) {
      const more = yield* runOnce
      const next = yield* SynchronizedRef.modify(
        state,
        (s): [Option.Option<Deferred.Deferred<void>>, ExtractorState] =>
          s.trailing || more ?
            [Option.none(), { ...s, trailing: false }] :
            [Option.some(s.idle), { ...s, running: false }]
      )
      if (Option.isSome(next)) return yield* Deferred.succeed(next.value, undefined)
    }
  })

  const onQueryLoopEnd = () =>
    SynchronizedRef.modifyEffect(state, (s) =>
      s.running ?
        Effect.succeed([false, { ...s, trailing: true }] as const) :
        Effect.map(Deferred.make<void>(), (idle) => [true, { running: true, trailing: false, idle }] as const)).pipe(
        Effect.flatMap((start) => start ? Effect.asVoid(Effect.forkIn(busyPeriod, scope)) : Effect.void),
        Effect.withSpan("Extractor.onQueryLoopEnd")
      )

  const drain = (timeout: Duration.Input) =>
    Effect.gen(function*() {
      const { idle } = yield* SynchronizedRef.get(state)
      const finished = yield* Deferred.await(idle).pipe(Effect.timeoutOption(timeout))
      return { drained: Option.isSome(finished), runs: (yield* Ref.get(runs)).length }
    }).pipe(Effect.withSpan("Extractor.drain"))

  return Extractor.of({ onQueryLoopEnd, drain, runs: Ref.get(runs) })
})

/** The Extractor of one session, living as long as the layer's scope. */
export const layer = (
  input: ExtractInput
): Layer.Layer<Extractor, never, ExtractRequirements> => Layer.effect(Extractor, make(input))
