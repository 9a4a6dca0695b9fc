/**
 * A cross-process mutex on the local file system, for read-modify-write of shared files (MEMORY.md).
 *
 * Layout: the lock is the directory `<lockPath>/` holding exactly one owner file `owner.<token>.json`
 * (pid, hostname, acquiredAt). Why a directory and not a file created with `wx`: taking over a stale lock
 * must never remove a lock that another process acquired a moment later. A plain file cannot be removed
 * "only if it is still the stale one" (rename-then-check leaves a window in which two holders coexist).
 * With a directory it can: the breaker unlinks the stale owner file by its unique name (a no-op once a
 * newer holder is in place), and acquiring is an atomic `rename(staging, lockPath)`, which POSIX allows only
 * while `lockPath` is absent or empty.
 *
 * - acquire: write the owner file into a private staging dir, then rename the staging dir onto `lockPath`;
 * - busy: read the owner; if its pid is dead (same host, signal 0 → ESRCH) or it is older than `staleAfter`,
 *   move that owner file out (rename: exactly one breaker succeeds) and retry at once; otherwise wait
 *   (jittered exponential backoff, at most 50 ms apart) up to `timeout`;
 * - release: rename our lock dir away and remove it (or, if we held it so long that someone may have taken
 *   it over, only unlink our own owner file: an empty lock dir is a free lock).
 *
 * The dream lock (`.consolidate-lock`, docs/dream-and-logs.md) is a different protocol: its mtime is scheduling state.
 */
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import { hostname } from "node:os"
import * as NodePath from "node:path"
import { ioErrorOf, isMissingFile, LockTimeoutError, type MemoryIoError } from "../../Errors.js"
import { MemoryFs, type MemoryFsError } from "./core.js"
import { currentPid, isProcessAlive, sweepAbandoned, uniqueToken } from "./leftovers.js"

export { isProcessAlive } from "./leftovers.js"

export interface LockOptions {
  /** How long to wait for a live holder before failing with `LockTimeoutError` (default 10 s). */
  readonly timeout?: Duration.Input | undefined
  /** A lock held longer than this is taken over even if its pid lives (pid reuse, hung holder). Default 30 s. */
  readonly staleAfter?: Duration.Input | undefined
}

export const DEFAULT_LOCK_TIMEOUT: Duration.Duration = Duration.seconds(10)
/** Logged (debug, annotated with `lock` and `holder`) the first time an acquire finds the lock held. */
export const WAITING_FOR_LOCK = "memdir: waiting for a lock another writer holds"
export const DEFAULT_LOCK_STALE_AFTER: Duration.Duration = Duration.seconds(30)

/** What the owner file says about the holder. */
export interface LockOwner {
  readonly pid: number
  readonly hostname: string
  /** Epoch milliseconds, from the holder's `Clock`. */
  readonly acquiredAt: number
  readonly token: string
}

/** A held lock; pass it to `releaseLock`. */
export interface HeldLock {
  readonly lockPath: string
  readonly ownerFile: string
  readonly owner: LockOwner
}

const OWNER_FILE = /^owner\.(.+)\.json$/

/** The pid in the name of a staging / released / broken entry of the lock at `<dir>/<lockName>`. */
const lockLeftoverOwner = (lockName: string) => (name: string): number | undefined => {
  if (!name.startsWith(`${lockName}.`)) return undefined
  const match = /^(\d+)\.[0-9a-f]{12}\.(?:staging|released|broken)$/.exec(name.slice(lockName.length + 1))
  return match === null ? undefined : Number(match[1])
}
const ownerFileName = (token: string): string => `owner.${token}.json`
/**
 * Owner records are written without fsync: a crash loses the lock with them, and a lock left behind is broken as
 * stale anyway. Every memory write takes a lock, so this is on the path of every write.
 */
const OWNER_WRITE = { durable: false } as const
/** An owner record is one short line of JSON; a bigger "owner file" is not read. */
const OWNER_MAX_BYTES = 4096

/** Internal: the lock is held by someone else right now. */
class LockBusy extends Data.TaggedError("LockBusy")<{ readonly holder: string | undefined }> {}

/** rename(dir, lockPath) refused because lockPath is a non-empty directory (ENOTEMPTY, EEXIST): someone holds it. */
const isHeld = (error: MemoryFsError): boolean => error.reason === "AlreadyExists"

const parseOwner = (text: string): LockOwner | undefined => {
  try {
    const value = JSON.parse(text) as Partial<LockOwner>
    return typeof value.pid === "number" && typeof value.acquiredAt === "number"
      ? {
        pid: value.pid,
        hostname: String(value.hostname ?? ""),
        acquiredAt: value.acquiredAt,
        token: String(value.token ?? "")
      }
      : undefined
  } catch {
    return undefined
  }
}

