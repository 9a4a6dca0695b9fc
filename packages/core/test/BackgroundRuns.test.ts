import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import { execFileSync } from "node:child_process"
import * as fsp from "node:fs/promises"
import * as NodePath from "node:path"
import {
  BackgroundRuns,
  type EndLine,
  failureOf,
  fixHint,
  joinRuns,
  layer,
  MAX_LOG_BYTES,
  MAX_RUNS,
  redactSecrets,
  RUNS_DIR,
  RUNS_FILE,
  type StartLine,
  track
} from "../src/BackgroundRuns.js"
import { ModelError } from "../src/Errors.js"
import * as MemoryFs from "../src/MemoryFs.js"

const live = layer.pipe(Layer.provideMerge(MemoryFs.layer), Layer.provideMerge(NodeServices.layer))
const inMemory = layer.pipe(Layer.provideMerge(MemoryFs.layerMemory({ "/mem/MEMORY.md": "" })))

const scratch = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  return yield* fs.makeTempDirectoryScoped({ prefix: "memdir-runs-" })
})

const start = (run: string, at: number, pid?: number): StartLine => ({
  v: 1,
  event: "start",
  run,
  at,
  session: "s1",
  ...(pid === undefined ? {} : { pid })
})
const end = (run: string, at: number, outcome: "ok" | "failed" = "ok", extra: Partial<EndLine> = {}): EndLine => ({
  v: 1,
  event: "end",
  run,
  at,
  session: "s1",
  outcome,
  ...extra
})

const authError = new ModelError({
  kind: "authentication",
  role: "extractor",
  model: "claude-x",
  status: 401,
  detail: "invalid x-api-key sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789"
})

