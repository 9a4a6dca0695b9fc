/**
 * Dream: consolidation of a memory directory while nobody waits (SPEC §10).
 *
 * **Gates**, cheapest first, each evaluated only when the previous one passed:
 * 1. time — at least 24 h since lastConsolidatedAt (the mtime of `.consolidate-lock`; no lock: never);
 * 2. sessions — more than 5 sessions touched since then, not counting the current one: transcripts
 *    (`<transcriptsDir>/*.jsonl`, the reference layout `<base>/projects/<slug>/<session>.jsonl`) whose mtime is
 *    later than lastConsolidatedAt. The scan is cached in `<memdir>/.dream-scan.json` for 10 minutes;
 * 3. lock — `.consolidate-lock` is free (`DreamLock`).
 * `force` bypasses the time and session gates (they are still reported), never the lock.
 *
 * **The dream** is an agent (`Agent.run`, role `dreamer`) over the sandboxed memory tools (`MemoryTools`, with
 * delete, without team or log writes), plus read-only project tools and a narrow `transcript_search` over the
 * sessions touched since the last dream. Its prompt names four phases — orient, gather, consolidate, prune — and
 * is data with named variants (`dreamPromptVariants`). The orient material (index, manifest, recent daily logs,
 * touched sessions) is read by memdir and sent in the first message, so the model does not spend turns listing.
 *
 * **The report** is memdir's, not the model's: the memory files are snapshotted before and after and diffed —
 * every file created, updated (with the text removed), merged (a deleted file whose content went into another)
 * or deleted (with its full text). Nothing disappears without a trace: the previous version of every updated or
 * deleted file is copied to `<memdir>/.dream/<timestamp>/` with `report.json`. Then memdir puts MEMORY.md back
 * under its caps (dead pointers and duplicates dropped by `Doctor.fix`; if still over, the lines of the
 * least recently changed memories go, each listed in the report). Where the memory directory is the root of a git
 * repository, the dream becomes one commit of the memory files (memdir's own dot-files excluded).
 *
 * Failure (model error, an I/O failure of a tool) rolls the lock back so the next run retries; whatever the model
 * changed before it failed is still backed up and reported in `.dream/<timestamp>/report.json`.
 */
import { Command, FileSystem, Path } from "@effect/platform"
import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Agent from "./Agent.js"
import { LOGS_DIR, readRecentLogs, type RecentLog } from "./DailyLog.js"
import * as Doctor from "./Doctor.js"
import { DREAM_LOCK_FILE, DREAM_LOCK_GUARD, DreamLock, type DreamLockState, withDreamLock } from "./DreamLock.js"
import { type LockTimeoutError, type MemoryIoError, ModelError, UnknownPromptVariantError } from "./Errors.js"
import { ensureDir, isNotFound, toMemoryIoError, writeFileAtomic } from "./internal/atomicFile.js"
import { sanitizeProjectName } from "./internal/paths.js"
import { INDEX_ENTRY_MAX_CHARS, manifestLine, parseIndexLine } from "./Memory.js"
import {
  countLines,
  fitsIndexCaps,
  INDEX_FILE,
  INDEX_MAX_BYTES,
  INDEX_MAX_LINES,
  MemoryIndex,
  normalizeIndexLink,
  truncateIndex,
  utf8ByteLength
} from "./MemoryIndex.js"
import * as MemoryTools from "./MemoryTools.js"
import { Model } from "./Model.js"
import { renderTemplate } from "./Prompt.js"
import { Scanner } from "./Scanner.js"
import { TEAM_DIR } from "./TeamGuard.js"

// ---------------------------------------------------------------------------------------------------------------
// Constants and configuration
// ---------------------------------------------------------------------------------------------------------------

/** Gate 1: hours since lastConsolidatedAt. */
export const DREAM_MIN_HOURS = 24
/** Gate 2: strictly more than this many sessions touched since lastConsolidatedAt. */
export const DREAM_MIN_SESSIONS = 5
/** The session scan is reused for this long. */
export const SESSION_SCAN_INTERVAL_MS = 10 * 60_000
export const DREAM_SCAN_FILE = ".dream-scan.json"
/** Backups and reports of every dream: `<memdir>/.dream/<timestamp>/`. */
export const DREAM_BACKUP_DIR = ".dream"
/** Model calls per dream at most, and output tokens per call. */
export const DREAM_MAX_TURNS = 20
export const DREAM_MAX_TOKENS = 8192
/** Memory files larger than this are compared by size only (never sent, never diffed). */
export const SNAPSHOT_MAX_FILE_BYTES = 1024 * 1024
/** Sub-directories the dream leaves alone: daily logs are append-only, team memory belongs to the team. */
const UNTOUCHED_DIRS: ReadonlyArray<string> = [LOGS_DIR, TEAM_DIR]

/** `<base>/projects/<sanitized root>/`: where the reference agent keeps a project's session transcripts. */
export const defaultTranscriptsDir = (memoryBase: string, root: string): string =>
  `${memoryBase.replace(/[\\/]+$/, "")}/projects/${sanitizeProjectName(root)}`

/** `MEMDIR_TRANSCRIPTS_DIR` (where session transcripts are) and `MEMDIR_SESSION_ID` (the current session). */
export const dreamEnv = Config.all({
  transcriptsDir: Config.option(Config.string("MEMDIR_TRANSCRIPTS_DIR")).pipe(
    Config.map(Option.filter((dir) => dir.trim() !== ""))
  ),
  sessionId: Config.option(Config.string("MEMDIR_SESSION_ID")).pipe(
    Config.map(Option.filter((id) => id.trim() !== ""))
  )
})

// ---------------------------------------------------------------------------------------------------------------
// Sessions touched since the last dream (cached scan)
// ---------------------------------------------------------------------------------------------------------------

export interface TouchedSession {
  /** The transcript's file name without `.jsonl`. */
  readonly id: string
  readonly path: string
  readonly mtime: number
}

