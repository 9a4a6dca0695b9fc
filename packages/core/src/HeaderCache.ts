/**
 * HeaderCache: what the scan made of each memory file's head (its header, or why it has none, and the head of its
 * body), kept per memory directory so a recall over thousands of unchanged memories lists and `lstat`s them instead
 * of opening, reading and parsing every one (docs/architecture.md#the-recall-caches).
 *
 * Beside the term cache, inside the memory directory (`.cache/headers.json`, hidden: memdir's own state, never
 * listed, never a memory, never synced with `team/`; the directory is the user's own, 0700), written 0600
 * atomically through `MemoryFs`. An entry is used only while its file's size and mtime (from `lstat`, never following
 * a link: a link or FIFO is never a hit, and is left to the scan's own reader, which never follows or blocks) are
 * the ones it was made from, and only while the file was made by this version of the scan (`HEADER_CACHE_VERSION`:
 * bump it when what the scan makes of a head changes). A cache that cannot be read, does not parse or is of another
 * version is ignored and rebuilt; an entry of the wrong shape is skipped. It is never a source of truth: a file not
 * in it is read as if there were no cache, and entries of files gone are dropped when the cache is written back.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as NodePath from "node:path"
import { type CacheFormat, readCacheFile, writeCacheFile } from "./internal/fs/cacheFile.js"
import { isMemoryType, type MemoryKind } from "./Memory.js"
import { MemoryFs } from "./MemoryFs.js"

/** Where the cache lives, relative to the memory directory. */
export const HEADER_CACHE_FILE = ".cache/headers.json"
/** The version of what the scan makes of a head: another version's entries are never used. */
export const HEADER_CACHE_VERSION = 1
/** A cache file larger than this is not read (it would cost more than reading the heads). */
const CACHE_MAX_BYTES = 128 * 1024 * 1024

/** A head that held a header: the parsed fields, as the scan parsed them (the written time is derived on use). */
export interface CachedMemoryHead {
  readonly kind: "memory"
  readonly name: string
  readonly description: string
  readonly type: MemoryKind
  readonly extra: Readonly<Record<string, unknown>>
  readonly warning: string | undefined
  readonly bodyHead: string
}

/** A head without a readable header: the problem the scan reported, and the file's first lines. */
export interface CachedProblemHead {
  readonly kind: "problem"
  readonly code: string
  readonly message: string
  readonly line: number | undefined
  readonly headText: string
}

export type CachedHead = CachedMemoryHead | CachedProblemHead

/** One memory directory's cache, for one scan: synchronous lookups in the scan's loops, one write at the end. */
export interface HeaderCacheTable {
  /** The head cached for the file at `path` (absolute) if it was made from a file of this size and mtime. */
  readonly get: (path: string, size: number, mtimeMs: number) => CachedHead | undefined
  /** Records what the scan made of the file at `path`, read when it had this size and mtime. */
  readonly set: (path: string, size: number, mtimeMs: number, head: CachedHead) => void
  /**
   * Writes the cache back when it changed: entries of files this scan neither looked up nor recorded are dropped
   * unless `keepUnseen` says the scan did not look for them (a skipped directory, an excluded file). Never fails.
   */
  readonly save: (keepUnseen: (path: string) => boolean) => Effect.Effect<void>
}

export class HeaderCache extends Context.Service<HeaderCache, {
  /** The cache of `memoryDir` (read once per process and directory; an unreadable one is empty). Never fails. */
  readonly open: (memoryDir: string) => Effect.Effect<HeaderCacheTable>
}>()("@memdir/core/HeaderCache") {}

interface Entry {
  readonly size: number
  readonly mtimeMs: number
  readonly head: CachedHead
}

/** Only what JSON gives back as it was (a YAML date or `.inf` would not): other heads are not cached. */
const isPlainJson = (value: unknown, depth = 0): boolean => {
  if (value === null || typeof value === "string" || typeof value === "boolean") return true
  if (typeof value === "number") return Number.isFinite(value)
  if (depth > 16 || typeof value !== "object") return false
  if (Array.isArray(value)) return value.every((item) => isPlainJson(item, depth + 1))
  const prototype = Object.getPrototypeOf(value)
  if (prototype !== Object.prototype && prototype !== null) return false
  return Object.values(value).every((item) => item !== undefined && isPlainJson(item, depth + 1))
}