/**
 * Acquire the lock at `lockPath` (its parent directory must exist). Fails with `LockTimeoutError` when a live
 * holder keeps it for longer than `options.timeout`.
 */
export const acquireLock = Effect.fn("acquireLock")(function*(lockPath: string, options?: LockOptions) {
  const fs = yield* MemoryFs
  const timeout = Duration.fromInputUnsafe(options?.timeout ?? DEFAULT_LOCK_TIMEOUT)
  const staleAfterMs = Duration.toMillis(options?.staleAfter ?? DEFAULT_LOCK_STALE_AFTER)
  const host = hostname()
  const startedAt = yield* Clock.currentTimeMillis
  const token = yield* uniqueToken
  const staging = `${lockPath}.${token}.staging`
  const ownerName = ownerFileName(token)
  const ioError = (op: string, at: string) => ioErrorOf(op, at)

  const isStale = (owner: LockOwner | undefined, modifiedAt: number, now: number): boolean => {
    if (owner !== undefined && owner.hostname === host && owner.pid !== currentPid() && !isProcessAlive(owner.pid)) {
      return true
    }
    return now - (owner?.acquiredAt ?? modifiedAt) > staleAfterMs
  }

  /** Look at the current holder; move its owner file out when it is stale. `broke`: retry at once. */
  const breakIfStale = Effect.gen(function*() {
    const entries = yield* fs.readDirectory(lockPath).pipe(
      Effect.catchIf(isMissingFile, () => Effect.succeed([])),
      Effect.mapError(ioError("read lock", lockPath))
    )
    if (entries.length === 0) return { broke: true, holder: undefined }
    const now = yield* Clock.currentTimeMillis
    let holder: string | undefined
    let broke = false
    for (const { name: entry } of entries) {
      const entryPath = NodePath.join(lockPath, entry)
      // Gone since the listing: the holder released; retry at once.
      const info = yield* fs.lstat(entryPath).pipe(Effect.option)
      if (Option.isNone(info)) {
        broke = true
        continue
      }
      const modifiedAt = info.value.mtimeMs
      // Only a regular file is read (opened without following a link or blocking: a FIFO planted as the owner file
      // never hangs the reader), with a bound: an owner record is a line of JSON. Anything else has no readable
      // owner: stale by mtime.
      const owner = OWNER_FILE.test(entry) && info.value.kind === "File"
        ? parseOwner(
          yield* fs.readFile(entryPath, { maxBytes: OWNER_MAX_BYTES }).pipe(
            Effect.map((file) => file.text),
            Effect.orElseSucceed(() => "")
          )
        )
        : undefined
      if (isStale(owner, modifiedAt, now)) {
        // Moving the owner file out by its unique name can only ever remove that (stale) generation; rename
        // (not rm, which ignores ENOENT) tells exactly one breaker that it was the one.
        const broken = `${lockPath}.${token}.broken`
        const removed = yield* fs.rename(entryPath, broken).pipe(
          Effect.andThen(fs.remove(broken)),
          Effect.as(true),
          Effect.catchIf(isMissingFile, () => Effect.succeed(false)),
          Effect.mapError(ioError("break stale lock", entryPath))
        )
        if (removed) {
          yield* Effect.logWarning(`memdir: broke stale lock ${lockPath}`).pipe(
            Effect.annotateLogs({ holder: owner?.pid, hostname: owner?.hostname, acquiredAt: owner?.acquiredAt })
          )
        }
        broke = true
      } else {
        holder = owner === undefined ? holder : `${owner.pid}@${owner.hostname}`
      }
    }
    return { broke: broke && holder === undefined, holder }
  })

  const tryRename = fs.rename(staging, lockPath).pipe(
    Effect.as(true),
    Effect.catchIf(isHeld, () => Effect.succeed(false)),
    Effect.mapError(ioError("acquire lock", lockPath))
  )

  // One attempt: take a free lock, or break a stale one and take it; a few immediate rounds, then back off.
  let toldWaiting = false
  const attempt: Effect.Effect<void, LockBusy | MemoryIoError> = Effect.gen(function*() {
    let holder: string | undefined
    for (let round = 0; round < 3; round++) {
      if (yield* tryRename) return
      const inspected = yield* breakIfStale
      holder = inspected.holder
      if (!inspected.broke) break
    }
    if (!toldWaiting) {
      // once per acquire: what a debug log shows of a slow write, and the latch tests wait on
      toldWaiting = true
      yield* Effect.logDebug(WAITING_FOR_LOCK).pipe(Effect.annotateLogs({ lock: lockPath, holder }))
    }
    return yield* new LockBusy({ holder })
  })

  const backoff = Schedule.min([
    Schedule.exponential(Duration.millis(2), 1.5),
    Schedule.spaced(Duration.millis(50))
  ]).pipe(Schedule.jittered, Schedule.upTo({ duration: timeout }))

  const prepareStaging = Effect.gen(function*() {
    yield* fs.makeDirectory(staging)
    const owner: LockOwner = { pid: currentPid(), hostname: host, acquiredAt: startedAt, token }
    yield* fs.writeFileAtomic(NodePath.join(staging, ownerName), JSON.stringify(owner) + "\n", {
      ...OWNER_WRITE,
      exclusive: true
    })
    return owner
  }).pipe(Effect.mapError(ioError("prepare lock", staging)))

  const owner = yield* prepareStaging
  yield* Effect.retry(attempt, { schedule: backoff, while: (error) => error._tag === "LockBusy" }).pipe(
    Effect.catchTag("LockBusy", (busy) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.fail(
          new LockTimeoutError({
            path: lockPath,
            waitedMs: now - startedAt,
            ...(busy.holder === undefined ? {} : { holder: busy.holder })
          })
        ))),
    // Not acquired (timeout, error, interruption): the staging dir is ours alone, remove it.
    Effect.onError(() => Effect.ignore(fs.remove(staging, { recursive: true })))
  )
  // The owner's clock starts when the lock is really ours, so `staleAfter` measures the hold time.
  const acquiredAt = yield* Clock.currentTimeMillis
  const ownerFile = NodePath.join(lockPath, ownerName)
  if (acquiredAt - startedAt > 1000) {
    // We waited: the owner file still says when we started waiting. Only we write it while we hold the lock.
    // Best effort: failing here must not leak the held lock; an older date only means an earlier takeover.
    yield* Effect.ignore(fs.writeFileAtomic(ownerFile, JSON.stringify({ ...owner, acquiredAt }) + "\n", OWNER_WRITE))
  }
  // While we hold the lock, clear what killed waiters and holders left beside it (their staging dirs).
  yield* sweepAbandoned(NodePath.dirname(lockPath), lockLeftoverOwner(NodePath.basename(lockPath)), staleAfterMs)
  const held: HeldLock = { lockPath, ownerFile, owner: { ...owner, acquiredAt } }
  return held
})

