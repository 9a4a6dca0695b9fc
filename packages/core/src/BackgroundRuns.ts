/**
 * BackgroundRuns: the trace a detached background job (extraction and the dream, started by a `Stop` / `SessionEnd`
 * hook with its stdio closed) leaves in the memory directory, so a refused key, a rate limit or a crash is seen
 * later by `memdir doctor` (docs/hooks.md#background-runs).
 *
 * `<memdir>/.runs/background.jsonl` (hidden: the scanner, recall, the memory tools, the dream's commit and team
 * sync never see it) holds one `start` line per run, written by the hook that starts it (with the child's pid), and
 * one `end` line, written by the job when it stops for any reason (done, failed, a defect, its time limit): what ran
 * (extraction: messages read, memories written, refusals; the dream: its gates, ran or not and why), the outcome and
 * the failure's tag and one line of message, secrets redacted. A `start` without an `end` whose process is gone is a
 * run that died (killed, out of memory, a crash before it could write). Bounded: the newest `MAX_RUNS` runs and at
 * most `MAX_LOG_BYTES`, rewritten atomically when over; appends and rewrites under `.runs/background.lock`.
 *
 * `<memdir>/.runs/background.stderr` is what the job's process itself writes on stderr (its warnings, and what
 * Node prints when it dies outside memdir's code); the hook opens it for the child, after `prepareStderr` has cut
 * it back to its last `STDERR_KEEP_BYTES` once it is over `MAX_STDERR_BYTES`.
 *
 * Every read and write goes through `MemoryFs` (bounded reads that never follow a link or block on a FIFO, atomic
 * writes, inside the memory directory only); a trace that cannot be written is logged, never a failure of the run.
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type { DreamOutcome } from "./Dream.js"
import { type LockTimeoutError, MemoryIoError } from "./Errors.js"
import { isProcessAlive } from "./internal/fs/leftovers.js"
import { withLock } from "./internal/fs/lock.js"
import { FILE_MODE, layerMemory, MemoryFs, type MemoryFsError } from "./MemoryFs.js"
import { scanSecrets } from "./SecretScan.js"

export const RUNS_DIR = ".runs"
export const RUNS_FILE = "background.jsonl"
export const STDERR_FILE = "background.stderr"
/** Runs kept at most (the newest). */
export const MAX_RUNS = 50
/** The log's size at most: over it, the oldest runs go. */
export const MAX_LOG_BYTES = 64 * 1024
/** The child's stderr file is cut back to its last `STDERR_KEEP_BYTES` when over this before a run starts. */
export const MAX_STDERR_BYTES = 64 * 1024
export const STDERR_KEEP_BYTES = 16 * 1024
/** A failure's message is one line of at most this many characters. */
export const MAX_MESSAGE_CHARS = 300
/** Warnings kept per run at most. */
export const MAX_WARNINGS = 5
/** A run without an `end` older than this (the job's 15-minute limit and some) died, whatever its pid says. */
export const RUN_MAX_AGE_MS = 17 * 60_000
/** A log line longer than this is not read (a run's line is a few hundred bytes). */
const MAX_LINE_CHARS = 8_192
const LOCK_TIMEOUT = "2 seconds"

// ---------------------------------------------------------------------------------------------------------------
// The lines
// ---------------------------------------------------------------------------------------------------------------

export const RunFailure = Schema.Struct({
  /** The error's `_tag` (`ModelError`, `MemoryIoError`…), `Interrupted` or `Defect`. */
  tag: Schema.String,
  /** A finer reason where the error has one (`ModelError.kind`: `authentication`, `rate-limited`…). */
  kind: Schema.optional(Schema.String),
  message: Schema.String
})
export type RunFailure = typeof RunFailure.Type

export const ExtractionNote = Schema.Struct({
  /** The last run's status, or `failed`. */
  status: Schema.Literals(["extracted", "skipped-main-agent-wrote", "up-to-date", "failed"]),
  /** Extraction runs made (a backlog is read in several). */
  runs: Schema.Number,
  messagesRead: Schema.Number,
  written: Schema.Number,
  refused: Schema.Number,
  failure: Schema.optional(RunFailure)
})
export type ExtractionNote = typeof ExtractionNote.Type

