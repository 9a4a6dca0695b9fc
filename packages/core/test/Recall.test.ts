import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Path from "effect/Path"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import * as FastCheck from "fast-check"
import * as NodeFs from "node:fs"
import type { MemoryHeader } from "../src/Memory.js"
import * as MemoryFs from "../src/MemoryFs.js"
import * as MemoryIndex from "../src/MemoryIndex.js"
import * as MemoryStore from "../src/MemoryStore.js"
import {
  capBody,
  layerTest,
  layerWith,
  RECALL_MAX_BYTES_PER_MEMORY,
  RECALL_SESSION_BUDGET_BYTES,
  RecallSession,
  renderRecalledMemory,
  skipReasonFor
} from "../src/Recall.js"
import type { RecallResult } from "../src/Recall.js"
import * as ScannerModule from "../src/Scanner.js"
import { Scanner } from "../src/Scanner.js"
import * as SelectorModule from "../src/Selector.js"
import type { SelectorScript } from "../src/Selector.js"
import * as StalenessModule from "../src/Staleness.js"
import { MS_PER_DAY, staleCaveat } from "../src/Staleness.js"

const memoryFile = (name: string, description: string, type: string, body: string) =>
  `---\nname: ${name}\ndescription: ${description}\ntype: ${type}\n---\n\n${body}`

const DEPLOY = memoryFile(
  "Deploy runbook",
  "How to deploy billing-api to production from the release branch",
  "reference",
  "Run `fly deploy` from release/*, then the smoke-test job.\n"
)
const TESTS = memoryFile(
  "Integration tests hit a real database",
  "Integration tests must hit a real Postgres, never mocks",
  "feedback",
  "**Why:** mocks hid a broken migration.\n\n**How to apply:** use withTestDb().\n"
)

/** Counts scans; optionally blocks each scan on a gate; records whether a scan was interrupted. */
interface ScanProbe {
  readonly calls: Ref.Ref<number>
  readonly interrupted: Ref.Ref<boolean>
  readonly gate: Deferred.Deferred<void> | undefined
}

const makeProbe = (blocked: boolean) =>
  Effect.gen(function*() {
    return {
      calls: yield* Ref.make(0),
      interrupted: yield* Ref.make(false),
      gate: blocked ? yield* Deferred.make<void>() : undefined
    } satisfies ScanProbe
  })

/** The real scanner, behind a probe. */
const probedScanner = (probe: ScanProbe) =>
  Layer.effect(
    Scanner,
    Effect.gen(function*() {
      const real = yield* ScannerModule.make.pipe(Effect.provide(MemoryFs.layer))
      return Scanner.of({
        scan: (dir, options) =>
          Effect.gen(function*() {
            yield* Ref.update(probe.calls, (n) => n + 1)
            if (probe.gate !== undefined) yield* Deferred.await(probe.gate)
            return yield* real.scan(dir, options)
          }).pipe(Effect.onInterrupt(() => Ref.set(probe.interrupted, true)))
      })
    })
  )

/** A session over the real file system, the real scanner (probed) and the offline or a scripted selector. */
const sessionLayer = (
  probe: ScanProbe,
  options: { readonly script?: SelectorScript; readonly scanner?: Layer.Layer<Scanner, never, Path.Path> } = {}
) =>
  layerWith({}).pipe(
    Layer.provide(Layer.mergeAll(
      options.scanner ?? probedScanner(probe),
      options.script === undefined ? SelectorModule.layer : SelectorModule.layerTest(options.script),
      StalenessModule.layer,
      MemoryStore.layerNode.pipe(Layer.provide(MemoryIndex.layer))
    )),
    Layer.provideMerge(NodeServices.layer)
  )

/** Polls until `predicate` holds (for waiting on other fibers in live tests; the test timeout bounds it). */
const waitFor = <A>(effect: Effect.Effect<A>, predicate: (a: A) => boolean): Effect.Effect<A> =>
  Effect.gen(function*() {
    for (;;) {
      const value = yield* effect
      if (predicate(value)) return value
      yield* Effect.sleep("1 millis")
    }
  })

