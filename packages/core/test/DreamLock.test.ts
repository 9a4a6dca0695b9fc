import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Path from "effect/Path"
import type * as Scope from "effect/Scope"
import * as TestClock from "effect/testing/TestClock"
import * as FastCheck from "fast-check"
import { spawn, spawnSync } from "node:child_process"
import { constants } from "node:fs"
import * as fsp from "node:fs/promises"
import {
  DREAM_LOCK_FILE,
  DREAM_LOCK_GUARD,
  DreamLock,
  layer as dreamLockLayer,
  layerTest,
  lockStatus,
  makeWith,
  parseHolderPid,
  withDreamLock
} from "../src/DreamLock.js"
import * as MemoryFs from "../src/MemoryFs.js"

const NOW = Date.parse("2026-03-05T12:00:00.000Z")
const HOUR = 3_600_000

/** A scratch memory dir, the live lock, and the clock at NOW. */
const setupWith = (options: { readonly testClock: boolean }) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    if (options.testClock) yield* TestClock.setTime(NOW)
    const dir = yield* fs.makeTempDirectoryScoped({ prefix: "memdir-dreamlock-" })
    const lock = yield* DreamLock
    const file = path.join(dir, DREAM_LOCK_FILE)
    const mtimeOf = Effect.map(fs.stat(file), (info) => Option.getOrThrow(info.mtime).getTime())
    const writeLock = (content: string, mtime: number) =>
      Effect.andThen(fs.writeFileString(file, content), fs.utimes(file, new Date(mtime), new Date(mtime)))
    return { fs, dir, lock, file, mtimeOf, writeLock }
  })
const setup = setupWith({ testClock: true })

const live = <A, E, R extends DreamLock | FileSystem.FileSystem | Path.Path | Scope.Scope>(
  effect: Effect.Effect<A, E, R>
) => effect.pipe(Effect.provide(dreamLockLayer), Effect.provide(Layer.mergeAll(MemoryFs.layer, NodeServices.layer)))

/** The PID of a process that has already exited. */
const deadPid = (): number => {
  const child = spawnSync(process.execPath, ["-e", ""])
  return child.pid!
}

describe("lockStatus / parseHolderPid (pure)", () => {
  it("reads a PID with surrounding whitespace; anything else is an empty (free) lock", () => {
    assert.strictEqual(parseHolderPid("1234"), 1234)
    assert.strictEqual(parseHolderPid(" 1234\n"), 1234)
    assert.isUndefined(parseHolderPid(""))
    assert.isUndefined(parseHolderPid("0"))
    assert.isUndefined(parseHolderPid("12ab"))
    assert.isUndefined(parseHolderPid("12 34"))
  })

  it("stale beats alive; alive and fresh is held; no holder is free", () => {
    FastCheck.assert(
      FastCheck.property(
        FastCheck.option(FastCheck.integer({ min: 1, max: 1e6 }), { nil: undefined }),
        FastCheck.integer({
          min: 0,
          max: 3 * HOUR
        }),
        FastCheck.boolean(),
        (holder, age, alive) => {
          const status = lockStatus({
            holder,
            mtime: NOW - age,
            now: NOW,
            staleAfterMs: HOUR,
            isAlive: () => alive
          })
          const expected = holder === undefined ? "free" : age > HOUR ? "stale" : alive ? "held" : "dead-holder"
          assert.strictEqual(status, expected)
        }
      )
    )
  })
})

