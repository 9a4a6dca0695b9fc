import { NodeServices } from "@effect/platform-node"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Path from "effect/Path"
import * as Result from "effect/Result"
import * as TestClock from "effect/testing/TestClock"
import * as FastCheck from "fast-check"
import * as NodeFs from "node:fs"
import * as fsp from "node:fs/promises"
import * as os from "node:os"
import * as NodePath from "node:path"
import {
  decodeSessionId,
  HookSessionState,
  layer,
  MAX_INJECTIONS,
  MAX_SESSIONS,
  MAX_SURFACED,
  PROMPT_MAX_CHARS,
  SESSION_MAX_AGE_MS,
  type SessionId,
  SESSIONS_DIR
} from "../src/HookSessionState.js"
import * as MemoryFs from "../src/MemoryFs.js"
import { bundleWorker, runWorker } from "./support/workers.js"

const live = layer.pipe(Layer.provideMerge(MemoryFs.layer), Layer.provideMerge(NodeServices.layer))
const id = (raw: string): SessionId => Result.getOrThrow(decodeSessionId(raw))

const scratch = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  return yield* fs.makeTempDirectoryScoped({ prefix: "memdir-hookstate-" })
})

describe("HookSessionState", () => {
  it.effect("records what a session surfaced, across loads, without duplicates", () =>
    Effect.gen(function*() {
      const dir = yield* scratch
      const state = yield* HookSessionState
      const s = id("3f2a9c1e-7b4d-4e8a-9c0f-5d6e7f8a9b0c")
      assert.deepStrictEqual(yield* state.load(dir, s), { surfaced: [], bytes: 0, injections: [] })
      yield* state.record(dir, s, ["a.md", "b.md"], 100)
      yield* TestClock.adjust("1 minute")
      yield* state.record(dir, s, ["b.md", "team/c.md"], 50, { event: "UserPromptSubmit", prompt: "how do we test?" })
      assert.deepStrictEqual(yield* state.load(dir, s), {
        surfaced: ["a.md", "b.md", "team/c.md"],
        bytes: 150,
        injections: [
          { at: 0, paths: ["a.md", "b.md"] },
          { at: 60_000, paths: ["b.md", "team/c.md"], event: "UserPromptSubmit", prompt: "how do we test?" }
        ]
      })
      assert.deepStrictEqual(yield* state.load(dir, id("other")), { surfaced: [], bytes: 0, injections: [] })
      const mode = (yield* Effect.promise(() => fsp.stat(`${dir}/${SESSIONS_DIR}/${s}.json`))).mode & 0o777
      assert.strictEqual(mode, 0o600)
    }).pipe(Effect.scoped, Effect.provide(live)))

  it.effect("keeps at most MAX_SURFACED paths, the newest", () =>
    Effect.gen(function*() {
      const dir = yield* scratch
      const state = yield* HookSessionState
      const many = Array.from({ length: MAX_SURFACED + 10 }, (_, i) => `m${i}.md`)
      const after = yield* state.record(dir, id("s1"), many, 1)
      assert.strictEqual(after.surfaced.length, MAX_SURFACED)
      assert.strictEqual(after.surfaced[0], "m10.md")
    }).pipe(Effect.scoped, Effect.provide(live)))

  it.effect("keeps the newest MAX_INJECTIONS injections, each prompt one redacted line; lists sessions newest first", () =>
    Effect.gen(function*() {
      const dir = yield* scratch
      const state = yield* HookSessionState
      for (let i = 0; i < MAX_INJECTIONS + 5; i++) {
        yield* state.record(dir, id("s1"), [`m${i}.md`], 1, { event: "UserPromptSubmit", prompt: `prompt ${i}` })
      }
      const secret = "token=" + "abcdefghijklmnopqrstuvwxyz0123456789"
      const after = yield* state.record(dir, id("s2"), ["x.md"], 1, {
        prompt: `deploy\nwith ${secret} ${"y".repeat(500)}`
      })
      const s1 = (yield* state.load(dir, id("s1"))).injections
      assert.strictEqual(s1.length, MAX_INJECTIONS)
      assert.strictEqual(s1[0]!.prompt, "prompt 5")
      const prompt = after.injections[0]!.prompt!
      assert.isAtMost(prompt.length, PROMPT_MAX_CHARS)
      assert.match(prompt, /^deploy with token=\[redacted\] y+…$/)
      // nothing surfaced: no injection
      yield* state.record(dir, id("s2"), [], 0, { prompt: "nothing" })
      assert.strictEqual((yield* state.load(dir, id("s2"))).injections.length, 1)

      yield* Effect.promise(() => fsp.utimes(`${dir}/${SESSIONS_DIR}/s1.json`, 1, 1))
      yield* Effect.promise(() => fsp.writeFile(`${dir}/${SESSIONS_DIR}/s3.json`, "{ corrupt"))
      yield* Effect.promise(() => fsp.writeFile(`${dir}/${SESSIONS_DIR}/not a session.json`, "{}"))
      const listed = yield* state.sessions(dir, 10)
      assert.deepStrictEqual(listed.sessions.map((r) => r.sessionId).sort(), ["s1", "s2"])
      assert.strictEqual(listed.sessions.at(-1)!.sessionId, "s1")
      assert.strictEqual(listed.unreadable, 1)
      assert.deepStrictEqual((yield* state.sessions(`${dir}/nothing-here`, 10)).sessions, [])
    }).pipe(Effect.scoped, Effect.provide(live)))

  it.effect("a corrupt state file is a fresh session", () =>
    Effect.gen(function*() {
      const dir = yield* scratch
      const state = yield* HookSessionState
      yield* state.record(dir, id("s1"), ["a.md"], 1)
      yield* Effect.promise(() => fsp.writeFile(`${dir}/${SESSIONS_DIR}/s1.json`, "{\"version\":1,\"surf"))
      assert.deepStrictEqual(yield* state.load(dir, id("s1")), { surfaced: [], bytes: 0, injections: [] })
    }).pipe(Effect.scoped, Effect.provide(live)))

  it.effect("a .sessions symlink leading out of the memory directory is refused, nothing written there", () =>
    Effect.gen(function*() {
      const dir = yield* scratch
      const outside = yield* scratch
      const path = yield* Path.Path
      yield* Effect.promise(() => fsp.symlink(outside, path.join(dir, SESSIONS_DIR)))
      const state = yield* HookSessionState
      const error = yield* Effect.flip(state.record(dir, id("s1"), ["a.md"], 1))
      assert.strictEqual(error._tag, "MemoryIoError")
      assert.deepStrictEqual(yield* Effect.promise(() => fsp.readdir(outside)), [])
    }).pipe(Effect.scoped, Effect.provide(live)))

  it.effect("cleanup removes sessions older than 7 days and all but the newest MAX_SESSIONS", () =>
    Effect.gen(function*() {
      const dir = yield* scratch
      const state = yield* HookSessionState
      const now = Date.now()
      yield* TestClock.setTime(now)
      for (let i = 0; i < MAX_SESSIONS + 3; i++) yield* state.record(dir, id(`s${i}`), ["a.md"], 1)
      const sessions = `${dir}/${SESSIONS_DIR}`
      // s0 is old; s1…s3 are the oldest beyond the count
      const at = (file: string, ms: number) => Effect.promise(() => fsp.utimes(file, ms / 1000, ms / 1000))
      yield* at(`${sessions}/s0.json`, now - SESSION_MAX_AGE_MS - 60_000)
      for (let i = 1; i <= MAX_SESSIONS + 2; i++) {
        yield* at(`${sessions}/s${i}.json`, now - (MAX_SESSIONS + 3 - i) * 1000)
      }
      const removed = yield* state.cleanup(dir)
      assert.strictEqual(removed, 3)
      const left = yield* Effect.promise(() => fsp.readdir(sessions))
      assert.strictEqual(left.length, MAX_SESSIONS)
      assert.notInclude(left, "s0.json")
      assert.notInclude(left, "s1.json")
      assert.notInclude(left, "s2.json")
      assert.include(left, "s3.json")
    }).pipe(Effect.scoped, Effect.provide(live)))

  it("a session id that could name another path is refused", () => {
    FastCheck.assert(FastCheck.property(FastCheck.string({ unit: "binary", maxLength: 40 }), (raw) => {
      const decoded = decodeSessionId(raw)
      if (Result.isSuccess(decoded)) {
        assert.match(decoded.success, /^[A-Za-z0-9][A-Za-z0-9_-]*$/)
      } else {
        assert.strictEqual(decoded.failure._tag, "InvalidMemoryInputError")
      }
      for (const bad of ["", "..", "../x", "a/b", "a\\b", "a\0b", ".hidden", "x".repeat(129)]) {
        assert.isTrue(Result.isFailure(decodeSessionId(bad)), bad)
      }
    }))
  })
})

