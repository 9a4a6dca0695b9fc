/**
 * Browsing a memory directory (docs/mcp.md): the headers of its memories filtered by scope and type, a ranked
 * search over them with the offline selector's scores, and a memory's version (a hash of its text) for writes
 * that must not overwrite a change they did not see.
 *
 * Unlike recall, a search ranks every memory with any evidence (not only those that clear the relevance bar) and
 * returns headers, not bodies: it is for an agent or a person looking around, recall is for the turn at hand.
 * Headers come from the `Scanner` (first 30 lines of each file); `team/` is listed only while team memory is on.
 */
import * as Effect from "effect/Effect"
import * as NodePath from "node:path"
import { TeamMemoryDisabledError } from "./Errors.js"
import { type MemoryHeader, type MemoryKind, type MemoryScope, TEAM_DIR } from "./Memory.js"
import { sortNewestWrittenFirst } from "./MemoryAge.js"
import { Scanner } from "./Scanner.js"
import { scoreMemories } from "./Selector.js"

/** Which memories a listing covers: private ones, team ones, or both (`all`, team only while it is on). */
export type BrowseScope = "private" | "team" | "all"

export const browseScopes: ReadonlyArray<BrowseScope> = ["private", "team", "all"]

export interface ListInput {
  readonly memoryDir: string
  /** Team memory is on for this directory (a resolved team location's `enabled`). */
  readonly teamEnabled: boolean
  /** Default `all`. `team` while team memory is off fails with `TeamMemoryDisabledError`. */
  readonly scope?: BrowseScope | undefined
  /** Only memories of this type. */
  readonly type?: MemoryKind | undefined
}

export interface ListedMemory extends MemoryHeader {
  readonly scope: MemoryScope
}

export interface SearchInput extends ListInput {
  readonly query: string
  /** At most this many results (default 10, at most 50). */
  readonly limit?: number | undefined
}

export interface SearchHit {
  readonly memory: ListedMemory
  /** The offline selector's evidence for the memory (higher is better). */
  readonly score: number
  /** Query terms (analysed: stemmed, lower-cased) the memory matched. */
  readonly matched: ReadonlyArray<string>
  /** Whether the selector would recall it for this query. */
  readonly relevant: boolean
}

export const DEFAULT_SEARCH_LIMIT = 10
export const MAX_SEARCH_LIMIT = 50

/** A memory's version (the MCP tools' `version` / `if_version`). */
export { memoryVersion } from "./Memory.js"

/**
 * A scanned header as listed: every field written out (the type names each one, optional ones too), so each
 * listed memory is built with one shape, several times cheaper than a spread of the header (MCP `memory_list`
 * lists every memory).
 */
const listed = (m: MemoryHeader, path: string, scope: MemoryScope): ListedMemory => {
  const memory: { readonly [K in Exclude<keyof ListedMemory, "headerless" | "size">]-?: ListedMemory[K] } = {
    path,
    absolutePath: m.absolutePath,
    name: m.name,
    description: m.description,
    type: m.type,
    mtime: m.mtime,
    writtenAt: m.writtenAt,
    writtenFrom: m.writtenFrom,
    extra: m.extra,
    warning: m.warning,
    bodyHead: m.bodyHead,
    scope
  }
  // only a headerless memory has the key (none of a scan's `memories` is)
  return m.headerless === undefined ? memory : { ...memory, headerless: m.headerless }
}

/** The memories of a directory, newest written first, in the scope and of the type asked for. */
export const listMemories = Effect.fn("Browse.listMemories")(function*(input: ListInput) {
  const scope = input.scope ?? "all"
  if (scope === "team" && !input.teamEnabled) {
    return yield* new TeamMemoryDisabledError({ source: "teamEnabled is not true for this memory directory" })
  }
  const scanner = yield* Scanner
  const memories: Array<ListedMemory> = []
  if (scope !== "team") {
    const scan = yield* scanner.scan(input.memoryDir, { skipDirs: [TEAM_DIR] })
    for (const m of scan.memories) memories.push(listed(m, m.path, "private"))
  }
  if (scope !== "private" && input.teamEnabled) {
    const scan = yield* scanner.scan(NodePath.join(input.memoryDir, TEAM_DIR))
    for (const m of scan.memories) memories.push(listed(m, `${TEAM_DIR}/${m.path}`, "team"))
  }
  const typed = input.type === undefined ? memories : memories.filter((m) => m.type === input.type)
  // newest written first, as `memdir ls` lists them: by the time each one's age counts from (its `modified:`, last
  // commit or mtime), not by mtime, so a listing's order and the ages it shows agree
  return sortNewestWrittenFirst(typed)
})

/** The limit actually used: a whole number in 1 … MAX_SEARCH_LIMIT. */
export const effectiveSearchLimit = (limit: number | undefined): number =>
  limit === undefined || !Number.isFinite(limit) ?
    DEFAULT_SEARCH_LIMIT :
    Math.max(1, Math.min(MAX_SEARCH_LIMIT, Math.floor(limit)))

/** Memories with any evidence for the query, best first (ties: newest first), at most `limit`. */
export const searchMemories = Effect.fn("Browse.searchMemories")(function*(input: SearchInput) {
  const listed = yield* listMemories(input)
  const byPath = new Map(listed.map((m) => [m.path, m]))
  const scored = scoreMemories({ query: input.query, candidates: listed })
  const hits: Array<SearchHit> = scored
    .filter((s) => s.score > 0)
    .slice(0, effectiveSearchLimit(input.limit))
    .map((s) => ({ memory: byPath.get(s.path)!, score: s.score, matched: s.matched, relevant: s.relevant }))
  return hits
})
