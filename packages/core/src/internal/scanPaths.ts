/**
 * Which files of a memory directory are memories, and the order a scan returns them in. Shared by the live
 * scanner and its in-memory test layer so both agree on every rule.
 */
import type { MemoryHeader } from "../Memory.js"

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

/** Whether a relative file path (`/`-separated) names a memory the scan should read. */
export const isCandidatePath = (relativePath: string, skipDirs: ReadonlyArray<string>): boolean => {
  const segments = relativePath.split("/")
  const name = segments.pop()!
  if (!isMemoryFileName(name)) return false
  if (segments.some((segment) => segment === "" || isSkippedDirName(segment))) return false
  return !isUnderSkippedDir(segments.join("/"), skipDirs)
}

/** Newest first; equal mtimes in path order so the result is deterministic. */
export const compareNewestFirst = (a: MemoryHeader, b: MemoryHeader): number =>
  b.mtime - a.mtime || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)

/** A valid cap, or `undefined` for none. */
export const normalizeLimit = (limit: number | undefined): number | undefined =>
  limit === undefined || !Number.isFinite(limit) ? undefined : Math.max(0, Math.floor(limit))
