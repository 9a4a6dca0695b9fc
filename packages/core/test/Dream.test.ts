import type Anthropic from "@anthropic-ai/sdk"
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as TestClock from "effect/testing/TestClock"
import * as FastCheck from "fast-check"
import { execFileSync, spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { appendLog } from "../src/DailyLog.js"
import {
  contentOverlap,
  diffSnapshots,
  DREAM_MAX_TOKENS,
  DREAM_SCAN_FILE,
  dreamPromptVariants,
  evaluateGates,
  fitIndexToCaps,
  lineDiff,
  renderDreamSystemPrompt,
  runDream,
  type Snapshot,
  transcriptLineText,
  transcriptSearchTool
} from "../src/Dream.js"
import * as DreamLock from "../src/DreamLock.js"
import { ModelError } from "../src/Errors.js"
import { serializeFrontmatter } from "../src/Frontmatter.js"
import { type MemoryType } from "../src/Memory.js"
import * as MemoryFs from "../src/MemoryFs.js"
import * as MemoryIndex from "../src/MemoryIndex.js"
import { INDEX_MAX_BYTES, INDEX_MAX_LINES } from "../src/MemoryIndex.js"
import * as MemoryStore from "../src/MemoryStore.js"
import * as Model from "../src/Model.js"
import * as Scanner from "../src/Scanner.js"

/** A Thursday; the dream's "today". */
const NOW = Date.parse("2026-12-03T09:00:00.000Z")
const HOUR = 3_600_000

const memoryText = (type: MemoryType, name: string, description: string, body: string) =>
  serializeFrontmatter({ name, description, type }, body)

interface World {
  readonly root: string
  readonly memoryDir: string
  readonly transcriptsDir: string
  readonly write: (file: string, text: string, mtime?: number) => void
  readonly read: (file: string) => string
  readonly session: (id: string, mtime: number, lines?: ReadonlyArray<unknown>) => void
  readonly lockAt: (mtime: number, content?: string) => void
}

const world = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const root = yield* fs.realPath(yield* fs.makeTempDirectoryScoped({ prefix: "memdir-dream-" }))
  const memoryDir = NodePath.join(root, "memory")
  const transcriptsDir = NodePath.join(root, "transcripts")
  NodeFs.mkdirSync(memoryDir, { recursive: true })
  NodeFs.mkdirSync(transcriptsDir, { recursive: true })
  const setMtime = (file: string, mtime: number) => NodeFs.utimesSync(file, new Date(mtime), new Date(mtime))
  const w: World = {
    root,
    memoryDir,
    transcriptsDir,
    write: (file, text, mtime) => {
      const target = NodePath.join(memoryDir, file)
      NodeFs.mkdirSync(NodePath.dirname(target), { recursive: true })
      NodeFs.writeFileSync(target, text)
      if (mtime !== undefined) setMtime(target, mtime)
    },
    read: (file) => NodeFs.readFileSync(NodePath.join(memoryDir, file), "utf8"),
    session: (id, mtime, lines = [{ role: "user", content: `session ${id}` }]) => {
      const file = NodePath.join(transcriptsDir, `${id}.jsonl`)
      NodeFs.writeFileSync(file, lines.map((line) => JSON.stringify(line)).join("\n") + "\n")
      setMtime(file, mtime)
    },
    lockAt: (mtime, content = "") => {
      const file = NodePath.join(memoryDir, DreamLock.DREAM_LOCK_FILE)
      NodeFs.writeFileSync(file, content)
      setMtime(file, mtime)
    }
  }
  yield* TestClock.setTime(NOW)
  return w
})

const services = (script: Model.ModelScript = [], options: Model.TestModelOptions = {}) =>
  MemoryStore.layerNode.pipe(
    Layer.provideMerge(
      Layer.mergeAll(DreamLock.layer, MemoryIndex.layer, Scanner.layerNode, Model.layerTest(script, options))
    ),
    Layer.provideMerge(Layer.mergeAll(MemoryFs.layer, NodeServices.layer))
  )

type Services = Layer.Success<ReturnType<typeof services>>

const withServices =
  (script: Model.ModelScript = [], options: Model.TestModelOptions = {}) =>
  <A, E>(effect: Effect.Effect<A, E, Services | Scope.Scope>) => Effect.provide(effect, services(script, options))

const toolUses = (...uses: ReadonlyArray<{ name: string; input: unknown }>): Model.ScriptedReply => ({
  content: uses.map((use, i) => ({
    type: "tool_use",
    id: `toolu_${i}_${use.name}`,
    name: use.name,
    input: use.input,
    caller: { type: "direct" }
  })) as unknown as ReadonlyArray<Anthropic.ContentBlock>,
  stopReason: "tool_use"
})

const git = (cwd: string, ...args: Array<string>) =>
  execFileSync("git", ["-c", "user.email=t@memdir.invalid", "-c", "user.name=t", ...args], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1" }
  })

// ---------------------------------------------------------------------------------------------------------------

