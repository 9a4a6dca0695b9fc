/**
 * MemoryAge: when a memory was written, the time its age is counted from (docs/file-format.md#age-and-staleness).
 *
 * In order: the memory's own `modified:` timestamp (top-level, or under `metadata:` as the reference agent writes
 * it) when it is a real time and not in the future; else, for a file git tracks, its last commit (team sync sets
 * each checked-out file's mtime to it, and a memory directory kept in git has its commit times cached by HEAD);
 * else the file's mtime. git checks files out with the current time, so mtime alone makes every synced or cloned
 * memory look fresh.
 *
 * Pure over the scan's headers: the scanner stamps each header once, so `ls`, `show`, recall and the prompt count
 * from the same time. A file read on its own (`show`, the MCP server's `memory_read`) gets the same time from
 * `writtenAtOfFile`.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { parseFrontmatter } from "./Frontmatter.js"
import { GitAges } from "./GitAges.js"
import type { MemoryHeader } from "./Memory.js"

/** A time as ISO 8601 (UTC, milliseconds): how listings print a written time. */
export const isoTime = (ms: number): string => new Date(ms).toISOString()

/** Where a memory's age comes from. */
export type AgeSource = "modified" | "commit" | "mtime"

/** The frontmatter key of the timestamp (the reference agent's, ISO 8601). */
export const MODIFIED_KEY = "modified"

/** A `modified:` this far ahead of "now" is a clock skew between machines, not the future: it counts as now. */
export const CLOCK_SKEW_MS = 5 * 60_000

export interface Written {
  /** Epoch milliseconds. */
  readonly at: number
  readonly from: AgeSource
  /** Why a `modified:` value was not used, when there is one. */
  readonly warning?: string | undefined
}

const isMap = (value: unknown): value is Readonly<Record<string, unknown>> =>
  value !== null && typeof value === "object" && !Array.isArray(value) && !(value instanceof Date)

/** The raw `modified` value of a header: top-level first, else under `metadata:`. */
export const rawModified = (extra: Readonly<Record<string, unknown>>): unknown => {
  if (Object.hasOwn(extra, MODIFIED_KEY)) return extra[MODIFIED_KEY]
  const metadata = extra.metadata
  return isMap(metadata) && Object.hasOwn(metadata, MODIFIED_KEY) ? metadata[MODIFIED_KEY] : undefined
}

/** An ISO date or date-time (YAML may already have read it as a `Date`). */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?\s*(?:Z|[+-]\d{2}(?::?\d{2})?)?)?$/i

/** The epoch ms of a `modified` value, or why it is not a time. */
export const parseModified = (value: unknown): number | string => {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? "not a valid date" : value.getTime()
  if (typeof value !== "string") return `expected an ISO 8601 timestamp, found ${typeof value}`
  const text = value.trim()
  if (!ISO_TIME.test(text)) return `${JSON.stringify(text.slice(0, 40))} is not an ISO 8601 timestamp`
  const ms = Date.parse(text.replace(" ", "T"))
  return Number.isNaN(ms) ? `${JSON.stringify(text.slice(0, 40))} is not a valid date` : ms
}

/** The time an ignored `modified:` gives way to, as a warning names it. */
const fallbackName = (from: AgeSource): string => from === "commit" ? "its last commit" : "the file's mtime"

/**
 * When a memory was written, as seen at `nowMs`: a sane `modified:`, else `commitMs` (its last commit, when git
 * tracks it), else `mtime`. A `modified:` in the future (beyond a clock skew) is ignored with a warning.
 */
export const writtenAt = (
  header: Pick<MemoryHeader, "extra" | "mtime">,
  nowMs: number,
  commitMs?: number | undefined
): Written => {
  const fallback: Written = commitMs === undefined ?
    { at: header.mtime, from: "mtime" } :
    { at: commitMs, from: "commit" }
  const raw = rawModified(header.extra)
  if (raw === undefined || raw === null || raw === "") return fallback
  const parsed = parseModified(raw)
  if (typeof parsed === "string") {
    return { ...fallback, warning: `modified: ${parsed}; the age counts from ${fallbackName(fallback.from)}` }
  }
  if (parsed > nowMs + CLOCK_SKEW_MS) {
    return {
      ...fallback,
      warning: `modified: ${new Date(parsed).toISOString()} is in the future; the age counts from ` +
        fallbackName(fallback.from)
    }
  }
  return { at: Math.min(parsed, nowMs), from: "modified" }
}

/**
 * When one memory file read on its own was written, as a scan would stamp it: its `modified:`, else its last
 * commit (when `GitAges` is provided and git tracks the memory directory), else `mtime`. `key` is relative to
 * `memoryDir`.
 */
