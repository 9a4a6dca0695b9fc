/**
 * DreamLock (the design card's `Lock`): `<memdir>/.consolidate-lock`, one file with two jobs.
 *
 * - Its **content is the holder's PID** (mutual exclusion): empty content, a dead PID (signal 0 → ESRCH) or a
 *   file older than one hour (PID reuse, a hung holder) means the lock is free to take.
 * - Its **mtime is lastConsolidatedAt** (scheduling state): no file means "never consolidated". While a dream
 *   runs, the mtime is when it started; release empties the content and sets the mtime to now.
 *
 * Acquire writes our PID (atomically: temp file + rename, so a reader sees one whole PID), sets the mtime, then
 * re-reads the file and backs off if another PID is there. The reference stops at write-then-reread, which lets
 * two processes that both saw a free lock both "win" when their writes and re-reads interleave; memdir runs
 * inspect-write-reread inside a short cross-process mutex (`internal/fs/lock.ts`), so two memdir processes can
 * never both take it, and the re-read still protects against writers that do not take that mutex (the
 * reference agent writing the same file in `~/.claude`).
 *
 * Rollback (a dream that failed or was interrupted) restores the previous mtime and empties the content, or
 * removes a lock that did not exist before: a failed dream does not count as a consolidation. A holder that was
 * killed leaves its PID and its start time behind: the next dream takes the lock over, and the crashed attempt
 * counts as the last consolidation (so a dream that keeps crashing is retried once a day, not in a loop).
 *
 * The lock file is read without blocking and without following a link (`O_NONBLOCK | O_NOFOLLOW`), only when it
 * is a regular file, and only its first bytes (a PID is short): a FIFO, a device or a link planted as
 * `.consolidate-lock` fails at once with a `MemoryIoError` that says to remove it, instead of hanging the dream.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Semaphore from "effect/Semaphore"
import * as NodePath from "node:path"
import { ioErrorOf, isMissingFile, type LockTimeoutError, MemoryIoError } from "./Errors.js"
import { currentPid, isProcessAlive } from "./internal/fs/leftovers.js"
import { withLock } from "./internal/fs/lock.js"
import { layer as MemoryFsLayer, MemoryFs } from "./MemoryFs.js"

export const DREAM_LOCK_FILE = ".consolidate-lock"
/** The short cross-process mutex around inspect-write-reread (a directory, gone when released). */
export const DREAM_LOCK_GUARD = ".consolidate-lock.guard"
/** A lock held longer than this is taken over even when its PID is alive (the PID may have been reused). */
export const DREAM_LOCK_STALE_AFTER: Duration.Duration = Duration.hours(1)

/**
 * - `free`: no file, or an empty (released) one;
 * - `held`: a live PID, younger than the stale limit;
 * - `dead-holder`: the PID no longer runs (crash, SIGKILL) — free to take over;
 * - `stale`: older than the stale limit although the PID is alive — free to take over.
 */
export type DreamLockStatus = "free" | "held" | "dead-holder" | "stale"

export interface DreamLockState {
  readonly path: string
  readonly exists: boolean
  /** The lock's mtime, epoch ms; `undefined` when there is no lock file (never consolidated). */
  readonly lastConsolidatedAt: number | undefined
  /** The PID the file names, if any. */
  readonly holder: number | undefined
  readonly status: DreamLockStatus
}

/** A lock this process holds; give it back with `release` (success) or `rollback` (failure). */
export interface HeldDreamLock {
  readonly path: string
  readonly pid: number
  /** When we took it (the file's mtime while we hold it). */
  readonly acquiredAt: number
  /** The mtime before we took it, restored by `rollback`; `undefined`: there was no lock file. */
  readonly previousMtime: number | undefined
  /** What we took it from (`free`, `dead-holder` or `stale`). */
  readonly tookOver: DreamLockStatus
}

export class DreamLock extends Context.Service<DreamLock, {
  /** What the lock says now (never writes). */
  readonly inspect: (memoryDir: string) => Effect.Effect<DreamLockState, MemoryIoError>
  /** Take the lock; `None` when a live holder has it (or another process won the race). */
  readonly tryAcquire: (
    memoryDir: string
  ) => Effect.Effect<Option.Option<HeldDreamLock>, MemoryIoError | LockTimeoutError>
  /** Success: empty the content, mtime = now (the new lastConsolidatedAt). A no-op if someone took it over. */
  readonly release: (held: HeldDreamLock) => Effect.Effect<void, MemoryIoError>
  /** Failure: restore the previous mtime (or remove a lock that did not exist). A no-op if someone took it over. */
  readonly rollback: (held: HeldDreamLock) => Effect.Effect<void, MemoryIoError>
}>()("@memdir/core/DreamLock") {}

