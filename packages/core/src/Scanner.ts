/**
 * Scanner: the frontmatter of every memory file, first 30 lines only, newest first (SPEC §6.1).
 * CONTRACT (owned by the scan helper; implementation to be filled in).
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { MemoryHeader, ScanProblem } from "./Memory.js"

export const FRONTMATTER_MAX_LINES = 30
/** Reference: 200 candidates for the selector. */
export const DEFAULT_CANDIDATE_CAP = 200

export interface ScanOptions {
  /** Keep only the newest `limit` memories (default: all). */
  readonly limit?: number | undefined
  /** Relative paths to leave out (already surfaced / already read). */
  readonly exclude?: ReadonlySet<string> | undefined
  /** Sub-directories to skip, relative (default: none; `logs/` is never a memory). */
  readonly skipDirs?: ReadonlyArray<string> | undefined
}

export interface ScanResult {
  /** Newest mtime first. */
  readonly memories: ReadonlyArray<MemoryHeader>
  readonly problems: ReadonlyArray<ScanProblem>
  /** Number of memory files seen before the cap. */
  readonly total: number
}

export class Scanner extends Context.Tag("@memdir/core/Scanner")<Scanner, {
  /** Never fails: an absent directory is an empty scan, bad files are problems. */
  readonly scan: (memoryDir: string, options?: ScanOptions) => Effect.Effect<ScanResult>
}>() {}