const cacheable = (head: CachedHead): boolean => head.kind === "problem" || isPlainJson(head.extra)

type RawEntry = ReadonlyArray<unknown>

const str = (value: unknown): value is string => typeof value === "string"
const optionalStr = (value: unknown): value is string | null => value === null || typeof value === "string"

/** `[size, mtime, "m", name, description, type, extra, warning|null, bodyHead]` or `[size, mtime, "p", code, message, line|null, headText]`. */
const toEntry = (raw: RawEntry): Entry | undefined => {
  const [size, mtimeMs, kind] = raw
  if (typeof size !== "number" || typeof mtimeMs !== "number") return undefined
  if (kind === "m" && raw.length === 9) {
    const [, , , name, description, type, extra, warning, bodyHead] = raw
    if (
      !str(name) || !str(description) || !str(type) || !(type === "untyped" || isMemoryType(type)) ||
      extra === null || typeof extra !== "object" || Array.isArray(extra) || !optionalStr(warning) || !str(bodyHead)
    ) return undefined
    return {
      size,
      mtimeMs,
      head: {
        kind: "memory",
        name,
        description,
        type,
        extra: extra as Record<string, unknown>,
        warning: warning ?? undefined,
        bodyHead
      }
    }
  }
  if (kind === "p" && raw.length === 7) {
    const [, , , code, message, line, headText] = raw
    if (!str(code) || !str(message) || !(line === null || typeof line === "number") || !str(headText)) return undefined
    return { size, mtimeMs, head: { kind: "problem", code, message, line: line ?? undefined, headText } }
  }
  return undefined
}

const fromEntry = ({ head, mtimeMs, size }: Entry): RawEntry =>
  head.kind === "memory"
    ? [size, mtimeMs, "m", head.name, head.description, head.type, head.extra, head.warning ?? null, head.bodyHead]
    : [size, mtimeMs, "p", head.code, head.message, head.line ?? null, head.headText]

const format: CacheFormat<Entry> = {
  name: "header cache",
  version: HEADER_CACHE_VERSION,
  maxBytes: CACHE_MAX_BYTES,
  decode: (raw) => Array.isArray(raw) ? toEntry(raw) : undefined,
  encode: fromEntry
}

export const make = Effect.gen(function*() {
  const fs = yield* MemoryFs
  // The entries of the directories this process has seen: a long-lived process (a server) reads its cache once.
  const loaded = new Map<string, Map<string, Entry>>()

  const open = Effect.fn("HeaderCache.open")(function*(memoryDir: string) {
    const cacheFile = NodePath.join(memoryDir, HEADER_CACHE_FILE)
    const entries = loaded.get(cacheFile) ?? (yield* readCacheFile(fs, format, cacheFile))
    loaded.set(cacheFile, entries)
    const seen = new Set<string>()
    let changed = false
    const table: HeaderCacheTable = {
      get: (path, size, mtimeMs) => {
        seen.add(path)
        const entry = entries.get(path)
        return entry !== undefined && entry.size === size && entry.mtimeMs === mtimeMs ? entry.head : undefined
      },
      set: (path, size, mtimeMs, head) => {
        seen.add(path)
        if (cacheable(head)) {
          entries.set(path, { size, mtimeMs, head })
          changed = true
        } else {
          changed = entries.delete(path) || changed
        }
      },
      save: (keepUnseen) =>
        Effect.suspend(() => {
          entries.forEach((_, path) => {
            if (!seen.has(path) && !keepUnseen(path)) {
              entries.delete(path)
              changed = true
            }
          })
          if (!changed) return Effect.void
          changed = false
          return writeCacheFile(fs, format, memoryDir, cacheFile, entries)
        })
    }
    return table
  })

  return HeaderCache.of({ open })
})

/** The cache on the given `MemoryFs` (live or in memory). */
export const layer: Layer.Layer<HeaderCache, never, MemoryFs> = Layer.effect(HeaderCache, make)

/** No cache: every lookup misses and nothing is written (a scan reads every head, as without the layer). */
export const layerTest: Layer.Layer<HeaderCache> = Layer.succeed(
  HeaderCache,
  HeaderCache.of({
    open: () =>
      Effect.succeed({
        get: () => undefined,
        set: () => undefined,
        save: () => Effect.void
      })
  })
)