export const DreamNote = Schema.Struct({
  /** The gates let it through (`open`) or one stopped it (`closed`, with `stoppedBy` and `reason`). */
  gates: Schema.Literals(["open", "closed"]),
  ran: Schema.Boolean,
  stoppedBy: Schema.optional(Schema.String),
  reason: Schema.optional(Schema.String),
  status: Schema.optional(Schema.Literals(["completed", "failed"])),
  created: Schema.optional(Schema.Number),
  updated: Schema.optional(Schema.Number),
  merged: Schema.optional(Schema.Number),
  deleted: Schema.optional(Schema.Number)
})
export type DreamNote = typeof DreamNote.Type

export const StartLine = Schema.Struct({
  v: Schema.Literal(1),
  event: Schema.Literal("start"),
  run: Schema.String,
  at: Schema.Number,
  session: Schema.String,
  /** The job's process (the hook's child). */
  pid: Schema.optional(Schema.Number)
})
export type StartLine = typeof StartLine.Type

export const EndLine = Schema.Struct({
  v: Schema.Literal(1),
  event: Schema.Literal("end"),
  run: Schema.String,
  at: Schema.Number,
  session: Schema.String,
  outcome: Schema.Literals(["ok", "failed"]),
  extraction: Schema.optional(ExtractionNote),
  dream: Schema.optional(DreamNote),
  failure: Schema.optional(RunFailure),
  warnings: Schema.optional(Schema.Array(Schema.String))
})
export type EndLine = typeof EndLine.Type

export const RunLine = Schema.Union([StartLine, EndLine])
export type RunLine = typeof RunLine.Type
const decodeLine = Schema.decodeUnknownOption(Schema.fromJsonString(RunLine))

/** One run as the log tells it: its two lines joined. */
export interface BackgroundRun {
  readonly run: string
  readonly session: string
  readonly startedAt?: number | undefined
  readonly endedAt?: number | undefined
  readonly pid?: number | undefined
  /** `running`: no `end` yet and its process is alive; `died`: no `end` and its process is gone (or it is too old). */
  readonly state: "ok" | "failed" | "running" | "died"
  readonly extraction?: ExtractionNote | undefined
  readonly dream?: DreamNote | undefined
  readonly failure?: RunFailure | undefined
  readonly warnings?: ReadonlyArray<string> | undefined
}

export interface RecentRuns {
  /** Newest first. */
  readonly runs: ReadonlyArray<BackgroundRun>
  /** The last lines of the job's stderr file (redacted), when it holds anything. */
  readonly stderrTail?: string | undefined
}

// ---------------------------------------------------------------------------------------------------------------
// Redaction and failures
// ---------------------------------------------------------------------------------------------------------------