describe("DreamLock (live, real files)", () => {
  it.effect("no lock file: free and never consolidated; acquire writes our PID with mtime = now", () =>
    live(Effect.gen(function*() {
      const { fs, dir, file, lock, mtimeOf } = yield* setup
      const before = yield* lock.inspect(dir)
      assert.deepStrictEqual(
        { exists: before.exists, status: before.status, last: before.lastConsolidatedAt },
        { exists: false, status: "free", last: undefined }
      )
      const held = Option.getOrThrow(yield* lock.tryAcquire(dir))
      assert.strictEqual(held.pid, process.pid)
      assert.isUndefined(held.previousMtime)
      assert.strictEqual(held.tookOver, "free")
      assert.strictEqual(yield* fs.readFileString(file), String(process.pid))
      assert.strictEqual(yield* mtimeOf, NOW)
      assert.strictEqual((yield* lock.inspect(dir)).status, "held")
      // the guard directory is gone once acquiring is over
      assert.isFalse(yield* fs.exists(`${dir}/${DREAM_LOCK_GUARD}`))
      // a second acquire (same live PID) backs off
      assert.isTrue(Option.isNone(yield* lock.tryAcquire(dir)))
    })))

  it.effect("release keeps the file, empties the PID and dates it now (lastConsolidatedAt)", () =>
    live(Effect.gen(function*() {
      const { fs, dir, file, lock, mtimeOf } = yield* setup
      const held = Option.getOrThrow(yield* lock.tryAcquire(dir))
      yield* TestClock.adjust("7 minutes")
      yield* lock.release(held)
      assert.strictEqual(yield* fs.readFileString(file), "")
      assert.strictEqual(yield* mtimeOf, NOW + 7 * 60_000)
      const after = yield* lock.inspect(dir)
      assert.strictEqual(after.status, "free")
      assert.strictEqual(after.lastConsolidatedAt, NOW + 7 * 60_000)
      // and it can be taken again; rollback then restores the release time
      const again = Option.getOrThrow(yield* lock.tryAcquire(dir))
      assert.strictEqual(again.previousMtime, NOW + 7 * 60_000)
    })))

  it.effect("rollback removes a lock that did not exist before", () =>
    live(Effect.gen(function*() {
      const { fs, dir, file, lock } = yield* setup
      const held = Option.getOrThrow(yield* lock.tryAcquire(dir))
      yield* lock.rollback(held)
      assert.isFalse(yield* fs.exists(file))
    })))

  it.effect("rollback restores the previous mtime and frees the lock", () =>
    live(Effect.gen(function*() {
      const { dir, file, fs, lock, mtimeOf, writeLock } = yield* setup
      const previous = NOW - 30 * HOUR
      yield* writeLock("", previous)
      const held = Option.getOrThrow(yield* lock.tryAcquire(dir))
      assert.strictEqual(held.previousMtime, previous)
      assert.strictEqual(yield* mtimeOf, NOW)
      yield* lock.rollback(held)
      assert.strictEqual(yield* mtimeOf, previous)
      assert.strictEqual(yield* fs.readFileString(file), "")
    })))

  it.effect("a dead holder's lock is taken over", () =>
    live(Effect.gen(function*() {
      const { dir, lock, writeLock } = yield* setup
      const pid = deadPid()
      yield* writeLock(String(pid), NOW - 5 * 60_000)
      const state = yield* lock.inspect(dir)
      assert.strictEqual(state.status, "dead-holder")
      assert.strictEqual(state.holder, pid)
      const held = Option.getOrThrow(yield* lock.tryAcquire(dir))
      assert.strictEqual(held.tookOver, "dead-holder")
    })))

  it.effect("a live holder blocks for an hour, then its lock is stale and taken over", () =>
    live(Effect.gen(function*() {
      const { dir, lock, writeLock } = yield* setup
      const sleeper = spawn("sleep", ["30"], { stdio: "ignore" })
      yield* Effect.addFinalizer(() => Effect.sync(() => sleeper.kill("SIGKILL")))
      yield* writeLock(String(sleeper.pid), NOW - 59 * 60_000)
      assert.strictEqual((yield* lock.inspect(dir)).status, "held")
      assert.isTrue(Option.isNone(yield* lock.tryAcquire(dir)))
      yield* TestClock.adjust("2 minutes")
      assert.strictEqual((yield* lock.inspect(dir)).status, "stale")
      const held = Option.getOrThrow(yield* lock.tryAcquire(dir))
      assert.strictEqual(held.tookOver, "stale")
    })))

  it.effect("release and rollback leave alone a lock someone else took over meanwhile", () =>
    live(Effect.gen(function*() {
      const { dir, fs, file, lock, mtimeOf, writeLock } = yield* setup
      const held = Option.getOrThrow(yield* lock.tryAcquire(dir))
      const other = spawn("sleep", ["30"], { stdio: "ignore" })
      yield* Effect.addFinalizer(() => Effect.sync(() => other.kill("SIGKILL")))
      yield* writeLock(String(other.pid), NOW + HOUR)
      yield* lock.release(held)
      yield* lock.rollback(held)
      assert.strictEqual(yield* fs.readFileString(file), String(other.pid))
      assert.strictEqual(yield* mtimeOf, NOW + HOUR)
    })))

  // The real clock: contended acquirers back off with real sleeps.
  it.live("concurrent acquirers in one process: exactly one wins", () =>
    live(Effect.scoped(Effect.gen(function*() {
      const { dir, lock } = yield* setupWith({ testClock: false })
      const results = yield* Effect.all(Array.from({ length: 12 }, () => lock.tryAcquire(dir)), {
        concurrency: "unbounded"
      })
      assert.strictEqual(results.filter(Option.isSome).length, 1)
    }))))

  it.effect("two lock services with different PIDs in one directory: the second sees the first as held", () =>
    Effect.gen(function*() {
      const { dir } = yield* setup
      const sleeper = spawn("sleep", ["30"], { stdio: "ignore" })
      yield* Effect.addFinalizer(() => Effect.sync(() => sleeper.kill("SIGKILL")))
      const mine = yield* makeWith()
      const theirs = yield* makeWith({ pid: sleeper.pid! })
      const first = yield* theirs.tryAcquire(dir)
      assert.isTrue(Option.isSome(first))
      assert.isTrue(Option.isNone(yield* mine.tryAcquire(dir)))
      sleeper.kill("SIGKILL")
      yield* Effect.promise(() => new Promise((resolve) => sleeper.once("exit", resolve)))
      assert.isTrue(Option.isSome(yield* mine.tryAcquire(dir)))
    }).pipe(Effect.provide(dreamLockLayer), Effect.provide(Layer.mergeAll(MemoryFs.layer, NodeServices.layer))))
})