export const writtenAtOfFile = (memoryDir: string, key: string, text: string, mtime: number) =>
  Effect.gen(function*() {
    const parsed = parseFrontmatter(text, key)
    const gitAges = yield* Effect.serviceOption(GitAges)
    const commitTimes = Option.isSome(gitAges) ? yield* gitAges.value.commitTimes(memoryDir) : undefined
    return writtenAt(
      { extra: parsed._tag === "Success" ? parsed.success.extra : {}, mtime },
      yield* Clock.currentTimeMillis,
      commitTimes?.(key, mtime)
    )
  })

/** The time a header's age counts from (a header the scanner did not stamp: its mtime). */
export const writtenAtOf = (header: Pick<MemoryHeader, "mtime" | "writtenAt">): number =>
  header.writtenAt ?? header.mtime

/**
 * Memories newest first by the time their age counts from (`writtenAtOf`), equal times in path order: a listing
 * sorted by the age it shows (a memory whose `modified:` is months old but whose file was touched today is listed
 * with the old ones, not on top). A new array; `memories` is left as it was.
 */
export const sortNewestWrittenFirst = <A extends Pick<MemoryHeader, "mtime" | "writtenAt" | "path">>(
  memories: ReadonlyArray<A>
): Array<A> => {
  const keyed = memories.map((memory) => ({ memory, at: writtenAtOf(memory) }))
  keyed.sort((a, b) => b.at - a.at || (a.memory.path < b.memory.path ? -1 : a.memory.path > b.memory.path ? 1 : 0))
  return keyed.map((k) => k.memory)
}

/** A header's own warning with that of an ignored `modified:` beside it. */
export const withWrittenWarning = (warning: string | undefined, written: Written): string | undefined =>
  written.warning === undefined ? warning : warning === undefined ? written.warning : `${warning}; ${written.warning}`

/**
 * A stamped header's warning taken apart again: the header's own (a missing description, …) and that of an ignored
 * `modified:` (`withWrittenWarning` puts it last, and it always starts with `modified: `), so each gets its own
 * advice (`memdir doctor`).
 */
export const splitWrittenWarning = (
  warning: string | undefined
): { readonly header: string | undefined; readonly modified: string | undefined } => {
  if (warning === undefined) return { header: undefined, modified: undefined }
  if (warning.startsWith(`${MODIFIED_KEY}: `)) return { header: undefined, modified: warning }
  const at = warning.lastIndexOf(`; ${MODIFIED_KEY}: `)
  return at < 0
    ? { header: warning, modified: undefined }
    : { header: warning.slice(0, at), modified: warning.slice(at + 2) }
}

/** One header with its written time (and the warning of an ignored `modified:` beside any other). */
export const stampHeader = (
  header: MemoryHeader,
  nowMs: number,
  commitMs?: number | undefined
): MemoryHeader => {
  const written = writtenAt(header, nowMs, commitMs)
  return {
    ...header,
    writtenAt: written.at,
    writtenFrom: written.from,
    warning: withWrittenWarning(header.warning, written)
  }
}

/**
 * The last commit time of a memory by its path relative to the scanned directory (`/`-separated) and its current
 * mtime (a file edited since its commit counts from its mtime), when git tracks the directory (`GitAges`).
 */
export type CommitTimes = (relativePath: string, mtime: number) => number | undefined

/**
 * What a scan counts its headers' ages against: the clock's "now" and the directory's commit times. The scanner
 * takes it once, before it reads, and stamps each header as it builds it (never a second copy of every header).
 */
export interface AgeBasis {
  readonly nowMs: number
  readonly commitTimes?: CommitTimes | undefined
}

/** The clock's "now" with the commit times, when there are any. */
export const ageBasis = (commitTimes?: CommitTimes | undefined): Effect.Effect<AgeBasis> =>
  Effect.map(Clock.currentTimeMillis, (nowMs) => ({ nowMs, commitTimes }))

/** When the memory at `relativePath` (its header's `extra`, its file's `mtime`) was written, as a scan sees it. */
export const writtenAtIn = (
  basis: AgeBasis,
  relativePath: string,
  extra: Readonly<Record<string, unknown>>,
  mtime: number
): Written => {
  const commitMs = basis.commitTimes?.(relativePath, mtime)
  const raw = rawModified(extra)
  // Most headers have no `modified:`: their time is the commit's or the mtime, with nothing else to build.
  if (raw === undefined || raw === null || raw === "") {
    return commitMs === undefined ? { at: mtime, from: "mtime" } : { at: commitMs, from: "commit" }
  }
  return writtenAt({ extra, mtime }, basis.nowMs, commitMs)
}