/** A temp memory dir with the given files (relative path → content), each with an mtime (default: now). */
const memoryDirWith = (files: Record<string, string | { readonly content: string; readonly mtime: number }>) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const dir = yield* fs.makeTempDirectoryScoped({ prefix: "memdir-recall-" })
    for (const [file, spec] of Object.entries(files)) {
      const target = path.join(dir, file)
      yield* fs.makeDirectory(path.dirname(target), { recursive: true })
      yield* fs.writeFileString(target, typeof spec === "string" ? spec : spec.content)
      if (typeof spec !== "string") yield* fs.utimes(target, new Date(spec.mtime), new Date(spec.mtime))
    }
    return dir
  }).pipe(Effect.provide(NodeServices.layer))

// Layers need their probe up front; tests that do not inspect it share this one.
const probe0: ScanProbe = Effect.runSync(makeProbe(false))

const allCandidates: SelectorScript = (request) => request.candidates.map((m: MemoryHeader) => m.path)

describe("skipping trivial prompts", () => {
  it("skips one word, empty and 'ignore memory' prompts, not short real ones", () => {
    assert.strictEqual(skipReasonFor("  deploy  "), "one-word-prompt")
    assert.strictEqual(skipReasonFor("thanks!"), "one-word-prompt")
    assert.strictEqual(skipReasonFor(" \n "), "empty-prompt")
    assert.strictEqual(skipReasonFor("ignore memory and write the haiku"), "ignore-memory")
    assert.strictEqual(skipReasonFor("please don't use your memories for this"), "ignore-memory")
    assert.isUndefined(skipReasonFor("fix it"))
    assert.isUndefined(skipReasonFor("add a memory profiler to the worker"))
  })

  it("counts words, not whitespace runs: a request in a script written without spaces is searched", () => {
    for (
      const query of [
        "帮我看看为什么测试又失败了",
        "このビルドエラーの直し方を教えて",
        "部署流程是什么",
        "ทำไมเทสต์ล้มเหลว"
      ]
    ) {
      assert.isUndefined(skipReasonFor(query), query)
    }
    for (const query of ["继续", "ありがとう", "thanks!", "  deploy  ", "…"]) {
      assert.notStrictEqual(skipReasonFor(query), undefined, query)
    }
  })

  it.effect("does not even scan for a one-word prompt, and records the skip in telemetry", () =>
    Effect.gen(function*() {
      const probe = yield* makeProbe(false)
      const dir = yield* memoryDirWith({ "reference_deploy.md": DEPLOY })
      yield* Effect.gen(function*() {
        const session = yield* RecallSession
        const result = yield* session.recall({ memoryDir: dir, query: "deploy" })
        assert.strictEqual(result.skipped, "one-word-prompt")
        assert.deepStrictEqual(result.selected, [])
        assert.strictEqual(yield* Ref.get(probe.calls), 0)
        const [event] = yield* session.telemetry
        assert.strictEqual(event!.outcome, "skipped")
        assert.strictEqual(event!.skipped, "one-word-prompt")
        yield* session.recall({ memoryDir: dir, query: "deploy billing-api" })
        assert.strictEqual(yield* Ref.get(probe.calls), 1)
      }).pipe(Effect.provide(sessionLayer(probe)))
    }))
})