describe("withDreamLock", () => {
  it.effect("success releases (mtime = end time), failure and interruption roll back", () =>
    live(Effect.gen(function*() {
      const { dir, fs, file, mtimeOf, writeLock } = yield* setup
      const previous = NOW - 48 * HOUR
      yield* writeLock("", previous)

      const failed = yield* Effect.flip(withDreamLock(dir, () => Effect.fail("model down" as const)))
      assert.strictEqual(failed, "model down")
      assert.strictEqual(yield* mtimeOf, previous)
      assert.strictEqual(yield* fs.readFileString(file), "")

      const running = yield* Deferred.make<void>()
      const started = yield* Effect.forkChild(
        withDreamLock(dir, () => Effect.andThen(Deferred.succeed(running, void 0), Effect.never))
      )
      yield* Deferred.await(running)
      assert.strictEqual(yield* mtimeOf, NOW)
      yield* TestClock.adjust("1 second")
      yield* Fiber.interrupt(started)
      assert.strictEqual(yield* mtimeOf, previous)

      const ran = yield* withDreamLock(dir, () =>
        Effect.gen(function*() {
          yield* TestClock.adjust("3 minutes")
          return "dreamt"
        }))
      assert.deepStrictEqual(ran, Option.some("dreamt"))
      assert.strictEqual(yield* mtimeOf, NOW + 1000 + 3 * 60_000)
    })))

  it.effect("held by someone alive: None, and the body never runs", () =>
    live(Effect.gen(function*() {
      const { dir, writeLock } = yield* setup
      yield* writeLock(String(process.pid), NOW)
      let ran = false
      const result = yield* withDreamLock(dir, () => Effect.sync(() => (ran = true)))
      assert.isTrue(Option.isNone(result))
      assert.isFalse(ran)
    })))
})

