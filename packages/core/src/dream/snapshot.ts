/**
 * What a dream changed, told from the files rather than from the model: the memory files are snapshotted before
 * and after and diffed — every file created, updated (with the text removed), merged (a deleted file whose
 * content went into another) or deleted (with its full text). Nothing disappears without a trace, whatever its
 * size: the previous version of every updated or deleted file is copied to `<memdir>/.dream/<timestamp>/`. Files
 * too large to hold and diff as text are copied byte for byte into that directory before the dream starts (read
 * whole, up to `SNAPSHOT_COPY_MAX_BYTES`, and written atomically through `MemoryFs`) and compared by the digest of
 * the very bytes copied; the copies of those the dream did not touch are removed afterwards. Every read and write
 * goes through `MemoryFs`: a link in the memory directory is never followed.
 */
import { diffArrays } from "diff"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { createHash } from "node:crypto"
import * as NodePath from "node:path"
import { LOGS_DIR } from "../DailyLog.js"
import { ioErrorOf, isMissingFile, MemoryIoError } from "../Errors.js"
import { makeRunTrace, type RunTrace } from "../internal/runs/trace.js"
import { MemoryFs, type MemoryFsError } from "../MemoryFs.js"
import { INDEX_FILE } from "../MemoryIndex.js"
import { TEAM_DIR } from "../TeamGuard.js"

/** Backups and reports of every dream: `<memdir>/.dream/<timestamp>/`. */
export const DREAM_BACKUP_DIR = ".dream"
/** Memory files larger than this are compared by digest (never sent, never diffed) and backed up as byte copies. */
export const SNAPSHOT_MAX_FILE_BYTES = 1024 * 1024
/**
 * A large memory file is read whole to be digested and copied (a byte-exact copy: whatever its encoding), so it is
 * read with this bound: a memory file past 64 MiB fails the snapshot (and so the dream, before any model call)
 * with a `MemoryIoError` saying so, instead of exhausting memory. Such a file is not a memory; move it out.
 */
export const SNAPSHOT_COPY_MAX_BYTES = 64 * 1024 * 1024
/** Inside a dream's backup directory: the byte copies of large files taken before the dream, until it is over. */
export const LARGE_COPIES_DIR = ".large"
/** Sub-directories the dream leaves alone: daily logs are append-only, team memory belongs to the team. */
export const UNTOUCHED_DIRS: ReadonlyArray<string> = [LOGS_DIR, TEAM_DIR]

// ---------------------------------------------------------------------------------------------------------------
// Snapshots and the diff (pure parts exported)
// ---------------------------------------------------------------------------------------------------------------

export interface SnapshotFile {
  /** Undefined when the file is larger than `SNAPSHOT_MAX_FILE_BYTES`. */
  readonly content: string | undefined
  readonly size: number
  /** SHA-256 of the bytes of a file larger than `SNAPSHOT_MAX_FILE_BYTES` (what it is compared by). */
  readonly digest?: string | undefined
  /** Absolute path of the byte copy of a large file, when the snapshot was asked to keep copies. */
  readonly copy?: string | undefined
}

/** Relative path (`/` separators) → file, for every `.md` file the dream may touch. */
export type Snapshot = ReadonlyMap<string, SnapshotFile>

export interface SnapshotOptions {
  /** Byte-copy every file over `SNAPSHOT_MAX_FILE_BYTES` under this directory (same relative path). */
  readonly copyLargeTo?: string | undefined
}

/** What a snapshot says of a large file: the size and digest of the bytes read, and where they were copied. */
interface LargeFile {
  readonly size: number
  readonly digest: string
  readonly copy: string | undefined
}

/** A large file past `SNAPSHOT_COPY_MAX_BYTES`: a typed failure that says what to do. */
const tooLargeToCopy = (file: string, error: MemoryFsError) =>
  new MemoryIoError({
    op: "copy",
    path: file,
    detail: `${error.detail}: a memory file larger than ${SNAPSHOT_COPY_MAX_BYTES} bytes cannot be kept before ` +
      `the dream; move it out of the memory directory`
  })

/**
 * Every `*.md` file under the memory directory that the dream may touch: not hidden (memdir's state, `.git`,
 * `.dream`), not under `logs/` or `team/`, not through a symlink (a link is skipped, never followed).
 */
