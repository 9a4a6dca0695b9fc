/**
 * MemoryIndex (the design card's "Index" service): MEMORY.md, the table of contents loaded into every session
 * (docs/file-format.md). Loading enforces the caps (200 lines, 25,000 bytes) with an actionable warning; every change
 * is a read-modify-write under a cross-process lock, written atomically, preserving every line it does not own.
 */
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as NodePath from "node:path"
import { IndexOverCapError, type LockTimeoutError, MemoryIoError } from "./Errors.js"
import { sweepAbandoned, tempFileOwner } from "./internal/fs/leftovers.js"
import { DEFAULT_LOCK_STALE_AFTER, DEFAULT_LOCK_TIMEOUT, type LockOptions, withLock } from "./internal/fs/lock.js"
import { formatIndexEntry, type IndexEntry, indexLink, memoryTypes, parseIndexLine } from "./Memory.js"
import { layer as memoryFsLayer, layerMemory as memoryFsLayerMemory, MemoryFs, type MemoryFsError } from "./MemoryFs.js"

export const INDEX_FILE = "MEMORY.md"
export const INDEX_MAX_LINES = 200
export const INDEX_MAX_BYTES = 25_000
/** The cross-process lock guarding read-modify-write of MEMORY.md, inside the memory directory. */
export const INDEX_LOCK = ".memory-index.lock"

export interface LoadedIndex {
  readonly path: string
  readonly exists: boolean
  /** The text to put in context: truncated to the caps, with the warning appended when truncated. */
  readonly content: string
  /** Size of the file on disk. */
  readonly lines: number
  readonly bytes: number
  readonly truncatedByLines: boolean
  readonly truncatedByBytes: boolean
  /** The actionable warning when over a cap ("N lines (limit: 200)", "X KB (limit: 25 KB) — …"). */
  readonly warning?: string | undefined
  /** Every link entry of the file (not only the loaded part). */
  readonly entries: ReadonlyArray<IndexEntry>
}

/** MEMORY.md as it is on disk (absent: `exists: false`, empty text). */
export interface IndexText {
  readonly path: string
  readonly exists: boolean
  readonly text: string
}

/** What a `modify` step decides: the new text (written only if it differs) and a result for the caller. */
export interface IndexUpdate<A> {
  readonly text: string
  readonly result: A
  /**
   * How to take back the other work the step did under the lock (the write program's memory file), run when the
   * new index text cannot be written (a full disk): the change is then all or nothing. `what` names that work
   * for the error ("the memory file x.md"); when the undo fails too, the error says exactly what to repair.
   */
  readonly undo?: IndexUndo | undefined
}

/** The undo of a step's other work (see `IndexUpdate.undo`). */
export interface IndexUndo {
  readonly what: string
  readonly effect: Effect.Effect<void, unknown>
}

/**
 * The index write failed: take back the step's other work, and say in the error whether that worked (nothing
 * changed) or what is left to repair (`memdir doctor --fix` adds a missing index line).
 */
export const undoAfterIndexFailure = (
  failure: MemoryIoError,
  undo: IndexUndo | undefined
): Effect.Effect<never, MemoryIoError> =>
  undo === undefined ? Effect.fail(failure) : undo.effect.pipe(
    Effect.matchEffect({
      onSuccess: () =>
        Effect.fail(
          new MemoryIoError({
            op: failure.op,
            path: failure.path,
            detail: `${failure.detail}; ${undo.what} was put back as it was, so nothing changed`
          })
        ),
      onFailure: () =>
        Effect.fail(
          new MemoryIoError({
            op: failure.op,
            path: failure.path,
            detail: `${failure.detail}; ${undo.what} was written but its index line was not, and putting it back ` +
              "failed too: free some space, then run `memdir doctor --fix` (it adds the missing line)"
          })
        )
    })
  )

export interface UpsertResult {
  /** A new line was added (false: the line pointing at the same file was replaced). */
  readonly created: boolean
  /** MEMORY.md itself did not exist before. */
  readonly fileCreated: boolean
  /** The file's bytes changed. */
  readonly changed: boolean
}

