/**
 * The pure half of team sync: git's output parsed, the inspection of a tree (incoming or outgoing, the same
 * rules both ways) and how conflicts are resolved. Nothing here runs git or touches the disk.
 *
 * A tree is refused WHOLE, with a report, when any entry is a symlink (120000), a submodule (160000) or another
 * special mode, a dot-file, a name TeamGuard's layers 1+2 refuse, a path deeper than 64 levels (the depth the
 * audit walks), a name too long to keep a conflict copy beside it, a path under `MEMORY.md` (the index must stay
 * a file), a blob over 250,000 bytes, a tree of more than 10,000 entries or 64 MiB in all, or a blob holding a
 * likely secret (SecretScan).
 */
import * as Result from "effect/Result"
import { conflictCopyPath } from "./internal/team/conflict.js"
import { MEMORY_MAX_BYTES } from "./Memory.js"
import { INDEX_FILE } from "./MemoryIndex.js"
import { scanSecrets } from "./SecretScan.js"
import { checkKey, TEAM_DIR } from "./TeamGuard.js"

/** An incoming tree with more entries than this is refused (a team memory holds a few hundred files). */
export const TEAM_SYNC_MAX_ENTRIES = 10_000
/** All blobs of a tree together (a small commit can name one big blob thousands of times). */
export const TEAM_SYNC_MAX_TOTAL_BYTES = 64 * 1024 * 1024
/** Path segments at most: the depth `TeamGuard.audit` walks on the outgoing side. */
export const TEAM_SYNC_MAX_DEPTH = 64
/**
 * UTF-8 bytes per path segment at most: the file-name limit (255) less what a conflict copy adds
 * (`.md` → `.conflict-<8 hex>.md`), so a conflict never produces a name the file system refuses.
 */
export const TEAM_SYNC_MAX_NAME_BYTES = 255 - (".conflict-12345678.md".length - ".md".length)

/** One refused entry of a tree (incoming or outgoing). */
export interface SyncViolation {
  /** Relative to team/, as git names it. */
  readonly path: string
  /**
   * `symlink`, `submodule`, `special-mode`, `hidden-file`, `too-deep`, `name-too-long`, `index-not-a-file`,
   * `oversized`, `secret`, `too-many-files`, `too-large`, or a `PathTraversalError` reason.
   */
  readonly reason: string
  readonly detail: string
}

export interface SyncConflict {
  /** The memory both sides changed (`team/…`): it keeps our version (or theirs, when we deleted it). */
  readonly path: string
  /** Where their version was saved (`team/….conflict-<sha>.md`) when both versions exist. */
  readonly copy?: string | undefined
  readonly kept: "both" | "ours" | "theirs"
}

/** One entry of `git ls-tree -r -z --long`. */
export interface TreeEntry {
  readonly mode: string
  readonly type: string
  readonly sha: string
  /** Bytes; undefined for submodules (git prints `-`). */
  readonly size: number | undefined
  readonly path: string
}

/** Parses `git ls-tree -r -z --long` output. */
export const parseLsTree = (output: string): Array<TreeEntry> =>
  output.split("\0").filter((record) => record.length > 0).map((record) => {
    const tab = record.indexOf("\t")
    const [mode, type, sha, size] = record.slice(0, tab).split(/ +/)
    return {
      mode: mode!,
      type: type!,
      sha: sha!,
      size: size === undefined || size === "-" ? undefined : Number(size),
      path: record.slice(tab + 1)
    }
  })

/** `git merge-tree --write-tree -z`: the result tree and the conflicted entries (stage 1 base, 2 ours, 3 theirs). */
export const parseMergeTree = (output: string): {
  readonly tree: string
  readonly conflicted: ReadonlyArray<
    { readonly mode: string; readonly sha: string; readonly stage: number; readonly path: string }
  >
} => {
  const records = output.split("\0")
  const conflicted: Array<{ mode: string; sha: string; stage: number; path: string }> = []
  for (let i = 1; i < records.length && records[i] !== ""; i++) {
    const record = records[i]!
    const tab = record.indexOf("\t")
    const [mode, sha, stage] = record.slice(0, tab).split(" ")
    conflicted.push({ mode: mode!, sha: sha!, stage: Number(stage), path: record.slice(tab + 1) })
  }
  return { tree: records[0]!.trim(), conflicted }
}

/**
 * How conflicted paths are resolved without losing a version: ours stays at the path and theirs goes to
 * `<name>.conflict-<sha>.md`; a side that deleted the memory loses to the side that changed it.
 */
export const resolveConflicts = (
  conflicted: ReturnType<typeof parseMergeTree>["conflicted"]
): {
  readonly entries: ReadonlyArray<{ readonly mode: string; readonly sha: string; readonly path: string }>
  readonly conflicts: ReadonlyArray<SyncConflict>
} => {
  const byPath = new Map<string, { ours?: { mode: string; sha: string }; theirs?: { mode: string; sha: string } }>()
  for (const entry of conflicted) {
    const sides = byPath.get(entry.path) ?? {}
    if (entry.stage === 2) sides.ours = { mode: entry.mode, sha: entry.sha }
    if (entry.stage === 3) sides.theirs = { mode: entry.mode, sha: entry.sha }
    byPath.set(entry.path, sides)
  }
  const entries: Array<{ mode: string; sha: string; path: string }> = []
  const conflicts: Array<SyncConflict> = []
  for (const [path, { ours, theirs }] of [...byPath].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (ours !== undefined && theirs !== undefined && ours.sha !== theirs.sha) {
      const copy = conflictCopyPath(path, theirs.sha)
      entries.push({ ...ours, path }, { ...theirs, path: copy })
      conflicts.push({ path: `${TEAM_DIR}/${path}`, copy: `${TEAM_DIR}/${copy}`, kept: "both" })
    } else if (ours !== undefined) {
      entries.push({ ...ours, path })
      conflicts.push({ path: `${TEAM_DIR}/${path}`, kept: "ours" })
    } else if (theirs !== undefined) {
      entries.push({ ...theirs, path })
      conflicts.push({ path: `${TEAM_DIR}/${path}`, kept: "theirs" })
    }
  }
  return { entries, conflicts }
}