describe("recall", () => {
  it.effect("selects, reads the body without frontmatter, ages it and records telemetry", () =>
    Effect.gen(function*() {
      const mtime = Date.UTC(2026, 0, 10)
      const dir = yield* memoryDirWith({
        "reference_deploy.md": { content: DEPLOY, mtime },
        "feedback_tests.md": { content: TESTS, mtime },
        "MEMORY.md": "- [Deploy runbook](reference_deploy.md) — how to deploy\n"
      })
      yield* TestClock.setTime(mtime + 47 * MS_PER_DAY + 3_600_000)
      const session = yield* RecallSession
      const result = yield* session.recall({ memoryDir: dir, query: "how do I deploy billing-api to production?" })
      assert.strictEqual(result.selector, "offline")
      assert.strictEqual(result.candidates, 2)
      assert.strictEqual(result.selected.length, 1)
      const memory = result.selected[0]!
      assert.strictEqual(memory.path, "reference_deploy.md")
      assert.strictEqual(memory.name, "Deploy runbook")
      assert.strictEqual(memory.type, "reference")
      assert.strictEqual(memory.content, "Run `fly deploy` from release/*, then the smoke-test job.\n")
      assert.isFalse(memory.truncated)
      assert.strictEqual(memory.ageDays, 47)
      assert.strictEqual(memory.age, "47 days ago")
      assert.strictEqual(memory.caveat, staleCaveat(47))
      assert.include(renderRecalledMemory(memory), staleCaveat(47))

      assert.strictEqual(result.telemetry.candidates, 2)
      assert.strictEqual(result.telemetry.selected, 1)
      assert.strictEqual(result.telemetry.bytes, Buffer.byteLength(memory.content))
      assert.deepStrictEqual(yield* session.telemetry, [result.telemetry])
    }).pipe(Effect.provide(sessionLayer(probe0))))

  it.effect("offers a file without frontmatter by its name and first lines, and delivers it whole", () =>
    Effect.gen(function*() {
      const notes = "# Config file format\n\nThe config is TOML; never switch it to YAML.\n"
      const dir = yield* memoryDirWith({ "reference_deploy.md": DEPLOY, "notes_config.md": notes })
      const session = yield* RecallSession
      const result = yield* session.recall({ memoryDir: dir, query: "let's move the config file to YAML" })
      assert.strictEqual(result.candidates, 2)
      assert.deepStrictEqual(result.selected.map((m) => m.path), ["notes_config.md"])
      assert.strictEqual(result.selected[0]!.content, notes)
      assert.strictEqual(result.selected[0]!.type, "untyped")
      assert.deepStrictEqual(result.unreadable, [])
    }).pipe(Effect.provide(sessionLayer(probe0))))

  it.effect("records telemetry when nothing is selected (0 of N)", () =>
    Effect.gen(function*() {
      const dir = yield* memoryDirWith({ "reference_deploy.md": DEPLOY, "feedback_tests.md": TESTS })
      const session = yield* RecallSession
      const events = yield* session.subscribeTelemetry
      const result = yield* session.recall({ memoryDir: dir, query: "write a haiku about autumn leaves" })
      assert.deepStrictEqual(result.selected, [])
      assert.isUndefined(result.skipped)
      const [event] = yield* Stream.runCollect(Stream.take(events, 1))
      assert.strictEqual(event!.candidates, 2)
      assert.strictEqual(event!.selected, 0)
      assert.strictEqual(event!.outcome, "delivered")
      assert.strictEqual(event!.queryChars, "write a haiku about autumn leaves".length)
    }).pipe(Effect.provide(sessionLayer(probe0))))

  it.effect("never surfaces a memory twice in one session, and leaves out files the agent already read", () =>
    Effect.gen(function*() {
      const files: Record<string, { content: string; mtime: number }> = {}
      for (let i = 0; i < 8; i++) {
        // m0 newest … m7 oldest
        files[`project_m${i}.md`] = {
          content: memoryFile(`M${i}`, `memory number ${i}`, "project", "b\n"),
          mtime: Date.UTC(2026, 0, 10) - i * 60_000
        }
      }
      const dir = yield* memoryDirWith(files)
      const path = yield* Path.Path
      const session = yield* RecallSession
      const query = "what do my memories say?"
      const first = yield* session.recall({ memoryDir: dir, query, max: 3 })
      const second = yield* session.recall({
        memoryDir: dir,
        query,
        alreadyRead: [path.join(dir, "project_m7.md"), "project_m6.md", "/elsewhere/project_m5.md"]
      })
      const firstPaths = first.selected.map((m) => m.path)
      const secondPaths = second.selected.map((m) => m.path)
      assert.strictEqual(first.candidates, 8)
      assert.strictEqual(firstPaths.length, 3)
      assert.strictEqual(second.candidates, 3) // 8 - 3 surfaced - 2 already read (the third lies outside the dir)
      assert.deepStrictEqual(firstPaths, ["project_m0.md", "project_m1.md", "project_m2.md"])
      assert.deepStrictEqual(secondPaths, ["project_m3.md", "project_m4.md", "project_m5.md"])
      assert.strictEqual((yield* session.surfaced).length, 6)
    }).pipe(Effect.provide(sessionLayer(probe0, { script: allCandidates }))))

  it.effect("drops names the selector invents and reports a selected file that vanished since the scan", () =>
    Effect.gen(function*() {
      const dir = yield* memoryDirWith({ "reference_deploy.md": DEPLOY, "feedback_tests.md": TESTS })
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const session = yield* RecallSession
      // The scripted selector deletes a file between the scan and the read, as a concurrent `rm` would.
      const result = yield* session.recall({ memoryDir: dir, query: "tests and deploys please" })
      assert.deepStrictEqual(result.selected.map((m) => m.path), ["reference_deploy.md"])
      assert.deepStrictEqual(result.unreadable.map((u) => u.path), ["feedback_tests.md"])
      assert.include(result.unreadable[0]!.detail, "feedback_tests.md")
      assert.isFalse(yield* fs.exists(path.join(dir, "feedback_tests.md")))
      assert.strictEqual(result.telemetry.unreadable, 1)
    }).pipe(Effect.provide(sessionLayer(probe0, {
      script: (request) => {
        const victim = request.candidates.find((m) => m.path === "feedback_tests.md")!
        NodeFs.rmSync(victim.absolutePath)
        return ["invented.md", "feedback_tests.md", "reference_deploy.md"]
      }
    }))))

  it.effect("caps each file at 200 lines with a note naming the path and the first line not shown", () =>
    Effect.gen(function*() {
      // File lines 1-5 are frontmatter, 6 is blank, the body starts at line 7.
      const body = Array.from({ length: 500 }, (_, i) => `L${i + 7}`).join("\n") + "\n"
      const dir = yield* memoryDirWith({ "project_long.md": memoryFile("Long", "a long memory", "project", body) })
      const path = yield* Path.Path
      const session = yield* RecallSession
      const [memory] = (yield* session.recall({ memoryDir: dir, query: "show the long one" })).selected
      assert.isTrue(memory!.truncated)
      const lines = memory!.content.split("\n")
      assert.strictEqual(lines[0], "L7")
      assert.strictEqual(lines[199], "L206")
      assert.notInclude(memory!.content, "L207\n")
      assert.include(memory!.content, `${path.join(dir, "project_long.md")}, lines 207+`)
    }).pipe(Effect.provide(sessionLayer(probe0, { script: allCandidates }))))

  it.effect("caps each file at 4 KiB without splitting a character", () =>
    Effect.gen(function*() {
      const line = "€uro ünïcödé line ✓\n" // multi-byte characters everywhere
      const body = line.repeat(400)
      const dir = yield* memoryDirWith({ "project_wide.md": memoryFile("Wide", "a wide memory", "project", body) })
      const session = yield* RecallSession
      const [memory] = (yield* session.recall({ memoryDir: dir, query: "show the wide one" })).selected
      assert.isTrue(memory!.truncated)
      const [shown, note] = memory!.content.split("\n\n[memdir: truncated")
      assert.isAtMost(Buffer.byteLength(shown!), RECALL_MAX_BYTES_PER_MEMORY)
      assert.isTrue(body.startsWith(shown!))
      assert.notInclude(shown!, "\uFFFD")
      // The cut is at a line end: every shown line is complete (the split ate the last newline).
      const shownLines = shown!.split("\n").length
      assert.strictEqual(shownLines, Math.floor(RECALL_MAX_BYTES_PER_MEMORY / Buffer.byteLength(line)))
      assert.include(note!, `lines ${7 + shownLines}+.]`)
    }).pipe(Effect.provide(sessionLayer(probe0, { script: allCandidates }))))

  it.effect("reads only the head of a huge memory and still points at the rest", () =>
    Effect.gen(function*() {
      const body = Array.from({ length: 20_000 }, (_, i) => `${String(i + 7).padStart(6, "0")} ${"z".repeat(93)}`)
        .join("\n")
      const dir = yield* memoryDirWith({ "project_huge.md": memoryFile("Huge", "a 2 MB memory", "project", body) })
      const session = yield* RecallSession
      const [memory] = (yield* session.recall({ memoryDir: dir, query: "show the huge one" })).selected
      assert.isTrue(memory!.truncated)
      const shownLines = Math.floor(RECALL_MAX_BYTES_PER_MEMORY / 101)
      assert.isTrue(memory!.content.startsWith(`000007 ${"z".repeat(93)}\n`))
      assert.include(memory!.content, `${String(6 + shownLines).padStart(6, "0")} `)
      assert.notInclude(memory!.content, `${String(7 + shownLines).padStart(6, "0")} `)
      assert.include(memory!.content, `lines ${7 + shownLines}+.]`)
    }).pipe(Effect.provide(sessionLayer(probe0, { script: allCandidates }))))

  it.effect("a first body line longer than the whole head read: its start is shown, cut with an ellipsis", () =>
    Effect.gen(function*() {
      const body = `${"zebra ".repeat(20_000)}\nsecond line\n` // 120 KB on line 7, past the head memdir reads
      const dir = yield* memoryDirWith({ "project_giant.md": memoryFile("Giant", "one giant line", "project", body) })
      const session = yield* RecallSession
      const [memory] = (yield* session.recall({ memoryDir: dir, query: "show the giant one" })).selected
      assert.isTrue(memory!.truncated)
      const [shown, note] = memory!.content.split("\n\n[memdir: truncated")
      assert.isTrue(shown!.startsWith("zebra zebra "), JSON.stringify(shown!.slice(0, 40)))
      assert.isTrue(shown!.endsWith("…"))
      assert.isTrue(body.startsWith(shown!.slice(0, -1)))
      assert.isAtMost(Buffer.byteLength(shown!.slice(0, -1)), RECALL_MAX_BYTES_PER_MEMORY)
      assert.include(note!, "lines 7+ (line 7 is cut off above).]")
    }).pipe(Effect.provide(sessionLayer(probe0, { script: allCandidates }))))

  it.effect("stops at the 60 KiB session budget, records it, and then skips recall without scanning", () =>
    Effect.gen(function*() {
      const probe = yield* makeProbe(false)
      const files: Record<string, string> = {}
      // ~4000-byte bodies: 15 fit in 61,440 bytes, the 16th does not.
      for (let i = 0; i < 20; i++) {
        files[`project_m${String(i).padStart(2, "0")}.md`] = memoryFile(
          `M${i}`,
          `m ${i}`,
          "project",
          "x".repeat(3999) + "\n"
        )
      }
      const dir = yield* memoryDirWith(files)
      const results: Array<RecallResult> = []
      yield* Effect.gen(function*() {
        const session = yield* RecallSession
        for (let i = 0; i < 5; i++) results.push(yield* session.recall({ memoryDir: dir, query: "all of them please" }))
        const budget = yield* session.budget
        assert.strictEqual(budget.limitBytes, RECALL_SESSION_BUDGET_BYTES)
        assert.strictEqual(budget.usedBytes, 15 * 4000)
        assert.isTrue(budget.exhausted)
      }).pipe(Effect.provide(sessionLayer(probe, { script: allCandidates })))
      assert.deepStrictEqual(results.map((r) => r.selected.length), [5, 5, 5, 0, 0])
      assert.strictEqual(results[3]!.droppedForBudget.length, 5)
      assert.strictEqual(results[3]!.telemetry.droppedForBudget, 5)
      assert.strictEqual(results[4]!.skipped, "budget-exhausted")
      assert.strictEqual(yield* Ref.get(probe.calls), 4)
    }))
})

