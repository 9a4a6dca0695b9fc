import type Anthropic from "@anthropic-ai/sdk"
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Path from "effect/Path"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import * as Result from "effect/Result"
import * as TestClock from "effect/testing/TestClock"
import * as fs from "node:fs"
import { fileURLToPath } from "node:url"
import * as Server from "../../testing/src/MessagesApiServer.js"
import { ModelError } from "../src/Errors.js"
import {
  cursorStart,
  extract,
  type ExtractCursor,
  type ExtractInput,
  extractionPrompts,
  make as makeExtractor,
  renderExtractionPrompt,
  sessionFileStem
} from "../src/Extract.js"
import { acquireLock, releaseLock } from "../src/internal/fs/lock.js"
import {
  INDEX_FILE,
  INDEX_LOCK,
  layer as memoryIndexLayer,
  layerWith as memoryIndexLayerWith
} from "../src/MemoryIndex.js"
import * as MemoryStore from "../src/MemoryStore.js"
import * as Model from "../src/Model.js"
import { layerNode as scannerLayer } from "../src/Scanner.js"
import { parseTranscript, toJsonl } from "../src/Transcript.js"

const fixtures = fileURLToPath(new URL("fixtures/transcripts/", import.meta.url))
const sessionFixture = fs.readFileSync(`${fixtures}claude-code-session.jsonl`, "utf8")
const SESSION_ID = "6b0d9a4e-2f7c-4c1e-8d35-91a2f0e7c3d1"
const NOW = Date.parse("2026-03-05T10:00:00.000Z")

const services = MemoryStore.layerNode.pipe(
  Layer.provideMerge(Layer.mergeAll(memoryIndexLayer, scannerLayer)),
  Layer.provideMerge(NodeServices.layer)
)

const memoryFile = (name: string, description: string, type: string, body: string) =>
  `---\nname: ${name}\ndescription: ${description}\ntype: ${type}\n---\n\n${body}\n`

const toolUse = (id: string, name: string, input: unknown): Anthropic.ToolUseBlock => ({
  type: "tool_use",
  id,
  name,
  input,
  caller: { type: "direct" }
})
const tools = (...uses: ReadonlyArray<Anthropic.ToolUseBlock>): Model.ScriptedReply => ({
  content: uses,
  stopReason: "tool_use"
})

/** What a good extractor does with the session fixture: read round, write round, stop. */
const goodExtraction: ReadonlyArray<Model.ScriptedReply> = [
  tools(toolUse("r1", "memory_list", {}), toolUse("r2", "grep", { pattern: "mock" })),
  tools(
    toolUse("w1", "memory_write", {
      path: "feedback_no_db_mocks.md",
      content: memoryFile(
        "No database mocks in integration tests",
        "Integration tests hit a real database, never mocks",
        "feedback",
        "Never mock the database in integration tests.\n**Why:** mocked tests passed while a broken migration " +
          "shipped.\n**How to apply:** test/integration uses the real test database."
      )
    }),
    toolUse("w2", "memory_write", {
      path: "project_mobile_freeze.md",
      content: memoryFile(
        "Mobile release merge freeze",
        "Merge freeze for the mobile release from 2026-03-05",
        "project",
        "Merge freeze starts 2026-03-05 (said on 2026-03-03 as \"Thursday\")."
      )
    })
  ),
  Model.textReply("Saved 2 memories.")
]

