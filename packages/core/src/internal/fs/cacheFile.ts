/**
 * A cache file in the memory directory's `.cache/` (the header and term caches, docs/architecture.md#the-recall-caches):
 * `{ "version": N, "entries": { absolutePath: entry } }`, read with a size bound through `MemoryFs` (never following
 * a link, never blocking) and written 0600, atomically, inside the memory directory. A cache is never a source of
 * truth: a file that cannot be read, does not parse or is of another version reads as empty, an entry its format
 * cannot decode is skipped, and a cache that cannot be written costs the next run its work, nothing else.
 */
import * as Effect from "effect/Effect"
import * as NodePath from "node:path"
import { FILE_MODE, type MemoryFs } from "./core.js"

export interface CacheFormat<Entry> {
  /** What the log names it ("header cache"). */
  readonly name: string
  /** Entries of another version are never used. */
  readonly version: number
  /** A file larger than this is not read. */
  readonly maxBytes: number
  /** One stored entry, or `undefined` when it is not of the right shape (it is skipped). */
  readonly decode: (raw: unknown) => Entry | undefined
  readonly encode: (entry: Entry) => unknown
}

/** The entries of a cache file's text; empty when it does not parse or is of another version. */
export const parseCacheFile = <Entry>(format: CacheFormat<Entry>, text: string): Map<string, Entry> => {
  const entries = new Map<string, Entry>()
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return entries
  }
  const file = parsed as { version?: unknown; entries?: unknown } | null
  if (file === null || typeof file !== "object" || file.version !== format.version) return entries
  if (file.entries === null || typeof file.entries !== "object") return entries
  for (const [path, raw] of Object.entries(file.entries as Record<string, unknown>)) {
    const entry = format.decode(raw)
    if (entry !== undefined) entries.set(path, entry)
  }
  return entries
}

export const renderCacheFile = <Entry>(format: CacheFormat<Entry>, entries: ReadonlyMap<string, Entry>): string => {
  const out: Record<string, unknown> = {}
  entries.forEach((entry, path) => {
    out[path] = format.encode(entry)
  })
  return JSON.stringify({ version: format.version, entries: out })
}

/** The cache's entries; empty when the file is missing, unreadable, too large, corrupt or of another version. */
export const readCacheFile = <Entry>(
  fs: MemoryFs["Service"],
  format: CacheFormat<Entry>,
  cacheFile: string
): Effect.Effect<Map<string, Entry>> =>
  fs.readFile(cacheFile, { maxBytes: format.maxBytes }).pipe(
    Effect.map((file) => parseCacheFile(format, file.text)),
    Effect.catch(() => Effect.succeed(new Map<string, Entry>()))
  )

/** Writes the cache (its `.cache/` made inside `memoryDir`); a failure is logged at debug level, never raised. */
export const writeCacheFile = <Entry>(
  fs: MemoryFs["Service"],
  format: CacheFormat<Entry>,
  memoryDir: string,
  cacheFile: string,
  entries: ReadonlyMap<string, Entry>
): Effect.Effect<void> =>
  fs.makeDirectory(NodePath.dirname(cacheFile), { within: memoryDir }).pipe(
    Effect.andThen(
      fs.writeFileAtomic(cacheFile, renderCacheFile(format, entries), { mode: FILE_MODE, within: memoryDir })
    ),
    // a read-only or full disk costs the next run the work the cache saves, nothing else
    Effect.catch((error) => Effect.logDebug(`${format.name} not written: ${error.message}`))
  )
