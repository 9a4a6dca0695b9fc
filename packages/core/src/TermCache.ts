/**
 * TermCache: the analysed whole bodies of a directory's memories, so the offline selector scores a memory by
 * everything its body says (a request quoting an exception that only a long memory's body names finds it), not
 * only by the 1 KiB head the scan keeps.
 *
 * Analysing text costs about a millisecond per KiB (segmentation, stemming, grams), far too much to redo for every
 * memory on every prompt, so each body's terms are cached per memory directory, inside
 * it (`.cache/terms.json`, hidden: memdir's own state, never listed, never a memory, never synced with `team/`), written 0600
 * atomically. An entry is used only while its file's size and mtime (from `lstat`, never following a link) are
 * the ones it was made from, and while it was made by this version of the analysis; a cache that cannot be read,
 * does not parse or is of another version is ignored and rebuilt. It is never a source of truth: a file not in it
 * is read (bounded, no link followed, regular files only) and analysed, and a file that cannot be read is simply
 * scored by its head. At most `analyseBudgetBytes` of bodies are analysed per call, so a first recall over a large
 * directory stays within the hook budget: the rest is scored by its header (name, description, path) this time, and analysed on later calls.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as NodePath from "node:path"
import { parseMemoryFile } from "./Frontmatter.js"
import { type CacheFormat, readCacheFile, writeCacheFile } from "./internal/fs/cacheFile.js"
import { type Language, LANGUAGES } from "./internal/text/language.js"
import {
  analyzeBody,
  type BodyTerms,
  headerKey,
  type HeaderTerms,
  headerTermsOf,
  NO_BLOCKS
} from "./internal/text/selectorIndex.js"
import type { MemoryHeader } from "./Memory.js"
import { type FileInfo, MemoryFs, MemoryFsError } from "./MemoryFs.js"

export type { BodyTerms }

/** Where the cache lives, relative to the memory directory. */
export const TERM_CACHE_FILE = ".cache/terms.json"
/** The version of the analysis the entries were made with: a change of the analysis makes every entry stale. */
export const ANALYSIS_VERSION = 15
/** The longest body analysed (a longer one is analysed up to here). */
export const BODY_MAX_BYTES = 64 * 1024
/** Bodies analysed per call, at most (a few milliseconds per KiB in a fresh process). */
export const ANALYSE_BUDGET_BYTES = 96 * 1024
/** A cache file larger than this is not read (it would cost more than it saves). */
const CACHE_MAX_BYTES = 64 * 1024 * 1024

/** The terms of a memory file's body (its frontmatter left out; a file without one is all body). */
export const bodyTermsOf = (text: string, path: string): BodyTerms => {
  const parsed = parseMemoryFile(text, path)
  return analyzeBody(Result.isSuccess(parsed) ? parsed.success.body : text)
}

export interface TermCacheOptions {
  readonly analyseBudgetBytes?: number | undefined
}

export class TermCache extends Context.Service<TermCache, {
  /**
   * The whole-body terms of `candidates` (absolute paths inside `memoryDir`), by candidate path: every candidate
   * whose cached entry still matches, and the ones analysed within the budget now. Never fails.
   */
  readonly bodies: (
    memoryDir: string,
    candidates: ReadonlyArray<MemoryHeader>
  ) => Effect.Effect<ReadonlyMap<string, BodyTerms>>
}>()("@memdir/core/TermCache") {}

interface Entry {
  readonly size: number
  readonly mtimeMs: number
  readonly terms: BodyTerms
}

/** A header's fields as stored: its key, then per field (name, description, path, type) its words and term counts. */
type RawHeader = [string, ...Array<[number, Array<[string, number]>]>]

interface RawEntry {
  s: number
  m: number
  w: number
  l: string
  t: Array<[string, number]>
  /**
   * Per term of `t` (same order), its blocks (`BodyTerms.blocks`) in base 36, joined by "," and the terms' lists by
   * " ": one string, which parses far faster than as many numbers (a cache is read by every recall).
   */
  b?: string
  h?: RawHeader
}

const isPairs = (value: unknown): value is Array<[string, number]> =>
  Array.isArray(value) &&
  value.every((pair) => Array.isArray(pair) && typeof pair[0] === "string" && typeof pair[1] === "number")

