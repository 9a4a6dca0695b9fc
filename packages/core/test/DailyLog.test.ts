import { NodeServices } from "@effect/platform-node"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import type * as Path from "effect/Path"
import * as Result from "effect/Result"
import * as TestClock from "effect/testing/TestClock"
import * as FastCheck from "fast-check"
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as os from "node:os"
import * as NodePath from "node:path"
import {
  appendLog,
  dateChangeNotice,
  formatLogEntry,
  LOG_ENTRY_MAX_CHARS,
  LOG_PATH_PATTERN,
  logDate,
  logRelativePath,
  readRecentLogs,
  renderLogsPrompt
} from "../src/DailyLog.js"
import * as MemoryFs from "../src/MemoryFs.js"
import { bundleWorker, runWorker } from "./support/workers.js"

const AT = Date.parse("2026-03-05T14:03:07.250Z")

const withTempDir = <A, E>(
  f: (dir: string) => Effect.Effect<A, E, FileSystem.FileSystem | Path.Path | MemoryFs.MemoryFs>
) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    return yield* f(yield* fs.makeTempDirectoryScoped({ prefix: "memdir-log-" }))
  }).pipe(Effect.provide(Layer.mergeAll(MemoryFs.layer, NodeServices.layer)))

describe("formatting (pure)", () => {
  it("UTC date, path and bullet", () => {
    assert.strictEqual(logDate(AT), "2026-03-05")
    assert.strictEqual(logRelativePath("2026-03-05"), "logs/2026/03/2026-03-05.md")
    assert.strictEqual(
      Result.getOrThrow(formatLogEntry(AT, "shipped  the\nmigration ")),
      "- 14:03:07 shipped the migration\n"
    )
    // just before midnight UTC it is still the 5th, whatever the machine's time zone
    assert.strictEqual(logDate(Date.parse("2026-03-05T23:59:59.999Z")), "2026-03-05")
    assert.strictEqual(logDate(Date.parse("2026-03-06T00:00:00.000Z")), "2026-03-06")
  })

  it("refuses an empty entry and an over-long one", () => {
    assert.strictEqual(
      Result.getFailure(formatLogEntry(AT, " \n\t")).pipe((e) => e._tag === "Some" && e.value.field),
      "text"
    )
    assert.isTrue(Result.isSuccess(formatLogEntry(AT, "x".repeat(LOG_ENTRY_MAX_CHARS))))
    assert.isTrue(Result.isFailure(formatLogEntry(AT, "x".repeat(LOG_ENTRY_MAX_CHARS + 1))))
  })

  it("every entry is exactly one line starting with a time", () => {
    FastCheck.assert(FastCheck.property(FastCheck.string({ minLength: 1, maxLength: 300 }), (text) => {
      const entry = formatLogEntry(AT, text)
      if (Result.isFailure(entry)) return assert.strictEqual(text.trim(), "")
      assert.match(entry.success, /^- 14:03:07 \S.*\n$/)
      assert.strictEqual(entry.success.split("\n").length, 2)
    }))
  })
})