const ScanCache = Schema.Struct({
  version: Schema.Literal(1),
  transcriptsDir: Schema.String,
  since: Schema.NullOr(Schema.Number),
  scannedAt: Schema.Number,
  sessions: Schema.Array(Schema.Struct({ id: Schema.String, mtime: Schema.Number }))
})
type ScanCache = typeof ScanCache.Type
const decodeScanCache = Schema.decodeUnknownOption(Schema.parseJson(ScanCache))

export interface SessionScan {
  /** Touched since lastConsolidatedAt, current session excluded, newest first. */
  readonly sessions: ReadonlyArray<TouchedSession>
  readonly scannedAt: number
  readonly fromCache: boolean
}

/**
 * The sessions touched since `since` (all of them when undefined), from the cache when it is younger than
 * `SESSION_SCAN_INTERVAL_MS` and was made for the same directory and the same `since`; otherwise a fresh scan,
 * cached unless `writeCache` is false. A missing transcripts directory has no sessions.
 */
export const scanTouchedSessions = Effect.fn("Dream.scanTouchedSessions")(function*(input: {
  readonly memoryDir: string
  readonly transcriptsDir: string
  readonly since: number | undefined
  readonly currentSessionId?: string | undefined
  readonly writeCache?: boolean | undefined
  readonly scanInterval?: number | undefined
}) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const now = yield* Clock.currentTimeMillis
  const transcriptsDir = path.resolve(input.transcriptsDir)
  const cacheFile = path.join(input.memoryDir, DREAM_SCAN_FILE)
  const since = input.since ?? null
  const interval = input.scanInterval ?? SESSION_SCAN_INTERVAL_MS
  const finish = (sessions: ReadonlyArray<{ id: string; mtime: number }>, scannedAt: number, fromCache: boolean) => {
    const touched = sessions
      .filter((s) => s.id !== input.currentSessionId)
      .map((s) => ({ id: s.id, path: path.join(transcriptsDir, `${s.id}.jsonl`), mtime: s.mtime }))
      .sort((a, b) => b.mtime - a.mtime || (a.id < b.id ? -1 : 1))
    const scan: SessionScan = { sessions: touched, scannedAt, fromCache }
    return scan
  }

  const cached = yield* fs.readFileString(cacheFile).pipe(
    Effect.map(decodeScanCache),
    Effect.orElseSucceed(() => Option.none<ScanCache>())
  )
  if (
    Option.isSome(cached) && cached.value.transcriptsDir === transcriptsDir && cached.value.since === since &&
    cached.value.scannedAt <= now && now - cached.value.scannedAt < interval
  ) {
    return finish(cached.value.sessions, cached.value.scannedAt, true)
  }

  const names = yield* fs.readDirectory(transcriptsDir).pipe(
    Effect.catchIf(isNotFound, () => Effect.succeed<Array<string>>([])),
    Effect.mapError(toMemoryIoError("list transcripts in", transcriptsDir))
  )
  const sessions: Array<{ id: string; mtime: number }> = []
  for (const name of names) {
    if (!name.endsWith(".jsonl") || name.startsWith(".")) continue
    const info = yield* fs.stat(path.join(transcriptsDir, name)).pipe(Effect.option)
    if (Option.isNone(info) || info.value.type !== "File") continue
    const mtime = Option.getOrElse(info.value.mtime, () => new Date(0)).getTime()
    if (since === null || mtime > since) sessions.push({ id: name.slice(0, -".jsonl".length), mtime })
  }
  if (input.writeCache !== false) {
    const cache: ScanCache = { version: 1, transcriptsDir, since, scannedAt: now, sessions }
    yield* ensureDir(input.memoryDir)
    yield* writeFileAtomic(cacheFile, JSON.stringify(cache) + "\n")
  }
  return finish(sessions, now, false)
})

// ---------------------------------------------------------------------------------------------------------------
// Gates
// ---------------------------------------------------------------------------------------------------------------

export type DreamGate = "time" | "sessions" | "lock"

export interface GateCheck {
  readonly gate: DreamGate
  /** `bypassed`: failed, but `force` was given; `not-evaluated`: an earlier gate already stopped the dream. */
  readonly status: "passed" | "failed" | "bypassed" | "not-evaluated"
  readonly detail: string
}

export interface DreamGates {
  readonly open: boolean
  readonly stoppedBy: DreamGate | undefined
  readonly forced: boolean
  readonly now: number
  /** Epoch ms; undefined: never consolidated. */
  readonly lastConsolidatedAt: number | undefined
  readonly checks: ReadonlyArray<GateCheck>
  /** When the session gate was evaluated: the sessions touched since lastConsolidatedAt. */
  readonly sessions: ReadonlyArray<TouchedSession>
  readonly sessionsFromCache: boolean
  readonly lock: DreamLockState | undefined
}

export interface DreamGateInput {
  readonly memoryDir: string
  readonly transcriptsDir: string
  readonly currentSessionId?: string | undefined
  readonly force?: boolean | undefined
  /** Default true; a dry run writes nothing, not even the scan cache. */
  readonly writeCache?: boolean | undefined
  readonly minHours?: number | undefined
  readonly minSessions?: number | undefined
}

const hoursText = (ms: number): string => `${(ms / 3_600_000).toFixed(1).replace(/\.0$/, "")} h`