const toHeader = (raw: unknown): HeaderTerms | undefined => {
  if (!Array.isArray(raw) || raw.length !== 5 || typeof raw[0] !== "string") return undefined
  const fields = raw.slice(1) as Array<unknown>
  if (!fields.every((f) => Array.isArray(f) && typeof f[0] === "number" && isPairs(f[1]))) return undefined
  return {
    key: raw[0],
    fields: (fields as Array<[number, Array<[string, number]>]>).map(([words, pairs]) => ({
      words,
      counts: new Map(pairs)
    }))
  }
}

const fromHeader = (header: HeaderTerms): RawHeader => [
  header.key,
  ...header.fields.map((f): [number, Array<[string, number]>] => [f.words, [...f.counts]])
]

/** Blocks as stored: one list of base-36 numbers per term of the pairs. */
const BLOCKS = /^(?:[0-9a-z]+(?:,[0-9a-z]+)*)?(?: (?:[0-9a-z]+(?:,[0-9a-z]+)*)?)*$/

const isBlocks = (value: unknown, terms: number): value is string => {
  if (typeof value !== "string" || !BLOCKS.test(value)) return false
  let lists = 1
  for (let i = value.indexOf(" "); i >= 0; i = value.indexOf(" ", i + 1)) lists++
  return lists === terms
}

/**
 * A term's blocks, read from their stored form when asked: most memories are never asked, and a memory is asked for
 * a few terms of its hundreds. The stored lists follow the order of `counts` (made from the same pairs), so nothing
 * else of the raw entry is kept.
 */
const blocksFrom = (
  counts: ReadonlyMap<string, number>,
  stored: string
): (term: string) => ReadonlyArray<number> => {
  let lists: Map<string, string> | undefined
  return (term) => {
    if (lists === undefined) {
      lists = new Map()
      const split = stored.split(" ")
      let i = 0
      for (const key of counts.keys()) lists.set(key, split[i++]!)
    }
    const list = lists.get(term)
    return list === undefined || list === "" ? NO_BLOCKS : list.split(",").map((b) => parseInt(b, 36))
  }
}

const decodeEntry = (raw: unknown): Entry | undefined => {
  const entry = raw as Partial<RawEntry> | null
  if (
    entry === null || typeof entry !== "object" || typeof entry.s !== "number" || typeof entry.m !== "number" ||
    typeof entry.w !== "number" || !(LANGUAGES as ReadonlyArray<string>).includes(entry.l as string) ||
    !isPairs(entry.t) || (entry.b !== undefined && !isBlocks(entry.b, entry.t.length))
  ) return undefined
  const counts = new Map(entry.t)
  // the blocks follow the terms one for one: a term twice would shift them all
  if (entry.b !== undefined && counts.size !== entry.t.length) return undefined
  // a header's terms of the wrong shape are dropped, not the body's: they are made again on use
  const header = entry.h === undefined ? undefined : toHeader(entry.h)
  const terms: BodyTerms = {
    words: entry.w,
    language: entry.l as Language,
    counts,
    ...(entry.b === undefined ? {} : { blocks: blocksFrom(counts, entry.b) }),
    ...(header === undefined ? {} : { header })
  }
  return { size: entry.s, mtimeMs: entry.m, terms }
}

/** `BodyTerms.blocks` as stored (`RawEntry.b`): per term of `counts`, in its order. */
const storedBlocks = (terms: BodyTerms): string | undefined => {
  const blocks = terms.blocks
  if (blocks === undefined) return undefined
  return [...terms.counts.keys()].map((term) => blocks(term).map((b) => b.toString(36)).join(",")).join(" ")
}

const encodeEntry = (entry: Entry): RawEntry => {
  const blocks = storedBlocks(entry.terms)
  return {
    s: entry.size,
    m: entry.mtimeMs,
    w: entry.terms.words,
    l: entry.terms.language,
    t: [...entry.terms.counts],
    ...(blocks === undefined ? {} : { b: blocks }),
    ...(entry.terms.header === undefined ? {} : { h: fromHeader(entry.terms.header) })
  }
}

const format: CacheFormat<Entry> = {
  name: "term cache",
  version: ANALYSIS_VERSION,
  maxBytes: CACHE_MAX_BYTES,
  decode: decodeEntry,
  encode: encodeEntry
}