describe("gates (TestClock)", () => {
  it.effect("never consolidated: time passes; sessions needs more than 5, not counting the current one", () =>
    withServices()(Effect.gen(function*() {
      const w = yield* world
      for (let i = 0; i < 6; i++) w.session(`s${i}`, NOW - i * HOUR)
      const base = { memoryDir: w.memoryDir, transcriptsDir: w.transcriptsDir }

      const withCurrent = yield* evaluateGates({ ...base, currentSessionId: "s0", writeCache: false })
      assert.isFalse(withCurrent.open)
      assert.strictEqual(withCurrent.stoppedBy, "sessions")
      assert.deepStrictEqual(withCurrent.checks.map((c) => c.status), ["passed", "failed", "not-evaluated"])
      assert.strictEqual(withCurrent.sessions.length, 5)
      assert.include(withCurrent.checks[0]!.detail, "never consolidated")

      const open = yield* evaluateGates({ ...base, writeCache: false })
      assert.isTrue(open.open)
      assert.deepStrictEqual(open.checks.map((c) => [c.gate, c.status]), [
        ["time", "passed"],
        ["sessions", "passed"],
        ["lock", "passed"]
      ])
      // newest first
      assert.deepStrictEqual(open.sessions.map((s) => s.id), ["s0", "s1", "s2", "s3", "s4", "s5"])
    })))

  it.effect("time: stops under 24 h without scanning sessions; opens at 24 h; only sessions after the last dream count", () =>
    withServices()(Effect.gen(function*() {
      const w = yield* world
      const last = NOW - 23 * HOUR
      w.lockAt(last)
      for (let i = 0; i < 8; i++) w.session(`old${i}`, last - HOUR)
      for (let i = 0; i < 6; i++) w.session(`new${i}`, last + HOUR)
      const input = { memoryDir: w.memoryDir, transcriptsDir: w.transcriptsDir }

      const early = yield* evaluateGates(input)
      assert.strictEqual(early.stoppedBy, "time")
      assert.deepStrictEqual(early.checks.map((c) => c.status), ["failed", "not-evaluated", "not-evaluated"])
      assert.include(early.checks[0]!.detail, "23 h since")
      assert.isFalse(NodeFs.existsSync(NodePath.join(w.memoryDir, DREAM_SCAN_FILE)), "no scan when time stops it")

      yield* TestClock.adjust("1 hour")
      const due = yield* evaluateGates(input)
      assert.isTrue(due.open)
      assert.deepStrictEqual(due.sessions.map((s) => s.id).sort(), ["new0", "new1", "new2", "new3", "new4", "new5"])
      assert.strictEqual(due.lastConsolidatedAt, last)
    })))

  it.effect("the session scan is cached for 10 minutes, for the same directory and the same last dream", () =>
    withServices()(Effect.gen(function*() {
      const w = yield* world
      for (let i = 0; i < 5; i++) w.session(`s${i}`, NOW - HOUR)
      const input = { memoryDir: w.memoryDir, transcriptsDir: w.transcriptsDir }
      const first = yield* evaluateGates(input)
      assert.strictEqual(first.stoppedBy, "sessions")
      assert.isFalse(first.sessionsFromCache)
      const cache = JSON.parse(NodeFs.readFileSync(NodePath.join(w.memoryDir, DREAM_SCAN_FILE), "utf8"))
      assert.strictEqual(cache.sessions.length, 5)
      assert.strictEqual(cache.scannedAt, NOW)

      w.session("s5", NOW)
      yield* TestClock.adjust("9 minutes")
      const cached = yield* evaluateGates(input)
      assert.isTrue(cached.sessionsFromCache)
      assert.strictEqual(cached.stoppedBy, "sessions", "a new transcript is not seen while the cache is fresh")

      yield* TestClock.adjust("1 minute")
      const rescanned = yield* evaluateGates(input)
      assert.isFalse(rescanned.sessionsFromCache)
      assert.isTrue(rescanned.open)

      // another transcripts directory does not reuse the cache
      NodeFs.mkdirSync(NodePath.join(w.root, "elsewhere"))
      const elsewhere = yield* evaluateGates({ ...input, transcriptsDir: NodePath.join(w.root, "elsewhere") })
      assert.isFalse(elsewhere.sessionsFromCache)
      assert.strictEqual(elsewhere.sessions.length, 0)
    })))

  it.effect("a link to a transcript counts by what it leads to; a FIFO, a dangling link or a directory never does", () =>
    withServices()(Effect.gen(function*() {
      const w = yield* world
      const elsewhere = NodePath.join(w.root, "kept-elsewhere")
      NodeFs.mkdirSync(elsewhere)
      const real = NodePath.join(elsewhere, "linked.jsonl")
      NodeFs.writeFileSync(real, JSON.stringify({ role: "user", content: "the staging database again" }) + "\n")
      NodeFs.utimesSync(real, new Date(NOW - HOUR), new Date(NOW - HOUR))
      NodeFs.symlinkSync(real, NodePath.join(w.transcriptsDir, "linked.jsonl"))
      NodeFs.symlinkSync(NodePath.join(w.root, "missing.jsonl"), NodePath.join(w.transcriptsDir, "dangling.jsonl"))
      execFileSync("mkfifo", [NodePath.join(w.transcriptsDir, "pipe.jsonl")])
      NodeFs.mkdirSync(NodePath.join(w.transcriptsDir, "dir.jsonl"))
      w.session("plain", NOW)
      const gates = yield* evaluateGates({
        memoryDir: w.memoryDir,
        transcriptsDir: w.transcriptsDir,
        writeCache: false
      })
      assert.deepStrictEqual(gates.sessions.map((s) => [s.id, s.mtime]), [["plain", NOW], ["linked", NOW - HOUR]])

      // the search follows the link too, and a FIFO given as a session answers at once (searched as empty)
      const tool = yield* transcriptSearchTool([
        ...gates.sessions,
        { id: "pipe", path: NodePath.join(w.transcriptsDir, "pipe.jsonl"), mtime: NOW }
      ])
      const found = yield* tool.run({ query: "staging database" })
      assert.strictEqual(found.content.split(": ")[0], "linked:1")
      assert.strictEqual((yield* tool.run({ query: "staging", session: "pipe" })).content, "(no matches)")
    })))

  it.effect("a live holder stops it even with force; force bypasses time and sessions (still reported)", () =>
    withServices()(Effect.gen(function*() {
      const w = yield* world
      const sleeper = spawn("sleep", ["30"], { stdio: "ignore" })
      yield* Effect.addFinalizer(() => Effect.sync(() => sleeper.kill("SIGKILL")))
      w.lockAt(NOW - 10 * 60_000, String(sleeper.pid))
      const input = { memoryDir: w.memoryDir, transcriptsDir: w.transcriptsDir, force: true }
      const held = yield* evaluateGates(input)
      assert.deepStrictEqual(held.checks.map((c) => c.status), ["bypassed", "bypassed", "failed"])
      assert.strictEqual(held.stoppedBy, "lock")
      assert.include(held.checks[2]!.detail, `pid ${sleeper.pid}`)

      sleeper.kill("SIGKILL")
      yield* Effect.promise(() => new Promise((resolve) => sleeper.once("exit", resolve)))
      const dead = yield* evaluateGates(input)
      assert.isTrue(dead.open)
      assert.include(dead.checks[2]!.detail, "dead holder")
    })))
})