describe("DreamLock against special files", () => {
  it.live("a FIFO as .consolidate-lock fails inspect and acquire at once, saying to remove it; nothing waits on it", () =>
    Effect.scoped(live(Effect.gen(function*() {
      const { dir, file, lock } = yield* setupWith({ testClock: false })
      const made = spawnSync("mkfifo", [file])
      assert.strictEqual(made.status, 0, "mkfifo")
      // Should a reader block on the FIFO anyway, a writer opening it releases that reader when the test ends.
      yield* Effect.addFinalizer(() =>
        Effect.promise(() =>
          fsp.open(file, constants.O_WRONLY | constants.O_NONBLOCK).then((h) => h.close()).catch(() => undefined)
        )
      )
      const inspected = yield* Effect.flip(lock.inspect(dir)).pipe(Effect.timeout("5 seconds"))
      assert.strictEqual(inspected._tag, "MemoryIoError")
      assert.include(inspected.message, "a FIFO")
      assert.include(inspected.message, "remove it")
      const acquired = yield* Effect.flip(lock.tryAcquire(dir)).pipe(Effect.timeout("5 seconds"))
      assert.strictEqual(acquired._tag, "MemoryIoError")
    }))))

  it.effect("a lock file of garbage is read only in part and counts as free", () =>
    live(Effect.gen(function*() {
      const { dir, writeLock } = yield* setup
      yield* writeLock("9".repeat(1_000_000), NOW - HOUR)
      const state = yield* (yield* DreamLock).inspect(dir)
      assert.strictEqual(state.status, "free")
      assert.isUndefined(state.holder)
    })))
})

describe("DreamLock over MemoryFs", () => {
  it.effect("a link as .consolidate-lock, dangling or not, fails inspect and acquire; what it leads to is untouched", () =>
    live(Effect.gen(function*() {
      const { dir, file, fs, lock } = yield* setup
      const target = `${dir}.target`
      yield* Effect.addFinalizer(() => Effect.ignore(fs.remove(target)))
      yield* fs.symlink(target, file)
      const dangling = yield* Effect.flip(lock.inspect(dir))
      assert.strictEqual(dangling._tag, "MemoryIoError")
      assert.include(dangling.message, "remove it")
      yield* fs.writeFileString(target, "123")
      const linked = yield* Effect.flip(lock.tryAcquire(dir))
      assert.strictEqual(linked._tag, "MemoryIoError")
      assert.include(linked.message, "a symbolic link")
      assert.strictEqual(yield* fs.readFileString(target), "123")
    })))

  it.effect("the live lock over an in-memory MemoryFs: the PID written, the mtime its scheduling state", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOW)
      const memoryFs = yield* MemoryFs.MemoryFs
      const lock = yield* DreamLock
      const file = `/m/${DREAM_LOCK_FILE}`
      const held = Option.getOrThrow(yield* lock.tryAcquire("/m"))
      assert.strictEqual((yield* memoryFs.readFile(file, { maxBytes: 64 })).text, String(process.pid))
      assert.strictEqual((yield* memoryFs.lstat(file)).mtimeMs, NOW)
      assert.strictEqual((yield* memoryFs.lstat(file)).mode, 0o600)
      assert.isFalse(yield* memoryFs.exists(`/m/${DREAM_LOCK_GUARD}`))
      yield* TestClock.adjust("5 minutes")
      yield* lock.release(held)
      const state = yield* lock.inspect("/m")
      assert.deepStrictEqual([state.status, state.lastConsolidatedAt], ["free", NOW + 300_000])
      assert.strictEqual((yield* memoryFs.readFile(file, { maxBytes: 64 })).text, "")
      // a rollback of a lock that did not exist removes it
      const again = Option.getOrThrow(yield* lock.tryAcquire("/n"))
      yield* lock.rollback(again)
      assert.isFalse(yield* memoryFs.exists(`/n/${DREAM_LOCK_FILE}`))
    }).pipe(Effect.provide(dreamLockLayer), Effect.provide(MemoryFs.layerMemory({ "/m/a.md": "a\n" }))))
})

describe("DreamLock.layerTest (in memory)", () => {
  it.effect("same rules without a file system: take, hold, release, stale takeover", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOW)
      const lock = yield* DreamLock
      const held = Option.getOrThrow(yield* lock.tryAcquire("/m"))
      assert.isTrue(Option.isNone(yield* lock.tryAcquire("/m/")))
      yield* lock.release(held)
      assert.strictEqual((yield* lock.inspect("/m")).lastConsolidatedAt, NOW)
      assert.strictEqual((yield* lock.inspect("/other")).status, "free")
      assert.strictEqual((yield* lock.inspect("/busy")).status, "held")
      yield* TestClock.adjust("61 minutes")
      assert.strictEqual((yield* lock.inspect("/busy")).status, "stale")
    }).pipe(Effect.provide(layerTest({
      initial: { "/busy": { holder: 7, mtime: NOW } },
      alive: (pid) => pid === 7 || pid === 4242
    }))))
})