/** Evaluate the gates, cheapest first, stopping at the first that fails (unless forced). Never takes the lock. */
export const evaluateGates = Effect.fn("Dream.evaluateGates")(function*(input: DreamGateInput) {
  const lock = yield* DreamLock
  const now = yield* Clock.currentTimeMillis
  const forced = input.force === true
  const minHours = input.minHours ?? DREAM_MIN_HOURS
  const minSessions = input.minSessions ?? DREAM_MIN_SESSIONS
  const checks: Array<GateCheck> = []
  const stopped = (gate: DreamGate) => !forced && checks.some((c) => c.gate === gate && c.status === "failed")
  const notEvaluated = (gate: DreamGate): GateCheck => ({ gate, status: "not-evaluated", detail: "" })
  const verdict = (passed: boolean): GateCheck["status"] => passed ? "passed" : forced ? "bypassed" : "failed"

  const lockState = yield* lock.inspect(input.memoryDir)
  const last = lockState.lastConsolidatedAt
  const elapsed = last === undefined ? Infinity : now - last
  checks.push({
    gate: "time",
    status: verdict(elapsed >= minHours * 3_600_000),
    detail: last === undefined
      ? "never consolidated"
      : `${hoursText(Math.max(0, elapsed))} since the last consolidation (${new Date(last).toISOString()}); ` +
        `needs ≥ ${minHours} h`
  })

  let sessions: ReadonlyArray<TouchedSession> = []
  let sessionsFromCache = false
  if (stopped("time")) {
    checks.push(notEvaluated("sessions"), notEvaluated("lock"))
  } else {
    const scan = yield* scanTouchedSessions({
      memoryDir: input.memoryDir,
      transcriptsDir: input.transcriptsDir,
      since: last,
      currentSessionId: input.currentSessionId,
      writeCache: input.writeCache
    })
    sessions = scan.sessions
    sessionsFromCache = scan.fromCache
    checks.push({
      gate: "sessions",
      status: verdict(sessions.length > minSessions),
      detail: `${sessions.length} session${sessions.length === 1 ? "" : "s"} touched ` +
        `${last === undefined ? "so far" : "since the last consolidation"}` +
        `${input.currentSessionId === undefined ? "" : " (not counting the current one)"}; needs > ${minSessions}` +
        (scan.fromCache ? ` (scan from ${new Date(scan.scannedAt).toISOString()})` : "")
    })
    if (stopped("sessions")) {
      checks.push(notEvaluated("lock"))
    } else {
      checks.push({
        gate: "lock",
        // The lock is never bypassed: two dreams must not edit one directory at once.
        status: lockState.status === "held" ? "failed" : "passed",
        detail: lockState.status === "held"
          ? `held by pid ${lockState.holder} since ${new Date(last!).toISOString()}`
          : lockState.status === "free"
          ? "free"
          : `${lockState.status === "stale" ? "stale" : "dead holder"} (pid ${lockState.holder}): will be taken over`
      })
    }
  }
  const failed = checks.find((c) => c.status === "failed")
  const gates: DreamGates = {
    open: failed === undefined,
    stoppedBy: failed?.gate,
    forced,
    now,
    lastConsolidatedAt: last,
    checks,
    sessions,
    sessionsFromCache,
    lock: lockState
  }
  return gates
})

// ---------------------------------------------------------------------------------------------------------------
// Snapshots and the diff (pure parts exported)
// ---------------------------------------------------------------------------------------------------------------

export interface SnapshotFile {
  /** Undefined when the file is larger than `SNAPSHOT_MAX_FILE_BYTES`. */
  readonly content: string | undefined
  readonly size: number
}

/** Relative path (`/` separators) → file, for every `.md` file the dream may touch. */
export type Snapshot = ReadonlyMap<string, SnapshotFile>

/**
 * Every `*.md` file under the memory directory that the dream may touch: not hidden (memdir's state, `.git`,
 * `.dream`), not under `logs/` or `team/`, not through a symlink.
 */
export const snapshotMemoryDir = Effect.fn("Dream.snapshot")(function*(memoryDir: string) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const root = path.resolve(memoryDir)
  const files = new Map<string, SnapshotFile>()
  const walk = (directory: string, relative: string): Effect.Effect<void, MemoryIoError> =>
    Effect.gen(function*() {
      const names = yield* fs.readDirectory(directory).pipe(
        Effect.catchIf(isNotFound, () => Effect.succeed<Array<string>>([])),
        Effect.mapError(toMemoryIoError("list", directory))
      )
      for (const name of names.sort()) {
        if (name.startsWith(".")) continue
        const rel = relative === "" ? name : `${relative}/${name}`
        if (relative === "" && UNTOUCHED_DIRS.includes(name)) continue
        const absolute = path.join(directory, name)
        const isLink = yield* fs.readLink(absolute).pipe(Effect.as(true), Effect.orElseSucceed(() => false))
        if (isLink) continue
        const info = yield* fs.stat(absolute).pipe(Effect.option)
        if (Option.isNone(info)) continue
        if (info.value.type === "Directory") {
          yield* walk(absolute, rel)
        } else if (info.value.type === "File" && name.toLowerCase().endsWith(".md")) {
          const size = Number(info.value.size)
          const content = size > SNAPSHOT_MAX_FILE_BYTES ? undefined : yield* fs.readFileString(absolute).pipe(
            Effect.map((text): string | undefined => text),
            // Deleted between listing and reading: not part of this snapshot.
            Effect.catchIf(isNotFound, () => Effect.succeed(null)),
            Effect.mapError(toMemoryIoError("read", absolute))
          )
          if (content !== null) files.set(rel, { content, size })
        }
      }
    })
  yield* walk(root, "")
  return files as Snapshot
})