const setup = (transcript: string) =>
  Effect.gen(function*() {
    const fileSystem = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const scratch = yield* fileSystem.realPath(yield* fileSystem.makeTempDirectoryScoped({ prefix: "memdir-extract-" }))
    const memoryDir = path.join(scratch, "memory")
    const projectRoot = path.join(scratch, "project")
    yield* fileSystem.makeDirectory(path.join(projectRoot, "test"), { recursive: true })
    yield* fileSystem.writeFileString(path.join(projectRoot, "test/db.ts"), "// never mock the db\n")
    const transcriptFile = path.join(scratch, "session.jsonl")
    yield* fileSystem.writeFileString(transcriptFile, transcript)
    const input: ExtractInput = { memoryDir, projectRoot, transcript: transcriptFile, homeDir: scratch }
    const cursorFile = path.join(memoryDir, ".extract", `${SESSION_ID}.json`)
    const readCursor = Effect.map(
      fileSystem.readFileString(cursorFile),
      (text) => JSON.parse(text) as ExtractCursor
    )
    const cursorExists = fileSystem.exists(cursorFile)
    const append = (text: string) => fileSystem.writeFileString(transcriptFile, text, { flag: "a" })
    return { scratch, memoryDir, projectRoot, transcriptFile, input, cursorFile, readCursor, cursorExists, append }
  })

/** The scripted model, built in the test's scope, with what it was asked. */
const scripted = (script: Model.ModelScript, options?: Model.TestModelOptions) =>
  Effect.gen(function*() {
    const context = yield* Layer.build(Model.layerTest(script, options))
    return { context, requests: Context.get(context, Model.ModelRequests).all }
  })

const userText = (request: Model.ModelRequest): string => {
  const content = request.messages[0]!.content
  return typeof content === "string" ? content : (content as Array<Anthropic.TextBlockParam>)[0]!.text
}