// ---------------------------------------------------------------------------------------------------------------

describe("pure parts", () => {
  it("lineDiff returns removed and added lines in order", () => {
    assert.deepStrictEqual(lineDiff("a\nb\nc\n", "a\nB\nc\nd\n"), { removed: ["b"], added: ["B", "d"] })
    assert.deepStrictEqual(lineDiff("same\n", "same\n"), { removed: [], added: [] })
  })

  it("lineDiff: a rewrite past the search bound is reported whole (every old line removed, every new one added)", () => {
    const before = ["# notes", ...Array.from({ length: 1_500 }, (_, i) => `old ${i}`)]
    const after = ["# notes", ...Array.from({ length: 1_500 }, (_, i) => `new ${i}`)]
    assert.deepStrictEqual(lineDiff(before.join("\n"), after.join("\n")), { removed: before, added: after })
    // a small edit of the same file is still exact
    const edited = [...before.slice(0, 700), "changed", ...before.slice(701)]
    assert.deepStrictEqual(lineDiff(before.join("\n"), edited.join("\n")), { removed: ["old 699"], added: ["changed"] })
  })

  it("lineDiff: removed ⊆ before, added ⊆ after, and sizes add up", () => {
    FastCheck.assert(
      FastCheck.property(
        FastCheck.array(FastCheck.constantFrom("a", "b", "c", "d"), { maxLength: 30 }),
        FastCheck.array(FastCheck.constantFrom("a", "b", "c", "e"), { maxLength: 30 }),
        (before, after) => {
          const { added, removed } = lineDiff(before.join("\n"), after.join("\n"))
          const a = before.join("\n").split("\n")
          const b = after.join("\n").split("\n")
          // |LCS| = |a| - removed = |b| - added
          assert.strictEqual(a.length - removed.length, b.length - added.length)
          for (const line of removed) assert.include(a, line)
          for (const line of added) assert.include(b, line)
        }
      )
    )
  })

  it("diffSnapshots: created, updated (with removed text), deleted (full text), merged, and MEMORY.md apart", () => {
    const file = (content: string) => ({ content, size: content.length })
    const before: Snapshot = new Map([
      ["MEMORY.md", file("- [A](a.md) — a\n- [B](b.md) — b\n")],
      ["a.md", file("Integration tests use the real Postgres database never mocks\n")],
      ["b.md", file("Tests must hit the real Postgres database, mocks hid a broken migration\n")],
      ["c.md", file("freeze starts Thursday\n")],
      ["gone.md", file("unrelated words entirely\n")]
    ])
    const after: Snapshot = new Map([
      ["MEMORY.md", file("- [A](a.md) — a\n")],
      [
        "a.md",
        file(
          "Integration tests use the real Postgres database never mocks\nMocks hid a broken migration once (tests must hit it)\n"
        )
      ],
      ["c.md", file("freeze starts 2026-12-03\n")],
      ["new.md", file("brand new\n")]
    ])
    const diff = diffSnapshots(before, after, new Set(["a.md", "b.md", "c.md"]))
    assert.deepStrictEqual(diff.created.map((c) => [c.file, c.byDream]), [["new.md", false]])
    assert.deepStrictEqual(diff.updated.map((u) => [u.file, u.removed, u.added]), [
      ["a.md", "", "Mocks hid a broken migration once (tests must hit it)\n"],
      ["c.md", "freeze starts Thursday\n", "freeze starts 2026-12-03\n"]
    ])
    assert.deepStrictEqual(diff.deleted.map((d) => [d.file, d.text]), [
      ["b.md", "Tests must hit the real Postgres database, mocks hid a broken migration\n"],
      ["gone.md", "unrelated words entirely\n"]
    ])
    assert.deepStrictEqual(diff.merged.map((m) => [m.from, m.into]), [["b.md", "a.md"]])
    assert.deepStrictEqual(diff.index, { removed: "- [B](b.md) — b\n", added: "" })
    assert.isBelow(contentOverlap("unrelated words entirely", "brand new"), 0.5)
  })

  it("fitIndexToCaps always fits and drops the least recently changed memories first", () => {
    FastCheck.assert(
      FastCheck.property(
        FastCheck.integer({ min: 0, max: 400 }),
        FastCheck.integer({ min: 20, max: 300 }),
        (entries, hookLength) => {
          const text = Array.from(
            { length: entries },
            (_, i) => `- [M${i}](project_m${i}.md) — ${"h".repeat(hookLength)}`
          ).join("\n") + "\n"
          // memory i changed at time i: lower i is older
          const result = fitIndexToCaps(text, (file) => Number(/m(\d+)\.md/.exec(file)![1]))
          assert.isTrue(MemoryIndex.fitsIndexCaps(result.text))
          const kept = new Set(MemoryIndex.indexEntries(result.text).map((e) => e.file))
          assert.strictEqual(kept.size + result.removed.length, entries)
          if (result.removed.length > 0) {
            const newestRemoved = Math.max(...result.removed.map((l) => Number(/m(\d+)\.md/.exec(l)![1])))
            for (const file of kept) assert.isAbove(Number(/m(\d+)\.md/.exec(file)![1]), newestRemoved)
          } else {
            assert.strictEqual(result.text, text)
          }
        }
      )
    )
  })

  it("the prompt: four phases, today's date, named variants, typed error for an unknown one", () => {
    const system = renderDreamSystemPrompt({ memoryDir: "/m/memory", now: NOW })
    assert.isTrue(system._tag === "Success")
    const text = system._tag === "Success" ? system.success : ""
    for (const phase of ["1. Orient", "2. Gather", "3. Consolidate", "4. Prune"]) assert.include(text, phase)
    assert.include(text, "Today is 2026-12-03 (UTC)")
    assert.include(text, "`/m/memory/`")
    assert.include(text, "Merge rather than duplicate")
    assert.notInclude(text, "{{")
    assert.notInclude(dreamPromptVariants["without-merge-first"]!, "Merge rather than duplicate")
    const unknown = renderDreamSystemPrompt({ memoryDir: "/m", now: NOW, variant: "nope" })
    assert.strictEqual(unknown._tag === "Failure" && unknown.failure.known.join(","), "default,without-merge-first")
  })

  it("transcriptLineText reads both transcript formats", () => {
    assert.strictEqual(transcriptLineText(JSON.stringify({ role: "user", content: "hello  there" })), "hello there")
    assert.strictEqual(
      transcriptLineText(JSON.stringify({
        type: "assistant",
        message: {
          role: "assistant",
          content: [{ type: "text", text: "ran it" }, { type: "tool_use", name: "Bash", input: { command: "ls" } }]
        }
      })),
      "ran it Bash({\"command\":\"ls\"})"
    )
    assert.strictEqual(transcriptLineText("not json"), "")
  })
})

