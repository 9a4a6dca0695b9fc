/**
 * Which files of a memory directory are memories, and the order a scan returns them in. Shared by the live
 * scanner and its in-memory test layer so both agree on every rule.
 */
import type { MemoryHeader } from "../../Memory.js"

/** The index of a memory directory (or of a sub-scope such as `team/`): never a memory itself. */
export const INDEX_FILE_NAME = "MEMORY.md"
/** Daily logs (docs/dream-and-logs.md#daily-logs) live under `logs/`; they are not memories. */
export const LOGS_DIR_NAME = "logs"

/** A directory the scanner never enters: dot-dirs (`.git`, editor state) and `logs/`. */
export const isSkippedDirName = (name: string): boolean => name.startsWith(".") || name === LOGS_DIR_NAME

/** A `*.md` file other than an index; dot-files (editor swap files, atomic-write temp files) are skipped. */
export const isMemoryFileName = (name: string): boolean =>
  name.endsWith(".md") && name !== INDEX_FILE_NAME && !name.startsWith(".")

/** `./team/`, `team\\`, `/team` → `team`: the form `skipDirs` and `exclude` entries are compared in. */
export const normalizeRelativePath = (path: string): string =>
  path.replace(/\\/g, "/").replace(/^(?:\.\/|\/)+/, "").replace(/\/+$/, "")

/** Whether the directory `relativeDir` (`a/b`, `""` for the root) is one of `skipDirs` or inside one. */
export const isUnderSkippedDir = (relativeDir: string, skipDirs: ReadonlyArray<string>): boolean => {
  for (const skipped of skipDirs) {
    if (skipped === "") continue
    if (relativeDir === skipped || relativeDir.startsWith(skipped + "/")) return true
  }
  return false
}

/** Whether the walk enters a relative directory (`/`-separated, `""` for the root) through real directories. */
export const isWalkedDir = (relativeDir: string, skipDirs: ReadonlyArray<string>): boolean =>
  relativeDir === "" ||
  (!relativeDir.split("/").some((segment) => segment === "" || isSkippedDirName(segment)) &&
    !isUnderSkippedDir(relativeDir, skipDirs))

/** Whether a relative file path (`/`-separated) names a memory the scan should read. */
export const isCandidatePath = (relativePath: string, skipDirs: ReadonlyArray<string>): boolean => {
  const segments = relativePath.split("/")
  const name = segments.pop()!
  if (!isMemoryFileName(name)) return false
  if (segments.some((segment) => segment === "" || isSkippedDirName(segment))) return false
  return !isUnderSkippedDir(segments.join("/"), skipDirs)
}

/** Newest first; equal mtimes in path order so the result is deterministic. */
export const compareNewestFirst = (
  a: Pick<MemoryHeader, "mtime" | "path">,
  b: Pick<MemoryHeader, "mtime" | "path">
): number => b.mtime - a.mtime || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)

/** Below this many items a plain comparator sort is as cheap. */
const RANK_SORT_MIN = 64

/**
 * Sorts `items` newest first in place, in the order `compareNewestFirst` gives, without a comparator call per
 * comparison (a full scan sorts every header it read): the mtimes are sorted natively as numbers, each item goes to
 * its rank among them (a binary search), and only items with equal mtimes are then ordered by path. `mtimes`, when
 * given, holds each item's mtime in the same order (so the items themselves are not read for it).
 */
export const sortNewestFirst = <A extends Pick<MemoryHeader, "mtime" | "path">>(
  items: Array<A>,
  mtimes?: ArrayLike<number>
): Array<A> => {
  const count = items.length
  if (count < RANK_SORT_MIN) return items.sort(compareNewestFirst)
  const mtimeAt = mtimes === undefined || mtimes.length !== count
    ? (i: number) => items[i]!.mtime
    : (i: number) => mtimes[i]!
  // Ascending negated mtimes are descending mtimes; `0 - m` is never -0, which a typed array sorts apart from 0.
  const keys = new Float64Array(count)
  const unsorted = new Float64Array(count)
  for (let i = 0; i < count; i++) {
    const key = 0 - mtimeAt(i)
    if (Number.isNaN(key)) return items.sort(compareNewestFirst)
    unsorted[i] = key
  }
  keys.set(unsorted)
  keys.sort()
  const placed: Array<A> = new Array(count)
  // For each rank: how many items already went there (more than one: equal mtimes, ordered by path below).
  const taken = new Int32Array(count)
  let ties = false
  for (let i = 0; i < count; i++) {
    const item = items[i]!
    const key = unsorted[i]!
    let low = 0
    let high = count
    while (low < high) {
      const middle = (low + high) >>> 1
      if (keys[middle]! < key) low = middle + 1
      else high = middle
    }
    if (taken[low]! > 0) ties = true
    placed[low + taken[low]!] = item
    taken[low]!++
  }
  for (let i = 0; i < count; i++) items[i] = placed[i]!
  if (ties) {
    for (let rank = 0; rank < count; rank++) {
      const equal = taken[rank]!
      if (equal > 1) sortByPath(items, rank, rank + equal)
    }
  }
  return items
}

/** Items with equal mtimes are this few, mostly: an insertion sort, no copy. */
const INSERTION_SORT_MAX = 16

/** Sorts `items[start, end)` by path in place. */
const sortByPath = <A extends Pick<MemoryHeader, "path">>(items: Array<A>, start: number, end: number): void => {
  if (end - start > INSERTION_SORT_MAX) {
    const group = items.slice(start, end).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    for (let j = 0; j < group.length; j++) items[start + j] = group[j]!
    return
  }
  for (let i = start + 1; i < end; i++) {
    const item = items[i]!
    let j = i
    while (j > start && items[j - 1]!.path > item.path) {
      items[j] = items[j - 1]!
      j--
    }
    items[j] = item
  }
}

/** A valid cap, or `undefined` for none. */
export const normalizeLimit = (limit: number | undefined): number | undefined =>
  limit === undefined || !Number.isFinite(limit) ? undefined : Math.max(0, Math.floor(limit))