describe("extract (scripted model)", () => {
  // Live clock: the two parallel writes of round 2 contend for the index lock, whose backoff sleeps.
  it.live("reads the new messages, writes memories in two rounds, then advances the cursor", () =>
    Effect.gen(function*() {
      const env = yield* setup(sessionFixture)
      const model = yield* scripted(goodExtraction)
      const result = yield* extract(env.input).pipe(Effect.provide(model.context))

      assert.strictEqual(result.status, "extracted")
      assert.strictEqual(result.sessionId, SESSION_ID)
      assert.deepStrictEqual(result.range, { from: 0, to: 6, total: 6 })
      assert.strictEqual(result.remaining, 0)
      // The two writes of one turn run in parallel: they complete in either order.
      assert.deepStrictEqual(result.changes.map((c) => [c.op, c.file]).sort(), [
        ["created", "feedback_no_db_mocks.md"],
        ["created", "project_mobile_freeze.md"]
      ])
      assert.deepStrictEqual(result.refusals, [])
      assert.strictEqual(result.agent?.turns, 3)
      assert.strictEqual(result.agent?.stop, "end_turn")
      const index = fs.readFileSync(`${env.memoryDir}/${INDEX_FILE}`, "utf8")
      assert.include(index, "(feedback_no_db_mocks.md)")
      assert.include(index, "(project_mobile_freeze.md)")

      const cursor = yield* env.readCursor
      assert.strictEqual(cursor.messageCount, 6)
      assert.strictEqual(cursor.lastUuid, "58192304-7a0e-45c6-a48b-b1f27d7f6a00")
      assert.isFalse(Number.isNaN(Date.parse(cursor.updatedAt)))

      // What was sent: the extractor role, a cached system prompt, the sandboxed tools, the new messages.
      const [first, second] = yield* model.requests
      assert.strictEqual(first!.role, "extractor")
      assert.strictEqual(first!.maxTokens, 4096)
      const system = first!.system as ReadonlyArray<{ text: string; cache?: boolean }>
      assert.isTrue(system[0]!.cache)
      assert.include(system[0]!.text, "# Memory extraction")
      assert.include(system[0]!.text, env.memoryDir)
      assert.include(system[0]!.text, "at most 4 turns")
      assert.include(system[0]!.text, "**feedback**")
      assert.deepStrictEqual(first!.tools?.map((t) => t.name), [
        "read_file",
        "list_dir",
        "grep",
        "memory_list",
        "memory_read",
        "memory_write",
        "memory_edit"
      ])
      const user = userText(first!)
      assert.match(user, /^Today is \d{4}-\d{2}-\d{2}\.\n/)
      assert.include(user, "## Existing memories (0)\n\n(none yet)")
      assert.include(user, "## New messages: #1–#6 of the conversation")
      assert.include(user, "[#5 user 2026-03-03T09:16:40.224Z]\nGood. Also: the merge freeze")
      assert.notInclude(user, "Search the repo for db.reset usages") // sidechain
      // Round 1 answered both reads in one message.
      const results = second!.messages[2]!.content as Array<Anthropic.ToolResultBlockParam>
      assert.deepStrictEqual(results.map((r) => r.tool_use_id), ["r1", "r2"])
      assert.include(results[1]!.content as string, "test/db.ts:1: // never mock the db")
    }).pipe(Effect.scoped, Effect.provide(services)))

  it.effect("dates come from the Clock: today's date in the prompt, the cursor's updatedAt", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOW)
      const env = yield* setup(sessionFixture)
      const model = yield* scripted([Model.textReply("nothing to save")])
      yield* extract(env.input).pipe(Effect.provide(model.context))
      const [request] = yield* model.requests
      assert.isTrue(userText(request!).startsWith("Today is 2026-03-05.\n"))
      assert.strictEqual((yield* env.readCursor).updatedAt, "2026-03-05T10:00:00.000Z")
    }).pipe(Effect.provide(services)))

  it.live("does nothing (and calls no model) when no new complete messages arrived; reads only the new ones later", () =>
    Effect.gen(function*() {
      const env = yield* setup(sessionFixture)
      const model = yield* scripted([...goodExtraction, Model.textReply("nothing to save")])
      yield* extract(env.input).pipe(Effect.provide(model.context))
      const again = yield* extract(env.input).pipe(Effect.provide(model.context))
      assert.strictEqual(again.status, "up-to-date")
      assert.strictEqual((yield* model.requests).length, 3)

      // A user message alone is not a complete loop yet.
      yield* env.append(
        JSON.stringify({
          type: "user",
          sessionId: SESSION_ID,
          uuid: "u-late",
          message: { role: "user", content: "By the way, I prefer small PRs." }
        }) + "\n"
      )
      assert.strictEqual((yield* extract(env.input).pipe(Effect.provide(model.context))).status, "up-to-date")

      yield* env.append(
        JSON.stringify({
          type: "assistant",
          sessionId: SESSION_ID,
          uuid: "a-late",
          message: { id: "msg_late", role: "assistant", content: [{ type: "text", text: "Noted." }] }
        }) + "\n"
      )
      const late = yield* extract(env.input).pipe(Effect.provide(model.context))
      assert.strictEqual(late.status, "extracted")
      assert.deepStrictEqual(late.range, { from: 6, to: 8, total: 8 })
      const requests = yield* model.requests
      const user = userText(requests[3]!)
      assert.include(user, "## New messages: #7–#8 of the conversation")
      assert.include(user, "I prefer small PRs")
      assert.notInclude(user, "starts Thursday")
      // The existing memories are in the manifest now.
      assert.include(user, "## Existing memories (2)")
      assert.include(user, "feedback_no_db_mocks.md")
      assert.strictEqual((yield* env.readCursor).lastUuid, "a-late")
    }).pipe(Effect.scoped, Effect.provide(services)))

  it.effect("skips a range where the main agent wrote memory itself, and advances the cursor", () =>
    Effect.gen(function*() {
      const probe = yield* setup("")
      const wrote = fs.readFileSync(`${fixtures}claude-code-wrote-memory.jsonl`, "utf8")
        .replaceAll("__MEMORY_DIR__", probe.memoryDir)
      const env = { ...probe }
      fs.writeFileSync(env.transcriptFile, wrote)
      const model = yield* scripted([])
      const result = yield* extract(env.input).pipe(Effect.provide(model.context))
      assert.strictEqual(result.status, "skipped-main-agent-wrote")
      assert.deepStrictEqual(result.mainAgentWrites.map((w) => w.tool), ["Write", "Bash"])
      assert.strictEqual((yield* model.requests).length, 0)
      const cursor = JSON.parse(
        fs.readFileSync(`${env.memoryDir}/.extract/9c2e4f61-8a3b-4d7e-b2f0-5e1d9c8a7b60.json`, "utf8")
      ) as ExtractCursor
      assert.strictEqual(cursor.messageCount, 6)
      assert.strictEqual(cursor.lastUuid, "a-0006")
    }).pipe(Effect.provide(services)))

  it.live("a failed run leaves the cursor where it was; the next run reads the same messages", () =>
    Effect.gen(function*() {
      const env = yield* setup(sessionFixture)
      const overloaded = new ModelError({
        kind: "overloaded",
        role: "extractor",
        model: "m",
        status: 529,
        detail: "busy"
      })
      const model = yield* scripted([goodExtraction[0]!, overloaded, ...goodExtraction])
      const error = yield* extract(env.input).pipe(Effect.provide(model.context), Effect.flip)
      assert.strictEqual(error._tag, "ModelError")
      assert.isFalse(yield* env.cursorExists)
      const retry = yield* extract(env.input).pipe(Effect.provide(model.context))
      assert.deepStrictEqual(retry.range, { from: 0, to: 6, total: 6 })
      assert.strictEqual((yield* env.readCursor).messageCount, 6)
    }).pipe(Effect.scoped, Effect.provide(services)))

  it.live("a write the index lock refused fails the run and keeps the cursor", () =>
    Effect.gen(function*() {
      const env = yield* setup(sessionFixture)
      fs.mkdirSync(env.memoryDir, { recursive: true })
      const held = yield* acquireLock(`${env.memoryDir}/${INDEX_LOCK}`)
      const model = yield* scripted(goodExtraction)
      const error = yield* extract(env.input).pipe(
        Effect.provide(model.context),
        Effect.provide(memoryIndexLayerWith({ lock: { timeout: "100 millis" } })),
        Effect.flip
      )
      yield* releaseLock(held)
      assert.strictEqual(error._tag, "LockTimeoutError")
      assert.isFalse(yield* env.cursorExists)
    }).pipe(Effect.scoped, Effect.provide(services)))

  it.effect("the sandbox refuses what the extractor may not do, and the run reports it", () =>
    Effect.gen(function*() {
      const env = yield* setup(sessionFixture)
      const content = memoryFile("Escape", "outside", "feedback", "x")
      const model = yield* scripted([
        tools(
          toolUse("w1", "memory_write", { path: "../escape.md", content }),
          toolUse("w2", "memory_write", { path: INDEX_FILE, content }),
          toolUse("w3", "memory_delete", { path: "feedback_x.md" })
        ),
        Model.textReply("done")
      ])
      const result = yield* extract(env.input).pipe(Effect.provide(model.context))
      assert.strictEqual(result.status, "extracted")
      assert.deepStrictEqual(result.refusals.map((r) => r.reason), ["escapes-root", "index-file"])
      // memory_delete is not offered to the extractor: the model is told the tool does not exist.
      assert.isTrue(result.agent!.toolCalls[2]!.isError)
      assert.include(result.agent!.toolCalls[2]!.content, "unknown tool")
      assert.isFalse(fs.existsSync(`${env.scratch}/escape.md`))
      assert.deepStrictEqual(result.changes, [])
    }).pipe(Effect.provide(services)))

  it.effect("a hand-written memory it replaces is kept first: the change names its backup, byte for byte", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOW)
      const env = yield* setup(sessionFixture)
      const handWritten = "---\nname: Testing policy\ndescription: how we test\ntype: feedback\nowner: ana\n---\n\n" +
        "Hand-written: integration tests use the staging database, never mocks.\n"
      fs.mkdirSync(env.memoryDir, { recursive: true })
      fs.writeFileSync(`${env.memoryDir}/feedback_testing_policy.md`, handWritten)
      const replacement = memoryFile("Testing policy", "no database mocks", "feedback", "Never mock the database.")
      const model = yield* scripted([
        tools(toolUse("w1", "memory_write", { path: "feedback_testing_policy.md", content: replacement })),
        tools(toolUse("w2", "memory_edit", {
          path: "feedback_testing_policy.md",
          old_string: "Never mock",
          new_string: "Do not mock"
        })),
        tools(
          toolUse("w3", "memory_write", { path: "project_new.md", content: memoryFile("New", "n", "project", "x") })
        ),
        Model.textReply("done")
      ])
      const result = yield* extract(env.input).pipe(Effect.provide(model.context))
      assert.strictEqual(result.status, "extracted")
      const stem = sessionFileStem(SESSION_ID)
      assert.match(result.backupDir ?? "", new RegExp(`^\\.extract/${stem}/2026-03-05T10-00-00Z$`))
      const backup = `${result.backupDir}/feedback_testing_policy.md`
      // both changes of the file name the one backup: the text before the run, not the first rewrite
      assert.deepStrictEqual(result.changes.map((c) => [c.op, c.file, c.backup]), [
        ["updated", "feedback_testing_policy.md", backup],
        ["updated", "feedback_testing_policy.md", backup],
        ["created", "project_new.md", undefined]
      ])
      assert.strictEqual(fs.readFileSync(`${env.memoryDir}/${backup}`, "utf8"), handWritten)
      assert.strictEqual(fs.statSync(`${env.memoryDir}/${backup}`).mode & 0o777, 0o600)
      assert.include(fs.readFileSync(`${env.memoryDir}/feedback_testing_policy.md`, "utf8"), "Do not mock")
      assert.deepStrictEqual(fs.readdirSync(`${env.memoryDir}/${result.backupDir}`), [
        "feedback_testing_policy.md",
        "report.json"
      ])
      // what the run saved, beside its backups
      const report = JSON.parse(fs.readFileSync(`${env.memoryDir}/${result.backupDir}/report.json`, "utf8"))
      assert.strictEqual(report.at, "2026-03-05T10:00:00.000Z")
      assert.deepStrictEqual(report.changes.map((c: { op: string; file: string }) => [c.op, c.file]), [
        ["updated", "feedback_testing_policy.md"],
        ["updated", "feedback_testing_policy.md"],
        ["created", "project_new.md"]
      ])
    }).pipe(Effect.provide(services)))

  it.live("a backup directory that is a link leading out: nothing is replaced, nothing written outside, run fails", () =>
    Effect.gen(function*() {
      const env = yield* setup(sessionFixture)
      const old = memoryFile("Testing policy", "how we test", "feedback", "Hand-written.")
      const outside = `${env.scratch}/outside`
      fs.mkdirSync(outside)
      fs.mkdirSync(`${env.memoryDir}/.extract`, { recursive: true })
      fs.writeFileSync(`${env.memoryDir}/feedback_testing_policy.md`, old)
      fs.symlinkSync(outside, `${env.memoryDir}/.extract/${sessionFileStem(SESSION_ID)}`)
      const model = yield* scripted([
        tools(toolUse("w1", "memory_write", {
          path: "feedback_testing_policy.md",
          content: memoryFile("Testing policy", "no mocks", "feedback", "Replaced.")
        })),
        Model.textReply("done")
      ])
      const error = yield* extract(env.input).pipe(Effect.provide(model.context), Effect.flip)
      assert.strictEqual(error._tag, "MemoryIoError")
      assert.include(error.message, "symlink-escape")
      assert.strictEqual(fs.readFileSync(`${env.memoryDir}/feedback_testing_policy.md`, "utf8"), old)
      assert.deepStrictEqual(fs.readdirSync(outside), [])
      assert.isFalse(yield* env.cursorExists)
    }).pipe(Effect.scoped, Effect.provide(services)))

  it.effect("a large backlog is read in budgeted runs: at least one message each, the rest left for later", () =>
    Effect.gen(function*() {
      const env = yield* setup(sessionFixture)
      const model = yield* scripted(() => Model.textReply("nothing to save"))
      const first = yield* extract({ ...env.input, maxMessageChars: 10 }).pipe(Effect.provide(model.context))
      assert.deepStrictEqual(first.range, { from: 0, to: 1, total: 6 })
      assert.strictEqual(first.remaining, 5)
      const second = yield* extract({ ...env.input, maxMessageChars: 2000 }).pipe(Effect.provide(model.context))
      assert.strictEqual(second.range.from, 1)
      assert.isAbove(second.range.to, 2)
    }).pipe(Effect.provide(services)))

  it.effect("without a model it fails with not-configured before touching anything", () =>
    Effect.gen(function*() {
      const env = yield* setup(sessionFixture)
      const model = yield* scripted([], { available: false })
      const error = yield* extract(env.input).pipe(Effect.provide(model.context), Effect.flip)
      assert.strictEqual(error._tag, "ModelError")
      assert.strictEqual((error as ModelError).kind, "not-configured")
      assert.include(error.message, "ANTHROPIC_API_KEY")
      assert.isFalse(fs.existsSync(env.memoryDir))
    }).pipe(Effect.provide(services)))

  it.effect("prompt variants: the named one is used, an unknown one is a typed error", () =>
    Effect.gen(function*() {
      const env = yield* setup(sessionFixture)
      const model = yield* scripted([Model.textReply("nothing")])
      yield* extract({ ...env.input, variant: "minimal" }).pipe(Effect.provide(model.context))
      const [request] = yield* model.requests
      assert.include((request!.system as ReadonlyArray<{ text: string }>)[0]!.text, "You maintain the file-based")
      const error = yield* extract({ ...env.input, variant: "nope" }).pipe(Effect.provide(model.context), Effect.flip)
      assert.strictEqual(error._tag, "UnknownPromptVariantError")
      assert.include(error.message, "default, without-strategy, minimal")
    }).pipe(Effect.provide(services)))
})