describe("transcript_search", () => {
  it.effect("finds a term in the touched sessions only, with session:line, and narrows to one session", () =>
    Effect.gen(function*() {
      const w = yield* world
      w.session("a", NOW, [
        { role: "user", content: "the staging database is flaky" },
        { role: "assistant", content: [{ type: "text", text: "Noted: staging DATABASE flaky on Mondays" }] }
      ])
      w.session("b", NOW, [{ type: "user", message: { role: "user", content: "unrelated" } }])
      w.session("untouched", NOW, [{ role: "user", content: "staging database again" }])
      const sessions = ["a", "b"].map((id) => ({
        id,
        path: NodePath.join(w.transcriptsDir, `${id}.jsonl`),
        mtime: NOW
      }))
      const tool = yield* transcriptSearchTool(sessions)
      const found = yield* tool.run({ query: "staging database" })
      assert.isFalse(found.isError)
      assert.deepStrictEqual(found.content.split("\n").map((l) => l.split(": ")[0]), ["a:1", "a:2"])
      assert.notInclude(found.content, "again")
      assert.strictEqual((yield* tool.run({ query: "staging", session: "b" })).content, "(no matches)")
      assert.isTrue((yield* tool.run({ query: "staging", session: "zzz" })).isError)
      assert.isTrue((yield* tool.run({ query: "ab" })).isError, "too short a query is refused")
      assert.isTrue((yield* tool.run({ query: "x".repeat(201) })).isError, "too long a query is refused")
      // A transcript over the size bound is skipped, and the answer names it (a sparse file: nothing is read).
      const huge = NodePath.join(w.transcriptsDir, "huge.jsonl")
      NodeFs.writeFileSync(huge, "")
      NodeFs.truncateSync(huge, 33 * 1024 * 1024)
      const withHuge = yield* transcriptSearchTool([...sessions, { id: "huge", path: huge, mtime: NOW }])
      const answer = (yield* withHuge.run({ query: "staging database" })).content
      assert.include(answer, "a:1: ")
      assert.include(answer, `[skipped, over ${32 * 1024 * 1024} bytes: huge]`)
    }).pipe(Effect.provide(Layer.mergeAll(MemoryFs.layer, NodeServices.layer))))
})

// ---------------------------------------------------------------------------------------------------------------

/** A directory with a duplicate pair, a contradiction, a relative date and an index over its caps. */
const seedDirectory = (w: World) => {
  const old = NOW - 40 * 24 * HOUR
  w.write(
    "feedback_testing.md",
    memoryText(
      "feedback",
      "Testing policy",
      "Integration tests hit the real database, not mocks",
      "Integration tests use the docker Postgres.\n"
    ),
    old
  )
  w.write(
    "feedback_db_mocks.md",
    memoryText(
      "feedback",
      "No database mocks",
      "Do not mock the database in tests",
      "Never mock the database in integration tests: mocks hid a broken migration in production.\n"
    ),
    old + 1000
  )
  w.write(
    "project_release.md",
    memoryText("project", "Release freeze", "Merge freeze for the mobile release", "Merge freeze starts Thursday.\n"),
    NOW - 3 * 24 * HOUR
  )
  w.write(
    "project_no_freeze.md",
    memoryText("project", "No freeze", "No merge freeze is planned this quarter", "No freeze planned.\n"),
    old
  )
  // 230 lines: the real entries, then dead pointers to memories deleted by hand long ago
  const entries = [
    "- [Testing policy](feedback_testing.md) — integration tests hit the real database",
    "- [No database mocks](feedback_db_mocks.md) — do not mock the database",
    "- [Release freeze](project_release.md) — merge freeze for the mobile release",
    "- [No freeze](project_no_freeze.md) — no merge freeze planned",
    ...Array.from({ length: 226 }, (_, i) => `- [Gone ${i}](project_gone_${i}.md) — deleted by hand`)
  ]
  w.write("MEMORY.md", entries.join("\n") + "\n")
}

/**
 * One write per turn: every memory write takes the index lock, and concurrent writers back off on the clock, which
 * the TestClock does not move (test/dream.test.ts runs parallel writes in one turn, on the real clock).
 */