describe("appendLog", () => {
  it.effect("creates logs/YYYY/MM/YYYY-MM-DD.md (0600, dirs 0700) with a UTC header, then appends in order", () =>
    withTempDir((dir) =>
      Effect.gen(function*() {
        yield* TestClock.setTime(AT)
        const first = yield* appendLog({ memoryDir: dir, text: "started the refactor" })
        yield* TestClock.adjust("90 seconds")
        const second = yield* appendLog({ memoryDir: dir, text: "Dana: ship behind a flag" })
        assert.strictEqual(first.file, "logs/2026/03/2026-03-05.md")
        assert.strictEqual(first.path, NodePath.join(dir, "logs/2026/03/2026-03-05.md"))
        assert.isTrue(first.created)
        assert.isFalse(second.created)
        assert.strictEqual(second.entry, "- 14:04:37 Dana: ship behind a flag")
        assert.strictEqual(
          NodeFs.readFileSync(first.path, "utf8"),
          "# 2026-03-05 (UTC)\n\n- 14:03:07 started the refactor\n- 14:04:37 Dana: ship behind a flag\n"
        )
        assert.strictEqual(NodeFs.statSync(first.path).mode & 0o777, 0o600)
        assert.strictEqual(NodeFs.statSync(NodePath.join(dir, "logs/2026/03")).mode & 0o777, 0o700)
        // no temp file left behind by the header step
        assert.deepStrictEqual(NodeFs.readdirSync(NodePath.join(dir, "logs/2026/03")), ["2026-03-05.md"])
      })
    ))

  it.effect("crossing midnight UTC starts the next day's file (and the next month's directory)", () =>
    withTempDir((dir) =>
      Effect.gen(function*() {
        yield* TestClock.setTime(Date.parse("2026-03-31T23:59:59.000Z"))
        const before = yield* appendLog({ memoryDir: dir, text: "late" })
        yield* TestClock.adjust("1 second")
        const after = yield* appendLog({ memoryDir: dir, text: "early" })
        assert.strictEqual(before.file, "logs/2026/03/2026-03-31.md")
        assert.strictEqual(after.file, "logs/2026/04/2026-04-01.md")
        assert.strictEqual(NodeFs.readFileSync(after.path, "utf8"), "# 2026-04-01 (UTC)\n\n- 00:00:00 early\n")
      })
    ))

  it.effect("never rewrites: an existing file (even edited by hand) only grows at the end", () =>
    withTempDir((dir) =>
      Effect.gen(function*() {
        yield* TestClock.setTime(AT)
        const file = NodePath.join(dir, "logs/2026/03/2026-03-05.md")
        NodeFs.mkdirSync(NodePath.dirname(file), { recursive: true })
        NodeFs.writeFileSync(file, "my own notes\n- 09:00:00 earlier\n")
        const result = yield* appendLog({ memoryDir: dir, text: "later" })
        assert.isFalse(result.created)
        assert.strictEqual(NodeFs.readFileSync(file, "utf8"), "my own notes\n- 09:00:00 earlier\n- 14:03:07 later\n")
      })
    ))

  it.effect("a FIFO or a link at the day's path is refused at once: nothing blocks, nothing written through the link", () =>
    withTempDir((dir) =>
      Effect.gen(function*() {
        yield* TestClock.setTime(AT)
        const file = NodePath.join(dir, "logs/2026/03/2026-03-05.md")
        NodeFs.mkdirSync(NodePath.dirname(file), { recursive: true })
        execFileSync("mkfifo", [file])
        const fifo = yield* Effect.flip(appendLog({ memoryDir: dir, text: "into a pipe" }))
        assert.strictEqual(fifo._tag, "MemoryIoError")
        assert.strictEqual(fifo._tag === "MemoryIoError" && fifo.path, file)
        const read = yield* Effect.flip(readRecentLogs({ memoryDir: dir, days: 1 }))
        assert.strictEqual(read._tag, "MemoryIoError")
        assert.include(read.detail, "NotRegularFile")

        NodeFs.rmSync(file)
        const outside = NodePath.join(dir, "outside.md")
        NodeFs.writeFileSync(outside, "not a log\n")
        NodeFs.symlinkSync(outside, file)
        const link = yield* Effect.flip(appendLog({ memoryDir: dir, text: "through a link" }))
        assert.strictEqual(link._tag, "MemoryIoError")
        assert.strictEqual(NodeFs.readFileSync(outside, "utf8"), "not a log\n")
        assert.isTrue(NodeFs.lstatSync(file).isSymbolicLink())
        const readLink = yield* Effect.flip(readRecentLogs({ memoryDir: dir, days: 1 }))
        assert.include(readLink.detail, "SymbolicLink")
      })
    ))

  it.effect("an invalid entry writes nothing", () =>
    withTempDir((dir) =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(appendLog({ memoryDir: dir, text: "   " }))
        assert.strictEqual(error._tag, "InvalidMemoryInputError")
        assert.isFalse(NodeFs.existsSync(NodePath.join(dir, "logs")))
      })
    ))
})

describe("readRecentLogs", () => {
  it.effect("the last N UTC days that exist, oldest first; the oldest is cut to its last lines past the budget", () =>
    withTempDir((dir) =>
      Effect.gen(function*() {
        const day = 86_400_000
        yield* TestClock.setTime(AT - 9 * day)
        yield* appendLog({ memoryDir: dir, text: "too old to be read" })
        yield* TestClock.setTime(AT - 2 * day)
        for (let i = 0; i < 20; i++) yield* appendLog({ memoryDir: dir, text: `two days ago ${i}` })
        yield* TestClock.setTime(AT)
        yield* appendLog({ memoryDir: dir, text: "today" })

        const all = yield* readRecentLogs({ memoryDir: dir })
        assert.deepStrictEqual(all.map((log) => log.date), ["2026-03-03", "2026-03-05"])
        assert.isFalse(all[0]!.truncated)
        assert.include(all[1]!.content, "- 14:03:07 today")

        const todayBytes = Buffer.byteLength(all[1]!.content)
        const tight = yield* readRecentLogs({ memoryDir: dir, maxBytes: todayBytes + 60 })
        assert.strictEqual(tight[1]!.content, all[1]!.content)
        assert.isTrue(tight[0]!.truncated)
        assert.include(tight[0]!.content, "two days ago 19")
        assert.notInclude(tight[0]!.content, "two days ago 0\n")
        assert.isAtMost(Buffer.byteLength(tight[0]!.content), 60)

        assert.deepStrictEqual((yield* readRecentLogs({ memoryDir: dir, days: 1 })).map((log) => log.date), [
          "2026-03-05"
        ])
      })
    ))
})