export const snapshotMemoryDir = Effect.fn("Dream.snapshot")(function*(
  memoryDir: string,
  options: SnapshotOptions = {}
) {
  const fs = yield* MemoryFs
  const root = NodePath.resolve(memoryDir)
  const files = new Map<string, SnapshotFile>()
  // The memory directory's real path, found once a file is read: every read and copy must resolve inside it.
  let realRootFound: string | undefined
  const realRoot = Effect.suspend(() =>
    realRootFound !== undefined ? Effect.succeed(realRootFound) : fs.realPathOfDeepestExisting(root).pipe(
      Effect.tap((real) => Effect.sync(() => (realRootFound = real))),
      Effect.mapError(ioErrorOf("resolve", root))
    )
  )
  /**
   * A large file: its bytes read once, bounded, their digest, and (when asked) their copy written atomically (0600),
   * so the digest and the copy describe the same bytes. `None` when it was deleted since it was listed.
   */
  const large = (absolute: string, rel: string, within: string) =>
    Effect.gen(function*() {
      const { bytes } = yield* fs.readBytes(absolute, { maxBytes: SNAPSHOT_COPY_MAX_BYTES, within })
      const digest = createHash("sha256").update(bytes).digest("hex")
      if (options.copyLargeTo === undefined) {
        return Option.some<LargeFile>({ size: bytes.length, digest, copy: undefined })
      }
      const copy = NodePath.join(options.copyLargeTo, ...rel.split("/"))
      yield* fs.writeFileAtomic(copy, bytes, { within })
      return Option.some<LargeFile>({ size: bytes.length, digest, copy })
    }).pipe(
      // Deleted between listing and copying: not part of this snapshot.
      Effect.catchIf(isMissingFile, () => Effect.succeedNone),
      Effect.mapError((error) =>
        error.reason === "TooLarge" ? tooLargeToCopy(absolute, error) : ioErrorOf("copy", absolute)(error)
      )
    )
  const walk = (directory: string, relative: string): Effect.Effect<void, MemoryIoError> =>
    Effect.gen(function*() {
      const entries = yield* fs.readDirectory(directory).pipe(
        Effect.catchIf(isMissingFile, () => Effect.succeed([])),
        Effect.mapError(ioErrorOf("list", directory))
      )
      for (const { kind, name } of [...entries].sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0)) {
        if (name.startsWith(".")) continue
        const rel = relative === "" ? name : `${relative}/${name}`
        if (relative === "" && UNTOUCHED_DIRS.includes(name)) continue
        // A link is never followed (listed with its own kind, from the directory entry).
        if (kind === "SymbolicLink") continue
        const absolute = NodePath.join(directory, name)
        if (kind === "Directory") {
          yield* walk(absolute, rel)
          continue
        }
        if (!name.toLowerCase().endsWith(".md")) continue
        // Gone since the listing: not part of this snapshot.
        const info = yield* fs.lstat(absolute).pipe(Effect.option)
        if (Option.isNone(info) || info.value.kind !== "File") continue
        const within = yield* realRoot
        const size = info.value.size
        if (size <= SNAPSHOT_MAX_FILE_BYTES) {
          const read = yield* fs.readFile(absolute, { maxBytes: SNAPSHOT_MAX_FILE_BYTES, within }).pipe(
            Effect.map((file): { readonly text: string } | "gone" | "grown" => ({ text: file.text })),
            // Deleted between listing and reading: not part of this snapshot.
            Effect.catchIf(isMissingFile, () => Effect.succeed("gone" as const)),
            // Grown past the bound since the listing: kept as a large file.
            Effect.catchIf((error) => error.reason === "TooLarge", () => Effect.succeed("grown" as const)),
            Effect.mapError(ioErrorOf("read", absolute))
          )
          if (read === "gone") continue
          if (read !== "grown") {
            files.set(rel, { content: read.text, size })
            continue
          }
        }
        const kept = yield* large(absolute, rel, within)
        if (Option.isSome(kept)) files.set(rel, { content: undefined, ...kept.value })
      }
    })
  yield* walk(root, "")
  return files as Snapshot
})

/**
 * Past this many removed plus added lines a diff stops looking for a shorter one (Myers' search grows with the
 * edit's size): a file rewritten that much is reported as all of its old lines removed and all its new ones added.
 */
const MAX_DIFF_EDIT_LINES = 2_000

/** Lines removed and added from `before` to `after` (jsdiff's shortest line edit, in file order). */
export const lineDiff = (
  before: string,
  after: string
): { readonly removed: ReadonlyArray<string>; readonly added: ReadonlyArray<string> } => {
  const a = before.split("\n")
  const b = after.split("\n")
  const changes = diffArrays(a, b, { maxEditLength: MAX_DIFF_EDIT_LINES })
  if (changes === undefined) return { removed: a, added: b }
  const removed: Array<string> = []
  const added: Array<string> = []
  for (const change of changes) {
    if (change.removed) removed.push(...change.value)
    else if (change.added) added.push(...change.value)
  }
  return { removed, added }
}