describe("prefetch", () => {
  it.live("poll is None while the scan is blocked, Some once it finished; the first look commits it once", () =>
    Effect.gen(function*() {
      const probe = yield* makeProbe(true)
      const dir = yield* memoryDirWith({ "reference_deploy.md": DEPLOY, "feedback_tests.md": TESTS })
      yield* Effect.gen(function*() {
        const session = yield* RecallSession
        const handle = yield* session.prefetch({ memoryDir: dir, query: "deploy billing-api to production" })
        yield* waitFor(Ref.get(probe.calls), (n) => n === 1)
        assert.isTrue(Option.isNone(yield* handle.poll))
        assert.isTrue(Option.isNone(yield* handle.poll))
        assert.deepStrictEqual(yield* session.surfaced, [])

        yield* Deferred.succeed(probe.gate!, undefined)
        const done = yield* waitFor(handle.poll, Option.isSome)
        const result = Option.getOrThrow(done)
        assert.deepStrictEqual(result.selected.map((m) => m.path), ["reference_deploy.md"])
        assert.strictEqual(result.telemetry.source, "prefetch")
        // Later looks return the same result; it was committed once.
        assert.strictEqual(Option.getOrThrow(yield* handle.consume), result)
        assert.strictEqual(Option.getOrThrow(yield* handle.await), result)
        assert.strictEqual((yield* session.telemetry).length, 1)
        assert.strictEqual((yield* session.surfaced).length, 1)
      }).pipe(Effect.provide(sessionLayer(probe)))
    }).pipe(Effect.scoped))

  it.live("two prefetches that picked the same memory: the one taken second does not surface it again", () =>
    Effect.gen(function*() {
      const probe = yield* makeProbe(true)
      const dir = yield* memoryDirWith({ "reference_deploy.md": DEPLOY })
      yield* Effect.gen(function*() {
        const session = yield* RecallSession
        const input = { memoryDir: dir, query: "deploy billing-api to production" }
        const first = yield* session.prefetch(input)
        const second = yield* session.prefetch(input)
        yield* Deferred.succeed(probe.gate!, undefined)
        yield* waitFor(Effect.zipWith(first.isDone, second.isDone, (a, b) => a && b), (done) => done)
        assert.deepStrictEqual(yield* session.surfaced, []) // done is not taken
        const a = Option.getOrThrow(yield* first.consume)
        const b = Option.getOrThrow(yield* second.consume)
        assert.deepStrictEqual(a.selected.map((m) => m.path), ["reference_deploy.md"])
        assert.deepStrictEqual(b.selected, [])
        assert.strictEqual((yield* session.budget).usedBytes, a.telemetry.bytes)
      }).pipe(Effect.provide(sessionLayer(probe)))
    }).pipe(Effect.scoped))

  it.live("consume before it finished returns None without waiting and discards it: nothing is surfaced", () =>
    Effect.gen(function*() {
      const probe = yield* makeProbe(true)
      const dir = yield* memoryDirWith({ "reference_deploy.md": DEPLOY })
      yield* Effect.gen(function*() {
        const session = yield* RecallSession
        const input = { memoryDir: dir, query: "deploy billing-api to production" }
        const handle = yield* session.prefetch(input)
        yield* waitFor(Ref.get(probe.calls), (n) => n === 1)
        // The gate is never opened: if consume waited, this test would hang.
        assert.isTrue(Option.isNone(yield* handle.consume))
        assert.isTrue(Option.isNone(yield* handle.poll))
        assert.isTrue(Option.isNone(yield* handle.await))
        yield* waitFor(Ref.get(probe.interrupted), (b) => b)
        const [event] = yield* session.telemetry
        assert.strictEqual(event!.outcome, "discarded")
        assert.deepStrictEqual(yield* session.surfaced, [])

        // Nothing was committed, so the same memory still surfaces on the next turn.
        yield* Deferred.succeed(probe.gate!, undefined)
        const next = yield* session.recall(input)
        assert.deepStrictEqual(next.selected.map((m) => m.path), ["reference_deploy.md"])
      }).pipe(Effect.provide(sessionLayer(probe)))
    }).pipe(Effect.scoped))

  it.live("cancel interrupts a running prefetch and discards it", () =>
    Effect.gen(function*() {
      const probe = yield* makeProbe(true)
      const dir = yield* memoryDirWith({ "reference_deploy.md": DEPLOY })
      yield* Effect.gen(function*() {
        const session = yield* RecallSession
        const handle = yield* session.prefetch({ memoryDir: dir, query: "deploy billing-api to production" })
        yield* waitFor(Ref.get(probe.calls), (n) => n === 1)
        yield* handle.cancel
        yield* waitFor(Ref.get(probe.interrupted), (b) => b)
        assert.isTrue(Option.isNone(yield* handle.await))
        assert.isTrue(Option.isNone(yield* handle.consume))
        assert.deepStrictEqual((yield* session.telemetry).map((e) => e.outcome), ["discarded"])
      }).pipe(Effect.provide(sessionLayer(probe)))
    }).pipe(Effect.scoped))

  it.live("closing the session interrupts the prefetches still running", () =>
    Effect.gen(function*() {
      const probe = yield* makeProbe(true)
      const dir = yield* memoryDirWith({ "reference_deploy.md": DEPLOY })
      yield* Effect.gen(function*() {
        const session = yield* RecallSession
        yield* session.prefetch({ memoryDir: dir, query: "deploy billing-api to production" })
        yield* waitFor(Ref.get(probe.calls), (n) => n === 1)
        assert.isFalse(yield* Ref.get(probe.interrupted))
      }).pipe(Effect.provide(sessionLayer(probe)), Effect.scoped)
      assert.isTrue(yield* Ref.get(probe.interrupted))
    }).pipe(Effect.scoped))

  it.effect("a one-word prompt prefetches a skip without scanning (layerTest: no disk)", () =>
    Effect.gen(function*() {
      const session = yield* RecallSession
      const handle = yield* session.prefetch({ memoryDir: "/mem", query: "continue" })
      const result = Option.getOrThrow(yield* handle.await)
      assert.strictEqual(result.skipped, "one-word-prompt")
      const full = yield* session.recall({ memoryDir: "/mem", query: "deploy billing-api to production" })
      assert.deepStrictEqual(full.selected.map((m) => [m.path, m.absolutePath, m.age]), [
        ["reference_deploy.md", "/mem/reference_deploy.md", "today"]
      ])
    }).pipe(Effect.provide(
      layerTest({ "reference_deploy.md": { content: DEPLOY, mtime: 0 } }).pipe(Layer.provide(NodeServices.layer))
    )))
})