export class MemoryIndex extends Context.Service<MemoryIndex, {
  readonly load: (memoryDir: string) => Effect.Effect<LoadedIndex, MemoryIoError>
  /** The raw text, untruncated (for doctor and editors). */
  readonly read: (memoryDir: string) => Effect.Effect<IndexText, MemoryIoError>
  /** Adds the entry or replaces the line pointing at the same file. Atomic, safe across processes. */
  readonly upsert: (
    memoryDir: string,
    entry: IndexEntry
  ) => Effect.Effect<UpsertResult, IndexOverCapError | LockTimeoutError | MemoryIoError>
  /** Removes the line(s) pointing at `file`; returns how many were removed. */
  readonly remove: (memoryDir: string, file: string) => Effect.Effect<number, LockTimeoutError | MemoryIoError>
  /**
   * The general read-modify-write: under the lock, read the current text, run `f`, write its text atomically if
   * it changed. `f` may do other work that must happen under the same lock (the write program writes the memory
   * file there, after its cap check). Creates the memory directory (0700) on demand. Not reentrant: `f` must not
   * call `upsert`/`remove`/`modify` on the same directory.
   */
  readonly modify: <A, E, R>(
    memoryDir: string,
    f: (current: IndexText) => Effect.Effect<IndexUpdate<A>, E, R>
  ) => Effect.Effect<A, E | LockTimeoutError | MemoryIoError, R>
}>()("@memdir/core/MemoryIndex") {}

// ---------------------------------------------------------------------------------------------------------------
// Pure functions (shared by the live and in-memory implementations, exported for users)
// ---------------------------------------------------------------------------------------------------------------

const utf8 = new TextEncoder()

/** Size in UTF-8 bytes, as the file is stored. */
export const utf8ByteLength = (text: string): number => utf8.encode(text).length

/** Number of lines: newline-terminated lines plus a final unterminated one; "" has 0 lines. */
export const countLines = (text: string): number => {
  if (text.length === 0) return 0
  let newlines = 0
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) newlines++
  return text.endsWith("\n") ? newlines : newlines + 1
}

/** Largest string index `i` such that `text.slice(0, i)` is at most `maxBytes` UTF-8 bytes; never splits a character. */
const utf8PrefixEnd = (text: string, maxBytes: number): number => {
  let bytes = 0
  let i = 0
  while (i < text.length) {
    const code = text.codePointAt(i)!
    const size = code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4
    if (bytes + size > maxBytes) break
    bytes += size
    i += code >= 0x10000 ? 2 : 1
  }
  return i
}

const formatKb = (bytes: number): string => `${(bytes / 1000).toFixed(1).replace(/\.0$/, "")} KB`

export interface TruncatedIndex {
  /** `kept`, then the warning when something was cut. */
  readonly content: string
  /** The prefix of the text that fits the caps. */
  readonly kept: string
  /** Size of the whole text. */
  readonly lines: number
  readonly bytes: number
  readonly truncatedByLines: boolean
  readonly truncatedByBytes: boolean
  readonly warning?: string | undefined
}

/**
 * Fit MEMORY.md into the caps: first 200 lines, then cut at the last newline before 25,000 bytes (at a character
 * boundary if a single line is that long), then append a warning that names the reason and the fix.
 */
export const truncateIndex = (text: string): TruncatedIndex => {
  const lines = countLines(text)
  const bytes = utf8ByteLength(text)
  let kept = text
  const truncatedByLines = lines > INDEX_MAX_LINES
  if (truncatedByLines) {
    let end = -1
    for (let n = 0; n < INDEX_MAX_LINES; n++) end = text.indexOf("\n", end + 1)
    kept = text.slice(0, end + 1)
  }
  const truncatedByBytes = utf8ByteLength(kept) > INDEX_MAX_BYTES
  if (truncatedByBytes) {
    const limit = utf8PrefixEnd(kept, INDEX_MAX_BYTES)
    const lastNewline = kept.lastIndexOf("\n", limit - 1)
    kept = lastNewline >= 0 ? kept.slice(0, lastNewline + 1) : kept.slice(0, limit)
  }
  if (!truncatedByLines && !truncatedByBytes) {
    return { content: text, kept, lines, bytes, truncatedByLines, truncatedByBytes }
  }
  const reasons = [
    ...(truncatedByLines ? [`${lines} lines (limit: ${INDEX_MAX_LINES})`] : []),
    ...(truncatedByBytes
      ? [`${formatKb(bytes)} (limit: ${formatKb(INDEX_MAX_BYTES)}) — index entries are too long`]
      : [])
  ]
  const warning = `WARNING: ${INDEX_FILE} is ${reasons.join(" and ")}; only part of it was loaded. ` +
    `Keep each index entry to one line under ~200 chars and move detail into topic files.`
  const separator = kept.length === 0 || kept.endsWith("\n") ? "\n" : "\n\n"
  return {
    content: `${kept}${separator}> ${warning}\n`,
    kept,
    lines,
    bytes,
    truncatedByLines,
    truncatedByBytes,
    warning
  }
}