/** Words (4+ letters or digits, lower case) that carry the content of a memory, frontmatter keys aside. */
const contentWords = (text: string): Set<string> =>
  new Set(
    (text.toLowerCase().match(/[\p{L}\p{N}]{4,}/gu) ?? []).filter((word) =>
      word !== "name" && word !== "description" && word !== "type"
    )
  )

/** Share of `source`'s content words that appear in `target`. */
export const contentOverlap = (source: string, target: string): number => {
  const words = contentWords(source)
  if (words.size === 0) return 0
  const into = contentWords(target)
  let shared = 0
  for (const word of words) if (into.has(word)) shared++
  return shared / words.size
}

/** A deleted file counts as merged into a created or updated one when half its content words went there. */
export const MERGE_OVERLAP = 0.5

export interface CreatedFile {
  readonly file: string
  readonly text: string
  /** False: not written by the dream's tools (a concurrent session wrote it meanwhile). */
  readonly byDream: boolean
}
export interface UpdatedFile {
  readonly file: string
  /** Lines the update removed (nothing disappears without a trace), and lines it added. */
  readonly removed: string
  readonly added: string
  /** Where its previous version was kept (relative to the memory directory), once backed up. */
  readonly backup?: string | undefined
  readonly byDream: boolean
}
export interface DeletedFile {
  readonly file: string
  /** The whole file as it was (undefined for a file over `SNAPSHOT_MAX_FILE_BYTES`: see `backup` for its copy). */
  readonly text: string | undefined
  /** Where its copy was kept (relative to the memory directory), once backed up. */
  readonly backup?: string | undefined
  readonly byDream: boolean
}
export interface MergedFile {
  readonly from: string
  readonly into: string
  /** Share of the deleted file's content words found in the file it was merged into. */
  readonly overlap: number
}

export interface DreamDiff {
  readonly created: ReadonlyArray<CreatedFile>
  readonly updated: ReadonlyArray<UpdatedFile>
  readonly deleted: ReadonlyArray<DeletedFile>
  readonly merged: ReadonlyArray<MergedFile>
  /** MEMORY.md's change, when it changed. */
  readonly index: { readonly removed: string; readonly added: string } | undefined
}

const joinLines = (lines: ReadonlyArray<string>): string => lines.length === 0 ? "" : lines.join("\n") + "\n"

/**
 * Pure: what changed between two snapshots. `byDream` names the files the dream's tools changed (others changed
 * concurrently, e.g. by a live session, are reported with `byDream: false`).
 */
export const diffSnapshots = (
  before: Snapshot,
  after: Snapshot,
  byDream: ReadonlySet<string> = new Set()
): DreamDiff => {
  const created: Array<CreatedFile> = []
  const updated: Array<UpdatedFile> = []
  const deleted: Array<DeletedFile> = []
  let index: DreamDiff["index"] = undefined
  const describe = (file: SnapshotFile | undefined) =>
    file?.content ?? `(${file?.size ?? 0} bytes, too large to compare line by line; its previous version is copied)`
  for (const [file, now] of [...after].sort(([a], [b]) => a < b ? -1 : 1)) {
    const was = before.get(file)
    if (was === undefined) {
      if (file !== INDEX_FILE) created.push({ file, text: describe(now), byDream: byDream.has(file) })
      else index = { removed: "", added: describe(now) }
      continue
    }
    // Large files by their digest: an edit that keeps the size is still an update.
    const same = was.content !== undefined && now.content !== undefined
      ? was.content === now.content
      : was.size === now.size && was.content === now.content && was.digest === now.digest
    if (same) continue
    const { added, removed } = lineDiff(describe(was), describe(now))
    if (file === INDEX_FILE) index = { removed: joinLines(removed), added: joinLines(added) }
    else updated.push({ file, removed: joinLines(removed), added: joinLines(added), byDream: byDream.has(file) })
  }
  for (const [file, was] of [...before].sort(([a], [b]) => a < b ? -1 : 1)) {
    if (after.has(file)) continue
    if (file === INDEX_FILE) index = { removed: describe(was), added: "" }
    else deleted.push({ file, text: was.content, byDream: byDream.has(file) })
  }
  const merged: Array<MergedFile> = []
  for (const gone of deleted) {
    if (gone.text === undefined) continue
    let best: MergedFile | undefined
    const targets = [
      ...created.map((c) => ({ file: c.file, text: c.text })),
      ...updated.map((u) => ({ file: u.file, text: u.added }))
    ]
    for (const target of targets) {
      const overlap = contentOverlap(gone.text, target.text)
      if (overlap >= MERGE_OVERLAP && (best === undefined || overlap > best.overlap)) {
        best = { from: gone.file, into: target.file, overlap: Math.round(overlap * 100) / 100 }
      }
    }
    if (best !== undefined) merged.push(best)
  }
  return { created, updated, deleted, merged, index }
}