/** At most this much of the lock file is read: its content is a PID. */
const LOCK_READ_MAX_BYTES = 64

const notRegular = (file: string, kind: string) =>
  new MemoryIoError({
    op: "read",
    path: file,
    detail: `it is ${kind}, not a regular file: the dream lock is memdir's own file; remove it and run the dream again`
  })

/**
 * The lock's content (its first `LOCK_READ_MAX_BYTES`), `None` when there is no lock file. Read through `MemoryFs`:
 * opened without blocking and without following a link, and read only when it is a regular file.
 */
export const readLockContent = (
  memoryFs: MemoryFs["Service"],
  file: string
): Effect.Effect<Option.Option<string>, MemoryIoError> =>
  memoryFs.readHead(file, LOCK_READ_MAX_BYTES).pipe(
    Effect.map((head) => Option.some(head.text)),
    Effect.catchIf((error) => error.reason === "NotFound", () => Effect.succeedNone),
    Effect.mapError((error) =>
      error.reason === "SymbolicLink" || error.reason === "SymlinkLoop" || error.reason === "DanglingSymlink"
        ? notRegular(file, "a symbolic link")
        : error.reason === "NotRegularFile"
        ? notRegular(file, /^E[A-Z]+$/.test(error.detail) ? "a socket or a device" : error.detail)
        : new MemoryIoError({ op: error.op, path: file, detail: `${error.reason} (${error.detail})` })
    )
  )

/** The PID in the lock's content; `undefined` for an empty or unreadable content (a free lock). */
export const parseHolderPid = (content: string): number | undefined => {
  const match = /^\s*(\d+)\s*$/.exec(content)
  if (match === null) return undefined
  const pid = Number(match[1])
  return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined
}

/** Pure: the status of a lock file with this content and mtime, at `now`. */
export const lockStatus = (options: {
  readonly holder: number | undefined
  readonly mtime: number
  readonly now: number
  readonly staleAfterMs: number
  readonly isAlive: (pid: number) => boolean
}): DreamLockStatus => {
  if (options.holder === undefined) return "free"
  if (options.now - options.mtime > options.staleAfterMs) return "stale"
  return options.isAlive(options.holder) ? "held" : "dead-holder"
}

/**
 * Run `use` while holding the dream lock of `memoryDir`: `None` when it is held; released on success, rolled back
 * on failure or interruption.
 */
export const withDreamLock = <A, E, R>(
  memoryDir: string,
  use: (held: HeldDreamLock) => Effect.Effect<A, E, R>
): Effect.Effect<Option.Option<A>, E | MemoryIoError | LockTimeoutError, R | DreamLock> =>
  Effect.gen(function*() {
    const lock = yield* DreamLock
    return yield* Effect.acquireUseRelease(
      lock.tryAcquire(memoryDir),
      (held) => Option.isNone(held) ? Effect.succeedNone : Effect.asSome(use(held.value)),
      (held, exit) =>
        Option.isNone(held)
          ? Effect.void
          : (Exit.isSuccess(exit) ? lock.release(held.value) : lock.rollback(held.value)).pipe(
            // Giving the lock back must not hide the outcome of the dream; a lock left behind goes stale in 1 h.
            Effect.catch((error) => Effect.logWarning(`memdir: could not give back the dream lock: ${error.message}`))
          )
    )
  })

export interface DreamLockOptions {
  readonly staleAfter?: Duration.Input | undefined
  /** The PID written into the lock (default: this process). */
  readonly pid?: number | undefined
  /** How long to wait for the short inspect-write-reread mutex (default 10 s). */
  readonly guardTimeout?: Duration.Input | undefined
}