/**
 * Release a lock acquired by `acquireLock`. Never fails: a lock that cannot be released is logged and will be
 * taken over once stale.
 */
export const releaseLock = Effect.fn("releaseLock")(function*(held: HeldLock, options?: LockOptions) {
  const fs = yield* MemoryFs
  const now = yield* Clock.currentTimeMillis
  const staleAfterMs = Duration.toMillis(options?.staleAfter ?? DEFAULT_LOCK_STALE_AFTER)
  const release = now - held.owner.acquiredAt < staleAfterMs / 2
    // Held for well under the stale limit: nobody can have taken it over, so lockPath is still ours.
    ? Effect.gen(function*() {
      const released = `${held.lockPath}.${held.owner.token}.released`
      yield* fs.rename(held.lockPath, released)
      yield* fs.remove(released, { recursive: true })
    })
    // Possibly taken over: only remove our own owner file (a no-op if someone broke it); an empty dir is free.
    : fs.remove(held.ownerFile).pipe(Effect.catchIf(isMissingFile, () => Effect.void))
  yield* release.pipe(
    Effect.catch((error) => Effect.logWarning(`memdir: could not release lock ${held.lockPath}: ${error.message}`))
  )
})

/** The lock as a scoped resource: held until the scope closes, released on success, failure or interruption. */
export const lockScoped = (
  lockPath: string,
  options?: LockOptions
): Effect.Effect<HeldLock, LockTimeoutError | MemoryIoError, MemoryFs | Scope.Scope> =>
  Effect.acquireRelease(acquireLock(lockPath, options), (held) => releaseLock(held, options))

/** Run `effect` while holding the lock at `lockPath`; the lock is always released. */
export const withLock = <A, E, R>(
  lockPath: string,
  effect: Effect.Effect<A, E, R>,
  options?: LockOptions
): Effect.Effect<A, E | LockTimeoutError | MemoryIoError, R | MemoryFs> =>
  Effect.acquireUseRelease(acquireLock(lockPath, options), () => effect, (held) => releaseLock(held, options))
