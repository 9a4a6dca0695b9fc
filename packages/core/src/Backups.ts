/**
 * Backups: every previous version of a memory that memdir keeps in the memory directory, found in one place
 * (docs/file-format.md#backups). Each program that replaces or removes a memory keeps what it replaced first, in a
 * hidden state directory of its own, one sub-directory per run named by its start (`2026-03-05T12-00-00Z`, then
 * `…-2` for a second run of that second), the memory at its own key inside it:
 *
 * - the dream: `.dream/<stamp>/<key>` (and `MEMORY.md` before memdir repaired it), beside its `report.json`;
 * - extraction: `.extract/<session>/<stamp>/<key>`;
 * - `memdir doctor --fix`: `.doctor/<stamp>/MEMORY.md`;
 * - a delete that keeps what it removed (`keepBackup(…, "delete-backup", …)`): `.deleted/<stamp>/<key>`;
 * - a restore of an older version: the version it replaced, `.replaced/<stamp>/<key>`.
 *
 * Every read and write goes through `MemoryFs` inside the memory directory's real path (a state directory that is a
 * link leading out is never followed), reads are size-bounded, and a listing looks at the newest `MAX_RUNS` runs of
 * each program at most.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as NodePath from "node:path"
import { DREAM_BACKUP_DIR } from "./dream/snapshot.js"
import { MemoryIoError, type PathTraversalError } from "./Errors.js"
import { makeRunTrace } from "./internal/runs/trace.js"
import { MemoryFs, type MemoryFsError } from "./MemoryFs.js"

/** Where `memdir doctor --fix` keeps MEMORY.md (`Doctor.DOCTOR_BACKUP_DIR`; not imported: Doctor loads the scanner). */
const DOCTOR_DIR = ".doctor"
/** Where extraction keeps its cursors and, per session, its runs (`Extract.CURSOR_DIR`). */
const EXTRACT_DIR = ".extract"
/** What a delete that keeps a backup removed: `.deleted/<stamp>/<key>`. */
export const DELETED_BACKUP_DIR = ".deleted"
/** What a restore of an older version replaced: `.replaced/<stamp>/<key>`. */
export const REPLACED_BACKUP_DIR = ".replaced"

export type BackupSource = "dream-backup" | "extract-backup" | "doctor-backup" | "delete-backup" | "restore-backup"

/** Each program's state directory, and whether its runs are grouped by session (`.extract/<session>/<stamp>`). */
export const BACKUP_DIRS: ReadonlyArray<
  { readonly dir: string; readonly source: BackupSource; readonly bySession: boolean }
> = [
  { dir: DREAM_BACKUP_DIR, source: "dream-backup", bySession: false },
  { dir: EXTRACT_DIR, source: "extract-backup", bySession: true },
  { dir: DOCTOR_DIR, source: "doctor-backup", bySession: false },
  { dir: DELETED_BACKUP_DIR, source: "delete-backup", bySession: false },
  { dir: REPLACED_BACKUP_DIR, source: "restore-backup", bySession: false }
]

/** Runs of one program looked at, at most (the newest): a listing stays quick after years of daily dreams. */
export const MAX_RUNS = 2_000
/** A backup is a memory (at most 250,000 bytes written, 1 MiB read): a larger file there is read no further. */
export const BACKUP_READ_MAX_BYTES = 1024 * 1024

export interface Backup {
  readonly source: BackupSource
  /** The memory's key the backup is a previous version of. */
  readonly key: string
  /** The run's directory, relative to the memory directory (`.dream/2026-03-05T12-00-00Z`). */
  readonly runDir: string
  /** The backup file, relative to the memory directory (`.dream/2026-03-05T12-00-00Z/feedback_x.md`). */
  readonly file: string
  /** When the run started (from its directory's name), epoch ms. */
  readonly at: number
  /** Extraction's runs: the session's directory name. */
  readonly session?: string | undefined
}

/** `2026-03-05T12-00-00Z` or `2026-03-05T12-00-00Z-2` → its time and its order within the second; else undefined. */
export const parseStamp = (name: string): { readonly at: number; readonly n: number } | undefined => {
  const match = /^(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})Z(?:-(\d{1,6}))?$/.exec(name)
  if (match === null) return undefined
  const at = Date.parse(`${match[1]}T${match[2]}:${match[3]}:${match[4]}Z`)
  return Number.isNaN(at) ? undefined : { at, n: match[5] === undefined ? 1 : Number(match[5]) }
}

const io = (op: string) => (error: MemoryFsError) =>
  new MemoryIoError({ op, path: error.path, detail: `${error.reason} (${error.detail})` })

/** The real memory directory (a memory directory behind a link is followed, as everywhere). */
const realRootOf = (fs: MemoryFs["Service"], memoryDir: string) =>
  fs.realPathOfDeepestExisting(NodePath.resolve(memoryDir)).pipe(Effect.mapError(io("resolve the memory directory")))

/**
 * The names of the directories in `dir`; links and files are left out. Nothing there, or a directory that cannot be
 * listed (its permissions): none, so one program's unreadable state hides only its own backups.
 */
const subdirectories = (fs: MemoryFs["Service"], dir: string) =>
  fs.readDirectory(dir).pipe(
    Effect.map((entries) => entries.filter((e) => e.kind === "Directory").map((e) => e.name)),
    Effect.orElseSucceed((): ReadonlyArray<string> => [])
  )

interface Run {
  readonly source: BackupSource
  readonly runDir: string
  readonly at: number
  readonly n: number
  readonly session?: string | undefined
}