describe("date notices and the prompt section", () => {
  it("a notice at the start, none while the date holds, one when it changes", () => {
    const start = dateChangeNotice(undefined, AT)!
    assert.include(start, "2026-03-05 (UTC)")
    assert.include(start, "logs/2026/03/2026-03-05.md")
    assert.isUndefined(dateChangeNotice("2026-03-05", Date.parse("2026-03-05T23:59:59Z")))
    const next = dateChangeNotice("2026-03-05", Date.parse("2026-03-06T00:00:01Z"))!
    assert.include(next, "now 2026-03-06 (UTC), no longer 2026-03-05")
    assert.include(next, "logs/2026/03/2026-03-06.md")
  })

  it("the prompt names the path as a pattern (never a date), with the append-only rule", () => {
    const prompt = Result.getOrThrow(renderLogsPrompt({ memoryDir: "/m/memory" }))
    assert.include(prompt, `/m/memory/${LOG_PATH_PATTERN}`)
    assert.notMatch(prompt.replace("2026-03-09", ""), /\d{4}-\d{2}-\d{2}/)
    assert.include(prompt, "never rewrite, reorder or delete")
    const baseline = Result.getOrThrow(renderLogsPrompt({ memoryDir: "/m/memory/", variant: "without-append-only" }))
    assert.notInclude(baseline, "never rewrite")
    assert.notInclude(baseline, "{{")
    const unknown = Result.getFailure(renderLogsPrompt({ memoryDir: "/m", variant: "nope" }))
    assert.strictEqual(unknown._tag === "Some" && unknown.value._tag, "UnknownPromptVariantError")
  })
})

describe("concurrent appenders (real processes)", () => {
  let scratch: string
  let worker: string
  beforeAll(async () => {
    scratch = NodeFs.mkdtempSync(NodePath.join(os.tmpdir(), "memdir-log-procs-"))
    worker = await bundleWorker("log-worker", scratch)
  })
  afterAll(() => NodeFs.rmSync(scratch, { recursive: true, force: true }))

  it("6 processes × 40 long bullets at once: one header, every bullet whole and exactly once, each writer's order kept", async () => {
    const memoryDir = NodePath.join(scratch, "memory")
    const WORKERS = 6
    const ENTRIES = 40
    const runs = Array.from(
      { length: WORKERS },
      (_, id) => runWorker(worker, [memoryDir, String(id), String(ENTRIES)])
    )
    const results = await Promise.all(runs)
    results.forEach((result, id) => assert.strictEqual(result.code, 0, `worker ${id}: ${result.stderr}`))

    // The workers use the real clock: normally one day's file, two if they ran across midnight UTC.
    const logs = NodeFs.readdirSync(NodePath.join(memoryDir, "logs"), { recursive: true, encoding: "utf8" })
      .filter((name) => name.endsWith(".md")).sort()
    assert.isAtLeast(logs.length, 1)
    const seen = new Map<string, Array<number>>()
    for (const log of logs) {
      const text = NodeFs.readFileSync(NodePath.join(memoryDir, "logs", log), "utf8")
      const date = NodePath.basename(log, ".md")
      assert.isTrue(text.startsWith(`# ${date} (UTC)\n\n`), `header first in ${log}`)
      assert.strictEqual(text.split(`# ${date} (UTC)`).length, 2, `one header in ${log}`)
      for (const line of text.split("\n").slice(2, -1)) {
        const match = /^- \d\d:\d\d:\d\d worker (\d+) entry (\d+) ([a-z]+)$/.exec(line)
        assert.isNotNull(match, `torn line: ${line.slice(0, 80)}`)
        const [, id, i, padding] = match!
        assert.strictEqual(padding, String.fromCharCode(97 + Number(id)).repeat(1500))
        seen.set(id!, [...(seen.get(id!) ?? []), Number(i)])
      }
    }
    for (let id = 0; id < WORKERS; id++) {
      assert.deepStrictEqual(seen.get(String(id)), Array.from({ length: ENTRIES }, (_, i) => i), `worker ${id}`)
    }
  })
})