describe("pure parts", () => {
  it("renderExtractionPrompt fills every slot of every variant", () => {
    for (const variant of Object.keys(extractionPrompts)) {
      const text = Result.getOrThrow(
        renderExtractionPrompt(variant, { memoryDir: "/m/", projectRoot: "/p", maxTurns: 3 })
      )
      assert.notMatch(text, /\{\{\w+\}\}/, variant)
      assert.include(text, "/m/")
    }
  })

  it("sessionFileStem keeps safe ids and makes others safe and distinct", () => {
    assert.strictEqual(sessionFileStem(SESSION_ID), SESSION_ID)
    const evil = sessionFileStem("../../etc/passwd")
    assert.match(evil, /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/)
    assert.notStrictEqual(sessionFileStem("a/b"), sessionFileStem("a:b"))
    assert.isFalse(sessionFileStem(".hidden").startsWith("."))
  })

  it("cursorStart follows the uuid, else the count, else starts over", () => {
    const messages = parseTranscript(sessionFixture).messages
    const cursor = (messageCount: number, lastUuid?: string): ExtractCursor => ({
      version: 1,
      sessionId: "s",
      messageCount,
      ...(lastUuid === undefined ? {} : { lastUuid }),
      transcript: "t",
      updatedAt: ""
    })
    assert.strictEqual(cursorStart(undefined, messages), 0)
    assert.strictEqual(cursorStart(cursor(2, "25e6f071-4d7b-4293-b15a-8ecf5a4c3d77"), messages), 4)
    assert.strictEqual(cursorStart(cursor(2, "gone"), messages), 2)
    assert.strictEqual(cursorStart(cursor(99), messages), 0)
  })
})