/** git's empty tree (SHA-1): what an unborn branch has. */
export const EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

export const REGULAR_MODES: ReadonlySet<string> = new Set(["100644", "100755"])

const encoder = new TextEncoder()

/** Refusals of the tree as a whole, told from its size alone: the per-entry checks are not run then. */
const wholeTreeViolations = (entries: ReadonlyArray<TreeEntry>): Array<SyncViolation> => {
  if (entries.length > TEAM_SYNC_MAX_ENTRIES) {
    return [{
      path: ".",
      reason: "too-many-files",
      detail: `${entries.length} entries (limit ${TEAM_SYNC_MAX_ENTRIES})`
    }]
  }
  const total = entries.reduce((sum, entry) => sum + (entry.size ?? 0), 0)
  if (total > TEAM_SYNC_MAX_TOTAL_BYTES) {
    return [{ path: ".", reason: "too-large", detail: `${total} bytes in all (limit ${TEAM_SYNC_MAX_TOTAL_BYTES})` }]
  }
  return []
}

/** The shape of a path: depth, name lengths, nothing under the index file, no dot-files. */
const pathViolations = (path: string): Array<Omit<SyncViolation, "path">> => {
  const segments = path.split("/")
  const found: Array<Omit<SyncViolation, "path">> = []
  if (segments.length > TEAM_SYNC_MAX_DEPTH) {
    found.push({ reason: "too-deep", detail: `${segments.length} levels (limit ${TEAM_SYNC_MAX_DEPTH})` })
  }
  const long = segments.find((segment) => encoder.encode(segment).length > TEAM_SYNC_MAX_NAME_BYTES)
  if (long !== undefined) {
    found.push({
      reason: "name-too-long",
      detail: `a name of ${encoder.encode(long).length} bytes (limit ${TEAM_SYNC_MAX_NAME_BYTES})`
    })
  }
  if (segments.length > 1 && segments[0]!.toLowerCase() === INDEX_FILE.toLowerCase()) {
    found.push({ reason: "index-not-a-file", detail: `${INDEX_FILE} must be a file, not a directory` })
  }
  return found
}

/**
 * Everything wrong with a tree's entries that can be told from the listing alone: the tree's size, link and
 * submodule modes, dot-files, names refused by TeamGuard layers 1+2, the shape of each path, and sizes.
 * `teamDir` anchors the containment check. Blob contents (secrets) are checked by `contentViolations`.
 */
export const entryViolations = (teamDir: string, entries: ReadonlyArray<TreeEntry>): Array<SyncViolation> => {
  const whole = wholeTreeViolations(entries)
  if (whole.length > 0) return whole
  const violations: Array<SyncViolation> = []
  for (const entry of entries) {
    const refuse = (reason: string, detail: string) => violations.push({ path: entry.path, reason, detail })
    if (entry.mode === "120000") refuse("symlink", "a symbolic link (mode 120000)")
    else if (entry.mode === "160000") refuse("submodule", `a submodule pointing at commit ${entry.sha}`)
    else if (!REGULAR_MODES.has(entry.mode) || entry.type !== "blob") {
      refuse("special-mode", `mode ${entry.mode} ${entry.type}`)
    }
    const named = checkKey(teamDir, entry.path)
    if (Result.isFailure(named)) refuse(named.failure.reason, named.failure.detail ?? named.failure.message)
    else if (entry.path.split("/").some((segment) => segment.startsWith("."))) {
      refuse("hidden-file", "dot-files (.gitattributes, .gitmodules, …) are never synced")
    }
    for (const shape of pathViolations(entry.path)) refuse(shape.reason, shape.detail)
    if (entry.size !== undefined && entry.size > MEMORY_MAX_BYTES) {
      refuse("oversized", `${entry.size} bytes (limit ${MEMORY_MAX_BYTES})`)
    }
  }
  return violations
}

/** Likely secrets in the given blobs (path → text). */
export const contentViolations = (blobs: ReadonlyArray<{ readonly path: string; readonly text: string }>) =>
  blobs.flatMap(({ path, text }) =>
    scanSecrets(text).slice(0, 1).map((finding): SyncViolation => ({
      path,
      reason: "secret",
      detail: `${finding.description} (${finding.pattern}) at line ${finding.line}`
    }))
  )

/** `git version 2.39.5` → [2, 39]. */
export const parseGitVersion = (output: string): readonly [number, number] | undefined => {
  const match = /(\d+)\.(\d+)/.exec(output)
  return match === null ? undefined : [Number(match[1]), Number(match[2])]
}