/** The lock over a given `MemoryFs`: the lock file, its mtime and the short mutex all go through it. */
export const makeOver = (options: DreamLockOptions = {}) =>
  Effect.gen(function*() {
    const memoryFs = yield* MemoryFs
    const staleAfterMs = Duration.toMillis(options.staleAfter ?? DREAM_LOCK_STALE_AFTER)
    const ownPid = options.pid ?? currentPid()
    const lockPath = (memoryDir: string) => NodePath.join(memoryDir, DREAM_LOCK_FILE)

    const readContent = (file: string) => readLockContent(memoryFs, file)

    /** The scheduling state: the lock file's own mtime (a link there is never followed). */
    const setMtime = (file: string, at: number) =>
      memoryFs.setModified(file, at).pipe(Effect.mapError(ioErrorOf("set mtime of", file)))

    /** Atomically (temp file + rename): a reader sees one whole PID, or none. */
    const writeContent = (file: string, content: string) =>
      memoryFs.writeFileAtomic(file, content).pipe(Effect.mapError(ioErrorOf("write", file)))

    const inspect = Effect.fn("DreamLock.inspect")(function*(memoryDir: string) {
      const file = lockPath(memoryDir)
      const info = yield* memoryFs.lstat(file).pipe(
        Effect.map(Option.some),
        Effect.catchIf(isMissingFile, () => Effect.succeedNone),
        Effect.mapError(ioErrorOf("stat", file))
      )
      if (Option.isNone(info)) {
        const absent: DreamLockState = {
          path: file,
          exists: false,
          lastConsolidatedAt: undefined,
          holder: undefined,
          status: "free"
        }
        return absent
      }
      const now = yield* Clock.currentTimeMillis
      const mtime = info.value.mtimeMs
      const holder = Option.flatMap(yield* readContent(file), (text) => Option.fromNullishOr(parseHolderPid(text)))
      const state: DreamLockState = {
        path: file,
        exists: true,
        lastConsolidatedAt: mtime,
        holder: Option.getOrUndefined(holder),
        status: lockStatus({ holder: Option.getOrUndefined(holder), mtime, now, staleAfterMs, isAlive: isProcessAlive })
      }
      return state
    })

    /** Still ours: the file names our PID (nobody took it over after we went stale). */
    const stillOurs = (held: HeldDreamLock) =>
      Effect.map(
        readContent(held.path),
        (content) => Option.isSome(content) && parseHolderPid(content.value) === held.pid
      )

    const tryAcquire = Effect.fn("DreamLock.tryAcquire")(function*(memoryDir: string) {
      const file = lockPath(memoryDir)
      const attempt = Effect.gen(function*() {
        const before = yield* inspect(memoryDir)
        if (before.status === "held") return Option.none<HeldDreamLock>()
        const now = yield* Clock.currentTimeMillis
        yield* writeContent(file, String(ownPid))
        yield* setMtime(file, now)
        // Re-read: a writer outside our mutex (the reference agent) may have written its PID meanwhile.
        const after = yield* readContent(file)
        if (Option.isNone(after) || parseHolderPid(after.value) !== ownPid) return Option.none<HeldDreamLock>()
        if (before.status !== "free") {
          yield* Effect.logWarning(`memdir: took over the dream lock ${file}`).pipe(
            Effect.annotateLogs({ previousHolder: before.holder, status: before.status })
          )
        }
        return Option.some<HeldDreamLock>({
          path: file,
          pid: ownPid,
          acquiredAt: now,
          previousMtime: before.lastConsolidatedAt,
          tookOver: before.status
        })
      })
      yield* memoryFs.makeDirectory(memoryDir).pipe(Effect.mapError(ioErrorOf("create directory", memoryDir)))
      return yield* withLock(NodePath.join(memoryDir, DREAM_LOCK_GUARD), attempt, {
        timeout: options.guardTimeout ?? Duration.seconds(10),
        staleAfter: Duration.seconds(30)
      }).pipe(Effect.provideService(MemoryFs, memoryFs))
    })

    const release = Effect.fn("DreamLock.release")(function*(held: HeldDreamLock) {
      if (!(yield* stillOurs(held))) {
        return yield* Effect.logWarning(`memdir: the dream lock ${held.path} was taken over; leaving it alone`)
      }
      const now = yield* Clock.currentTimeMillis
      yield* writeContent(held.path, "")
      yield* setMtime(held.path, now)
    })

    const rollback = Effect.fn("DreamLock.rollback")(function*(held: HeldDreamLock) {
      if (!(yield* stillOurs(held))) {
        return yield* Effect.logWarning(`memdir: the dream lock ${held.path} was taken over; leaving it alone`)
      }
      if (held.previousMtime === undefined) {
        yield* memoryFs.remove(held.path).pipe(
          Effect.catchIf(isMissingFile, () => Effect.void),
          Effect.mapError(ioErrorOf("remove", held.path))
        )
        return
      }
      yield* writeContent(held.path, "")
      yield* setMtime(held.path, held.previousMtime)
    })

    return DreamLock.of({ inspect, tryAcquire, release, rollback })
  })

