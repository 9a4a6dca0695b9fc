/**
 * The history view of `memdir ui` (docs/ui.md): every earlier version of one memory memdir can show, and
 * what the last dreams did.
 *
 * - A memory git tracks has its commits: team memory in the clone team sync keeps (`<memdir>/.team.git`, work tree
 *   `team/`), with a change not yet synced shown first; a private memory when the memory directory is in a git
 *   repository (the dream commits there). Each commit's version and the one before it, read in one `git cat-file`.
 * - Every backup memdir keeps of it (`Backups`): what a dream, an extraction, a delete or a restore replaced, and
 *   MEMORY.md before `memdir doctor --fix` or the dream's index repair.
 *
 * git runs only through the `Git` service (allow-listed environment, safe configuration, a timeout per call), files
 * are read only through `MemoryFs` inside the memory directory, every text is bounded. `restore` puts a version
 * back through the store (containment, team rules, valid frontmatter, its index line, the version check), keeping
 * the version it replaces under `.replaced/` first, so a restore is itself undone from the history.
 */
import * as BackgroundRuns from "@memdir/core/BackgroundRuns"
import * as Backups from "@memdir/core/Backups"
import { DREAM_BACKUP_DIR } from "@memdir/core/Dream"
import * as DreamLock from "@memdir/core/DreamLock"
import { InvalidMemoryInputError, MemoryIoError, VersionConflictError } from "@memdir/core/Errors"
import * as Git from "@memdir/core/Git"
import { memoryVersion } from "@memdir/core/Memory"
import { MemoryFs } from "@memdir/core/MemoryFs"
import { INDEX_FILE } from "@memdir/core/MemoryIndex"
import { stampModified } from "@memdir/core/MemoryLayout"
import { type MemoryRoot, MemoryStore } from "@memdir/core/MemoryStore"
import { TEAM_GIT_DIR } from "@memdir/core/TeamSync"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as NodePath from "node:path"

/** Entries of one memory's history at most (the newest). */
export const HISTORY_MAX_ENTRIES = 50
/** Each text an entry carries is cut to this many characters (`truncated` says so); a memory is rarely longer. */
export const HISTORY_TEXT_MAX_CHARS = 64_000
/** Dreams `lastDreams` answers at most. */
export const DREAMS_MAX = 100
/** A dream's report is read up to this size (it holds the full text of what the dream deleted). */
const REPORT_MAX_BYTES = 8 * 1024 * 1024
/** A git blob larger than this is not read (a memory is at most 250,000 bytes). */
const BLOB_MAX_BYTES = Backups.BACKUP_READ_MAX_BYTES

// ---------------------------------------------------------------------------------------------------------------
// Shapes
// ---------------------------------------------------------------------------------------------------------------

export const HistorySource = Schema.Literals([
  "git",
  "working-tree",
  "dream-backup",
  "extract-backup",
  "doctor-backup",
  "delete-backup",
  "restore-backup"
])
export type HistorySource = typeof HistorySource.Type

export const HistoryEntry = Schema.Struct({
  /** Stable: `git:<sha>`, `worktree`, or `backup:<the backup's path>`; what `restore` takes. */
  id: Schema.String,
  /** ISO 8601: the commit's author time, or when the run that kept the backup started. */
  at: Schema.String,
  source: HistorySource,
  /** One line saying what happened to the memory then. */
  summary: Schema.String,
  /** The memory before the change (absent: it did not exist). */
  before: Schema.optionalKey(Schema.String),
  /** The memory after the change (absent: it was removed, or nothing later is known). */
  after: Schema.optionalKey(Schema.String),
  /**
   * `exact` for a commit (both sides are git's); `next-known` for a backup: the version after it is the next one
   * memdir knows of (a newer backup, or the file as it is now), which a hand edit in between may also have changed.
   */
  afterIs: Schema.Literals(["exact", "next-known"]),
  /** `before` or `after` was cut to `HISTORY_TEXT_MAX_CHARS`. */
  truncated: Schema.Boolean,
  /** `restore` can put this entry's version back (`restores` says which side). */
  restorable: Schema.Boolean,
  restores: Schema.optionalKey(Schema.Literals(["before", "after"])),
  /** A commit's author, or the session an extraction ran for. */
  author: Schema.optionalKey(Schema.String),
  /** Where the backup is, relative to the memory directory (`.dream/2026-03-05T12-00-00Z/feedback_x.md`). */
  backup: Schema.optionalKey(Schema.String)
})
export type HistoryEntry = typeof HistoryEntry.Type