/** Lines removed and added from `before` to `after` (a longest-common-subsequence diff, in file order). */
export const lineDiff = (
  before: string,
  after: string
): { readonly removed: ReadonlyArray<string>; readonly added: ReadonlyArray<string> } => {
  const a = before.split("\n")
  const b = after.split("\n")
  if (a.length * b.length > 4_000_000) {
    // Too large for the table: a multiset difference (order kept, moves not detected).
    const count = (lines: ReadonlyArray<string>) => {
      const map = new Map<string, number>()
      for (const line of lines) map.set(line, (map.get(line) ?? 0) + 1)
      return map
    }
    const minus = (lines: ReadonlyArray<string>, other: Map<string, number>) =>
      lines.filter((line) => {
        const n = other.get(line) ?? 0
        if (n > 0) other.set(line, n - 1)
        return n === 0
      })
    return { removed: minus(a, count(b)), added: minus(b, count(a)) }
  }
  const table: Array<Uint32Array> = Array.from({ length: a.length + 1 }, () => new Uint32Array(b.length + 1))
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      table[i]![j] = a[i] === b[j] ? table[i + 1]![j + 1]! + 1 : Math.max(table[i + 1]![j]!, table[i]![j + 1]!)
    }
  }
  const removed: Array<string> = []
  const added: Array<string> = []
  let i = 0
  let j = 0
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      i++
      j++
    } else if (table[i + 1]![j]! >= table[i]![j + 1]!) removed.push(a[i++]!)
    else added.push(b[j++]!)
  }
  while (i < a.length) removed.push(a[i++]!)
  while (j < b.length) added.push(b[j++]!)
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
  readonly byDream: boolean
}
export interface DeletedFile {
  readonly file: string
  /** The whole file as it was (undefined only for a file over `SNAPSHOT_MAX_FILE_BYTES`). */
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
  const describe = (file: SnapshotFile | undefined) => file?.content ?? `(${file?.size ?? 0} bytes, not compared)`
  for (const [file, now] of [...after].sort(([a], [b]) => a < b ? -1 : 1)) {
    const was = before.get(file)
    if (was === undefined) {
      if (file !== INDEX_FILE) created.push({ file, text: describe(now), byDream: byDream.has(file) })
      else index = { removed: "", added: describe(now) }
      continue
    }
    const same = was.content !== undefined && now.content !== undefined
      ? was.content === now.content
      : was.size === now.size && was.content === now.content
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

// ---------------------------------------------------------------------------------------------------------------
// The prompt (data: named variants)
// ---------------------------------------------------------------------------------------------------------------

const paragraphs = (...parts: ReadonlyArray<string>): string => parts.join("\n\n")
const lines = (...parts: ReadonlyArray<string>): string => parts.join("\n")

const dreamIntro = paragraphs(
  "# Dream: consolidate the memory directory",
  "You are consolidating a file-based memory at `{{memoryDir}}`, in the background: nobody is waiting for you and " +
    "nobody will answer questions. Each memory is a Markdown file with frontmatter (name, description, type: user | " +
    "feedback | project | reference) and has one line in {{indexFile}}. Every future conversation loads " +
    "{{indexFile}} whole (only its first {{maxIndexLines}} lines / {{maxIndexKb}} KB) and recalls memories by their " +
    "description, so the directory must stay small, current and free of duplicates and contradictions.",
  "Today is {{today}} (UTC). Work in four phases."
)

const orient = lines(
  "## 1. Orient",
  "The first message gives you the index, a manifest of every memory (type, path, last change, description), the " +
    "recent daily logs and the sessions since the last consolidation. Read the memories that look related to each " +
    "other or to the logs (`memory_read`); do not read everything."
)

const gather = lines(
  "## 2. Gather",
  "Look for what is new and what has drifted: older daily logs under `logs/` (`memory_read`); memories that name " +
    "files, functions or flags, checked against the project (`read_file`, `grep`, when offered); the transcripts of " +
    "the sessions listed (`transcript_search`), narrowly — a specific word or name, to settle a specific question."
)

const consolidateRules = (mergeFirst: boolean) =>
  lines(
    "## 3. Consolidate",
    ...(mergeFirst ?
      [
        "- Merge rather than duplicate: when two memories cover one topic, write the merged content into the " +
        "better-named file (`memory_write`) and delete the other (`memory_delete`). Never create a new file for " +
        "a topic that already has one: a directory that only grows is the failure this phase exists to prevent."
      ] :
      []),
    "- When memories contradict each other, keep what the newest evidence supports (the logs, the code, the later " +
      "memory) and fix or delete the other.",
    "- Turn relative dates into absolute ones (\"Thursday\", \"next week\", \"yesterday\" → YYYY-MM-DD), counted from " +
      "the day the memory or log entry was written.",
    "- Save what the logs and sessions taught that future conversations need and the code does not show, as memories " +
      "of the right type. Same exclusions as always: no code patterns, architecture, git history or task details.",
    "- Do not invent facts. Do not edit daily logs (they are append-only) or anything outside the memory directory."
  )

const prune = lines(
  "## 4. Prune",
  "- Keep {{indexFile}} under {{maxIndexLines}} lines and ~{{maxIndexKb}} KB: one line per memory, under " +
    "{{indexEntryMaxChars}} characters. The memory tools keep index lines for you: writing a memory updates its " +
    "line, deleting it removes the line.",
  "- Delete memories that are wrong, contradicted or merged; do not delete a memory only because it is old.",
  "- When you are done, answer with a short summary of what you changed and why. memdir writes its own report " +
    "from the files, so the summary is for the reader, not the record."
)

/**
 * The dream's system prompt by variant. Slots: memoryDir, indexFile, maxIndexLines, maxIndexKb, indexEntryMaxChars,
 * today.
 */
export const dreamPromptVariants: Readonly<Record<string, string>> = {
  default: paragraphs(dreamIntro, orient, gather, consolidateRules(true), prune),
  // Eval baseline: the same phases without the merge-first rule (the reference found directories grow linearly).
  "without-merge-first": paragraphs(dreamIntro, orient, gather, consolidateRules(false), prune)
}

export const renderDreamSystemPrompt = (input: {
  readonly memoryDir: string
  readonly now: number
  readonly variant?: string | undefined
}): Either.Either<string, UnknownPromptVariantError> => {
  const name = input.variant ?? "default"
  if (!Object.hasOwn(dreamPromptVariants, name)) {
    return Either.left(
      new UnknownPromptVariantError({ section: "dream", variant: name, known: Object.keys(dreamPromptVariants) })
    )
  }
  return Either.right(renderTemplate(dreamPromptVariants[name]!, {
    memoryDir: /[\\/]$/.test(input.memoryDir) ? input.memoryDir : `${input.memoryDir}/`,
    indexFile: INDEX_FILE,
    maxIndexLines: String(INDEX_MAX_LINES),
    maxIndexKb: String(INDEX_MAX_BYTES / 1000),
    indexEntryMaxChars: String(INDEX_ENTRY_MAX_CHARS),
    today: new Date(input.now).toISOString().slice(0, 10)
  }))
}

export interface OrientMaterial {
  readonly memoryDir: string
  readonly indexContent: string
  readonly manifest: ReadonlyArray<string>
  readonly problems: ReadonlyArray<string>
  readonly logs: ReadonlyArray<RecentLog>
  readonly sessions: ReadonlyArray<TouchedSession>
  readonly lastConsolidatedAt: number | undefined
}

/** Pure: the first user message, everything phase 1 needs. */
export const orientMessage = (m: OrientMaterial): string => {
  const section = (title: string, body: string) => `## ${title}\n\n${body.trim() === "" ? "(none)" : body.trim()}`
  return [
    `Memory directory: ${m.memoryDir}. Last consolidation: ${
      m.lastConsolidatedAt === undefined ? "never" : new Date(m.lastConsolidatedAt).toISOString()
    }.`,
    section(INDEX_FILE, m.indexContent),
    section(`Memories (${m.manifest.length})`, m.manifest.join("\n")),
    ...(m.problems.length === 0 ? [] : [section("Files with broken frontmatter", m.problems.join("\n"))]),
    section(
      `Daily logs, last days (${m.logs.length})`,
      m.logs.map((log) => `### ${log.file}${log.truncated ? " (last lines only)" : ""}\n\n${log.content.trim()}`)
        .join("\n\n")
    ),
    section(
      `Sessions since the last consolidation (${m.sessions.length})`,
      m.sessions.slice(0, 50).map((s) => `- ${s.id} (${new Date(s.mtime).toISOString()})`).join("\n") +
        (m.sessions.length > 50 ? `\n- … ${m.sessions.length - 50} older sessions` : "")
    ),
    "Begin with phase 1."
  ].join("\n\n")
}

// ---------------------------------------------------------------------------------------------------------------
// transcript_search: a narrow, read-only search of the touched sessions
// ---------------------------------------------------------------------------------------------------------------

export const TRANSCRIPT_SEARCH_MAX_MATCHES = 40
const TRANSCRIPT_MAX_BYTES = 32 * 1024 * 1024

/** The conversational text of one JSONL line (ours or the reference agent's); tool inputs as JSON. */
export const transcriptLineText = (line: string): string => {
  let value: any
  try {
    value = JSON.parse(line)
  } catch {
    return ""
  }
  const content = value?.message?.content ?? value?.content
  const parts: Array<string> = []
  const collect = (c: unknown): void => {
    if (typeof c === "string") parts.push(c)
    else if (Array.isArray(c)) {
      for (const block of c) {
        if (block?.type === "text" && typeof block.text === "string") parts.push(block.text)
        else if (block?.type === "tool_use") parts.push(`${block.name}(${JSON.stringify(block.input)})`)
        else if (block?.type === "tool_result") collect(block.content)
      }
    }
  }
  collect(content)
  return parts.join(" ").replace(/\s+/g, " ").trim()
}

/** The tool over `sessions`: case-insensitive literal search, answers `session:line: …snippet…`. */
export const transcriptSearchTool = (sessions: ReadonlyArray<TouchedSession>) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    return Agent.defineTool({
      name: "transcript_search",
      description: "Search the transcripts of the sessions since the last consolidation for a word or phrase " +
        "(case-insensitive, literal). Answers session:line: snippet. Use a specific term; read-only.",
      input: Schema.Struct({
        query: Schema.String.pipe(Schema.minLength(3)),
        session: Schema.optional(Schema.String).annotations({ description: "limit the search to this session id" })
      }),
      run: ({ query, session }) =>
        Effect.gen(function*() {
          const needle = query.toLowerCase()
          const matches: Array<string> = []
          let more = 0
          const chosen = sessions.filter((s) => session === undefined || s.id === session)
          if (chosen.length === 0) {
            return yield* new Agent.ToolFailure({ message: `no session ${JSON.stringify(session)} in the list` })
          }
          for (const s of chosen) {
            const info = yield* fs.stat(s.path).pipe(Effect.option)
            if (Option.isNone(info) || Number(info.value.size) > TRANSCRIPT_MAX_BYTES) continue
            const text = yield* fs.readFileString(s.path).pipe(Effect.orElseSucceed(() => ""))
            const rows = text.split("\n")
            for (let i = 0; i < rows.length; i++) {
              if (!rows[i]!.toLowerCase().includes(needle)) continue
              const said = transcriptLineText(rows[i]!)
              const at = said.toLowerCase().indexOf(needle)
              if (at < 0) continue
              if (matches.length >= TRANSCRIPT_SEARCH_MAX_MATCHES) {
                more++
                continue
              }
              const start = Math.max(0, at - 140)
              const snippet = said.slice(start, at + needle.length + 140)
              matches.push(`${s.id}:${i + 1}: ${start > 0 ? "…" : ""}${snippet}${at + 140 < said.length ? "…" : ""}`)
            }
            yield* Effect.yieldNow()
          }
          if (matches.length === 0) return "(no matches)"
          return matches.join("\n") + (more > 0 ? `\n[… ${more} more matches: use a more specific term]` : "")
        })
    })
  })