describe("BackgroundRuns: the bounded log", () => {
  it.effect("joins each run's start and end lines, newest first (in memory)", () =>
    Effect.gen(function*() {
      const runs = yield* BackgroundRuns
      yield* runs.record("/mem", start("a", 1_000, 999_999_999))
      yield* runs.record("/mem", end("a", 2_000, "ok", { extraction: ok }))
      yield* runs.record("/mem", start("b", 3_000, 999_999_999))
      yield* runs.record("/mem", end("b", 4_000, "failed", { failure: failureOf(authError) }))
      yield* runs.record("/mem", start("c", 5_000, 999_999_999)) // no end: its pid is not alive
      const { runs: recent } = yield* runs.recent("/mem")
      assert.deepStrictEqual(recent.map((r) => [r.run, r.state]), [["c", "died"], ["b", "failed"], ["a", "ok"]])
      assert.strictEqual(recent[1]!.failure?.tag, "ModelError")
      assert.strictEqual(recent[1]!.failure?.kind, "authentication")
      assert.deepStrictEqual(recent[2]!.extraction, ok)
      assert.deepStrictEqual((yield* runs.recent("/mem", 1)).runs.map((r) => r.run), ["c"])
    }).pipe(Effect.provide(inMemory)))

  it.effect("nothing recorded: no runs, and no .runs/ made by reading", () =>
    Effect.gen(function*() {
      const runs = yield* BackgroundRuns
      assert.deepStrictEqual(yield* runs.recent("/mem"), { runs: [] })
      const fs = yield* MemoryFs.MemoryFs
      assert.isFalse(yield* fs.exists(`/mem/${RUNS_DIR}`))
    }).pipe(Effect.provide(inMemory)))

  it.effect("keeps the newest MAX_RUNS runs and at most MAX_LOG_BYTES", () =>
    Effect.gen(function*() {
      const runs = yield* BackgroundRuns
      const fs = yield* MemoryFs.MemoryFs
      for (let i = 0; i < MAX_RUNS + 15; i++) {
        yield* runs.record("/mem", start(`r${i}`, i * 10))
        yield* runs.record("/mem", end(`r${i}`, i * 10 + 5))
      }
      const all = (yield* runs.recent("/mem", 1_000)).runs
      assert.strictEqual(all.length, MAX_RUNS)
      assert.strictEqual(all[0]!.run, `r${MAX_RUNS + 14}`)
      assert.strictEqual(all.at(-1)!.run, "r15")
      // big runs (long warnings): the byte bound drops the oldest
      const warning = "w".repeat(290)
      for (let i = 0; i < 60; i++) {
        yield* runs.record("/mem", end(`big${i}`, 10_000 + i, "ok", { warnings: Array(5).fill(warning) }))
      }
      const size = (yield* fs.lstat(`/mem/${RUNS_DIR}/${RUNS_FILE}`)).size
      assert.isAtMost(size, MAX_LOG_BYTES)
      const kept = (yield* runs.recent("/mem", 1_000)).runs
      assert.strictEqual(kept[0]!.run, "big59")
      assert.isBelow(kept.length, MAX_RUNS)
    }).pipe(Effect.provide(inMemory)))

  it.effect("a corrupt or foreign line is skipped, the others read", () =>
    Effect.gen(function*() {
      const runs = yield* BackgroundRuns
      const fs = yield* MemoryFs.MemoryFs
      yield* runs.record("/mem", end("a", 1))
      yield* fs.append(`/mem/${RUNS_DIR}/${RUNS_FILE}`, "{\"v\":1,\"event\":\"en\n[1,2]\n{\"v\":2}\nnot json\n")
      yield* runs.record("/mem", end("b", 2, "failed"))
      assert.deepStrictEqual((yield* runs.recent("/mem")).runs.map((r) => r.run), ["b", "a"])
    }).pipe(Effect.provide(inMemory)))

  it.effect(
    "on disk: 0600, order kept; a FIFO or a link at the log's path is never followed nor waited on",
    () =>
      Effect.gen(function*() {
        const dir = yield* scratch
        const outside = yield* scratch
        const runs = yield* BackgroundRuns
        yield* runs.record(dir, start("a", 1))
        yield* runs.record(dir, end("a", 2))
        const log = NodePath.join(dir, RUNS_DIR, RUNS_FILE)
        assert.strictEqual((yield* Effect.promise(() => fsp.stat(log))).mode & 0o777, 0o600)
        assert.deepStrictEqual((yield* runs.recent(dir)).runs.map((r) => r.state), ["ok"])

        // a FIFO: reading fails at once (no writer is waited for); recording replaces it with a regular file
        yield* Effect.promise(() => fsp.rm(log))
        execFileSync("mkfifo", [log])
        const error = yield* Effect.flip(runs.recent(dir))
        assert.strictEqual(error._tag, "MemoryIoError")
        yield* runs.record(dir, end("b", 3))
        assert.isTrue((yield* Effect.promise(() => fsp.lstat(log))).isFile())
        assert.deepStrictEqual((yield* runs.recent(dir)).runs.map((r) => r.run), ["b"])

        // a link to a file outside: not read through, not written through
        const target = NodePath.join(outside, "victim.txt")
        yield* Effect.promise(() => fsp.writeFile(target, "keep me\n"))
        yield* Effect.promise(() => fsp.rm(log))
        yield* Effect.promise(() => fsp.symlink(target, log))
        assert.strictEqual((yield* Effect.flip(runs.recent(dir)))._tag, "MemoryIoError")
        yield* runs.record(dir, end("c", 4))
        assert.strictEqual(yield* Effect.promise(() => fsp.readFile(target, "utf8")), "keep me\n")
        assert.isFalse((yield* Effect.promise(() => fsp.lstat(log))).isSymbolicLink())
      }).pipe(Effect.scoped, Effect.provide(live)),
    { timeout: 20_000 }
  )

  it.effect("a .runs symlink leading out of the memory directory is refused, nothing written there", () =>
    Effect.gen(function*() {
      const dir = yield* scratch
      const outside = yield* scratch
      yield* Effect.promise(() => fsp.symlink(outside, NodePath.join(dir, RUNS_DIR)))
      const runs = yield* BackgroundRuns
      const error = yield* Effect.flip(runs.record(dir, end("a", 1)))
      assert.strictEqual(error._tag, "MemoryIoError")
      assert.deepStrictEqual(yield* Effect.promise(() => fsp.readdir(outside)), [])
    }).pipe(Effect.scoped, Effect.provide(live)))
})