// ---------------------------------------------------------------------------------------------------------------
// Extractor: coalescing and drain
// ---------------------------------------------------------------------------------------------------------------

/** A model whose first call waits for `release`; every call is counted and ends the turn. */
const gatedModel = Effect.gen(function*() {
  const calls = yield* Ref.make(0)
  const entered = yield* Deferred.make<void>()
  const release = yield* Deferred.make<void>()
  const interrupted = yield* Deferred.make<void>()
  const model = Model.Model.of({
    available: true,
    modelFor: () => "gated",
    complete: () =>
      Effect.gen(function*() {
        const n = yield* Ref.updateAndGet(calls, (c) => c + 1)
        if (n === 1) {
          yield* Deferred.succeed(entered, undefined)
          yield* Deferred.await(release).pipe(Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined)))
        }
        return {
          model: "gated",
          content: [{ type: "text", text: "nothing to save", citations: null }],
          stopReason: "end_turn",
          usage: { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
          latencyMs: 0
        } satisfies Model.ModelResponse
      }),
    structured: () => Effect.die(new Error("not used"))
  })
  return { model, calls: Ref.get(calls), entered, release, interrupted }
})

describe("Extractor", () => {
  it.effect("calls during a run coalesce into exactly one trailing run", () =>
    Effect.gen(function*() {
      const env = yield* setup(sessionFixture)
      const gate = yield* gatedModel
      const extractor = yield* makeExtractor(env.input).pipe(Effect.provideService(Model.Model, gate.model))

      yield* extractor.onQueryLoopEnd()
      yield* Deferred.await(gate.entered)
      // New messages arrive while the first run is in the model; three loops end meanwhile.
      yield* env.append(
        toJsonl([{ role: "user", content: "one more thing" }, { role: "assistant", content: "ok" }])
          .split("\n").filter((l) => l !== "").map((l) => {
            const { content, role } = JSON.parse(l)
            return JSON.stringify({ type: role, sessionId: SESSION_ID, message: { role, content } })
          }).join("\n") + "\n"
      )
      yield* extractor.onQueryLoopEnd()
      yield* extractor.onQueryLoopEnd()
      yield* extractor.onQueryLoopEnd()
      yield* Deferred.succeed(gate.release, undefined)

      const drained = yield* extractor.drain("30 seconds")
      assert.deepStrictEqual(drained, { drained: true, runs: 2 })
      assert.strictEqual(yield* gate.calls, 2)
      const runs = yield* extractor.runs
      assert.deepStrictEqual(
        runs.map((r) => Result.getOrThrow(r.outcome)).map((o) => [o.status, o.range.from, o.range.to]),
        [["extracted", 0, 6], ["extracted", 6, 8]]
      )
      // Idle again: the next call starts a new run.
      yield* extractor.onQueryLoopEnd()
      assert.deepStrictEqual(yield* extractor.drain("30 seconds"), { drained: true, runs: 3 })
      assert.strictEqual(Result.getOrThrow(runs[1]!.outcome).status, "extracted")
      assert.strictEqual((yield* extractor.runs)[2]!.outcome.pipe(Result.getOrThrow).status, "up-to-date")
    }).pipe(Effect.provide(services)))

  it.effect("drain gives up after its timeout; closing the scope interrupts the run and keeps the cursor", () =>
    Effect.gen(function*() {
      const env = yield* setup(sessionFixture)
      const gate = yield* gatedModel
      const drained = yield* Effect.scoped(Effect.gen(function*() {
        const extractor = yield* makeExtractor(env.input).pipe(Effect.provideService(Model.Model, gate.model))
        yield* extractor.onQueryLoopEnd()
        yield* Deferred.await(gate.entered)
        const drain = yield* Effect.forkChild(extractor.drain("2 seconds"))
        yield* TestClock.adjust("2 seconds")
        return yield* Fiber.join(drain)
      }))
      // The session's scope is closed: the run stuck in the model was interrupted, not completed.
      assert.deepStrictEqual(drained, { drained: false, runs: 0 })
      assert.strictEqual(yield* gate.calls, 1)
      assert.isFalse(yield* env.cursorExists)
      assert.isTrue(yield* Deferred.isDone(gate.interrupted))
    }).pipe(Effect.provide(services)))

  it.effect("with nothing running, drain returns at once", () =>
    Effect.gen(function*() {
      const env = yield* setup(sessionFixture)
      const gate = yield* gatedModel
      const extractor = yield* makeExtractor(env.input).pipe(Effect.provideService(Model.Model, gate.model))
      assert.deepStrictEqual(yield* extractor.drain("1 second"), { drained: true, runs: 0 })
    }).pipe(Effect.provide(services)))

  it.effect("a failed run is recorded, and the trailing run still happens", () =>
    Effect.gen(function*() {
      const env = yield* setup(sessionFixture)
      const model = yield* scripted([
        new ModelError({ kind: "server", role: "extractor", model: "m", status: 500, detail: "boom" }),
        Model.textReply("nothing to save")
      ])
      const extractor = yield* makeExtractor(env.input).pipe(Effect.provide(model.context))
      yield* extractor.onQueryLoopEnd()
      yield* extractor.onQueryLoopEnd()
      yield* extractor.drain("30 seconds")
      const runs = yield* extractor.runs
      assert.strictEqual(runs.length, 2)
      assert.isTrue(Result.isFailure(runs[0]!.outcome))
      assert.strictEqual(Result.getOrThrow(runs[1]!.outcome).range.to, 6)
    }).pipe(Effect.provide(services)))
})