// ---------------------------------------------------------------------------------------------------------------
// The index back under its caps
// ---------------------------------------------------------------------------------------------------------------

export interface IndexRepair {
  /** Lines removed, with why. */
  readonly removed: ReadonlyArray<{ readonly line: string; readonly reason: string }>
  /** Lines added or rewritten (Doctor: missing memories, shortened entries). */
  readonly written: ReadonlyArray<string>
  readonly lines: number
  readonly bytes: number
  readonly underCaps: boolean
}

/**
 * Pure: drop entry lines, least recently changed memory first (entries whose file is unknown first of all), until
 * the text fits the caps; if prose alone is over, cut it like loading does. Returns the text and what went.
 */
export const fitIndexToCaps = (
  text: string,
  mtimeOf: (file: string) => number | undefined
): { readonly text: string; readonly removed: ReadonlyArray<string> } => {
  if (fitsIndexCaps(text)) return { text, removed: [] }
  const rows = text.split("\n")
  const candidates = rows.flatMap((raw, i) => {
    const entry = parseIndexLine(raw)
    if (entry === undefined) return []
    return [{ i, mtime: mtimeOf(normalizeIndexLink(entry.file) ?? entry.file) ?? -Infinity }]
  }).sort((a, b) => a.mtime - b.mtime || b.i - a.i)
  const dropped = new Set<number>()
  let lineCount = countLines(text)
  let byteCount = utf8ByteLength(text)
  for (const candidate of candidates) {
    if (lineCount <= INDEX_MAX_LINES && byteCount <= INDEX_MAX_BYTES) break
    dropped.add(candidate.i)
    lineCount--
    byteCount -= utf8ByteLength(rows[candidate.i]!) + 1
  }
  const removed = [...dropped].sort((a, b) => a - b).map((i) => rows[i]!)
  let next = rows.filter((_, i) => !dropped.has(i)).join("\n")
  if (!fitsIndexCaps(next)) {
    const kept = truncateIndex(next).kept
    removed.push(...next.slice(kept.length).split("\n").filter((line) => line !== ""))
    next = kept
  }
  return { text: next, removed }
}