describe("HookSessionState: two prompts of one session at once (real hook processes)", () => {
  let scratchDir: string
  let worker: string
  beforeAll(async () => {
    scratchDir = NodeFs.mkdtempSync(NodePath.join(os.tmpdir(), "memdir-session-procs-"))
    worker = await bundleWorker("session-worker", scratchDir)
  })
  afterAll(() => NodeFs.rmSync(scratchDir, { recursive: true, force: true }))

  it("4 processes × 15 records into one session: every path and every byte kept, no lock left", async () => {
    const memoryDir = NodePath.join(scratchDir, "memory")
    NodeFs.mkdirSync(memoryDir)
    const session = "5b1c2d3e-aaaa-4bbb-8ccc-123456789abc"
    const WORKERS = 4
    const RECORDS = 15
    const results = await Promise.all(
      Array.from({ length: WORKERS }, (_, id) => runWorker(worker, [memoryDir, session, String(id), String(RECORDS)]))
    )
    results.forEach((result, id) =>
      assert.strictEqual(result.code, 0, `worker ${id}: ${result.stderr}${result.stdout}`)
    )
    const saved = JSON.parse(NodeFs.readFileSync(NodePath.join(memoryDir, SESSIONS_DIR, `${session}.json`), "utf8"))
    const expected = Array.from(
      { length: WORKERS },
      (_, w) => Array.from({ length: RECORDS }, (_, i) => `w${w}-${i}.md`)
    )
      .flat()
    assert.deepStrictEqual([...saved.surfaced].sort(), expected.sort())
    assert.strictEqual(saved.bytes, WORKERS * RECORDS * 10)
    assert.deepStrictEqual(NodeFs.readdirSync(NodePath.join(memoryDir, SESSIONS_DIR)), [`${session}.json`])
  })
})