const REDACTED = "[redacted]"
/** Shapes of credentials the secret scanner leaves to context: API keys by prefix, bearer tokens, `key=value`. */
const CREDENTIAL_SHAPES: ReadonlyArray<RegExp> = [
  /\b(?:sk|pk|rk)-[A-Za-z0-9_-]{6,}/g,
  /\b(?:bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi,
  /\b((?:x-)?api[-_]?key|token|secret|password|authorization)(["']?\s*[:=]\s*["']?)[^\s"',;]+/gi,
  // long opaque tokens: at least one letter and one digit, 32+ characters
  /\b(?=[A-Za-z0-9_+/=-]*[0-9])(?=[A-Za-z0-9_+/=-]*[A-Za-z])[A-Za-z0-9_+/=-]{32,}/g
]

/** `text` with anything that looks like a secret replaced by `[redacted]`. */
export const redactSecrets = (text: string): string => {
  const lines = text.split("\n").map((line) => {
    // the scanner's findings first (its vendor patterns), each cut to the next blank or quote
    const spans = scanSecrets(line).map((f) => f.column - 1).sort((a, b) => b - a)
    let out = line
    for (const start of spans) {
      const rest = out.slice(start)
      const end = rest.search(/[\s"'`,;)]/)
      out = out.slice(0, start) + REDACTED + (end === -1 ? "" : rest.slice(end))
    }
    return out
  })
  let out = lines.join("\n")
  for (const shape of CREDENTIAL_SHAPES) {
    out = out.replace(
      shape,
      (_match, name?: unknown, separator?: unknown) =>
        typeof name === "string" && typeof separator === "string" ? `${name}${separator}${REDACTED}` : REDACTED
    )
  }
  return out
}

/** One line, at most `MAX_MESSAGE_CHARS`, secrets redacted: what a trace may keep of a message. */
export const oneLine = (text: string, max = MAX_MESSAGE_CHARS): string => {
  const flat = redactSecrets(text).replace(/[\u0000-\u001f\u007f]+/g, " ").replace(/\s+/g, " ").trim()
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`
}

const stringField = (value: unknown, key: string): string | undefined => {
  if (value === null || typeof value !== "object" || !(key in value)) return undefined
  const field = (value as Record<string, unknown>)[key]
  return typeof field === "string" ? field : undefined
}

/** A typed failure (or any thrown value) as the trace keeps it: tag, kind and one redacted line. */
export const failureOf = (error: unknown): RunFailure => {
  const tag = stringField(error, "_tag") ?? (error instanceof Error ? error.name : "Error")
  const kind = stringField(error, "kind") ?? stringField(error, "reason")
  const message = error instanceof Error ? error.message : stringField(error, "message") ?? String(error)
  return { tag, ...(kind === undefined ? {} : { kind }), message: oneLine(message) }
}

/** How a job's `Exit` is recorded: its typed failure, else its defect, else an interruption. */
export const failureOfCause = (cause: Cause.Cause<unknown>): RunFailure => {
  const failure = Cause.findErrorOption(cause)
  if (Option.isSome(failure)) return failureOf(failure.value)
  const defect = Cause.findDefect(cause)
  if (Result.isSuccess(defect)) return { ...failureOf(defect.success), tag: "Defect" }
  return {
    tag: "Interrupted",
    message: "stopped before it finished (its 15-minute limit, or the process was asked to stop)"
  }
}

/** What to do about a failure, for `memdir doctor`; `undefined` when there is nothing specific to say. */
export const fixHint = (failure: RunFailure): string | undefined => {
  if (failure.tag === "ModelError") {
    switch (failure.kind) {
      case "authentication":
        return "the API key was refused: check ANTHROPIC_API_KEY"
      case "not-configured":
        return "no model is configured: set ANTHROPIC_API_KEY"
      case "permission":
      case "not-found":
        return "check the model (MEMDIR_MODEL_EXTRACTOR, MEMDIR_MODEL_DREAMER) and ANTHROPIC_BASE_URL"
      case "rate-limited":
      case "overloaded":
        return "the API is busy or rate-limited: the next session retries; raise MEMDIR_MODEL_MAX_RETRIES if it persists"
      case "timeout":
        return "the model did not answer in time: raise MEMDIR_MODEL_TIMEOUT"
      case "connection":
        return "the API could not be reached: check ANTHROPIC_BASE_URL and the network"
      default:
        return undefined
    }
  }
  if (failure.tag === "MemoryIoError" || failure.tag === "MemoryFsError") {
    return "check the memory directory's permissions and free space"
  }
  if (failure.tag === "LockTimeoutError") return "another memdir held a lock; the next run retries"
  if (failure.tag === "Interrupted") return "the job hit its 15-minute limit or was stopped; the next session retries"
  if (failure.tag === "Defect") return "a bug in memdir: please report it with this message"
  return undefined
}

// ---------------------------------------------------------------------------------------------------------------
// The log
// ---------------------------------------------------------------------------------------------------------------

const parseLines = (text: string): Array<RunLine> => {
  const lines: Array<RunLine> = []
  for (const raw of text.split("\n")) {
    if (raw.length === 0 || raw.length > MAX_LINE_CHARS) continue
    const line = decodeLine(raw)
    if (Option.isSome(line)) lines.push(line.value) // a corrupt or foreign line is skipped
  }
  return lines
}

const runIds = (lines: ReadonlyArray<RunLine>): Array<string> => [...new Set(lines.map((l) => l.run))]

/** The lines of the newest runs within both bounds (runs and bytes), in their order. */
export const keepWithinBounds = (lines: ReadonlyArray<RunLine>, maxRuns = MAX_RUNS, maxBytes = MAX_LOG_BYTES) => {
  const ids = runIds(lines)
  let kept = new Set(ids.slice(-maxRuns))
  const render = () => lines.filter((l) => kept.has(l.run)).map((l) => JSON.stringify(l) + "\n").join("")
  let text = render()
  // drop the oldest runs until the bytes fit (a run's lines are small: this ends quickly)
  while (Buffer.byteLength(text, "utf8") > maxBytes && kept.size > 1) {
    kept = new Set([...kept].slice(Math.max(1, Math.ceil(kept.size / 8))))
    text = render()
  }
  return text
}

/** Joins each run's lines; newest first. */
export const joinRuns = (
  lines: ReadonlyArray<RunLine>,
  now: number,
  alive: (pid: number) => boolean = isProcessAlive
): Array<BackgroundRun> => {
  const byRun = new Map<string, { start?: StartLine; end?: EndLine; order: number }>()
  lines.forEach((line, order) => {
    const entry = byRun.get(line.run) ?? { order }
    if (line.event === "start") entry.start = line
    else entry.end = line
    entry.order = Math.max(entry.order, order)
    byRun.set(line.run, entry)
  })
  const runs = [...byRun.entries()].map(([run, { end, order, start }]) => {
    const startedAt = start?.at
    const pid = start?.pid
    const state: BackgroundRun["state"] = end !== undefined
      ? end.outcome
      : pid !== undefined && alive(pid) && (startedAt === undefined || now - startedAt < RUN_MAX_AGE_MS)
      ? "running"
      : "died"
    const result: BackgroundRun = {
      run,
      session: end?.session ?? start?.session ?? "",
      startedAt,
      endedAt: end?.at,
      pid,
      state,
      extraction: end?.extraction,
      dream: end?.dream,
      failure: end?.failure,
      warnings: end?.warnings
    }
    return { result, sortKey: startedAt ?? end?.at ?? 0, order }
  })
  runs.sort((a, b) => b.sortKey - a.sortKey || b.order - a.order)
  return runs.map((r) => r.result)
}

export class BackgroundRuns extends Context.Service<BackgroundRuns, {
  /** Appends one line to the log (rewritten atomically, oldest runs dropped, when over its bounds). */
  readonly record: (memoryDir: string, line: RunLine) => Effect.Effect<void, MemoryIoError | LockTimeoutError>
  /** The newest `max` runs (default 10), newest first, and the stderr file's last lines. Nothing there: none. */
  readonly recent: (memoryDir: string, max?: number) => Effect.Effect<RecentRuns, MemoryIoError>
  /**
   * Makes `.runs/` (inside the memory directory), cuts the stderr file back when over its bound, and answers its
   * real absolute path, for the hook to open as the child's stderr.
   */
  readonly prepareStderr: (memoryDir: string) => Effect.Effect<string, MemoryIoError>
}>()("@memdir/core/BackgroundRuns") {}

const toIo = (op: string) => (error: MemoryFsError) =>
  new MemoryIoError({ op, path: error.path, detail: error.message })

const isNotFound = (error: MemoryFsError) => error.reason === "NotFound"

export const make = Effect.gen(function*() {
  const fs = yield* MemoryFs

  /** The real memory directory and `.runs/` inside it. */
  const where = (memoryDir: string) =>
    Effect.map(fs.realPathOfDeepestExisting(memoryDir), (real) => {
      const root = real.length > 1 ? real.replace(/[\\/]+$/, "") : real
      const dir = `${root}/${RUNS_DIR}`
      return { root, dir, log: `${dir}/${RUNS_FILE}`, stderr: `${dir}/${STDERR_FILE}` }
    }).pipe(Effect.mapError(toIo("locate background runs")))

  /** The log's text; missing: empty. Read bounded, never following a link or blocking on a FIFO. */
  const readLog = (log: string, root: string) =>
    fs.readFile(log, { maxBytes: MAX_LOG_BYTES * 4, within: root }).pipe(
      Effect.map((file) => file.text),
      Effect.catchTag("MemoryFsError", (error) =>
        isNotFound(error) ? Effect.succeed("") : Effect.fail(toIo("read background runs")(error)))
    )

  const record = Effect.fn("BackgroundRuns.record")(function*(memoryDir: string, line: RunLine) {
    const { dir, log, root } = yield* where(memoryDir)
    yield* fs.makeDirectory(dir, { within: root }).pipe(Effect.mapError(toIo("write background runs")))
    const text = JSON.stringify(line) + "\n"
    const update = Effect.gen(function*() {
      // a log over the read bound, or unreadable as a regular file, is started over with this line
      const before = yield* readLog(log, root).pipe(
        Effect.catch(() => Effect.succeed<string | undefined>(undefined))
      )
      const lines = before === undefined ? [] : parseLines(before)
      const ids = runIds([...lines, line])
      const over = before === undefined || ids.length > MAX_RUNS ||
        Buffer.byteLength(before, "utf8") + Buffer.byteLength(text, "utf8") > MAX_LOG_BYTES
      yield* (over
        ? fs.writeFileAtomic(log, keepWithinBounds([...lines, line]), { mode: FILE_MODE, within: root })
        : fs.append(log, text)).pipe(Effect.mapError(toIo("write background runs")))
    })
    yield* withLock(`${dir}/background.lock`, update, { timeout: LOCK_TIMEOUT }).pipe(
      Effect.provideService(MemoryFs, fs)
    )
  })

  const stderrTail = (stderr: string, root: string) =>
    fs.readFile(stderr, { maxBytes: MAX_STDERR_BYTES * 4, within: root }).pipe(
      Effect.map((file) => {
        const lines = file.text.split("\n").map((l) => l.trimEnd()).filter((l) => l.length > 0)
        const tail = lines.slice(-5).map((l) => oneLine(l)).join("\n")
        return tail.length === 0 ? undefined : tail
      }),
      Effect.orElseSucceed(() => undefined)
    )

  const recent = Effect.fn("BackgroundRuns.recent")(function*(memoryDir: string, max = 10) {
    const { log, root, stderr } = yield* where(memoryDir)
    const text = yield* readLog(log, root)
    if (text === "") return { runs: [] } satisfies RecentRuns
    const now = yield* Clock.currentTimeMillis
    const runs = joinRuns(parseLines(text), now).slice(0, Math.max(0, max))
    const tail = yield* stderrTail(stderr, root)
    return { runs, ...(tail === undefined ? {} : { stderrTail: tail }) } satisfies RecentRuns
  })

  const prepareStderr = Effect.fn("BackgroundRuns.prepareStderr")(function*(memoryDir: string) {
    const { dir, root, stderr } = yield* where(memoryDir)
    yield* fs.makeDirectory(dir, { within: root }).pipe(Effect.mapError(toIo("prepare background stderr")))
    const info = yield* fs.lstat(stderr).pipe(Effect.option)
    if (Option.isSome(info) && info.value.kind === "File" && info.value.size > MAX_STDERR_BYTES) {
      const bytes = yield* fs.readBytes(stderr, { maxBytes: info.value.size * 2, within: root }).pipe(
        Effect.mapError(toIo("read background stderr"))
      )
      const kept = Buffer.from(bytes.bytes.subarray(bytes.bytes.length - STDERR_KEEP_BYTES)).toString("utf8")
      // from the first whole line on
      const text = kept.slice(kept.indexOf("\n") + 1)
      yield* fs.writeFileAtomic(stderr, text, { mode: FILE_MODE, within: root, durable: false }).pipe(
        Effect.mapError(toIo("trim background stderr"))
      )
    }
    return stderr
  })

  return BackgroundRuns.of({ record, recent, prepareStderr })
})

/** The live service over the given `MemoryFs`. */
export const layer: Layer.Layer<BackgroundRuns, never, MemoryFs> = Layer.effect(BackgroundRuns, make)

/** In memory: the same service over an empty in-memory file system. */
export const layerTest: Layer.Layer<BackgroundRuns> = layer.pipe(Layer.provide(layerMemory()))

// ---------------------------------------------------------------------------------------------------------------
// Tracking one run
// ---------------------------------------------------------------------------------------------------------------

/** What a job tells the trace as it goes; kept even when a later step fails. */
export interface RunNotes {
  readonly extraction: (note: ExtractionNote) => Effect.Effect<void>
  readonly dream: (note: DreamNote) => Effect.Effect<void>
}

/** What a dream's outcome tells the trace: the gate that stopped it and why, or what it changed. */
export const dreamNoteOf = (outcome: DreamOutcome): DreamNote => {
  if (outcome._tag === "Completed") {
    const report = outcome.report
    return {
      gates: "open",
      ran: true,
      status: report.status,
      created: report.created.length,
      updated: report.updated.length,
      merged: report.merged.length,
      deleted: report.deleted.length
    }
  }
  const stopped = outcome.gates.checks.find((check) => check.status === "failed")
  return {
    gates: outcome.gates.open ? "open" : "closed",
    ran: false,
    ...(stopped === undefined ? {} : { stoppedBy: stopped.gate, reason: oneLine(stopped.detail, 160) })
  }
}

/** The notes of the run `track` is running, for code deep in the job; absent outside a tracked run. */
export class CurrentRun extends Context.Service<CurrentRun, RunNotes>()("@memdir/core/BackgroundRuns/CurrentRun") {}

const withCurrentRun = (f: (notes: RunNotes) => Effect.Effect<void>) =>
  Effect.flatMap(Effect.serviceOption(CurrentRun), Option.match({ onNone: () => Effect.void, onSome: f }))

/** Notes what extraction did in the current tracked run (nothing outside one). */
export const noteExtraction = (note: ExtractionNote): Effect.Effect<void> =>
  withCurrentRun((notes) => notes.extraction(note))

/** Notes what the dream did in the current tracked run (nothing outside one). */
export const noteDream = (note: DreamNote): Effect.Effect<void> => withCurrentRun((notes) => notes.dream(note))

export interface TrackInput {
  readonly memoryDir: string
  readonly session: string
  /** The id the starting hook wrote a `start` line under; none: `track` writes the `start` line itself. */
  readonly run?: string | undefined
}

/** A run id: time and randomness, short (it names a run in the log, nothing else). */
export const newRunId = (now: number): string =>
  `${now.toString(36)}-${Math.floor(Math.random() * 36 ** 6).toString(36).padStart(6, "0")}`

/** A failure to keep the trace is logged, never a failure of the run. */
const quietly = (effect: Effect.Effect<void, MemoryIoError | LockTimeoutError>) =>
  Effect.catch(effect, (error) => Effect.logDebug(`background run not recorded: ${error.message}`))

/**
 * Runs `body` as one traced background run: a `start` line (unless the hook wrote it), then, however it ends, an
 * `end` line with what `body` noted, the outcome, the failure and the warnings it logged (at most `MAX_WARNINGS`,
 * one redacted line each). The body's result and failure pass through unchanged.
 */
export const track = <A, E, R>(input: TrackInput, body: (notes: RunNotes) => Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const runs = yield* BackgroundRuns
    const startedAt = yield* Clock.currentTimeMillis
    const run = input.run ?? newRunId(startedAt)
    if (input.run === undefined) {
      yield* quietly(runs.record(input.memoryDir, {
        v: 1,
        event: "start",
        run,
        at: startedAt,
        session: input.session,
        pid: process.pid
      }))
    }
    const extraction = yield* Ref.make<ExtractionNote | undefined>(undefined)
    const dream = yield* Ref.make<DreamNote | undefined>(undefined)
    const warnings: Array<string> = []
    const collector = Logger.make(({ logLevel, message }) => {
      if (!LogLevel.isGreaterThanOrEqualTo(logLevel, "Warn") || warnings.length >= MAX_WARNINGS) return
      warnings.push(oneLine(Array.isArray(message) ? message.map(String).join(" ") : String(message)))
    })
    const notes: RunNotes = {
      extraction: (note) => Ref.set(extraction, note),
      dream: (note) => Ref.set(dream, note)
    }
    const finish = (exit: Exit.Exit<A, E>) =>
      Effect.gen(function*() {
        const at = yield* Clock.currentTimeMillis
        const ex = yield* Ref.get(extraction)
        const dr = yield* Ref.get(dream)
        const warned = [...warnings]
        const failure = Exit.isFailure(exit) ? failureOfCause(exit.cause) : ex?.failure
        const line: EndLine = {
          v: 1,
          event: "end",
          run,
          at,
          session: input.session,
          outcome: failure === undefined ? "ok" : "failed",
          ...(ex === undefined ? {} : { extraction: ex }),
          ...(dr === undefined ? {} : { dream: dr }),
          ...(failure === undefined ? {} : { failure }),
          ...(warned.length === 0 ? {} : { warnings: warned })
        }
        yield* quietly(runs.record(input.memoryDir, line))
      })
    return yield* body(notes).pipe(
      Effect.provideService(CurrentRun, notes),
      Effect.withLogger(collector),
      Effect.onExit(finish)
    )
  })
