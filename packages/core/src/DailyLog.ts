/**
 * Daily logs for sessions that run for days (docs/dream-and-logs.md#daily-logs): short timestamped bullets appended to
 * `<memdir>/logs/YYYY/MM/YYYY-MM-DD.md`, never rewritten or reordered (their order is the timeline the dream
 * consolidates from).
 *
 * Dates and times are **UTC**: one memory directory may be shared by machines in different time zones (sync
 * through git), and a log must not change its day with the laptop's time zone. Each file starts with
 * `# YYYY-MM-DD (UTC)` so a reader knows; each bullet is `- HH:MM:SS text`. The clock is `Clock`.
 *
 * Appends are safe with concurrent appenders (other processes included): each bullet is one `write(2)` on a file
 * opened with `O_APPEND` (`MemoryFs.append`), so bullets never interleave, and the header is created with its content
 * in one step (`MemoryFs.writeFileAtomic` with `exclusive`: temp file + `link(2)`, which fails if the file exists), so
 * it is always the first line. A log path that is not a regular file (a link, a FIFO) is refused, never followed or
 * waited on.
 *
 * The prompt names the path as a pattern, never today's date (the prompt stays cacheable across midnight); the
 * date reaches the model as a separate notice (`dateChangeNotice`).
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Path from "effect/Path"
import * as Result from "effect/Result"
import { InvalidMemoryInputError, ioErrorOf, isMissingFile, type UnknownPromptVariantError } from "./Errors.js"
import { LOGS_DIR_NAME } from "./internal/scan/paths.js"
import { FILE_MODE, MemoryFs, type MemoryFsError } from "./MemoryFs.js"
import { logsSection } from "./prompts/DailyLogPrompt.js"
import { renderSection, withTrailingSeparator } from "./prompts/PromptSection.js"

/** The daily logs' directory, inside the memory directory (the scanner never reads it as memories). */
export const LOGS_DIR = LOGS_DIR_NAME
/** The path of a day's log, relative to the memory directory, as the prompt names it. */
export const LOG_PATH_PATTERN = "logs/YYYY/MM/YYYY-MM-DD.md"
/** A bullet longer than this is refused: a log entry is a short line, detail goes into memory files. */
export const LOG_ENTRY_MAX_CHARS = 2000
/** What the dream's orient phase reads by default: the last 7 days, at most 24 KB of them. */
export const RECENT_LOG_DAYS = 7
export const RECENT_LOG_MAX_BYTES = 24_000

const encoder = new TextEncoder()
const pad = (n: number) => String(n).padStart(2, "0")

/** `2026-03-05` for an instant (UTC). */
export const logDate = (nowMs: number): string => new Date(nowMs).toISOString().slice(0, 10)

/** `14:03:07` for an instant (UTC). */
export const logTime = (nowMs: number): string => {
  const d = new Date(nowMs)
  return `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`
}

/** `logs/2026/03/2026-03-05.md` for a `YYYY-MM-DD` date. */
export const logRelativePath = (date: string): string =>
  `${LOGS_DIR}/${date.slice(0, 4)}/${date.slice(5, 7)}/${date}.md`

/** The first line of every log file. */
export const logHeader = (date: string): string => `# ${date} (UTC)\n\n`

/** One log line as text: whitespace runs (newlines included) collapse to one space. */
export const normalizeLogText = (text: string): string => text.replace(/\s+/g, " ").trim()

/** `- 14:03:07 text\n`, or why the text cannot be a bullet. */
export const formatLogEntry = (nowMs: number, text: string): Result.Result<string, InvalidMemoryInputError> => {
  const line = normalizeLogText(text)
  if (line.length === 0) {
    return Result.fail(new InvalidMemoryInputError({ field: "text", value: text, reason: "a log entry needs text" }))
  }
  if (line.length > LOG_ENTRY_MAX_CHARS) {
    return Result.fail(
      new InvalidMemoryInputError({
        field: "text",
        value: `${line.slice(0, 60)}…`,
        reason: `a log entry is one short line (at most ${LOG_ENTRY_MAX_CHARS} characters); put detail in a memory file`
      })
    )
  }
  return Result.succeed(`- ${logTime(nowMs)} ${line}\n`)
}

export interface AppendLogInput {
  readonly memoryDir: string
  readonly text: string
}

export interface AppendLogResult {
  /** Absolute path of the day's log. */
  readonly path: string
  /** Relative to the memory directory (`logs/2026/03/2026-03-05.md`). */
  readonly file: string
  readonly date: string
  /** The bullet as written, without its newline. */
  readonly entry: string
  /** This append created the day's file. */
  readonly created: boolean
}

const isAlreadyExists = (error: MemoryFsError): boolean => error.reason === "AlreadyExists"

/**
 * Create the day's file with its header in one step, unless something is there (then false): the whole file
 * appears at once (`exclusive`), so concurrent creators never duplicate or misplace the header.
 */
const createWithHeader = (target: string, header: string) =>
  Effect.gen(function*() {
    const fs = yield* MemoryFs
    return yield* fs.writeFileAtomic(target, header, { mode: FILE_MODE, exclusive: true }).pipe(
      Effect.as(true),
      Effect.catchIf(isAlreadyExists, () => Effect.succeed(false))
    )
  }).pipe(Effect.mapError(ioErrorOf("create log", target)))

/**
 * One `write(2)` of the whole bullet on an `O_APPEND` descriptor: concurrent appenders never interleave. Opened
 * without following a link or blocking: a link or a FIFO at the log's path is refused at once.
 */
