/**
 * The dream's gates, cheapest first, each evaluated only when the previous one passed:
 * 1. time — at least 24 h since lastConsolidatedAt (the mtime of `.consolidate-lock`; no lock: never);
 * 2. sessions — more than 5 sessions touched since then, not counting the current one: transcripts
 *    (`<transcriptsDir>/*.jsonl`, the reference layout `<base>/projects/<slug>/<session>.jsonl`) whose mtime is
 *    later than lastConsolidatedAt. The scan is cached in `<memdir>/.dream-scan.json` for 10 minutes;
 * 3. lock — `.consolidate-lock` is free (`DreamLock`).
 * `force` bypasses the time and session gates (they are still reported), never the lock.
 */
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Path from "effect/Path"
import * as Schema from "effect/Schema"
import { DreamLock, type DreamLockState } from "../DreamLock.js"
import { ioErrorOf, isMissingFile } from "../Errors.js"
import { sanitizeProjectName } from "../internal/location/paths.js"
import { type DirectoryEntry, FILE_MODE, type FileInfo, MemoryFs, MemoryFsError } from "../MemoryFs.js"

/** Gate 1: hours since lastConsolidatedAt. */
export const DREAM_MIN_HOURS = 24
/** Gate 2: strictly more than this many sessions touched since lastConsolidatedAt. */
export const DREAM_MIN_SESSIONS = 5
/** The session scan is reused for this long. */
export const SESSION_SCAN_INTERVAL_MS = 10 * 60_000
export const DREAM_SCAN_FILE = ".dream-scan.json"
/**
 * The scan cache is a short line per session: a larger file (not memdir's, or corrupt) is not read (a typed
 * `TooLarge`, never a hang): the cache is ignored and the directory scanned again, as for any unreadable cache.
 */
export const DREAM_SCAN_FILE_MAX_BYTES = 4 * 1024 * 1024

/** `<base>/projects/<sanitized root>/`: where the reference agent keeps a project's session transcripts. */
export const defaultTranscriptsDir = (memoryBase: string, root: string): string =>
  `${memoryBase.replace(/[\\/]+$/, "")}/projects/${sanitizeProjectName(root)}`

/** `MEMDIR_TRANSCRIPTS_DIR` (where session transcripts are) and `MEMDIR_SESSION_ID` (the current session). */
export const dreamEnv = Config.all({
  transcriptsDir: Config.option(Config.String("MEMDIR_TRANSCRIPTS_DIR")).pipe(
    Config.map(Option.filter((dir) => dir.trim() !== ""))
  ),
  sessionId: Config.option(Config.String("MEMDIR_SESSION_ID")).pipe(
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
const decodeScanCache = Schema.decodeUnknownOption(Schema.fromJsonString(ScanCache))

export interface SessionScan {
  /** Touched since lastConsolidatedAt, current session excluded, newest first. */
  readonly sessions: ReadonlyArray<TouchedSession>
  readonly scannedAt: number
  readonly fromCache: boolean
}

/**
 * What a transcript is, from its `lstat`: a link to a transcript (a user who keeps sessions elsewhere) counts as
 * what it leads to, as it always did, so it is resolved and the file it names looked at; anything that cannot be
 * looked at (gone, a dangling link) is none.
 */
const transcriptInfo = (
  fs: MemoryFs["Service"],
  file: string,
  info: FileInfo | MemoryFsError
): Effect.Effect<Option.Option<FileInfo>> =>
  info instanceof MemoryFsError ?
    Effect.succeedNone :
    info.kind !== "SymbolicLink" ?
    Effect.succeedSome(info) :
    fs.realPath(file).pipe(Effect.flatMap(fs.lstat), Effect.option)

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
  const fs = yield* MemoryFs
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

  const cached = yield* fs.readFile(cacheFile, { maxBytes: DREAM_SCAN_FILE_MAX_BYTES }).pipe(
    Effect.map((file) => decodeScanCache(file.text)),
    Effect.orElseSucceed(() => Option.none<ScanCache>())
  )
  if (
    Option.isSome(cached) && cached.value.transcriptsDir === transcriptsDir && cached.value.since === since &&
    cached.value.scannedAt <= now && now - cached.value.scannedAt < interval
  ) {
    return finish(cached.value.sessions, cached.value.scannedAt, true)
  }

  const entries = yield* fs.readDirectory(transcriptsDir).pipe(
    Effect.catchIf(isMissingFile, () => Effect.succeed<ReadonlyArray<DirectoryEntry>>([])),
    Effect.mapError(ioErrorOf("list transcripts in", transcriptsDir))
  )
  const names = entries.map((entry) => entry.name).filter((name) => name.endsWith(".jsonl") && !name.startsWith("."))
  const files = names.map((name) => path.join(transcriptsDir, name))
  const infos = yield* fs.lstatMany(files)
  const sessions: Array<{ id: string; mtime: number }> = []
  for (let i = 0; i < names.length; i++) {
    const info = yield* transcriptInfo(fs, files[i]!, infos[i]!)
    if (Option.isNone(info) || info.value.kind !== "File") continue
    const mtime = info.value.mtimeMs
    if (since === null || mtime > since) sessions.push({ id: names[i]!.slice(0, -".jsonl".length), mtime })
  }
  if (input.writeCache !== false) {
    const cache: ScanCache = { version: 1, transcriptsDir, since, scannedAt: now, sessions }
    yield* fs.makeDirectory(input.memoryDir).pipe(Effect.mapError(ioErrorOf("create directory", input.memoryDir)))
    yield* fs.writeFileAtomic(cacheFile, JSON.stringify(cache) + "\n", { mode: FILE_MODE }).pipe(
      Effect.mapError(ioErrorOf("write", cacheFile))
    )
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