const dreamScript = (): Model.ModelScript => [
  toolUses(
    { name: "memory_read", input: { path: "feedback_db_mocks.md" } },
    { name: "transcript_search", input: { query: "freeze" } }
  ),
  toolUses({
    name: "memory_write",
    input: {
      path: "feedback_testing.md",
      content: memoryText(
        "feedback",
        "Testing policy",
        "Integration tests hit the real database, never mocks",
        "Integration tests use the docker Postgres; never mock the database.\n\n**Why:** mocks hid a broken " +
          "migration in production.\n"
      )
    }
  }),
  toolUses({ name: "memory_delete", input: { path: "feedback_db_mocks.md" } }),
  toolUses({
    name: "memory_edit",
    input: { path: "project_release.md", old_string: "Thursday", new_string: "2026-12-03" }
  }),
  toolUses({ name: "memory_delete", input: { path: "project_no_freeze.md" } }),
  Model.textReply("Merged the two testing memories, dated the freeze, dropped the contradicted no-freeze memory.")
]

describe("runDream (scripted model, real files)", () => {
  it.effect("merges a duplicate pair, resolves a contradiction, dates a relative date; the report keeps every removed text", () =>
    Effect.gen(function*() {
      const w = yield* world
      seedDirectory(w)
      git(w.memoryDir, "init", "-q", "-b", "main")
      git(w.memoryDir, "add", ".")
      git(w.memoryDir, "commit", "-qm", "before the dream")
      for (let i = 0; i < 6; i++) {
        w.session(`s${i}`, NOW - HOUR, [{ role: "user", content: `we agreed the merge freeze starts Thursday (${i})` }])
      }
      w.lockAt(NOW - 30 * HOUR)
      yield* appendLog({ memoryDir: w.memoryDir, text: "Dana: the release freeze starts Thursday" })

      const outcome = yield* runDream({
        memoryDir: w.memoryDir,
        transcriptsDir: w.transcriptsDir,
        projectRoot: w.root
      })
      assert.strictEqual(outcome._tag, "Completed")
      if (outcome._tag !== "Completed") return
      const report = outcome.report
      assert.strictEqual(report.status, "completed")
      assert.strictEqual(report.turns, 6)

      // merged: the duplicate's full text is in the report and in the backup
      assert.deepStrictEqual(report.merged.map((m) => [m.from, m.into]), [[
        "feedback_db_mocks.md",
        "feedback_testing.md"
      ]])
      const mocks = report.deleted.find((d) => d.file === "feedback_db_mocks.md")!
      assert.include(mocks.text!, "mocks hid a broken migration in production")
      assert.isTrue(mocks.byDream)
      assert.include(NodeFs.readFileSync(NodePath.join(w.memoryDir, mocks.backup!), "utf8"), "No database mocks")
      // contradiction resolved: deleted with its text
      assert.include(report.deleted.find((d) => d.file === "project_no_freeze.md")!.text!, "No freeze planned.")
      // relative → absolute, with the removed text
      const release = report.updated.find((u) => u.file === "project_release.md")!
      assert.include(release.removed, "Merge freeze starts Thursday.")
      assert.include(release.added, "Merge freeze starts 2026-12-03.")
      assert.include(w.read("project_release.md"), "2026-12-03")
      assert.include(w.read("feedback_testing.md"), "never mock the database")
      assert.isFalse(NodeFs.existsSync(NodePath.join(w.memoryDir, "feedback_db_mocks.md")))
      assert.strictEqual(report.summary.slice(0, 26), "Merged the two testing mem")

      // index back under its caps, dead pointers gone, each removal listed
      const index = w.read("MEMORY.md")
      assert.isAtMost(MemoryIndex.countLines(index), INDEX_MAX_LINES)
      assert.isAtMost(Buffer.byteLength(index), INDEX_MAX_BYTES)
      assert.notInclude(index, "project_gone_")
      assert.notInclude(index, "feedback_db_mocks.md")
      assert.include(index, "(feedback_testing.md)")
      assert.isTrue(report.index!.underCaps)
      assert.strictEqual(report.index!.removed.filter((r) => r.reason === "dead pointer").length, 226)

      // the report on disk, and the previous MEMORY.md
      const onDisk = JSON.parse(
        NodeFs.readFileSync(NodePath.join(w.memoryDir, report.backupDir, "report.json"), "utf8")
      )
      assert.strictEqual(onDisk.status, "completed")
      assert.strictEqual(onDisk.deleted.length, 2)
      assert.include(NodeFs.readFileSync(NodePath.join(w.memoryDir, report.backupDir, "MEMORY.md"), "utf8"), "Gone 225")

      // one commit with the memory files only
      assert.strictEqual(report.commit?.status, "committed")
      assert.match(
        git(w.memoryDir, "log", "-1", "--format=%s"),
        /^memdir dream: 0 created, 2 updated, 1 merged, 2 deleted/
      )
      const committed = git(w.memoryDir, "show", "--name-only", "--format=", "HEAD").trim().split("\n").sort()
      assert.deepStrictEqual(committed, [
        "MEMORY.md",
        "feedback_db_mocks.md",
        "feedback_testing.md",
        "logs/2026/12/2026-12-03.md",
        "project_no_freeze.md",
        "project_release.md"
      ])
      assert.strictEqual(git(w.memoryDir, "status", "--porcelain", "--", ".", ":(exclude).*").trim(), "")

      // the lock: released, dated at the end of the dream, free
      const lock = yield* (yield* DreamLock.DreamLock).inspect(w.memoryDir)
      assert.strictEqual(lock.status, "free")
      assert.strictEqual(lock.lastConsolidatedAt, NOW)

      // what memdir sent
      const requests = yield* (yield* Model.ModelRequests).all
      assert.strictEqual(requests.length, 6)
      const first = requests[0]!
      assert.strictEqual(first.role, "dreamer")
      assert.strictEqual(first.maxTokens, DREAM_MAX_TOKENS)
      const system = (first.system as ReadonlyArray<{ text: string; cache?: boolean }>)[0]!
      assert.isTrue(system.cache)
      assert.include(system.text, "4. Prune")
      const content = first.messages[0]!.content
      const opening = typeof content === "string" ?
        content :
        content.map((block) => (block.type === "text" ? block.text : "")).join("")
      assert.include(opening, "- [feedback] feedback_db_mocks.md")
      assert.include(opening, "Dana: the release freeze starts Thursday")
      assert.include(opening, "Sessions since the last consolidation (6)")
      assert.include(opening, "Last consolidation: 2026-12-02T03:00:00.000Z")
      const tools = first.tools!.map((t) => t.name)
      for (const name of ["memory_read", "memory_write", "memory_edit", "memory_delete", "transcript_search", "grep"]) {
        assert.include(tools, name)
      }
      // the transcript search answered from the sessions
      const second = requests[1]!.messages.at(-1)!.content as ReadonlyArray<Anthropic.ToolResultBlockParam>
      assert.include(String(second[1]!.content), "s0:1:")
    }).pipe(withServices(dreamScript())))

  it.effect("not a repository: no commit, said so; nothing to do: gates stop it before any model call", () =>
    Effect.gen(function*() {
      const w = yield* world
      seedDirectory(w)
      for (let i = 0; i < 6; i++) w.session(`s${i}`, NOW - HOUR)
      const input = { memoryDir: w.memoryDir, transcriptsDir: w.transcriptsDir }
      const outcome = yield* runDream(input)
      assert.strictEqual(outcome._tag, "Completed")
      if (outcome._tag === "Completed") {
        assert.deepStrictEqual(outcome.report.commit, {
          status: "skipped",
          reason: "the memory directory is not a git repository"
        })
      }
      // right after: the time gate stops the next one
      const again = yield* runDream(input)
      assert.strictEqual(again._tag, "Stopped")
      assert.strictEqual(again.gates.stoppedBy, "time")
      assert.strictEqual((yield* (yield* Model.ModelRequests).all).length, 6)
    }).pipe(withServices(dreamScript())))

  it.effect("GIT_DIR, GIT_WORK_TREE and GIT_INDEX_FILE from the caller: the dream never commits into the project", () =>
    Effect.gen(function*() {
      const w = yield* world
      seedDirectory(w)
      const project = NodePath.join(w.root, "project")
      NodeFs.mkdirSync(project)
      git(project, "init", "-q", "-b", "main")
      NodeFs.writeFileSync(NodePath.join(project, "README.md"), "the project\n")
      git(project, "add", "README.md")
      git(project, "commit", "-qm", "project")
      const projectHead = git(project, "rev-parse", "HEAD")
      const inherited = {
        GIT_DIR: NodePath.join(project, ".git"),
        GIT_WORK_TREE: project,
        GIT_INDEX_FILE: NodePath.join(project, ".git", "index")
      }
      const saved = Object.fromEntries(Object.keys(inherited).map((k) => [k, process.env[k]]))
      const outcome = yield* Effect.acquireUseRelease(
        Effect.sync(() => Object.assign(process.env, inherited)),
        () => runDream({ memoryDir: w.memoryDir, transcriptsDir: w.transcriptsDir, force: true }),
        () =>
          Effect.sync(() => {
            for (const [k, v] of Object.entries(saved)) {
              if (v === undefined) delete process.env[k]
              else process.env[k] = v
            }
          })
      )
      assert.strictEqual(outcome._tag, "Completed")
      if (outcome._tag !== "Completed") return
      // The memory directory is no repository of its own: nothing to commit to, whatever GIT_DIR says.
      assert.deepStrictEqual(outcome.report.commit, {
        status: "skipped",
        reason: "the memory directory is not a git repository"
      })
      assert.strictEqual(git(project, "rev-parse", "HEAD"), projectHead)
      assert.strictEqual(git(project, "ls-files"), "README.md\n")
      assert.strictEqual(git(project, "status", "--porcelain"), "")
    }).pipe(withServices([Model.textReply("Nothing to consolidate.")])))

  it.effect("the memory repository's hooks and filters run nothing during the dream's commit", () =>
    Effect.gen(function*() {
      const w = yield* world
      seedDirectory(w)
      git(w.memoryDir, "init", "-q", "-b", "main")
      git(w.memoryDir, "add", ".")
      git(w.memoryDir, "commit", "-qm", "before the dream")
      const markers = NodePath.join(w.root, "markers")
      NodeFs.mkdirSync(markers)
      const recorder = NodePath.join(w.root, "recorder.sh")
      NodeFs.writeFileSync(recorder, `#!/bin/sh\ntouch "${markers}/$1"\nsed s/e/E/g\n`, { mode: 0o755 })
      for (const hook of ["pre-commit", "commit-msg", "post-commit", "post-index-change", "reference-transaction"]) {
        NodeFs.writeFileSync(NodePath.join(w.memoryDir, ".git", "hooks", hook), `#!/bin/sh\n"${recorder}" ${hook}\n`, {
          mode: 0o755
        })
      }
      git(w.memoryDir, "config", "filter.evil.clean", `"${recorder}" clean`)
      git(w.memoryDir, "config", "filter.evil.process", `"${recorder}" process`)
      git(w.memoryDir, "config", "filter.evil.required", "true")
      NodeFs.writeFileSync(NodePath.join(w.memoryDir, ".gitattributes"), "* filter=evil\n")
      const outcome = yield* runDream({ memoryDir: w.memoryDir, transcriptsDir: w.transcriptsDir, force: true })
      assert.strictEqual(outcome._tag, "Completed")
      if (outcome._tag !== "Completed") return
      assert.strictEqual(outcome.report.commit?.status, "committed", JSON.stringify(outcome.report.commit))
      assert.deepStrictEqual(NodeFs.readdirSync(markers), [])
      // committed as it is on disk, through no filter
      assert.strictEqual(git(w.memoryDir, "show", "HEAD:MEMORY.md"), w.read("MEMORY.md"))
    }).pipe(withServices([Model.textReply("Nothing to consolidate.")])))

  it.effect("dry run: gates and the exact request, nothing written, no model called (also without a key)", () =>
    Effect.gen(function*() {
      const w = yield* world
      seedDirectory(w)
      for (let i = 0; i < 6; i++) w.session(`s${i}`, NOW - HOUR)
      const list = () => NodeFs.readdirSync(w.memoryDir, { recursive: true, encoding: "utf8" }).sort()
      const before = list()
      const index = w.read("MEMORY.md")
      const outcome = yield* runDream({ memoryDir: w.memoryDir, transcriptsDir: w.transcriptsDir, dryRun: true })
      assert.strictEqual(outcome._tag, "DryRun")
      if (outcome._tag !== "DryRun") return
      assert.include(outcome.preview.system, "1. Orient")
      assert.include(outcome.preview.firstMessage, "Sessions since the last consolidation (6)")
      assert.include(outcome.preview.tools.map((t) => t.name), "memory_delete")
      assert.deepStrictEqual(list(), before)
      assert.strictEqual(w.read("MEMORY.md"), index)
      assert.strictEqual((yield* (yield* Model.ModelRequests).all).length, 0)
    }).pipe(withServices([], { available: false })))

  it.effect("without a key: gates evaluate, then ModelError not-configured; the lock is never created", () =>
    Effect.gen(function*() {
      const w = yield* world
      for (let i = 0; i < 6; i++) w.session(`s${i}`, NOW - HOUR)
      const error = yield* Effect.flip(runDream({ memoryDir: w.memoryDir, transcriptsDir: w.transcriptsDir }))
      assert.strictEqual(error._tag, "ModelError")
      assert.strictEqual(error._tag === "ModelError" && error.kind, "not-configured")
      assert.isFalse(NodeFs.existsSync(NodePath.join(w.memoryDir, DreamLock.DREAM_LOCK_FILE)))
      // gates that stop it still answer without a key
      const stopped = yield* runDream({ memoryDir: w.memoryDir, transcriptsDir: w.root })
      assert.strictEqual(stopped._tag, "Stopped")
    }).pipe(withServices([], { available: false })))

  it.effect("the model fails mid-dream: the error surfaces, the lock rolls back, what was deleted is kept", () =>
    Effect.gen(function*() {
      const w = yield* world
      seedDirectory(w)
      for (let i = 0; i < 6; i++) w.session(`s${i}`, NOW - HOUR)
      const previous = NOW - 48 * HOUR
      w.lockAt(previous)
      const error = yield* Effect.flip(runDream({ memoryDir: w.memoryDir, transcriptsDir: w.transcriptsDir }))
      assert.strictEqual(error._tag, "ModelError")
      const lock = yield* (yield* DreamLock.DreamLock).inspect(w.memoryDir)
      assert.strictEqual(lock.lastConsolidatedAt, previous)
      assert.strictEqual(lock.status, "free")
      const dreams = NodeFs.readdirSync(NodePath.join(w.memoryDir, ".dream"))
      assert.strictEqual(dreams.length, 1)
      const trace = NodePath.join(w.memoryDir, ".dream", dreams[0]!)
      const report = JSON.parse(NodeFs.readFileSync(NodePath.join(trace, "report.json"), "utf8"))
      assert.strictEqual(report.status, "failed")
      assert.include(report.error, "overloaded")
      assert.deepStrictEqual(report.deleted.map((d: any) => d.file), ["project_no_freeze.md"])
      assert.include(NodeFs.readFileSync(NodePath.join(trace, "project_no_freeze.md"), "utf8"), "No freeze planned.")
    }).pipe(withServices([
      toolUses({ name: "memory_delete", input: { path: "project_no_freeze.md" } }),
      new ModelError({ kind: "overloaded", role: "dreamer", model: "m", detail: "overloaded after retries" })
    ])))

  /** The scripted answers, then a model that never answers (the call signals `waiting` and hangs). */
  const answersThenWaits = (answers: ReadonlyArray<Model.ScriptedReply>, waiting: Deferred.Deferred<void>) =>
    MemoryStore.layerNode.pipe(
      Layer.provideMerge(Layer.mergeAll(
        DreamLock.layer,
        MemoryIndex.layer,
        Scanner.layerNode,
        Layer.effect(
          Model.Model,
          Effect.map(Model.Model, (scripted) => {
            let calls = 0
            return Model.Model.of({
              ...scripted,
              complete: (request) =>
                calls++ < answers.length ?
                  scripted.complete(request) :
                  Deferred.succeed(waiting, undefined).pipe(Effect.andThen(Effect.never))
            })
          })
        ).pipe(Layer.provide(Model.layerTest(answers)))
      )),
      Layer.provideMerge(Layer.mergeAll(MemoryFs.layer, NodeServices.layer))
    )

  const stampDirs = (memoryDir: string) => {
    const dreams = NodePath.join(memoryDir, ".dream")
    return NodeFs.existsSync(dreams) ?
      NodeFs.readdirSync(dreams, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name) :
      []
  }

  it.effect("interrupted while the model is waiting: no empty .dream/<stamp>/ is left", () =>
    Effect.gen(function*() {
      const waiting = yield* Deferred.make<void>()
      const w = yield* world
      seedDirectory(w)
      const fiber = yield* Effect.forkChild(
        runDream({ memoryDir: w.memoryDir, transcriptsDir: w.transcriptsDir, force: true }).pipe(
          Effect.provide(answersThenWaits([], waiting))
        )
      )
      yield* Deferred.await(waiting)
      yield* Fiber.interrupt(fiber)
      const exit = yield* Fiber.await(fiber)
      assert.isTrue(exit._tag === "Failure")
      assert.deepStrictEqual(stampDirs(w.memoryDir), [])
    }).pipe(Effect.provide(NodeServices.layer)))

  it.effect("interrupted after a deletion: the deleted memory's text is kept, and only that is in the trace", () =>
    Effect.gen(function*() {
      const waiting = yield* Deferred.make<void>()
      const w = yield* world
      seedDirectory(w)
      const fiber = yield* Effect.forkChild(
        runDream({ memoryDir: w.memoryDir, transcriptsDir: w.transcriptsDir, force: true }).pipe(
          Effect.provide(answersThenWaits([
            toolUses({ name: "memory_delete", input: { path: "project_no_freeze.md" } })
          ], waiting))
        )
      )
      yield* Deferred.await(waiting)
      yield* Fiber.interrupt(fiber)
      assert.isFalse(NodeFs.existsSync(NodePath.join(w.memoryDir, "project_no_freeze.md")))
      const [stamp, ...others] = stampDirs(w.memoryDir)
      assert.deepStrictEqual(others, [])
      const trace = NodePath.join(w.memoryDir, ".dream", stamp!)
      assert.deepStrictEqual(NodeFs.readdirSync(trace), ["project_no_freeze.md"])
      assert.include(NodeFs.readFileSync(NodePath.join(trace, "project_no_freeze.md"), "utf8"), "No freeze planned.")
    }).pipe(Effect.provide(NodeServices.layer)))

  it.effect("sandbox: a write outside the memory directory or into logs/ is refused and reported, nothing escapes", () =>
    Effect.gen(function*() {
      const w = yield* world
      seedDirectory(w)
      for (let i = 0; i < 6; i++) w.session(`s${i}`, NOW - HOUR)
      const outcome = yield* runDream({ memoryDir: w.memoryDir, transcriptsDir: w.transcriptsDir, force: true })
      assert.strictEqual(outcome._tag, "Completed")
      if (outcome._tag !== "Completed") return
      assert.deepStrictEqual(outcome.report.refusals.map((r) => r.reason).sort(), ["escapes-root", "logs-append-only"])
      assert.isFalse(NodeFs.existsSync(NodePath.join(w.root, "evil.md")))
      assert.deepStrictEqual(outcome.report.created, [])
    }).pipe(withServices([
      toolUses(
        {
          name: "memory_write",
          input: { path: "../evil.md", content: memoryText("user", "x", "y", "z\n") }
        },
        { name: "memory_write", input: { path: "logs/2026/12/x.md", content: memoryText("user", "x", "y", "z\n") } }
      ),
      Model.textReply("nothing to do")
    ])))

  it.effect("a 1.2 MB memory the dream deletes, and a 600 KB one it edits in place, keep byte-exact previous versions", () =>
    Effect.gen(function*() {
      const w = yield* world
      w.write(
        "MEMORY.md",
        [
          "- [Release history](project_release_history.md) — every release note ever",
          "- [Freeze history](project_freeze_history.md) — every freeze ever",
          "- [Big but kept](project_big_kept.md) — not touched by the dream"
        ].join("\n") + "\n"
      )
      for (let i = 0; i < 6; i++) w.session(`s${i}`, NOW - HOUR)
      // Over the 1 MiB the snapshot holds in memory: copied byte for byte, compared by digest.
      const bigBody = (day: string, lines = 30_000) =>
        Array.from({ length: lines }, (_, i) => `${String(i).padStart(5, "0")} release notes, freeze ${day} ok`)
          .join("\n") + "\n"
      const huge = memoryText("project", "Release history", "Every release note ever", bigBody("Thursday"))
      // Over the write cap (hand-written), under the 1 MiB a memory tool reads: edited without growing.
      const edited = memoryText("project", "Freeze history", "Every freeze ever", bigBody("Thursday", 15_000))
      const untouched = memoryText("project", "Big but kept", "Not touched by the dream", bigBody("Monday"))
      assert.isAbove(Buffer.byteLength(huge), 1_200_000)
      w.write("project_release_history.md", huge)
      w.write("project_freeze_history.md", edited)
      w.write("project_big_kept.md", untouched)

      const outcome = yield* runDream({ memoryDir: w.memoryDir, transcriptsDir: w.transcriptsDir, force: true })
      assert.strictEqual(outcome._tag, "Completed")
      if (outcome._tag !== "Completed") return
      const report = outcome.report
      assert.isFalse(NodeFs.existsSync(NodePath.join(w.memoryDir, "project_release_history.md")))

      // Deleted: its full text is in the backup, byte for byte, and the report says where.
      const deleted = report.deleted.find((d) => d.file === "project_release_history.md")!
      assert.isTrue(deleted.byDream)
      assert.strictEqual(deleted.backup, `${report.backupDir}/project_release_history.md`)
      assert.strictEqual(NodeFs.readFileSync(NodePath.join(w.memoryDir, deleted.backup!), "utf8"), huge)

      // Edited without changing its size (so over the cap is allowed): seen, and its previous version kept.
      const after = w.read("project_freeze_history.md")
      assert.strictEqual(after.length, edited.length)
      assert.notStrictEqual(after, edited)
      const updated = report.updated.find((u) => u.file === "project_freeze_history.md")!
      assert.isTrue(updated.byDream)
      assert.strictEqual(updated.backup, `${report.backupDir}/project_freeze_history.md`)
      assert.strictEqual(NodeFs.readFileSync(NodePath.join(w.memoryDir, updated.backup!), "utf8"), edited)

      // Untouched: no backup, and no copy left behind.
      assert.isUndefined(report.updated.find((u) => u.file === "project_big_kept.md"))
      assert.deepStrictEqual(NodeFs.readdirSync(NodePath.join(w.memoryDir, report.backupDir)).sort(), [
        "MEMORY.md",
        "project_freeze_history.md",
        "project_release_history.md",
        "report.json"
      ])
      assert.strictEqual(w.read("project_big_kept.md"), untouched)
      assert.strictEqual(NodeFs.statSync(NodePath.join(w.memoryDir, deleted.backup!)).mode & 0o777, 0o600)
    }).pipe(withServices([
      toolUses({ name: "memory_delete", input: { path: "project_release_history.md" } }),
      toolUses({
        name: "memory_edit",
        input: {
          path: "project_freeze_history.md",
          old_string: "00042 release notes, freeze Thursday",
          new_string: "00042 release notes, freeze Saturday"
        }
      }),
      Model.textReply("Dropped the release history; fixed one freeze day.")
    ])))
})