/**
 * The memory file an index link points at, normalised for comparison: `./a/../feedback_x.md#why` →
 * `feedback_x.md`. Undefined for links that are not local files (URLs, anchors).
 */
export const normalizeIndexLink = (link: string): string | undefined => {
  let file = link.trim().replace(/^<(.*)>$/, "$1").replace(/[#?].*$/, "")
  if (file.length === 0 || /^[a-z][a-z0-9+.-]*:/i.test(file)) return undefined
  try {
    file = decodeURIComponent(file)
  } catch {
    // Not percent-encoded after all: compare it as written.
  }
  const segments: Array<string> = []
  for (const segment of file.replace(/\\/g, "/").split("/")) {
    if (segment === "" || segment === ".") continue
    if (segment === ".." && segments.length > 0 && segments[segments.length - 1] !== "..") segments.pop()
    else segments.push(segment)
  }
  return segments.join("/")
}

/**
 * A memory's key (a file name as it is on disk) in the form `normalizeIndexLink` gives its link: `a%b.md` stays
 * `a%b.md` (never decoded as a link would be). Compare it with `normalizeIndexLink(link)`.
 */
export const indexKeyOf = (key: string): string => normalizeIndexLink(indexLink(key)) ?? key

/** The index link `link` points at the memory `key`. */
const sameFile = (link: string, key: string): boolean => {
  const left = normalizeIndexLink(link)
  return left !== undefined && left === indexKeyOf(key)
}

/** Every link entry of the text, with its 1-based line number. */
export const indexEntries = (text: string): Array<IndexEntry & { readonly line: number }> =>
  text.split("\n").flatMap((raw, i) => {
    const entry = parseIndexLine(raw)
    return entry === undefined ? [] : [{ ...entry, line: i + 1 }]
  })

/** `feedback_testing.md` → "feedback": the type a file name announces by convention (docs/file-format.md). */
export const typePrefix = (file: string): string | undefined => {
  const base = (normalizeIndexLink(file) ?? file).split("/").pop() ?? ""
  const prefix = base.split("_")[0]!
  return (memoryTypes as ReadonlyArray<string>).includes(prefix) && base.includes("_") ? prefix : undefined
}

/**
 * Add or replace the line for `entry.file`. The first line pointing at the file is replaced in place (keeping a
 * CRLF ending), later ones are dropped; a new line goes after the last entry of the same type (so a sectioned
 * index stays sectioned), else at the end. Every other line is kept byte for byte.
 */
export const upsertIndexText = (
  text: string,
  entry: IndexEntry
): { readonly text: string; readonly created: boolean } => {
  const line = formatIndexEntry(entry)
  const lines = text.split("\n")
  const matching = lines.flatMap((raw, i) => {
    const parsed = parseIndexLine(raw)
    return parsed !== undefined && sameFile(parsed.file, entry.file) ? [i] : []
  })
  if (matching.length > 0) {
    const [first, ...duplicates] = matching
    const drop = new Set(duplicates)
    const next = lines.flatMap((raw, i) =>
      i === first ? [raw.endsWith("\r") ? `${line}\r` : line] : drop.has(i) ? [] : [raw]
    )
    return { text: next.join("\n"), created: false }
  }
  const type = typePrefix(entry.file)
  let anchor = -1
  if (type !== undefined) {
    lines.forEach((raw, i) => {
      const parsed = parseIndexLine(raw)
      if (parsed !== undefined && typePrefix(parsed.file) === type) anchor = i
    })
  }
  if (anchor >= 0) {
    const eol = lines[anchor]!.endsWith("\r") ? "\r" : ""
    return { text: [...lines.slice(0, anchor + 1), line + eol, ...lines.slice(anchor + 1)].join("\n"), created: true }
  }
  if (text.length === 0) return { text: `${line}\n`, created: true }
  const eol = text.endsWith("\r\n") ? "\r\n" : "\n"
  return { text: `${text}${text.endsWith("\n") ? "" : eol}${line}${eol}`, created: true }
}

/** Drop every line pointing at the memory `file` (its key); every other line is kept byte for byte. */
export const removeFromIndexText = (
  text: string,
  file: string
): { readonly text: string; readonly removed: number } => {
  const lines = text.split("\n")
  const kept = lines.filter((raw) => {
    const parsed = parseIndexLine(raw)
    return parsed === undefined || !sameFile(parsed.file, file)
  })
  return { text: kept.join("\n"), removed: lines.length - kept.length }
}

/**
 * The cap check for a change from `before` to `after`: refuse a result over a cap, unless the change does not
 * make that measure worse (so an index that is already too big can still be edited down).
 */
export const checkIndexCaps = (path: string, before: string, after: string): IndexOverCapError | undefined => {
  const lines = countLines(after)
  const bytes = utf8ByteLength(after)
  const tooManyLines = lines > INDEX_MAX_LINES && lines > countLines(before)
  const tooManyBytes = bytes > INDEX_MAX_BYTES && bytes > utf8ByteLength(before)
  return tooManyLines || tooManyBytes
    ? new IndexOverCapError({ path, lines, bytes, maxLines: INDEX_MAX_LINES, maxBytes: INDEX_MAX_BYTES })
    : undefined
}

/** True when `text` fits both caps. */
export const fitsIndexCaps = (text: string): boolean =>
  countLines(text) <= INDEX_MAX_LINES && utf8ByteLength(text) <= INDEX_MAX_BYTES

/** The loaded form of an index's text (the private index, and the team's `team/MEMORY.md`). */
export const toLoadedIndex = (path: string, exists: boolean, text: string): LoadedIndex => {
  const truncated = truncateIndex(text)
  return {
    path,
    exists,
    content: truncated.content,
    lines: truncated.lines,
    bytes: truncated.bytes,
    truncatedByLines: truncated.truncatedByLines,
    truncatedByBytes: truncated.truncatedByBytes,
    warning: truncated.warning,
    entries: indexEntries(text).map(({ file, hook, title }) => ({ title, file, hook }))
  }
}

const upsertStep = (entry: IndexEntry) => (current: IndexText) => {
  const next = upsertIndexText(current.text, entry)
  const overCap = checkIndexCaps(current.path, current.text, next.text)
  return overCap === undefined
    ? Effect.succeed({
      text: next.text,
      result: { created: next.created, fileCreated: !current.exists, changed: next.text !== current.text }
    })
    : Effect.fail(overCap)
}

const removeStep = (file: string) => (current: IndexText) => {
  const next = removeFromIndexText(current.text, file)
  return Effect.succeed({ text: next.text, result: next.removed })
}

// ---------------------------------------------------------------------------------------------------------------
// Live implementation
// ---------------------------------------------------------------------------------------------------------------

/** A temp file of a dead writer older than this is removed by the next index change. */
const ABANDONED_TEMP_AGE_MS = 60_000

export interface MemoryIndexOptions {
  readonly lock?: LockOptions | undefined
}

/**
 * MEMORY.md is read without following a link, without blocking (a FIFO never hangs a prompt or a write) and with
 * this bound; a bigger index is refused (the caps are 25,000 bytes: this is far past any real index).
 */
export const INDEX_READ_MAX_BYTES = 4 * 1024 * 1024

const indexIoError = (op: string, file: string) => (error: MemoryFsError): MemoryIoError =>
  new MemoryIoError({
    op,
    path: file,
    detail: error.reason === "SymbolicLink" ?
      "MEMORY.md is a symbolic link: memdir reads only a regular file (replace the link with the file)" :
      error.reason === "NotRegularFile" ?
      `MEMORY.md is ${error.detail}, not a regular file: remove it (\`memdir init\` creates an empty one)` :
      `${error.reason} (${error.detail})`
  })

export const makeWith = (options: MemoryIndexOptions = {}) =>
  Effect.gen(function*() {
    const memoryFs = yield* MemoryFs

    const indexPath = (memoryDir: string) => NodePath.join(memoryDir, INDEX_FILE)

    const read = Effect.fn("MemoryIndex.read")(function*(memoryDir: string) {
      const file = indexPath(memoryDir)
      return yield* memoryFs.readFile(file, { maxBytes: INDEX_READ_MAX_BYTES }).pipe(
        Effect.map((read): IndexText => ({ path: file, exists: true, text: read.text })),
        Effect.catchIf(
          (error) => error.reason === "NotFound",
          () => Effect.succeed<IndexText>({ path: file, exists: false, text: "" })
        ),
        Effect.mapError(indexIoError("read", file))
      )
    })

    const load = Effect.fn("MemoryIndex.load")(function*(memoryDir: string) {
      const current = yield* read(memoryDir)
      return toLoadedIndex(current.path, current.exists, current.text)
    })

    const modify = <A, E, R>(
      memoryDir: string,
      f: (current: IndexText) => Effect.Effect<IndexUpdate<A>, E, R>
    ): Effect.Effect<A, E | LockTimeoutError | MemoryIoError, R> =>
      Effect.gen(function*() {
        yield* memoryFs.makeDirectory(memoryDir).pipe(Effect.mapError(indexIoError("create directory", memoryDir)))
        const step = Effect.gen(function*() {
          // Under the lock: temp files of writers killed mid-write (dead pid, over a minute old) go away.
          yield* sweepAbandoned(memoryDir, tempFileOwner, ABANDONED_TEMP_AGE_MS)
          const current = yield* read(memoryDir)
          const update = yield* f(current)
          if (update.text !== current.text) {
            yield* memoryFs.writeFileAtomic(current.path, update.text).pipe(
              Effect.mapError(indexIoError("write", current.path)),
              Effect.catch((failure) => undoAfterIndexFailure(failure, update.undo))
            )
          }
          return update.result
        })
        return yield* withLock(NodePath.join(memoryDir, INDEX_LOCK), step, options.lock)
      }).pipe(Effect.provideService(MemoryFs, memoryFs), Effect.withSpan("MemoryIndex.modify"))

    const upsert = Effect.fn("MemoryIndex.upsert")(function*(memoryDir: string, entry: IndexEntry) {
      return yield* modify(memoryDir, upsertStep(entry))
    })

    const remove = Effect.fn("MemoryIndex.remove")(function*(memoryDir: string, file: string) {
      // Nothing to remove from a directory that does not exist; do not create it just to say so.
      const exists = yield* memoryFs.exists(memoryDir).pipe(Effect.mapError(indexIoError("stat", memoryDir)))
      if (!exists) return 0
      return yield* modify(memoryDir, removeStep(file))
    })

    return MemoryIndex.of({ load, read, upsert, remove, modify })
  })

export const make = makeWith()

/** MEMORY.md over the given `MemoryFs` (its lock files too). */
export const layerOver: Layer.Layer<MemoryIndex, never, MemoryFs> = Layer.effect(
  MemoryIndex,
  make
)

/** MEMORY.md on the real file system: the live `MemoryFs` built in. */
export const layer: Layer.Layer<MemoryIndex> = layerOver.pipe(
  Layer.provide(memoryFsLayer)
)

export const layerWith = (options: MemoryIndexOptions) =>
  Layer.effect(MemoryIndex, makeWith(options)).pipe(Layer.provide(memoryFsLayer))

/** Lock timing from config: `MEMDIR_INDEX_LOCK_TIMEOUT` and `MEMDIR_INDEX_LOCK_STALE_AFTER` (e.g. "10 seconds"). */
export const layerConfig = Layer.effect(
  MemoryIndex,
  Effect.flatMap(
    Config.all({
      timeout: Config.Duration("MEMDIR_INDEX_LOCK_TIMEOUT").pipe(Config.withDefault(DEFAULT_LOCK_TIMEOUT)),
      staleAfter: Config.Duration("MEMDIR_INDEX_LOCK_STALE_AFTER").pipe(Config.withDefault(DEFAULT_LOCK_STALE_AFTER))
    }),
    (lock) => makeWith({ lock })
  )
).pipe(Layer.provide(memoryFsLayer))

/**
 * MEMORY.md in memory: the live index over an in-memory `MemoryFs` of its own (deterministic, no disk), so it has
 * the live caps, edits and lock by construction. To share one in-memory world with other services, provide
 * `layerOver` with their `MemoryFs.layerMemory()` instead.
 */
export const layerTest: Layer.Layer<MemoryIndex> = layerOver.pipe(Layer.provide(memoryFsLayerMemory()))