// ---------------------------------------------------------------------------------------------------------------
// The real SDK against the local Messages API server
// ---------------------------------------------------------------------------------------------------------------

describe("extract through the real @anthropic-ai/sdk client", () => {
  it.live("talks the Messages API: tools, cached system, tool results; writes the memory", () =>
    Effect.gen(function*() {
      const env = yield* setup(sessionFixture)
      const server = yield* Server.make({
        replies: [
          Server.message([
            { type: "tool_use", id: "toolu_r1", name: "memory_list", input: {} }
          ]),
          Server.message([
            {
              type: "tool_use",
              id: "toolu_w1",
              name: "memory_write",
              input: {
                path: "feedback_no_db_mocks.md",
                content: memoryFile("No DB mocks", "Integration tests hit a real database", "feedback", "Rule.")
              }
            }
          ]),
          Server.text("Saved one memory.")
        ]
      })
      const model = yield* Effect.flatMap(
        Model.config,
        (config) =>
          Model.makeWith({ ...config, apiKey: Option.some(Redacted.make("sk-test")), baseUrl: Option.some(server.url) })
      )
        .pipe(
          Effect.provideService(
            ConfigProvider.ConfigProvider,
            ConfigProvider.fromEnvRecord({ MEMDIR_MODEL_EXTRACTOR: "claude-haiku-5-5" })
          )
        )
      const result = yield* extract(env.input).pipe(Effect.provideService(Model.Model, model))

      assert.strictEqual(result.status, "extracted")
      assert.deepStrictEqual(result.changes.map((c) => c.file), ["feedback_no_db_mocks.md"])
      assert.isTrue(fs.existsSync(`${env.memoryDir}/feedback_no_db_mocks.md`))
      const requests = yield* server.requests
      assert.strictEqual(requests.length, 3)
      const [first, second, third] = requests.map((r) => r.body)
      assert.strictEqual(first.model, "claude-haiku-5-5")
      assert.strictEqual(first.max_tokens, 4096)
      assert.deepStrictEqual(first.system[0].cache_control, { type: "ephemeral" })
      assert.include(first.system[0].text, "# Memory extraction")
      assert.include(first.tools.map((t: { name: string }) => t.name), "memory_write")
      assert.strictEqual(
        first.tools.find((t: { name: string }) => t.name === "memory_write").input_schema.type,
        "object"
      )
      assert.include(first.messages[0].content[0].text, "merge freeze")
      // The tool results go back as a user turn answering the tool_use ids.
      assert.strictEqual(second.messages[2].content[0].type, "tool_result")
      assert.strictEqual(second.messages[2].content[0].tool_use_id, "toolu_r1")
      assert.strictEqual(third.messages[4].content[0].tool_use_id, "toolu_w1")
      assert.include(third.messages[4].content[0].content, "created feedback_no_db_mocks.md")
      assert.strictEqual(result.agent?.model, "claude-haiku-5-5")
    }).pipe(Effect.scoped, Effect.provide(services)))
})