/** `Doctor.fix` (dead pointers, duplicates, long entries, missing lines), then `fitIndexToCaps` under the lock. */
export const enforceIndexCaps = Effect.fn("Dream.enforceIndexCaps")(function*(memoryDir: string) {
  const index = yield* MemoryIndex
  const scanner = yield* Scanner
  const fixed = yield* Doctor.fix(memoryDir)
  const removed: Array<{ line: string; reason: string }> = []
  const written: Array<string> = []
  for (const change of fixed.changes) {
    if (change.action === "removed-line") {
      removed.push({
        line: change.text,
        reason: change.code === "dead-link"
          ? "dead pointer"
          : change.code === "duplicate-entry"
          ? "duplicate"
          : change.code
      })
    } else written.push(change.text)
  }
  const scan = yield* scanner.scan(memoryDir, { skipDirs: [...UNTOUCHED_DIRS] })
  const mtimes = new Map(scan.memories.map((m) => [m.path, m.mtime]))
  const capped = yield* index.modify(memoryDir, (current) => {
    const fitted = fitIndexToCaps(current.text, (file) => mtimes.get(file))
    return Effect.succeed({ text: fitted.text, result: fitted })
  })
  for (const line of capped.removed) removed.push({ line, reason: "over the index caps (least recently changed)" })
  const final = yield* index.read(memoryDir)
  const repair: IndexRepair = {
    removed,
    written,
    lines: countLines(final.text),
    bytes: utf8ByteLength(final.text),
    underCaps: fitsIndexCaps(final.text)
  }
  return repair
})

// ---------------------------------------------------------------------------------------------------------------
// One reviewable git commit
// ---------------------------------------------------------------------------------------------------------------

export type DreamCommit =
  | { readonly status: "committed"; readonly sha: string; readonly message: string }
  | { readonly status: "skipped"; readonly reason: string }
  | { readonly status: "failed"; readonly detail: string }

/** memdir's own files are never committed: locks, scan cache, backups, temp files. */
const GIT_EXCLUDES = [":(exclude).*", ":(exclude)*/.*"]