describe("capBody (pure)", () => {
  const opts = { absolutePath: "/m/x.md", firstLine: 7, maxLines: 200, maxBytes: 4096 }

  it("leaves a body under both caps untouched", () => {
    assert.deepStrictEqual(capBody("a\nb\n", opts), { content: "a\nb\n", truncated: false, bytes: 4 })
  })

  it("cuts one huge line mid-line, says so, and notes that more exists after a partial read", () => {
    const capped = capBody("y".repeat(10_000), opts)
    assert.isTrue(capped.truncated)
    assert.include(capped.content, "/m/x.md, lines 7+ (line 7 is cut off above)")
    // the start of the line, cut with an ellipsis
    assert.isTrue(
      capped.content.startsWith(`${"y".repeat(4096)}…\n\n[memdir: truncated`),
      capped.content.slice(4090, 4110)
    )
    const partial = capBody("short\n", { ...opts, moreAfter: true })
    assert.isTrue(partial.truncated)
    assert.include(partial.content, "lines 8+")
  })

  it("shows a prefix of the body within the caps, never a broken character", () => {
    FastCheck.assert(
      FastCheck.property(
        FastCheck.array(FastCheck.string({ unit: "grapheme", maxLength: 80 }), { maxLength: 400 }),
        (lines) => {
          const body = lines.join("\n")
          const capped = capBody(body, { ...opts, maxLines: 50, maxBytes: 1024 })
          const before = capped.truncated ? capped.content.split("\n\n[memdir: truncated")[0]! : capped.content
          // a line cut in the middle ends in an ellipsis that is not part of the body
          const shown = capped.content.includes("is cut off above)") ? before.slice(0, -1) : before
          const prefix = shown.endsWith("\n") && !body.startsWith(shown) ? shown.slice(0, -1) : shown
          assert.isTrue(body.startsWith(prefix))
          assert.isAtMost(Buffer.byteLength(prefix), 1024)
          assert.isAtMost(prefix.split("\n").length, 51)
          assert.strictEqual(capped.truncated, prefix.length < body.length)
          assert.strictEqual(capped.bytes, Buffer.byteLength(capped.content))
        }
      )
    )
  })
})