/** The lock on the real file system: the live `MemoryFs` built in (needs nothing). */
export const makeWith = (options: DreamLockOptions = {}) => makeOver(options).pipe(Effect.provide(MemoryFsLayer))

/** The lock over the `MemoryFs` in context. */
export const make = makeOver()

/** The lock over the `MemoryFs` in context (the live one in `Memdir.layer`, an in-memory one in tests). */
export const layer: Layer.Layer<DreamLock, never, MemoryFs> = Layer.effect(DreamLock, make)

export const layerWith = (options: DreamLockOptions): Layer.Layer<DreamLock, never, MemoryFs> =>
  Layer.effect(DreamLock, makeOver(options))

// ---------------------------------------------------------------------------------------------------------------
// In memory (deterministic: no file system, no processes; "now" from Clock)
// ---------------------------------------------------------------------------------------------------------------

/** One lock of the in-memory implementation: its content's PID (undefined = empty) and its mtime. */
export interface TestLockFile {
  readonly holder: number | undefined
  readonly mtime: number
}

/**
 * An in-memory lock per memory directory. `initial` seeds lock files; `alive` decides which PIDs run (default:
 * only `pid`). Same rules as the live lock, minus the file system.
 */
export const makeTest = (options: {
  readonly initial?: Readonly<Record<string, TestLockFile>> | undefined
  readonly pid?: number | undefined
  readonly alive?: ((pid: number) => boolean) | undefined
  readonly staleAfter?: Duration.Input | undefined
} = {}) =>
  Effect.gen(function*() {
    const ownPid = options.pid ?? 4242
    const isAlive = options.alive ?? ((pid: number) => pid === ownPid)
    const staleAfterMs = Duration.toMillis(options.staleAfter ?? DREAM_LOCK_STALE_AFTER)
    const key = (memoryDir: string) => `${memoryDir.replace(/[\\/]+$/, "")}/${DREAM_LOCK_FILE}`
    const files = yield* Ref.make(
      new Map(Object.entries(options.initial ?? {}).map(([dir, file]) => [key(dir), file]))
    )
    const mutex = yield* Semaphore.make(1)

    const stateOf = (file: string, lock: TestLockFile | undefined, now: number): DreamLockState =>
      lock === undefined
        ? { path: file, exists: false, lastConsolidatedAt: undefined, holder: undefined, status: "free" }
        : {
          path: file,
          exists: true,
          lastConsolidatedAt: lock.mtime,
          holder: lock.holder,
          status: lockStatus({ holder: lock.holder, mtime: lock.mtime, now, staleAfterMs, isAlive })
        }

    const inspect = (memoryDir: string) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        return stateOf(key(memoryDir), (yield* Ref.get(files)).get(key(memoryDir)), now)
      })

    const tryAcquire = (memoryDir: string) =>
      mutex.withPermits(1)(Effect.gen(function*() {
        const before = yield* inspect(memoryDir)
        if (before.status === "held") return Option.none<HeldDreamLock>()
        const now = yield* Clock.currentTimeMillis
        yield* Ref.update(files, (map) => new Map(map).set(before.path, { holder: ownPid, mtime: now }))
        return Option.some<HeldDreamLock>({
          path: before.path,
          pid: ownPid,
          acquiredAt: now,
          previousMtime: before.lastConsolidatedAt,
          tookOver: before.status
        })
      }))

    const giveBack = (held: HeldDreamLock, next: (now: number) => TestLockFile | undefined) =>
      mutex.withPermits(1)(Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        yield* Ref.update(files, (map) => {
          if (map.get(held.path)?.holder !== held.pid) return map
          const copy = new Map(map)
          const file = next(now)
          if (file === undefined) copy.delete(held.path)
          else copy.set(held.path, file)
          return copy
        })
      }))

    return DreamLock.of({
      inspect,
      tryAcquire,
      release: (held) => giveBack(held, (now) => ({ holder: undefined, mtime: now })),
      rollback: (held) =>
        giveBack(
          held,
          () => held.previousMtime === undefined ? undefined : { holder: undefined, mtime: held.previousMtime }
        )
    })
  })

export const layerTest = (options: Parameters<typeof makeTest>[0] = {}) => Layer.effect(DreamLock, makeTest(options))