interface GitRun {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

const runGit = (cwd: string, args: ReadonlyArray<string>) =>
  Effect.scoped(Effect.gen(function*() {
    const process = yield* Command.start(
      Command.make("git", ...args).pipe(
        Command.workingDirectory(cwd),
        Command.env({ GIT_TERMINAL_PROMPT: "0", GIT_OPTIONAL_LOCKS: "0" })
      )
    )
    const text = (stream: Stream.Stream<Uint8Array, unknown>) =>
      stream.pipe(Stream.decodeText(), Stream.mkString, Effect.orElseSucceed(() => ""))
    const [stdout, stderr, code] = yield* Effect.all([text(process.stdout), text(process.stderr), process.exitCode], {
      concurrency: 3
    })
    const run: GitRun = { code: Number(code), stdout, stderr }
    return run
  }))

/** The commit message: a summary line, then one line per file. */
export const commitMessage = (diff: DreamDiff, summary: string): string => {
  const counts = [
    `${diff.created.length} created`,
    `${diff.updated.length} updated`,
    `${diff.merged.length} merged`,
    `${diff.deleted.length} deleted`
  ].join(", ")
  const mergedFrom = new Map(diff.merged.map((m) => [m.from, m.into]))
  const body = [
    ...diff.created.map((c) => `created ${c.file}`),
    ...diff.updated.map((u) => `updated ${u.file}`),
    ...diff.deleted.map((d) =>
      mergedFrom.has(d.file) ? `merged  ${d.file} into ${mergedFrom.get(d.file)}` : `deleted ${d.file}`
    ),
    ...(diff.index === undefined ? [] : [`updated ${INDEX_FILE}`])
  ]
  const text = summary.trim()
  return `memdir dream: ${counts}\n\n${body.join("\n")}${text === "" ? "" : `\n\n${text.slice(0, 2000)}`}\n`
}

/**
 * Commit the memory directory's files as one commit, when the memory directory is the root of a git repository
 * (a directory inside a project's repository is left to its owner: memdir does not write a project's history).
 */
const skipped = (reason: string): DreamCommit => ({ status: "skipped", reason })
const failed = (detail: string): DreamCommit => ({ status: "failed", detail })

export const commitDream = Effect.fn("Dream.commit")(function*(memoryDir: string, message: string) {
  const fs = yield* FileSystem.FileSystem
  const outcome = Effect.gen(function*() {
    const top = yield* runGit(memoryDir, ["rev-parse", "--show-toplevel"])
    if (top.code !== 0) return skipped("the memory directory is not a git repository")
    const realMemoryDir = yield* fs.realPath(memoryDir)
    const realTop = yield* fs.realPath(top.stdout.trim())
    if (realTop !== realMemoryDir) {
      return skipped(
        `the memory directory is inside the repository ${realTop}, not its root: memdir does not commit into a ` +
          `project's history`
      )
    }
    const pathspec = ["--", ".", ...GIT_EXCLUDES]
    const added = yield* runGit(memoryDir, ["add", "-A", ...pathspec])
    if (added.code !== 0) return failed(`git add: ${added.stderr.trim()}`)
    const staged = yield* runGit(memoryDir, ["diff", "--cached", "--quiet", ...pathspec])
    if (staged.code === 0) return skipped("nothing to commit")
    const email = yield* runGit(memoryDir, ["config", "user.email"])
    const identity = email.code === 0 && email.stdout.trim() !== ""
      ? []
      : ["-c", "user.name=memdir", "-c", "user.email=memdir@localhost"]
    // What is staged is the memory directory's own: the repository is the memory directory.
    const committed = yield* runGit(memoryDir, [...identity, "commit", "-q", "--no-verify", "-m", message])
    if (committed.code !== 0) return failed(`git commit: ${(committed.stderr || committed.stdout).trim()}`)
    const head = yield* runGit(memoryDir, ["rev-parse", "HEAD"])
    const done: DreamCommit = { status: "committed", sha: head.stdout.trim(), message }
    return done
  })
  // git missing or not runnable: the dream itself is done; the report says that the commit failed, and why.
  return yield* outcome.pipe(Effect.catchAll((error) => Effect.succeed(failed(error.message))))
})

// ---------------------------------------------------------------------------------------------------------------
// The program
// ---------------------------------------------------------------------------------------------------------------

export interface DreamInput extends DreamGateInput {
  /** Root of the read-only project tools (verify drifted memories against the code); none: no project tools. */
  readonly projectRoot?: string | undefined
  /** Evaluate the gates and show what would be sent; write nothing and call no model. */
  readonly dryRun?: boolean | undefined
  /** Dream prompt variant (`dreamPromptVariants`). */
  readonly variant?: string | undefined
  readonly maxTurns?: number | undefined
  readonly maxTokens?: number | undefined
  /** Commit to git where the memory directory is a repository (default true). */
  readonly commit?: boolean | undefined
}

/** What a dry run shows: exactly what the first model call would carry. */
export interface DreamPreview {
  readonly role: "dreamer"
  readonly model: string
  readonly maxTokens: number
  readonly maxTurns: number
  readonly system: string
  readonly firstMessage: string
  readonly tools: ReadonlyArray<{ readonly name: string; readonly description: string }>
}

export interface DreamReport {
  readonly memoryDir: string
  readonly startedAt: string
  readonly finishedAt: string
  readonly status: "completed" | "failed"
  readonly model: string
  readonly turns: number
  readonly stop: string
  readonly usage: { readonly inputTokens: number; readonly outputTokens: number; readonly cacheReadInputTokens: number }
  readonly created: ReadonlyArray<CreatedFile>
  readonly updated: ReadonlyArray<UpdatedFile>
  readonly merged: ReadonlyArray<MergedFile>
  readonly deleted: ReadonlyArray<DeletedFile>
  /** MEMORY.md as the dream's tools changed it. */
  readonly indexChange: DreamDiff["index"]
  /** What memdir did afterwards to put MEMORY.md back under its caps. */
  readonly index: IndexRepair | undefined
  readonly refusals: ReadonlyArray<MemoryTools.ToolRefusal>
  /** `.dream/<timestamp>` relative to the memory directory: previous versions and report.json. */
  readonly backupDir: string
  readonly commit: DreamCommit | undefined
  /** The model's closing summary. */
  readonly summary: string
  readonly error?: string | undefined
}

export type DreamOutcome =
  | { readonly _tag: "Stopped"; readonly gates: DreamGates }
  | { readonly _tag: "DryRun"; readonly gates: DreamGates; readonly preview: DreamPreview }
  | { readonly _tag: "Completed"; readonly gates: DreamGates; readonly report: DreamReport }

/** Everything the first model call needs (also what a dry run shows). */
const prepare = (input: DreamInput, gates: DreamGates) =>
  Effect.gen(function*() {
    const index = yield* MemoryIndex
    const scanner = yield* Scanner
    const model = yield* Model
    const system = yield* renderDreamSystemPrompt({
      memoryDir: input.memoryDir,
      now: gates.now,
      variant: input.variant
    })
    const loaded = yield* index.load(input.memoryDir)
    const scan = yield* scanner.scan(input.memoryDir, { skipDirs: [...UNTOUCHED_DIRS] })
    const logs = yield* readRecentLogs({ memoryDir: input.memoryDir })
    const firstMessage = orientMessage({
      memoryDir: input.memoryDir,
      indexContent: loaded.content,
      manifest: scan.memories.map(manifestLine),
      problems: scan.problems.map((p) => `- ${p.path}: ${p.message}`),
      logs,
      sessions: gates.sessions,
      lastConsolidatedAt: gates.lastConsolidatedAt
    })
    const toolset = yield* MemoryTools.make({
      memoryDir: input.memoryDir,
      projectRoot: input.projectRoot,
      allowDelete: true
    })
    const tools = [
      ...toolset.tools,
      ...(gates.sessions.length === 0 ? [] : [yield* transcriptSearchTool(gates.sessions)])
    ]
    const preview: DreamPreview = {
      role: "dreamer",
      model: model.modelFor("dreamer"),
      maxTokens: input.maxTokens ?? DREAM_MAX_TOKENS,
      maxTurns: input.maxTurns ?? DREAM_MAX_TURNS,
      system,
      firstMessage,
      tools: tools.map((tool) => ({ name: tool.definition.name, description: tool.definition.description ?? "" }))
    }
    return { preview, toolset, tools }
  })

const outcome = (value: DreamOutcome): DreamOutcome => value

/** `2026-03-05T12-00-00Z`: a timestamp usable as a directory name everywhere. */
const stampOf = (now: number): string => new Date(now).toISOString().replace(/\.\d+Z$/, "Z").replace(/:/g, "-")

/** Copy the previous version of every updated or deleted file and of MEMORY.md under `.dream/<stamp>/`. */
const keepTrace = (memoryDir: string, before: Snapshot, diff: DreamDiff, startedAt: number) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    let stamp = stampOf(startedAt)
    for (
      let n = 2;
      yield* fs.exists(path.join(memoryDir, DREAM_BACKUP_DIR, stamp)).pipe(Effect.orElseSucceed(() => false));
      n++
    ) {
      stamp = `${stampOf(startedAt)}-${n}`
    }
    const backupDir = `${DREAM_BACKUP_DIR}/${stamp}`
    yield* ensureDir(path.join(memoryDir, backupDir))
    // MEMORY.md always: memdir's own repair of the index (after this) changes it too.
    const previous = [...diff.updated.map((u) => u.file), ...diff.deleted.map((d) => d.file), INDEX_FILE]
    const backups = new Map<string, string>()
    for (const file of previous) {
      const content = before.get(file)?.content
      if (content === undefined) continue
      const target = path.join(memoryDir, backupDir, ...file.split("/"))
      yield* ensureDir(path.dirname(target))
      yield* writeFileAtomic(target, content)
      backups.set(file, `${backupDir}/${file}`)
    }
    return { backupDir, backups }
  })