export const makeWith = (options: TermCacheOptions = {}) =>
  Effect.gen(function*() {
    const fs = yield* MemoryFs
    const budget = options.analyseBudgetBytes ?? ANALYSE_BUDGET_BYTES
    // The entries of the directories this process has seen: a long-lived process (a server) reads its cache once.
    const loaded = new Map<string, Map<string, Entry>>()

    const analyseFile = (memory: MemoryHeader, info: Pick<FileInfo, "size" | "mtimeMs">) =>
      fs.readHead(memory.absolutePath, BODY_MAX_BYTES).pipe(
        Effect.map((head): Entry => {
          const text = head.truncated ? head.text.slice(0, head.text.lastIndexOf("\n") + 1) : head.text
          const body = bodyTermsOf(text, memory.path)
          return {
            size: info.size,
            mtimeMs: info.mtimeMs,
            terms: { ...body, header: headerTermsOf(memory, body.language) }
          }
        }),
        Effect.option
      )

    const bodies = Effect.fn("TermCache.bodies")(function*(memoryDir: string, candidates: ReadonlyArray<MemoryHeader>) {
      const cacheFile = NodePath.join(memoryDir, TERM_CACHE_FILE)
      const cached = loaded.get(cacheFile) ?? (yield* readCacheFile(fs, format, cacheFile))
      loaded.set(cacheFile, cached)
      // The scan's own look at each file (size and mtime from its `lstat`), else one `lstat` for those without.
      const unsized = candidates.filter((m) => m.size === undefined)
      const looked = unsized.length === 0 ? [] : yield* fs.lstatMany(unsized.map((m) => m.absolutePath))
      let lookedAt = 0
      const infos = candidates.map((m): Pick<FileInfo, "kind" | "size" | "mtimeMs"> | MemoryFsError =>
        m.size === undefined ? looked[lookedAt++]! : { kind: "File", size: m.size, mtimeMs: m.mtime }
      )
      const out = new Map<string, BodyTerms>()
      // entries of files that were not candidates this time (another scope) stay; they are checked when used
      const next = new Map(cached)
      let spent = 0
      let changed = false
      for (let i = 0; i < candidates.length; i++) {
        const memory = candidates[i]!
        const info = infos[i]!
        const entry = cached.get(memory.absolutePath)
        if (info instanceof MemoryFsError || info.kind !== "File") {
          changed = next.delete(memory.absolutePath) || changed
          continue
        }
        if (entry !== undefined && entry.size === info.size && entry.mtimeMs === info.mtimeMs) {
          if (entry.terms.header?.key === headerKey(memory)) {
            out.set(memory.path, entry.terms)
            continue
          }
          // the body's terms hold; its header's are made now (an entry of an earlier memdir, or a new header parse)
          const terms = { ...entry.terms, header: headerTermsOf(memory, entry.terms.language) }
          out.set(memory.path, terms)
          next.set(memory.absolutePath, { ...entry, terms })
          changed = true
          continue
        }
        const cost = Math.min(info.size, BODY_MAX_BYTES)
        if (spent > 0 && spent + cost > budget) continue
        spent += cost
        const fresh = yield* analyseFile(memory, info)
        if (fresh._tag === "None") continue
        out.set(memory.path, fresh.value.terms)
        next.set(memory.absolutePath, fresh.value)
        changed = true
      }
      // files gone since (not candidates for a long time) would pile up: past twice the candidates, only theirs stay
      if (next.size > 2 * candidates.length + 64) {
        const keep = new Set(candidates.map((m) => m.absolutePath))
        for (const path of [...next.keys()]) if (!keep.has(path)) next.delete(path)
        changed = true
      }
      if (changed) {
        loaded.set(cacheFile, next)
        yield* writeCacheFile(fs, format, memoryDir, cacheFile, next)
      }
      return out
    })

    return TermCache.of({ bodies })
  })

/** The cache on the given `MemoryFs` (live or in memory). */
export const layer: Layer.Layer<TermCache, never, MemoryFs> = Layer.effect(TermCache, makeWith())

export const layerWith = (options: TermCacheOptions): Layer.Layer<TermCache, never, MemoryFs> =>
  Layer.effect(TermCache, makeWith(options))

/** No cache: every body is analysed on every call (tests that compare with the cache, tiny directories). */
export const layerTest: Layer.Layer<TermCache, never, MemoryFs> = Layer.effect(
  TermCache,
  Effect.map(MemoryFs, (fs) =>
    TermCache.of({
      bodies: (_memoryDir, candidates) =>
        Effect.gen(function*() {
          const out = new Map<string, BodyTerms>()
          for (const memory of candidates) {
            const head = yield* Effect.option(fs.readHead(memory.absolutePath, BODY_MAX_BYTES))
            if (head._tag === "None") continue
            out.set(memory.path, bodyTermsOf(head.value.text, memory.path))
          }
          return out
        })
    }))
)