/** Every run directory of every program, newest `MAX_RUNS` of each. */
const runsOf = (fs: MemoryFs["Service"], root: string) =>
  Effect.forEach(BACKUP_DIRS, ({ bySession, dir, source }) =>
    Effect.gen(function*() {
      const stamped = (parent: string, names: ReadonlyArray<string>, session?: string): Array<Run> =>
        names.flatMap((name) => {
          const stamp = parseStamp(name)
          return stamp === undefined ? [] : [{ source, runDir: `${parent}/${name}`, ...stamp, session }]
        })
      const top = yield* subdirectories(fs, NodePath.join(root, dir))
      const runs: Array<Run> = []
      if (!bySession) {
        runs.push(...stamped(dir, top))
      } else {
        for (const session of top) {
          runs.push(
            ...stamped(`${dir}/${session}`, yield* subdirectories(fs, NodePath.join(root, dir, session)), session)
          )
        }
      }
      return runs.sort((a, b) => b.at - a.at || b.n - a.n).slice(0, MAX_RUNS)
    })).pipe(Effect.map((all) => all.flat()))

/**
 * Every backup of the memory `key` (relative to the memory directory, `/`-separated, already checked by the
 * store), newest first: each run directory holding a regular file at that key. Nothing kept: none.
 */
export const listBackups = Effect.fn("Backups.list")(function*(memoryDir: string, key: string) {
  const fs = yield* MemoryFs
  const root = yield* realRootOf(fs, memoryDir)
  const runs = yield* runsOf(fs, root)
  const files = runs.map((run) => `${run.runDir}/${key}`)
  const infos = yield* fs.lstatMany(files.map((file) => NodePath.join(root, ...file.split("/"))))
  const found: Array<Backup> = []
  runs.forEach((run, i) => {
    const info = infos[i]
    if (info === undefined || "_tag" in info || info.kind !== "File") return
    found.push({
      source: run.source,
      key,
      runDir: run.runDir,
      file: files[i]!,
      at: run.at,
      ...(run.session === undefined ? {} : { session: run.session })
    })
  })
  return found.sort((a, b) => b.at - a.at || (b.runDir < a.runDir ? -1 : b.runDir > a.runDir ? 1 : 0))
})

/** The text of a backup `file` (relative to the memory directory), read bounded, never through a link out. */
export const readBackup = Effect.fn("Backups.read")(function*(memoryDir: string, file: string) {
  const fs = yield* MemoryFs
  const root = yield* realRootOf(fs, memoryDir)
  const read = yield* fs.readFile(NodePath.join(root, ...file.split("/")), {
    maxBytes: BACKUP_READ_MAX_BYTES,
    within: root
  }).pipe(Effect.mapError(io("read backup")))
  return read.text
})

/**
 * The texts of many backups (relative to the memory directory) in one batch, read like `readBackup`; a backup that
 * cannot be read (gone since it was listed, too large, a link out) is left out of the map.
 */
export const readBackups = Effect.fn("Backups.readMany")(function*(memoryDir: string, files: ReadonlyArray<string>) {
  const fs = yield* MemoryFs
  const root = yield* realRootOf(fs, memoryDir)
  const read = yield* fs.readFileMany(files.map((file) => NodePath.join(root, ...file.split("/"))), {
    maxBytes: BACKUP_READ_MAX_BYTES,
    within: root
  })
  const texts = new Map<string, string>()
  read.forEach((result, i) => {
    if (!("_tag" in result)) texts.set(files[i]!, result.text)
  })
  return texts
})

/**
 * Keeps `text` as the previous version of `key` under `.deleted/<stamp>/` (a delete) or `.replaced/<stamp>/` (a
 * restore), written atomically inside the memory directory; answers the backup's path relative to it.
 */
export const keepBackup = (
  memoryDir: string,
  source: "delete-backup" | "restore-backup",
  key: string,
  text: string
): Effect.Effect<string, PathTraversalError | MemoryIoError, MemoryFs> =>
  Effect.gen(function*() {
    const dir = source === "delete-backup" ? DELETED_BACKUP_DIR : REPLACED_BACKUP_DIR
    const trace = yield* makeRunTrace(memoryDir, dir, yield* Clock.currentTimeMillis)
    return yield* trace.keepPrevious(key, text)
  })

/**
 * Removes a backup `keepBackup` made (relative to the memory directory, under `.deleted/` or `.replaced/` only) and
 * its run directory when that leaves it empty: the change it was kept for did not happen.
 */
export const discardBackup = Effect.fn("Backups.discard")(function*(memoryDir: string, file: string) {
  const segments = file.split("/")
  const dir = segments[0]
  if ((dir !== DELETED_BACKUP_DIR && dir !== REPLACED_BACKUP_DIR) || segments.length < 3 || segments.includes("..")) {
    return
  }
  const fs = yield* MemoryFs
  const root = yield* realRootOf(fs, memoryDir)
  yield* fs.remove(NodePath.join(root, ...segments)).pipe(Effect.mapError(io("remove backup")))
  const runDir = NodePath.join(root, segments[0]!, segments[1]!)
  const empty = yield* fs.walkKinds(runDir).pipe(
    Effect.map((entries) => entries.every((entry) => entry.kind === "Directory")),
    Effect.orElseSucceed(() => false)
  )
  if (empty) {
    yield* fs.remove(runDir, { recursive: true }).pipe(Effect.ignore)
  }
})