const sumUsage = (result: Agent.AgentResult | undefined) => ({
  inputTokens: result?.usage.inputTokens ?? 0,
  outputTokens: result?.usage.outputTokens ?? 0,
  cacheReadInputTokens: result?.usage.cacheReadInputTokens ?? 0
})

/**
 * Run the dream program: gates → (dry run: preview) → lock → snapshot → agent → diff, backups, report → index
 * caps → git commit → release. Fails with `ModelError` (not-configured without a key, or the model's failure),
 * or the I/O failure of a tool or of memdir itself; the lock is then rolled back.
 */
export const runDream = Effect.fn("Dream.run")(function*(input: DreamInput) {
  const path = yield* Path.Path
  const model = yield* Model
  const dryRun = input.dryRun === true
  const gates = yield* evaluateGates({ ...input, writeCache: !dryRun && input.writeCache !== false })
  if (!gates.open) return outcome({ _tag: "Stopped", gates })
  if (dryRun) {
    const { preview } = yield* prepare(input, gates)
    return outcome({ _tag: "DryRun", gates, preview })
  }
  if (!model.available) {
    return yield* new ModelError({
      kind: "not-configured",
      role: "dreamer",
      model: model.modelFor("dreamer"),
      detail: "The gates are open; `memdir dream --dry-run` shows what would be sent."
    })
  }

  const dream = Effect.gen(function*() {
    const startedAt = yield* Clock.currentTimeMillis
    const memoryDir = path.resolve(input.memoryDir)
    const { preview, tools, toolset } = yield* prepare({ ...input, memoryDir }, gates)
    const before = yield* snapshotMemoryDir(memoryDir)
    const exit = yield* Effect.exit(Agent.run({
      role: "dreamer",
      system: [{ text: preview.system, cache: true }],
      messages: [{ role: "user", content: preview.firstMessage }],
      tools,
      maxTurns: preview.maxTurns,
      maxTokens: preview.maxTokens
    }))
    const after = yield* snapshotMemoryDir(memoryDir)
    const changes = yield* toolset.changes
    const diff = diffSnapshots(before, after, new Set(changes.map((c) => c.file)))
    const trace = yield* keepTrace(memoryDir, before, diff, startedAt)
    const ioFailures = yield* toolset.ioFailures
    const result = Exit.isSuccess(exit) ? exit.value : undefined
    const failure = Exit.isFailure(exit)
      ? Option.match(Cause.failureOption(exit.cause), {
        onNone: () => Cause.pretty(exit.cause),
        onSome: (e) => e.message
      })
      : ioFailures[0]?.error.message
    const ok = Exit.isSuccess(exit) && ioFailures.length === 0
    const index = ok ? yield* enforceIndexCaps(memoryDir) : undefined
    const base = {
      memoryDir,
      startedAt: new Date(startedAt).toISOString(),
      status: ok ? "completed" : "failed",
      model: result?.model ?? preview.model,
      turns: result?.turns ?? 0,
      stop: result?.stop ?? "error",
      usage: sumUsage(result),
      created: diff.created,
      updated: diff.updated,
      merged: diff.merged,
      deleted: diff.deleted.map((d) => ({ ...d, backup: trace.backups.get(d.file) })),
      indexChange: diff.index,
      index,
      refusals: yield* toolset.refusals,
      backupDir: trace.backupDir,
      summary: result?.finalText ?? "",
      ...(failure === undefined ? {} : { error: failure })
    } as const
    const commit = ok && input.commit !== false ?
      yield* commitDream(memoryDir, commitMessage(diff, result?.finalText ?? "")) :
      undefined
    const report: DreamReport = { ...base, finishedAt: new Date(yield* Clock.currentTimeMillis).toISOString(), commit }
    yield* writeFileAtomic(path.join(memoryDir, trace.backupDir, "report.json"), JSON.stringify(report, null, 2) + "\n")
    if (Exit.isFailure(exit)) return yield* Effect.failCause(exit.cause)
    if (ioFailures.length > 0) return yield* Effect.fail(ioFailures[0]!.error)
    return report
  })

  const ran = yield* withDreamLock(input.memoryDir, () => dream)
  if (Option.isNone(ran)) {
    // Another dream took the lock between the gate and now.
    const lockState = yield* (yield* DreamLock).inspect(input.memoryDir)
    const raced: DreamGates = {
      ...gates,
      open: false,
      stoppedBy: "lock",
      lock: lockState,
      checks: gates.checks.map((c) =>
        c.gate === "lock" ? { ...c, status: "failed", detail: `taken by pid ${lockState.holder} meanwhile` } : c
      )
    }
    return outcome({ _tag: "Stopped", gates: raced })
  }
  return outcome({ _tag: "Completed", gates, report: ran.value })
})

export type DreamError = ModelError | MemoryIoError | LockTimeoutError | UnknownPromptVariantError

/** Files of memdir's own in the memory directory that are not memories (for callers listing the directory). */
export const DREAM_STATE_FILES: ReadonlyArray<string> = [
  DREAM_LOCK_FILE,
  DREAM_LOCK_GUARD,
  DREAM_SCAN_FILE,
  DREAM_BACKUP_DIR
]

export type DreamRequirements =
  | DreamLock
  | Model
  | MemoryIndex
  | Scanner
  | FileSystem.FileSystem
  | Path.Path
  | CommandExecutor.CommandExecutor