const ok = { status: "extracted", runs: 1, messagesRead: 6, written: 2, refused: 0 } as const

describe("BackgroundRuns.track", () => {
  it.effect("a failed run is recorded with its tag, kind, a redacted message and its warnings", () =>
    Effect.gen(function*() {
      const runs = yield* BackgroundRuns
      const exit = yield* Effect.exit(
        track({ memoryDir: "/mem", session: "s1" }, (notes) =>
          Effect.gen(function*() {
            yield* notes.extraction({ ...ok, status: "failed", failure: failureOf(authError) })
            yield* Effect.logWarning("extraction failed: token=abcdef0123456789")
            yield* notes.dream({ gates: "closed", ran: false, stoppedBy: "sessions", reason: "1 of 5 sessions" })
            return yield* Effect.fail(authError)
          }))
      )
      assert.isTrue(exit._tag === "Failure")
      const [run] = (yield* runs.recent("/mem")).runs
      assert.strictEqual(run!.state, "failed")
      assert.strictEqual(run!.failure?.tag, "ModelError")
      assert.include(run!.failure!.message, "the API key was refused")
      assert.notInclude(JSON.stringify(run), "abcdefghijklmnopqrstuvwxyz0123456789")
      assert.notInclude(JSON.stringify(run), "abcdef0123456789")
      assert.strictEqual(run!.dream?.stoppedBy, "sessions")
      assert.lengthOf(run!.warnings ?? [], 1)
      assert.strictEqual(fixHint(run!.failure!), "the API key was refused: check ANTHROPIC_API_KEY")
    }).pipe(Effect.provide(inMemory)))

  it.effect("an extraction that failed while the job went on still makes the run failed", () =>
    Effect.gen(function*() {
      const runs = yield* BackgroundRuns
      yield* track(
        { memoryDir: "/mem", session: "s1", run: "given" },
        (notes) => notes.extraction({ ...ok, status: "failed", failure: failureOf(authError) })
      )
      const { runs: recent } = yield* runs.recent("/mem")
      assert.deepStrictEqual(recent.map((r) => [r.run, r.state]), [["given", "failed"]])
      assert.strictEqual(recent[0]!.failure?.kind, "authentication")
    }).pipe(Effect.provide(inMemory)))

  it.live("a run interrupted (its time limit) is recorded as Interrupted", () =>
    Effect.gen(function*() {
      const runs = yield* BackgroundRuns
      yield* track({ memoryDir: "/mem", session: "s1" }, () => Effect.never).pipe(Effect.timeoutOption("10 millis"))
      const [run] = (yield* runs.recent("/mem")).runs
      assert.strictEqual(run!.failure?.tag, "Interrupted")
    }).pipe(Effect.provide(inMemory)))
})

describe("BackgroundRuns: redaction and the runs joined", () => {
  it("redacts keys, bearer tokens, key=value pairs and long opaque tokens", () => {
    const text = "refused sk-ant-api03-AAAAAAAAAAAAAAAA Bearer abc.def.ghijklmnop api_key=hunter2hunter2 " +
      "id 0123456789abcdef0123456789abcdef01 AKIAIOSFODNN7EXAMPLE ok"
    const out = redactSecrets(text)
    for (const secret of ["sk-ant-api03", "abc.def.ghijklmnop", "hunter2", "0123456789abcdef0123456789abcdef01"]) {
      assert.notInclude(out, secret)
    }
    assert.include(out, "refused [redacted]")
    assert.include(out, "ok")
  })

  it("a run without an end is running while its process lives and not too old", () => {
    const lines = [start("x", 1_000, 42)]
    assert.strictEqual(joinRuns(lines, 2_000, () => true)[0]!.state, "running")
    assert.strictEqual(joinRuns(lines, 2_000, () => false)[0]!.state, "died")
    assert.strictEqual(joinRuns(lines, 1_000 + 60 * 60_000, () => true)[0]!.state, "died")
  })
})