export { stampOf } from "../internal/runs/trace.js"

/** Where one dream keeps its trace: `.dream/<stamp>/` (see `RunTrace`), and where large files are copied first. */
export interface DreamTrace extends RunTrace {
  /** Where the snapshot before the dream byte-copies large files (`snapshotMemoryDir`'s `copyLargeTo`). */
  readonly largeCopies: string
}

/**
 * Choose `.dream/<stamp>/` before the dream starts (a new name when a dream of the same second has one; under the
 * dream lock). Nothing is created yet: the directory comes with its first file (a large file's copy, a backup, the
 * report), so an interrupted dream leaves no empty one.
 */
export const reserveTrace = (memoryDir: string, startedAt: number) =>
  Effect.map(
    makeRunTrace(memoryDir, DREAM_BACKUP_DIR, startedAt),
    (trace): DreamTrace => ({ ...trace, largeCopies: NodePath.join(trace.absolute, LARGE_COPIES_DIR) })
  )

/** The memory directory a trace belongs to (`absolute` is `<memoryDir>/<backupDir>`). */
const memoryDirOf = (trace: DreamTrace): string =>
  NodePath.resolve(trace.absolute, ...trace.backupDir.split("/").map(() => ".."))

/** Remove `path` and everything in it; nothing there is fine. */
const removeAll = (fs: MemoryFs["Service"], path: string) =>
  fs.remove(path, { recursive: true }).pipe(
    Effect.catchIf(isMissingFile, () => Effect.void),
    Effect.mapError(ioErrorOf("remove", path))
  )

/**
 * An interrupted dream: the byte copies of large files taken before it go, and the trace directory with them when
 * they were all it held (what the dream replaced before it was interrupted is kept).
 */
export const discardUnfinishedTrace = (trace: DreamTrace) =>
  Effect.gen(function*() {
    const fs = yield* MemoryFs
    yield* removeAll(fs, trace.largeCopies)
    const left = yield* fs.readDirectory(trace.absolute).pipe(
      Effect.map((entries) => entries.length),
      // never created: nothing to remove
      Effect.catchIf(isMissingFile, () => Effect.succeed(-1)),
      Effect.mapError(ioErrorOf("list", trace.absolute))
    )
    // empty (the copies were all it held): `recursive` only because a directory is removed that way
    if (left === 0) yield* removeAll(fs, trace.absolute)
  })

/**
 * Keep the previous version of every updated or deleted file and of MEMORY.md under the trace's directory (those
 * the dream's tools did not keep already, before they replaced them): the text from the snapshot, or for a large file
 * its byte copy moved into place. Copies of large files the dream did not change are removed.
 */
export const keepTrace = (trace: DreamTrace, before: Snapshot, diff: DreamDiff) =>
  Effect.gen(function*() {
    const fs = yield* MemoryFs
    // MEMORY.md always: memdir's own repair of the index (after this) changes it too.
    const previous = [...diff.updated.map((u) => u.file), ...diff.deleted.map((d) => d.file), INDEX_FILE]
    const backups = new Map(yield* trace.backups)
    for (const file of previous) {
      const was = before.get(file)
      // kept already: the dream's tools kept it before they replaced it (the text before the dream)
      if (was === undefined || backups.has(file)) continue
      if (was.content !== undefined) {
        backups.set(file, yield* trace.keepPrevious(file, was.content))
      } else if (was.copy !== undefined) {
        const target = NodePath.join(trace.absolute, ...file.split("/"))
        const root = memoryDirOf(trace)
        const within = yield* fs.realPathOfDeepestExisting(root).pipe(Effect.mapError(ioErrorOf("resolve", root)))
        // the copy was written inside the memory directory; its place in the trace is made inside it too
        yield* fs.makeDirectory(NodePath.dirname(target), { within }).pipe(
          Effect.mapError(ioErrorOf("create directory", NodePath.dirname(target)))
        )
        yield* fs.rename(was.copy, target).pipe(Effect.mapError(ioErrorOf("move", was.copy)))
        backups.set(file, `${trace.backupDir}/${file}`)
      }
    }
    yield* removeAll(fs, trace.largeCopies)
    return { backupDir: trace.backupDir, backups }
  })