const appendOnce = (target: string, entry: string) =>
  Effect.gen(function*() {
    const fs = yield* MemoryFs
    yield* fs.append(target, entry)
  }).pipe(Effect.mapError(ioErrorOf("append to", target)))

/** Append one bullet to today's log (UTC date from `Clock`), creating the file and its directories (0700). */
export const appendLog = Effect.fn("DailyLog.append")(function*(input: AppendLogInput) {
  const path = yield* Path.Path
  const now = yield* Clock.currentTimeMillis
  const entry = yield* Effect.fromResult(formatLogEntry(now, input.text))
  const date = logDate(now)
  const file = logRelativePath(date)
  const target = path.join(path.resolve(input.memoryDir), ...file.split("/"))
  const fs = yield* MemoryFs
  yield* fs.makeDirectory(path.dirname(target)).pipe(
    Effect.mapError(ioErrorOf("create directory", path.dirname(target)))
  )
  const created = yield* createWithHeader(target, logHeader(date))
  yield* appendOnce(target, entry)
  const result: AppendLogResult = { path: target, file, date, entry: entry.slice(0, -1), created }
  return result
})

export interface RecentLog {
  readonly date: string
  readonly file: string
  /** The file's text, or its last lines when the byte budget ran out (`truncated`). */
  readonly content: string
  readonly truncated: boolean
}

/** The last `maxBytes` of `text`, cut at a line start. */
const tailLines = (text: string, maxBytes: number): string => {
  const lines = text.split("\n")
  const kept: Array<string> = []
  let bytes = 0
  for (let i = lines.length - 1; i >= 0; i--) {
    const size = encoder.encode(lines[i]!).length + 1
    if (bytes + size > maxBytes) break
    kept.unshift(lines[i]!)
    bytes += size
  }
  return kept.join("\n")
}

/**
 * The largest day's log read: bullets are short lines, so a day's log is a few KB (a few MB for a very busy day).
 * A larger file (or one that is a link, a FIFO, not a regular file) is not read: `readRecentLogs` fails with a
 * `MemoryIoError` naming it (`TooLarge`, …) at once, never hangs or reads a part of it.
 */
export const LOG_FILE_MAX_BYTES = 16 * 1024 * 1024

/**
 * The logs of the last `days` UTC days (today included) that exist, oldest first, within `maxBytes` in total: the
 * newest days are kept whole first; the oldest day that does not fit keeps only its last lines.
 */
export const readRecentLogs = Effect.fn("DailyLog.readRecent")(function*(input: {
  readonly memoryDir: string
  readonly days?: number | undefined
  readonly maxBytes?: number | undefined
}) {
  const fs = yield* MemoryFs
  const path = yield* Path.Path
  const now = yield* Clock.currentTimeMillis
  const days = Math.max(1, input.days ?? RECENT_LOG_DAYS)
  let budget = input.maxBytes ?? RECENT_LOG_MAX_BYTES
  const logs: Array<RecentLog> = []
  for (let back = 0; back < days && budget > 0; back++) {
    const date = logDate(now - back * 86_400_000)
    const file = logRelativePath(date)
    const absolute = path.join(path.resolve(input.memoryDir), ...file.split("/"))
    const text = yield* fs.readFile(absolute, { maxBytes: LOG_FILE_MAX_BYTES }).pipe(
      Effect.map((file) => Option.some(file.text)),
      Effect.catchIf(isMissingFile, () => Effect.succeedNone),
      Effect.mapError(ioErrorOf("read", absolute))
    )
    if (Option.isNone(text)) continue
    const size = encoder.encode(text.value).length
    if (size <= budget) {
      logs.unshift({ date, file, content: text.value, truncated: false })
      budget -= size
    } else {
      logs.unshift({ date, file, content: tailLines(text.value, budget), truncated: true })
      budget = 0
    }
  }
  return logs as ReadonlyArray<RecentLog>
})

// ---------------------------------------------------------------------------------------------------------------
// Date notices and the prompt section
// ---------------------------------------------------------------------------------------------------------------

/**
 * What to tell a long session about the date: at the start (`previousDate` undefined) the current UTC date and
 * today's log; later, a notice only when the UTC date changed since `previousDate` (`YYYY-MM-DD`).
 */
export const dateChangeNotice = (previousDate: string | undefined, nowMs: number): string | undefined => {
  const date = logDate(nowMs)
  if (previousDate === date) return undefined
  const today = `Today's log is ${logRelativePath(date)} in the memory directory.`
  return previousDate === undefined
    ? `The current date is ${date} (UTC). ${today}`
    : `The date has changed: it is now ${date} (UTC), no longer ${previousDate}. ${today} Append new entries there; ` +
      `leave ${previousDate}'s log as it is.`
}

/** The daily-log section of the system prompt, by variant name (data in prompts/DailyLogPrompt.ts). */
export const logsPromptVariants: Readonly<Record<string, string>> = logsSection.variants

/** The daily-log section for a memory directory (pattern, not today's date); an unknown variant is a typed error. */
export const renderLogsPrompt = (input: {
  readonly memoryDir: string
  readonly variant?: string | undefined
}): Result.Result<string, UnknownPromptVariantError> =>
  Result.map(
    renderSection(logsSection, input.variant, {
      memoryDir: withTrailingSeparator(input.memoryDir),
      logsPattern: LOG_PATH_PATTERN
    }),
    (text) => text + "\n"
  )