export const MemoryHistory = Schema.Struct({
  path: Schema.String,
  entries: Schema.Array(HistoryEntry),
  /** More entries exist than `HISTORY_MAX_ENTRIES`. */
  more: Schema.Boolean
})
export type MemoryHistory = typeof MemoryHistory.Type

export const RestoreResult = Schema.Struct({
  path: Schema.String,
  /** False: the memory already is that version (nothing written). */
  restored: Schema.Boolean,
  /** The memory's version now (give it as ifVersion to a following write). */
  version: Schema.String,
  /** Where the version it replaced was kept (absent: there was none, or nothing was written). */
  backup: Schema.optionalKey(Schema.String)
})
export type RestoreResult = typeof RestoreResult.Type

export const RemoveResult = Schema.Struct({
  path: Schema.String,
  fileRemoved: Schema.Boolean,
  indexLinesRemoved: Schema.Int,
  /** Where the removed text was kept (its history's `delete-backup` entry restores it); absent: no file was removed. */
  backup: Schema.optionalKey(Schema.String),
  /** The history entry that undoes the delete. */
  undoId: Schema.optionalKey(Schema.String)
})
export type RemoveResult = typeof RemoveResult.Type

export const DreamSummary = Schema.Struct({
  /** When the dream started, ISO 8601. */
  at: Schema.String,
  finishedAt: Schema.optionalKey(Schema.String),
  /** It completed (false: it failed, or its report cannot be read). */
  ok: Schema.Boolean,
  /** `from → into` for each memory merged into another. */
  merged: Schema.Array(Schema.String),
  /** Memories it rewrote in place (a date made absolute, a contradiction resolved, a duplicate folded in). */
  fixed: Schema.Array(Schema.String),
  /** Memories it deleted without merging them anywhere. */
  pruned: Schema.Array(Schema.String),
  created: Schema.Array(Schema.String),
  /** Lines memdir removed from MEMORY.md afterwards to put it back under its caps, with why. */
  indexRemoved: Schema.Array(Schema.Struct({ line: Schema.String, reason: Schema.String })),
  /** The model's closing summary (cut to 2,000 characters). */
  summary: Schema.String,
  model: Schema.optionalKey(Schema.String),
  /** `.dream/<stamp>`: its backups and report.json. */
  backupDir: Schema.String,
  /** The git commit it made, or why not. */
  commit: Schema.optionalKey(Schema.String),
  error: Schema.optionalKey(Schema.String)
})
export type DreamSummary = typeof DreamSummary.Type

// ---------------------------------------------------------------------------------------------------------------
// Texts
// ---------------------------------------------------------------------------------------------------------------

interface FullEntry {
  readonly id: string
  readonly at: number
  readonly source: HistorySource
  readonly summary: string
  readonly before: string | undefined
  readonly after: string | undefined
  readonly afterIs: "exact" | "next-known"
  readonly restores: "before" | "after" | undefined
  readonly author?: string | undefined
  readonly backup?: string | undefined
}

const cut = (text: string | undefined): { readonly text: string | undefined; readonly cut: boolean } =>
  text === undefined || text.length <= HISTORY_TEXT_MAX_CHARS ?
    { text, cut: false } :
    { text: text.slice(0, HISTORY_TEXT_MAX_CHARS), cut: true }

