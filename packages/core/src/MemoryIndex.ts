/**
 * MemoryIndex (the design card's "Index" service): MEMORY.md, the table of contents loaded into every session (SPEC §5).
 * CONTRACT (owned by the index/write helper; implementation to be filled in).
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { IndexOverCapError, LockTimeoutError, MemoryIoError } from "./Errors.js"
import type { IndexEntry } from "./Memory.js"

export const INDEX_FILE = "MEMORY.md"
export const INDEX_MAX_LINES = 200
export const INDEX_MAX_BYTES = 25_000

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

export class MemoryIndex extends Context.Tag("@memdir/core/MemoryIndex")<MemoryIndex, {
  readonly load: (memoryDir: string) => Effect.Effect<LoadedIndex, MemoryIoError>
  /** Adds the entry or replaces the line pointing at the same file. Atomic, safe across processes. */
  readonly upsert: (
    memoryDir: string,
    entry: IndexEntry
  ) => Effect.Effect<{ readonly created: boolean }, IndexOverCapError | LockTimeoutError | MemoryIoError>
  /** Removes the line(s) pointing at `file`; returns how many were removed. */
  readonly remove: (memoryDir: string, file: string) => Effect.Effect<number, LockTimeoutError | MemoryIoError>
}>() {}
