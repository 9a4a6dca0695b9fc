/**
 * The cross-process lock (`internal/fs/lock.ts`) on real files: waiting, timing out, mutual exclusion, taking over
 * a dead or stale holder without ever removing a newer one. Its owner-file re-dating runs on the in-memory file
 * system under `TestClock` (no sleep). Other processes contending for it: `test/concurrency.test.ts` at the root.
 */
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Path from "effect/Path"
import * as TestClock from "effect/testing/TestClock"
import { spawnSync } from "node:child_process"
import { hostname } from "node:os"
import { acquireLock, releaseLock, withLock } from "../src/internal/fs/lock.js"
import * as MemoryFs from "../src/MemoryFs.js"
import { lockWaitLatch } from "./support/lockWait.js"

const LOCK = ".memory-index.lock"

const tempDir = Effect.flatMap(
  FileSystem.FileSystem,
  (fs) => Effect.flatMap(fs.makeTempDirectoryScoped({ prefix: "memdir-lock-" }), (dir) => fs.realPath(dir))
)

/** A pid that belonged to a process which has exited. */
const deadPid = (): number => spawnSync(process.execPath, ["-e", "0"]).pid!

/** Plants the owner record of a lock held by `pid` since `acquiredAt` (the lock directory made if missing). */
const plantOwner = (lockPath: string, pid: number, acquiredAt = Date.now()) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    yield* fs.makeDirectory(lockPath, { recursive: true })
    yield* fs.writeFileString(
      path.join(lockPath, `owner.${pid}.abc.json`),
      JSON.stringify({ pid, hostname: hostname(), acquiredAt, token: `${pid}.abc` })
    )
  })

// Real files, real clock: lock waits are real waits (latched, never slept on).
const live = { excludeTestServices: true } as const

// First: a `layer(…, { excludeTestServices: true })` block breaks `TestClock` for the `it.effect`s run after it
// (@effect/vitest 0.x).
/**
 * A second acquirer waits `waitMs` (TestClock) while the first holds the lock, then takes it: what its owner file
 * says (the lock released, the directory left empty).
 */
const ownerAfterWaiting = (waitMs: number) =>
  Effect.gen(function*() {
    const fs = yield* MemoryFs.MemoryFs
    yield* fs.makeDirectory("/m")
    const first = yield* acquireLock(`/m/${LOCK}`)
    const second = yield* Effect.forkChild(acquireLock(`/m/${LOCK}`))
    yield* TestClock.adjust(waitMs)
    assert.isUndefined(second.pollUnsafe(), "still waiting")
    yield* releaseLock(first)
    yield* TestClock.adjust("100 millis")
    const held = yield* Fiber.join(second)
    const owner = JSON.parse((yield* fs.readFile(held.ownerFile, { maxBytes: 4096 })).text)
    yield* releaseLock(held)
    assert.deepStrictEqual((yield* fs.readDirectory("/m")).map((entry) => entry.name), [])
    return owner as { readonly acquiredAt: number; readonly pid: number }
  }).pipe(Effect.provide(MemoryFs.layerMemory()))

// The TestClock tests (each `it.effect` has a TestClock of its own; @effect/vitest 4 leaves the global `it` alone
// after a `layer(…)` block, so the order of the blocks no longer matters).
describe("fileLock (in memory, TestClock)", () => {
  it.effect("after a long wait the owner file is re-dated, so staleness measures the hold, not the wait", () =>
    Effect.gen(function*() {
      const owner = yield* ownerAfterWaiting(1500)
      assert.isAtLeast(owner.acquiredAt, 1500, "re-dated when taken, after the first let go at 1500 ms")
      assert.strictEqual(owner.pid, process.pid)
    }))

  it.effect("a short wait leaves the owner file as written (acquiredAt: when the wait began)", () =>
    Effect.map(ownerAfterWaiting(300), (owner) => assert.strictEqual(owner.acquiredAt, 0)))
})