const oneLine = (text: string, max = 200): string => {
  const flat = text.replace(/[\u0000-\u001f\u007f]+/g, " ").replace(/\s+/g, " ").trim()
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`
}

const isIndexKey = (key: string): boolean => key === INDEX_FILE || key === `team/${INDEX_FILE}`

const view = (entry: FullEntry): HistoryEntry => {
  const before = cut(entry.before)
  const after = cut(entry.after)
  return {
    id: entry.id,
    at: new Date(entry.at).toISOString(),
    source: entry.source,
    summary: entry.summary,
    ...(before.text === undefined ? {} : { before: before.text }),
    ...(after.text === undefined ? {} : { after: after.text }),
    afterIs: entry.afterIs,
    truncated: before.cut || after.cut,
    restorable: entry.restores !== undefined,
    ...(entry.restores === undefined ? {} : { restores: entry.restores }),
    ...(entry.author === undefined ? {} : { author: entry.author }),
    ...(entry.backup === undefined ? {} : { backup: entry.backup })
  }
}

// ---------------------------------------------------------------------------------------------------------------
// git
// ---------------------------------------------------------------------------------------------------------------

interface Commit {
  readonly sha: string
  readonly parent: string | undefined
  readonly at: number
  readonly author: string
  readonly subject: string
}

const FIELD = "\u001f"

/** Pure: `git log -z --format=%H%x1f%P%x1f%aI%x1f%an%x1f%s` output → commits. */
export const parseLog = (stdout: string): Array<Commit> =>
  stdout.split("\u0000").flatMap((record) => {
    const [sha, parents, date, author, subject] = record.replace(/^\n/, "").split(FIELD)
    if (sha === undefined || !/^[0-9a-f]{40,64}$/.test(sha) || date === undefined) return []
    const at = Date.parse(date)
    if (Number.isNaN(at)) return []
    return [{
      sha,
      parent: parents?.split(" ").find((p) => p !== ""),
      at,
      author: author ?? "",
      subject: subject ?? ""
    }]
  })

const decoder = new TextDecoder()

/**
 * Pure: `git cat-file --batch` output → each object's text by the line asked for (a missing one is left out). The
 * sizes are bytes, so the output is walked as bytes.
 */
export const parseBatch = (asked: ReadonlyArray<string>, out: Uint8Array): Map<string, string> => {
  const texts = new Map<string, string>()
  let offset = 0
  for (const request of asked) {
    const newline = out.indexOf(10, offset)
    if (newline < 0) break
    const header = decoder.decode(out.subarray(offset, newline)).split(" ")
    offset = newline + 1
    const size = Number(header[2])
    if (header.length !== 3 || !Number.isSafeInteger(size)) continue // "<request> missing", "ambiguous"
    texts.set(request, decoder.decode(out.subarray(offset, offset + size)))
    offset += size + 1
  }
  return texts
}

/** Where git keeps the history of `key`: team memory's clone, or the repository the memory directory is in. */
const gitPlaceOf = (memoryDir: string, key: string) => {
  const root = NodePath.resolve(memoryDir)
  if (key.startsWith("team/")) {
    const teamDir = NodePath.join(root, "team")
    return {
      options: { gitDir: NodePath.join(root, TEAM_GIT_DIR), workTree: teamDir, cwd: teamDir },
      path: key.slice("team/".length),
      team: true
    }
  }
  return { options: { cwd: root }, path: key, team: false }
}

/**
 * The commits that changed `key` (newest first, at most `max`), each with the memory's text after it and before it,
 * and, for team memory, the change not yet synced. No repository, no clone, no commit: none.
 */
const gitEntries = (memoryDir: string, key: string, current: string | undefined, max: number) =>
  Effect.gen(function*() {
    const git = yield* Git.Git
    const fs = yield* MemoryFs
    const place = gitPlaceOf(memoryDir, key)
    // a path git would read as something else (a newline ends a cat-file request) has no history to show
    if (/[\n\r]/.test(place.path)) return []
    const gitDir = place.options.gitDir
    if (gitDir !== undefined && !(yield* fs.exists(gitDir).pipe(Effect.orElseSucceed(() => false)))) return []
    const log = yield* git.run(
      [
        "log",
        "--no-show-signature",
        `-n${max}`,
        "-z",
        "--format=%H%x1f%P%x1f%aI%x1f%an%x1f%s",
        "--",
        `./${place.path}`
      ],
      place.options
    )
    // not a repository (128), no commit yet: nothing to show
    if (log.exitCode !== 0) return []
    const commits = parseLog(log.stdout)
    const head = place.team ? ["HEAD"] : []
    // each version once (a commit's parent is the next commit's version)
    const objects = [
      ...new Set([
        ...head.map((rev) => `${rev}:./${place.path}`),
        ...commits.flatMap((
          c
        ) => [`${c.sha}:./${place.path}`, ...(c.parent === undefined ? [] : [`${c.parent}:./${place.path}`])])
      ])
    ]
    if (objects.length === 0) return []
    // sizes first: a blob too large to be a memory is not read
    const check = yield* git.run(["cat-file", "--batch-check"], { ...place.options, stdin: objects.join("\n") + "\n" })
    const sizes = new Map<string, number>()
    check.stdout.split("\n").forEach((line, i) => {
      const parts = line.split(" ")
      if (parts.length === 3 && i < objects.length) sizes.set(objects[i]!, Number(parts[2]))
    })
    const readable = objects.filter((o) => (sizes.get(o) ?? Infinity) <= BLOB_MAX_BYTES)
    const texts = readable.length === 0 ? new Map<string, string>() : parseBatch(
      readable,
      (yield* git.run(["cat-file", "--batch"], { ...place.options, stdin: readable.join("\n") + "\n" })).stdoutBytes
    )
    const textAt = (rev: string | undefined) => rev === undefined ? undefined : texts.get(`${rev}:./${place.path}`)
    const entries: Array<FullEntry> = commits.map((c) => {
      const after = textAt(c.sha)
      const before = textAt(c.parent)
      const what = before === undefined ? "created" : after === undefined ? "deleted" : "changed"
      return {
        id: `git:${c.sha}`,
        at: c.at,
        source: "git",
        summary: `${what} in ${c.sha.slice(0, 12)} by ${oneLine(c.author, 80)}: ${oneLine(c.subject)}`,
        before,
        after,
        afterIs: "exact",
        // a commit's version is what it left; a deletion's, what it removed
        restores: isIndexKey(key)
          ? undefined
          : after !== undefined
          ? "after"
          : before !== undefined
          ? "before"
          : undefined,
        author: c.author
      }
    })
    if (place.team) {
      const committed = textAt("HEAD")
      if (committed !== current && (committed !== undefined || current !== undefined)) {
        const now = yield* fs.lstat(NodePath.join(NodePath.resolve(memoryDir), ...key.split("/"))).pipe(
          Effect.map((info) => info.mtimeMs),
          Effect.catch(() => Clock.currentTimeMillis)
        )
        entries.unshift({
          id: "worktree",
          at: now,
          source: "working-tree",
          summary: current === undefined ?
            "deleted here, not yet synced (`memdir team sync` shares it)" :
            committed === undefined ?
            "created here, not yet synced (`memdir team sync` shares it)" :
            "changed here, not yet synced (`memdir team sync` shares it)",
          before: committed,
          after: current,
          afterIs: "exact",
          // what the last sync left: put back to drop the local change
          restores: committed === undefined || isIndexKey(key) ? undefined : "before"
        })
      }
    }
    return entries
  }).pipe(
    // git missing or too slow: the history shows what memdir keeps itself
    Effect.catchTags({
      GitError: () => Effect.succeed([]),
      GitTimeoutError: () => Effect.succeed([])
    }),
    Effect.provide(Git.layer)
  )

// ---------------------------------------------------------------------------------------------------------------
// Backups
// ---------------------------------------------------------------------------------------------------------------

/** The part of a dream's report.json the views read; anything else in it is ignored. */
const ReportFields = Schema.Struct({
  startedAt: Schema.String,
  finishedAt: Schema.optionalKey(Schema.String),
  status: Schema.Literals(["completed", "failed"]),
  model: Schema.optionalKey(Schema.String),
  created: Schema.Array(Schema.Struct({ file: Schema.String })),
  updated: Schema.Array(Schema.Struct({ file: Schema.String })),
  merged: Schema.Array(Schema.Struct({ from: Schema.String, into: Schema.String })),
  deleted: Schema.Array(Schema.Struct({ file: Schema.String })),
  index: Schema.optionalKey(
    Schema.NullOr(Schema.Struct({
      removed: Schema.Array(Schema.Struct({ line: Schema.String, reason: Schema.String }))
    }))
  ),
  commit: Schema.optionalKey(Schema.NullOr(Schema.Struct({
    status: Schema.String,
    sha: Schema.optionalKey(Schema.String),
    reason: Schema.optionalKey(Schema.String),
    detail: Schema.optionalKey(Schema.String)
  }))),
  summary: Schema.optionalKey(Schema.String),
  error: Schema.optionalKey(Schema.String)
})
type ReportFields = typeof ReportFields.Type
const decodeReport = Schema.decodeUnknownOption(Schema.fromJsonString(ReportFields))

/** A dream's report (`<runDir>/report.json`): its fields, `corrupt` when it cannot be read as one, none when absent. */
const readReport = (memoryDir: string, runDir: string) =>
  Effect.gen(function*() {
    const fs = yield* MemoryFs
    const root = yield* fs.realPathOfDeepestExisting(NodePath.resolve(memoryDir))
    const read = yield* fs.readFile(NodePath.join(root, ...runDir.split("/"), "report.json"), {
      maxBytes: REPORT_MAX_BYTES,
      within: root
    })
    return Option.match(decodeReport(read.text), {
      onNone: () => ({ _tag: "corrupt" as const, detail: "report.json is not a dream report (corrupt JSON?)" }),
      onSome: (report) => ({ _tag: "report" as const, report })
    })
  }).pipe(
    Effect.catchTag("MemoryFsError", (error) =>
      Effect.succeed(
        error.reason === "NotFound" ?
          { _tag: "absent" as const } :
          { _tag: "corrupt" as const, detail: `report.json cannot be read: ${error.reason} (${error.detail})` }
      ))
  )

/** What a dream did to `key`, from its report. */
const dreamSummary = (key: string, report: ReportFields | undefined): string => {
  if (isIndexKey(key)) return "MEMORY.md before the dream and memdir's repair of the index after it"
  if (report === undefined) return "replaced by a dream (its report is missing or unreadable)"
  const merged = report.merged.find((m) => m.from === key)
  if (merged !== undefined) return `merged by a dream into ${merged.into}`
  if (report.deleted.some((d) => d.file === key)) return "deleted by a dream"
  if (report.updated.some((u) => u.file === key)) return "rewritten by a dream"
  return "replaced by a dream"
}

/** The reports of many dreams (`<runDir>/report.json`) in one batch: each run's fields, or none when unreadable. */
const readReports = (memoryDir: string, runDirs: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const fs = yield* MemoryFs
    const root = yield* fs.realPathOfDeepestExisting(NodePath.resolve(memoryDir))
    const read = yield* fs.readFileMany(runDirs.map((dir) => NodePath.join(root, ...dir.split("/"), "report.json")), {
      maxBytes: REPORT_MAX_BYTES,
      within: root
    })
    const reports = new Map<string, ReportFields>()
    read.forEach((result, i) => {
      const report = "_tag" in result ? Option.none() : decodeReport(result.text)
      if (Option.isSome(report)) reports.set(runDirs[i]!, report.value)
    })
    return reports
  }).pipe(Effect.orElseSucceed(() => new Map<string, ReportFields>()))

const SUMMARIES: Readonly<Record<Exclude<Backups.BackupSource, "dream-backup">, string>> = {
  "extract-backup": "replaced by extraction (a background agent saving what a session taught)",
  "doctor-backup": "MEMORY.md before `memdir doctor --fix` repaired it",
  "delete-backup": "deleted (kept so it can be restored)",
  "restore-backup": "replaced by a restore of an older version"
}

const backupEntries = (memoryDir: string, key: string) =>
  Effect.gen(function*() {
    const backups = yield* Backups.listBackups(memoryDir, key)
    const shown = backups.slice(0, HISTORY_MAX_ENTRIES + 1)
    // two batches, whatever the number of backups: their texts, and the reports of the dreams that kept them
    const texts = yield* Backups.readBackups(memoryDir, shown.map((b) => b.file))
    const dreamRuns = [...new Set(shown.filter((b) => b.source === "dream-backup").map((b) => b.runDir))]
    const reports = dreamRuns.length === 0 ? new Map<string, ReportFields>() : yield* readReports(memoryDir, dreamRuns)
    const entries = shown.flatMap((backup): Array<FullEntry> => {
      const text = texts.get(backup.file)
      if (text === undefined) return []
      return [{
        id: `backup:${backup.file}`,
        at: backup.at,
        source: backup.source,
        summary: backup.source === "dream-backup" ?
          dreamSummary(key, reports.get(backup.runDir)) :
          SUMMARIES[backup.source],
        before: text,
        after: undefined,
        afterIs: "next-known",
        restores: isIndexKey(key) ? undefined : "before",
        ...(backup.session === undefined ? {} : { author: `session ${backup.session}` }),
        backup: backup.file
      }]
    })
    return { entries, more: backups.length > HISTORY_MAX_ENTRIES }
  })

// ---------------------------------------------------------------------------------------------------------------
// The history
// ---------------------------------------------------------------------------------------------------------------

/** Every entry of `path`'s history, newest first, texts whole (the view cuts them). */
const fullHistory = (root: MemoryRoot, path: string) =>
  Effect.gen(function*() {
    const store = yield* MemoryStore
    const located = yield* store.locate(root, path)
    const key = located.contained.key
    const current = yield* store.read(root, key).pipe(
      Effect.map((m): string | undefined => m.text),
      Effect.catchTag("MemoryNotFoundError", () => Effect.succeed(undefined))
    )
    const fromGit = yield* gitEntries(root.memoryDir, key, current, HISTORY_MAX_ENTRIES)
    const kept = yield* backupEntries(root.memoryDir, key)
    const all = [...fromGit, ...kept.entries].sort((a, b) => b.at - a.at)
    // a backup's "after" is the next version memdir knows: the newer backup, else the memory as it is now
    let newer: string | undefined = current
    const entries = all.map((entry) => {
      if (entry.afterIs === "exact") return entry
      const withAfter: FullEntry = { ...entry, after: newer }
      newer = entry.before
      return withAfter
    })
    return { key, current, entries, more: kept.more || all.length > HISTORY_MAX_ENTRIES }
  })

/**
 * The history of one memory (`path` relative to the memory directory, `team/…` for team memory; it may be gone):
 * its git commits and every backup memdir keeps of it, newest first, at most `HISTORY_MAX_ENTRIES`, each text cut to
 * `HISTORY_TEXT_MAX_CHARS`. A path outside the memory directory, or `team/…` with team memory off, is the store's
 * typed error; history nobody kept is an empty list.
 */
export const memoryHistory = Effect.fn("ui.memoryHistory")(function*(root: MemoryRoot, path: string) {
  const history = yield* fullHistory(root, path)
  const result: MemoryHistory = {
    path: history.key,
    entries: history.entries.slice(0, HISTORY_MAX_ENTRIES).map(view),
    more: history.more
  }
  return result
})

/** The same memory but for its `modified:` stamp (every write stamps it: a restored version differs only there). */
const sameVersion = (a: string, b: string): boolean =>
  a === b || stampModified(a, "1970-01-01T00:00:00.000Z") === stampModified(b, "1970-01-01T00:00:00.000Z")

export interface RestoreOptions {
  /** The version (`memoryVersion`) the memory had when the user chose to restore: a change since is a conflict. */
  readonly ifVersion?: string | undefined
}

/**
 * Puts the version `entryId` keeps (`memoryHistory`'s `restores`) back as the memory `path`, through the store: its
 * rules, its index line, `modified:` stamped now. The version it replaces is kept first (`.replaced/<stamp>/`, a
 * `restore-backup` entry of the history). Written only while the memory is still the version it was read at (and
 * `ifVersion`, when given): otherwise `VersionConflictError`, nothing written. An id the history does not hold is an
 * `InvalidMemoryInputError`.
 */
export const restore = Effect.fn("ui.restore")(
  function*(root: MemoryRoot, path: string, entryId: string, options: RestoreOptions = {}) {
    const store = yield* MemoryStore
    const history = yield* fullHistory(root, path)
    const entry = history.entries.find((e) => e.id === entryId)
    const text = entry?.restores === "before" ? entry.before : entry?.restores === "after" ? entry.after : undefined
    if (entry === undefined || text === undefined) {
      return yield* new InvalidMemoryInputError({
        field: "entryId",
        value: entryId.slice(0, 200),
        reason: entry === undefined ?
          `no such entry in the history of ${history.key}: show its history again and pick one` :
          `that entry of ${history.key} has no version to put back (${entry.summary})`
      })
    }
    const version = history.current === undefined ? undefined : memoryVersion(history.current)
    if (options.ifVersion !== undefined && options.ifVersion !== version) {
      return yield* new VersionConflictError({
        path: history.key,
        expected: options.ifVersion,
        current: version ?? null,
        content: history.current ?? null
      })
    }
    if (history.current !== undefined && sameVersion(text, history.current)) {
      const same: RestoreResult = { path: history.key, restored: false, version: memoryVersion(history.current) }
      return same
    }
    const backup = history.current === undefined ?
      undefined :
      yield* Backups.keepBackup(root.memoryDir, "restore-backup", history.key, history.current)
    // nothing written (a conflict, a rule of the store): the backup of a change that did not happen goes
    const written = yield* store.write(root, history.key, text, { ifVersion: version }).pipe(
      Effect.tapError(() =>
        backup === undefined ? Effect.void : Effect.ignore(Backups.discardBackup(root.memoryDir, backup))
      )
    )
    const result: RestoreResult = {
      path: written.key,
      restored: true,
      version: memoryVersion(written.after),
      ...(backup === undefined ? {} : { backup })
    }
    return result
  }
)

/**
 * Deletes a memory and its index line (`Operations.delete`), keeping the removed text under `.deleted/<stamp>/` so
 * the history's `delete-backup` entry (`undoId`) puts it back. When the text cannot be kept, the memory is written
 * back as it was and the failure returned: a delete never loses a memory for good.
 */
export const removeKeepingBackup = Effect.fn("ui.removeKeepingBackup")(function*(root: MemoryRoot, path: string) {
  const store = yield* MemoryStore
  const removed = yield* store.remove(root, path)
  const before = removed.before
  if (before === undefined) {
    const indexOnly: RemoveResult = {
      path: removed.key,
      fileRemoved: removed.fileRemoved,
      indexLinesRemoved: removed.indexLinesRemoved
    }
    return indexOnly
  }
  const backup = yield* Backups.keepBackup(root.memoryDir, "delete-backup", removed.key, before).pipe(
    Effect.tapError(() => Effect.ignore(store.write(root, removed.key, before, { verbatim: true })))
  )
  const result: RemoveResult = {
    path: removed.key,
    fileRemoved: removed.fileRemoved,
    indexLinesRemoved: removed.indexLinesRemoved,
    backup,
    undoId: `backup:${backup}`
  }
  return result
})

// ---------------------------------------------------------------------------------------------------------------
// The last dreams
// ---------------------------------------------------------------------------------------------------------------

const commitLine = (commit: ReportFields["commit"]): string | undefined => {
  if (commit === undefined || commit === null) return undefined
  if (commit.status === "committed") return `committed ${commit.sha?.slice(0, 12) ?? ""}`.trim()
  return `${commit.status}: ${oneLine(commit.reason ?? commit.detail ?? "", 300)}`
}

/** Pure: one dream's report as the history view shows it. */
export const dreamOf = (backupDir: string, report: ReportFields): DreamSummary => {
  const mergedFrom = new Set(report.merged.map((m) => m.from))
  const commit = commitLine(report.commit)
  return {
    at: report.startedAt,
    ...(report.finishedAt === undefined ? {} : { finishedAt: report.finishedAt }),
    ok: report.status === "completed",
    merged: report.merged.map((m) => `${m.from} → ${m.into}`),
    fixed: report.updated.map((u) => u.file),
    pruned: report.deleted.map((d) => d.file).filter((file) => !mergedFrom.has(file)),
    created: report.created.map((c) => c.file),
    indexRemoved: (report.index?.removed ?? []).slice(0, 500).map((r) => ({
      line: oneLine(r.line, 300),
      reason: r.reason
    })),
    summary: (report.summary ?? "").slice(0, 2_000),
    ...(report.model === undefined ? {} : { model: report.model }),
    backupDir,
    ...(commit === undefined ? {} : { commit }),
    ...(report.error === undefined ? {} : { error: oneLine(report.error, 600) })
  }
}

export interface LastDreamsOptions {
  /** At most this many (default 10, at most `DREAMS_MAX`). */
  readonly limit?: number | undefined
}

/**
 * The newest dreams that ran (each leaves `.dream/<stamp>/report.json`, completed or failed), newest first: what
 * each merged, rewrote, deleted and created, and memdir's repair of the index. A report that cannot be read is a
 * dream with `ok: false` and an `error` saying so; no dream yet is an empty list.
 */
export const lastDreams = Effect.fn("ui.lastDreams")(function*(root: MemoryRoot, options: LastDreamsOptions = {}) {
  const fs = yield* MemoryFs
  const limit = Math.max(0, Math.min(DREAMS_MAX, Math.floor(options.limit ?? 10)))
  const base = yield* fs.realPathOfDeepestExisting(NodePath.resolve(root.memoryDir)).pipe(
    Effect.mapError((e) => new MemoryIoError({ op: "resolve", path: e.path, detail: e.detail }))
  )
  const names = yield* fs.readDirectory(NodePath.join(base, DREAM_BACKUP_DIR)).pipe(
    Effect.map((entries) => entries.filter((e) => e.kind === "Directory").map((e) => e.name)),
    Effect.catchTag("MemoryFsError", () => Effect.succeed<ReadonlyArray<string>>([]))
  )
  const runs = names.flatMap((name) => {
    const stamp = Backups.parseStamp(name)
    return stamp === undefined ? [] : [{ name, ...stamp }]
  }).sort((a, b) => b.at - a.at || b.n - a.n)
  const dreams: Array<DreamSummary> = []
  for (const run of runs) {
    if (dreams.length >= limit) break
    const backupDir = `${DREAM_BACKUP_DIR}/${run.name}`
    const read = yield* readReport(root.memoryDir, backupDir)
    // no report: a dream interrupted before it wrote one (what it replaced is still in the directory)
    if (read._tag === "absent") continue
    dreams.push(
      read._tag === "report" ? dreamOf(backupDir, read.report) : {
        at: new Date(run.at).toISOString(),
        ok: false,
        merged: [],
        fixed: [],
        pruned: [],
        created: [],
        indexRemoved: [],
        summary: "",
        backupDir,
        error: read.detail
      }
    )
  }
  return dreams
})

// ---------------------------------------------------------------------------------------------------------------
// Whether the dream runs
// ---------------------------------------------------------------------------------------------------------------

export const DreamAttempt = Schema.Struct({
  /** When the hooks' background job started, ISO 8601. */
  at: Schema.String,
  session: Schema.String,
  /** The gates let it through and it ran (its report is then among `lastDreams`). */
  ran: Schema.Boolean,
  status: Schema.optionalKey(Schema.Literals(["completed", "failed"])),
  /** The gate that stopped it (`time`, `sessions`, `lock`…) and why, when one did. */
  stoppedBy: Schema.optionalKey(Schema.String),
  reason: Schema.optionalKey(Schema.String),
  /** The job failed after its extraction: the dream's own failure (its lock, its model). */
  error: Schema.optionalKey(Schema.String)
})
export type DreamAttempt = typeof DreamAttempt.Type

export const DreamState = Schema.Struct({
  /** When a dream last finished (the lock's time), ISO 8601; absent: never. */
  lastConsolidatedAt: Schema.optionalKey(Schema.String),
  /** A dream holds the lock now (a live process). */
  running: Schema.Boolean,
  /** The background job's last dream attempts, newest first: why it did or did not dream. */
  attempts: Schema.Array(DreamAttempt)
})
export type DreamState = typeof DreamState.Type

/**
 * Whether the dream runs: when it last finished, whether one is running, and what the hooks' background job said
 * of each of its last attempts (the gate that stopped it, or its outcome). Records that cannot be read: none.
 */
export const dreamState = Effect.fn("ui.dreamState")(function*(root: MemoryRoot, options: LastDreamsOptions = {}) {
  const limit = Math.max(0, Math.min(DREAMS_MAX, Math.floor(options.limit ?? 10)))
  const lock = yield* Effect.flatMap(DreamLock.DreamLock, (l) => l.inspect(root.memoryDir)).pipe(
    Effect.map(Option.some),
    Effect.orElseSucceed(() => Option.none<DreamLock.DreamLockState>()),
    Effect.provide(DreamLock.layer)
  )
  const runs = yield* Effect.flatMap(
    BackgroundRuns.BackgroundRuns,
    (r) => r.recent(root.memoryDir, BackgroundRuns.MAX_RUNS)
  )
    .pipe(
      Effect.map((recent) => recent.runs),
      Effect.orElseSucceed((): ReadonlyArray<BackgroundRuns.BackgroundRun> => []),
      Effect.provide(BackgroundRuns.layer)
    )
  const attempts = runs.flatMap((run): Array<DreamAttempt> => {
    const note = run.dream
    const failedAfterExtraction = note === undefined && run.state === "failed" && run.extraction !== undefined &&
      run.extraction.failure === undefined && run.failure !== undefined
    if (note === undefined && !failedAfterExtraction) return []
    return [{
      at: new Date(run.startedAt ?? run.endedAt ?? 0).toISOString(),
      session: run.session,
      ran: note?.ran ?? false,
      ...(note?.status === undefined ? {} : { status: note.status }),
      ...(note?.stoppedBy === undefined ? {} : { stoppedBy: note.stoppedBy }),
      ...(note?.reason === undefined ? {} : { reason: note.reason }),
      ...(failedAfterExtraction ? { error: `${run.failure!.tag}: ${run.failure!.message}` } : {})
    }]
  }).slice(0, limit)
  const state: DreamState = {
    ...(Option.isSome(lock) && lock.value.lastConsolidatedAt !== undefined ?
      { lastConsolidatedAt: new Date(lock.value.lastConsolidatedAt).toISOString() } :
      {}),
    running: Option.isSome(lock) && lock.value.status === "held",
    attempts
  }
  return state
})