layer(Layer.merge(NodeServices.layer, MemoryFs.layer), live)("fileLock (real files, real clock)", (it) => {
  it.effect("a held lock makes others wait, then time out with LockTimeoutError naming the holder", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const dir = yield* tempDir
      const lockPath = path.join(dir, LOCK)
      const held = yield* acquireLock(lockPath)
      const error = yield* Effect.flip(acquireLock(lockPath, { timeout: "200 millis" }))
      assert.strictEqual(error._tag, "LockTimeoutError")
      if (error._tag === "LockTimeoutError") {
        assert.isAtLeast(error.waitedMs, 200)
        assert.strictEqual(error.holder, `${process.pid}@${hostname()}`)
      }
      // A waiter gets the lock once it is released.
      const latch = yield* lockWaitLatch
      const waiter = yield* Effect.forkChild(
        latch.observe(withLock(lockPath, Effect.succeed("mine"), { timeout: "5 seconds" }))
      )
      yield* latch.waiting
      assert.isUndefined(waiter.pollUnsafe(), "still waiting")
      yield* releaseLock(held)
      assert.strictEqual(yield* Fiber.join(waiter), "mine")
      assert.deepStrictEqual((yield* fs.readDirectory(dir)).filter((n) => n.startsWith(LOCK)), [])
    }))

  it.effect("mutual exclusion: increments under the lock from many fibers are never lost", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const dir = yield* tempDir
      const counter = path.join(dir, "counter")
      yield* fs.writeFileString(counter, "0")
      const increment = withLock(
        path.join(dir, LOCK),
        Effect.gen(function*() {
          const value = Number(yield* fs.readFileString(counter))
          yield* Effect.yieldNow
          yield* fs.writeFileString(counter, String(value + 1))
        })
      )
      yield* Effect.all(Array.from({ length: 30 }, () => increment), { concurrency: "unbounded" })
      assert.strictEqual(yield* fs.readFileString(counter), "30")
    }))

  it.effect("a lock whose pid is dead is taken over at once", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const dir = yield* tempDir
      const lockPath = path.join(dir, LOCK)
      yield* plantOwner(lockPath, deadPid())
      const result = yield* withLock(lockPath, Effect.succeed("taken over"), { timeout: "2 seconds" })
      assert.strictEqual(result, "taken over")
      assert.isFalse(yield* fs.exists(lockPath))
    }))

  it.effect("a lock older than the stale limit is taken over even if its pid lives; a fresh one is not", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const dir = yield* tempDir
      const lockPath = path.join(dir, LOCK)
      yield* plantOwner(lockPath, process.ppid)
      const fresh = yield* Effect.flip(withLock(lockPath, Effect.void, { timeout: "150 millis" }))
      assert.strictEqual(fresh._tag, "LockTimeoutError")

      yield* fs.remove(lockPath, { recursive: true })
      yield* plantOwner(lockPath, process.ppid, Date.now() - 60_000)
      const exit = yield* Effect.exit(withLock(lockPath, Effect.succeed(1), { timeout: "1 second" }))
      assert.isTrue(Exit.isSuccess(exit))
    }))

  it.effect("breaking a stale lock never removes a lock acquired after it (many breakers at once)", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const dir = yield* tempDir
      const lockPath = path.join(dir, LOCK)
      yield* plantOwner(lockPath, deadPid())
      let inside = 0
      let maxInside = 0
      const critical = withLock(
        lockPath,
        Effect.gen(function*() {
          inside++
          maxInside = Math.max(maxInside, inside)
          yield* Effect.sleep("2 millis")
          inside--
        }),
        { timeout: "10 seconds" }
      )
      yield* Effect.all(Array.from({ length: 12 }, () => critical), { concurrency: "unbounded" })
      assert.strictEqual(maxInside, 1)
      assert.isFalse(yield* fs.exists(lockPath))
    }))
})
