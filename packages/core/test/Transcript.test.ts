import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as FastCheck from "fast-check"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as MemoryFs from "../src/MemoryFs.js"
import {
  completePrefixLength,
  memoryWritesIn,
  parseTranscript,
  readTranscript,
  renderMessage,
  toJsonl,
  type TranscriptMessage
} from "../src/Transcript.js"

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures/transcripts")
const fixture = (name: string, memoryDir = "/home/alex/.memdir/projects/-home-alex-code-shop/memory") =>
  fs.readFileSync(path.join(fixtures, name), "utf8").replaceAll("__MEMORY_DIR__", memoryDir)

const MEMORY_DIR = "/home/alex/.memdir/projects/-home-alex-code-shop/memory"

const assistant = (
  content: TranscriptMessage["content"],
  extra: Partial<TranscriptMessage> = {}
): TranscriptMessage => ({
  role: "assistant",
  content,
  line: 1,
  ...extra
})
const toolCall = (name: string, input: unknown, extra: Partial<TranscriptMessage> = {}) =>
  assistant([{ type: "tool_use", id: `toolu_${name}`, name, input }], extra)

describe("parseTranscript", () => {
  it("reads the reference agent's session file: messages joined, other lines skipped", () => {
    const parsed = parseTranscript(fixture("claude-code-session.jsonl"))
    assert.strictEqual(parsed.format, "claude-code")
    assert.strictEqual(parsed.sessionId, "6b0d9a4e-2f7c-4c1e-8d35-91a2f0e7c3d1")
    assert.deepStrictEqual(parsed.problems, [])
    // summary, file-history-snapshot, sidechain, system, isMeta
    assert.strictEqual(parsed.skippedLines, 5)
    assert.deepStrictEqual(parsed.messages.map((m) => m.role), [
      "user",
      "assistant",
      "user",
      "assistant",
      "user",
      "assistant"
    ])
    // One API message over three lines (thinking, text, tool_use) is one message again.
    const joined = parsed.messages[1]!
    assert.deepStrictEqual((joined.content as Array<{ type: string }>).map((b) => b.type), [
      "thinking",
      "text",
      "tool_use"
    ])
    assert.strictEqual(joined.line, 4)
    assert.strictEqual(joined.uuid, "e03c1d4f-2b5a-4071-9f38-6cad4e2a1b33")
    assert.strictEqual(parsed.messages[0]!.timestamp, "2026-03-03T09:14:22.511Z")
    assert.strictEqual(parsed.messages[0]!.cwd, "/home/alex/code/shop")
    assert.include(parsed.messages[4]!.content as string, "merge freeze")
  })

  it("reads memdir's own format", () => {
    const parsed = parseTranscript(fixture("messages.jsonl"))
    assert.strictEqual(parsed.format, "messages")
    assert.isUndefined(parsed.sessionId)
    assert.strictEqual(parsed.messages.length, 6)
    assert.strictEqual(
      parsed.messages[3]!.content,
      "The Cart component renders nothing yet: a React component is a " +
        "function that returns what to draw."
    )
    assert.strictEqual(parsed.messages[5]!.line, 6)
  })

  it("ignores a last line still being written, reports broken lines and goes on", () => {
    const text = [
      JSON.stringify({ role: "user", content: "hi" }),
      "{not json",
      "[1, 2]",
      JSON.stringify({ role: "user", content: 42 }),
      JSON.stringify({ type: "assistant" }),
      JSON.stringify({ role: "assistant", content: "hello" }),
      "{\"role\":\"user\",\"content\":\"half"
    ].join("\n")
    const parsed = parseTranscript(text)
    assert.deepStrictEqual(parsed.messages.map((m) => m.content), ["hi", "hello"])
    assert.deepStrictEqual(parsed.problems.map((p) => p.line), [2, 3, 4, 5])
    // The same broken last line followed by a newline is a problem: the writer finished it.
    assert.strictEqual(parseTranscript(text + "\n").problems.length, 5)
    assert.strictEqual(parseTranscript("").format, "empty")
  })

  it("round-trips memdir's format (toJsonl)", () =>
    FastCheck.assert(
      FastCheck.property(
        FastCheck.array(
          FastCheck.record({
            role: FastCheck.constantFrom("user" as const, "assistant" as const),
            content: FastCheck.oneof(
              FastCheck.string(),
              FastCheck.array(FastCheck.record({ type: FastCheck.constant("text" as const), text: FastCheck.string() }))
            )
          })
        ),
        (messages) => {
          const parsed = parseTranscript(toJsonl(messages))
          assert.deepStrictEqual(parsed.messages.map((m) => ({ role: m.role, content: m.content })), messages)
          assert.deepStrictEqual(parsed.problems, [])
        }
      )
    ))

  it.effect("readTranscript fails with a MemoryIoError naming the file", () =>
    Effect.gen(function*() {
      const error = yield* readTranscript("/nonexistent/session.jsonl").pipe(Effect.flip)
      assert.strictEqual(error._tag, "MemoryIoError")
      assert.strictEqual(error.path, "/nonexistent/session.jsonl")
    }).pipe(Effect.provide(Layer.mergeAll(MemoryFs.layer, NodeServices.layer))))

  it.effect("readTranscript follows a link to a transcript; a FIFO fails at once, naming the file", () =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "memdir-transcript-"))
      try {
        const real = path.join(dir, "real.jsonl")
        fs.writeFileSync(real, toJsonl([{ role: "user", content: "hello" }]))
        const link = path.join(dir, "linked.jsonl")
        fs.symlinkSync(real, link)
        const read = yield* readTranscript(link)
        assert.deepStrictEqual(read.messages.map((m) => m.content), ["hello"])
        const pipe = path.join(dir, "pipe.jsonl")
        execFileSync("mkfifo", [pipe])
        const error = yield* readTranscript(pipe).pipe(Effect.flip)
        assert.strictEqual(error._tag, "MemoryIoError")
        assert.strictEqual(error.path, pipe)
        assert.include(error.detail, "NotRegularFile")
      } finally {
        fs.rmSync(dir, { recursive: true, force: true })
      }
    }).pipe(Effect.provide(MemoryFs.layer)))
})

describe("Codex session rollouts", () => {
  it("become Messages-API messages: injected context, reasoning and events skipped, one turn's items joined", () => {
    const parsed = parseTranscript(fixture("codex-rollout.jsonl", MEMORY_DIR))
    assert.strictEqual(parsed.format, "codex")
    assert.strictEqual(parsed.sessionId, "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b")
    assert.deepStrictEqual(parsed.problems, [])
    // session_meta, AGENTS.md, environment_context, turn_context, 3 event_msg, reasoning
    assert.strictEqual(parsed.skippedLines, 8)
    const shape = parsed.messages.map((m) => [m.role, (m.content as Array<{ type: string }>).map((b) => b.type)])
    assert.deepStrictEqual(shape, [
      ["user", ["text"]],
      ["assistant", ["tool_use"]],
      ["user", ["tool_result"]],
      ["assistant", ["text", "tool_use"]],
      ["user", ["tool_result"]],
      ["assistant", ["tool_use"]],
      ["user", ["tool_result"]],
      ["assistant", ["text"]]
    ])
    const first = parsed.messages[0]!
    assert.include(
      (first.content as ReadonlyArray<{ text?: unknown }>)[0]!.text as string,
      "real Postgres, never mocks"
    )
    assert.strictEqual(first.timestamp, "2026-03-05T10:00:01.500Z")
    assert.strictEqual(first.cwd, "/home/alex/code/shop")
    // a shell call's argv is the command line its shell runs
    const blocks = (i: number) => parsed.messages[i]!.content as ReadonlyArray<Record<string, unknown>>
    assert.deepStrictEqual(blocks(1)[0]!.input, { command: "cat test/db.test.ts", workdir: "/home/alex/code/shop" })
    const patch = blocks(3)[1]!
    assert.strictEqual(patch.name, "apply_patch")
    assert.deepStrictEqual((patch.input as { paths: unknown }).paths, [
      `${MEMORY_DIR}/feedback_real_postgres.md`,
      "src/db.ts"
    ])
    // every call answered, the last turn an answer: the whole rollout is complete query loops
    assert.strictEqual(completePrefixLength(parsed.messages), parsed.messages.length)
  })

  it("memoryWritesIn sees an apply_patch and a shell append into the memory directory, not the reads", () => {
    const messages = parseTranscript(fixture("codex-rollout.jsonl", MEMORY_DIR)).messages
    const evidence = memoryWritesIn(messages, MEMORY_DIR)
    assert.deepStrictEqual(evidence.map((e) => [e.message, e.tool]), [[3, "apply_patch"], [5, "shell"]])
    assert.strictEqual(evidence[0]!.target, `${MEMORY_DIR}/feedback_real_postgres.md`)
    // the same session writing elsewhere only: no evidence
    const elsewhere = parseTranscript(fixture("codex-rollout.jsonl", "/home/alex/code/shop/notes")).messages
    assert.deepStrictEqual(memoryWritesIn(elsewhere, MEMORY_DIR), [])
  })

  it("a relative apply_patch path counts from the session's cwd", () => {
    const rollout = [
      { type: "session_meta", payload: { id: "s1", cwd: "/home/alex/.memdir/projects/-home-alex-code-shop" } },
      {
        type: "response_item",
        payload: {
          type: "custom_tool_call",
          call_id: "c1",
          name: "apply_patch",
          input: "*** Begin Patch\n*** Update File: memory/user_role.md\n@@\n-a\n+b\n*** End Patch\n"
        }
      }
    ].map((line) => JSON.stringify(line)).join("\n") + "\n"
    const evidence = memoryWritesIn(parseTranscript(rollout).messages, MEMORY_DIR)
    assert.deepStrictEqual(evidence.map((e) => e.target), [`${MEMORY_DIR}/user_role.md`])
  })

  it("reads the older layout (a bare meta line, then bare items) and renders its text, not [input_text]", () => {
    const parsed = parseTranscript(fixture("codex-rollout-legacy.jsonl"))
    assert.strictEqual(parsed.format, "codex")
    assert.strictEqual(parsed.sessionId, "5973b6c0-94b8-487b-a530-2aeb6098ae0e")
    assert.deepStrictEqual(parsed.problems, [])
    assert.deepStrictEqual(parsed.messages.map((m) => m.role), ["user", "assistant"])
    assert.include(renderMessage(parsed.messages[0]!, 0), "Deploys to staging go through the #deploys channel.")
    assert.notInclude(renderMessage(parsed.messages[0]!, 0), "[input_text]")
  })

  it("a Codex line that is not an item it knows is skipped; a broken item is a problem, not a crash", () => {
    const text = [
      { type: "response_item", payload: { type: "web_search_call", action: { query: "x" } } },
      { type: "response_item", payload: { type: "message", role: "user", content: 42 } },
      { type: "compacted", payload: { message: "summary" } }
    ].map((line) => JSON.stringify(line)).join("\n") + "\n"
    const parsed = parseTranscript(text)
    assert.strictEqual(parsed.skippedLines, 2)
    assert.deepStrictEqual(parsed.problems, [{ line: 2, reason: "a Codex message without text content" }])
    assert.deepStrictEqual(parsed.messages, [])
  })
})

describe("completePrefixLength", () => {
  const messages = parseTranscript(fixture("claude-code-session.jsonl")).messages

  it("ends after an assistant answer with no tool call left open", () => {
    assert.strictEqual(completePrefixLength(messages), 6)
    assert.strictEqual(completePrefixLength(messages.slice(0, 2)), 0) // tool call not answered yet
    assert.strictEqual(completePrefixLength(messages.slice(0, 3)), 0) // result in, no answer yet
    assert.strictEqual(completePrefixLength(messages.slice(0, 4)), 4)
    assert.strictEqual(completePrefixLength(messages.slice(0, 5)), 4) // user message not answered yet
    assert.strictEqual(completePrefixLength([]), 0)
  })

  it("does not let a tool call abandoned before a new user prompt hold back what follows", () => {
    const orphan: ReadonlyArray<TranscriptMessage> = [
      { role: "user", content: "run the tests", line: 1 },
      assistant([{ type: "tool_use", id: "toolu_lost", name: "Bash", input: { command: "pnpm test" } }]),
      { role: "user", content: "never mind, remember that I prefer small PRs", line: 3 },
      assistant("Noted.")
    ]
    assert.strictEqual(completePrefixLength(orphan), 4)
    assert.strictEqual(completePrefixLength(orphan.slice(0, 2)), 0)
  })
})

describe("memoryWritesIn", () => {
  it("finds the main agent's Write and shell writes into the memory directory", () => {
    const messages = parseTranscript(fixture("claude-code-wrote-memory.jsonl", MEMORY_DIR)).messages
    const evidence = memoryWritesIn(messages, MEMORY_DIR)
    assert.deepStrictEqual(evidence.map((e) => [e.message, e.tool]), [[1, "Write"], [3, "Bash"]])
    assert.strictEqual(evidence[0]!.target, `${MEMORY_DIR}/feedback_staging_deploys.md`)
    assert.strictEqual(evidence[0]!.line, 2)
    // The first message index is added, for ranges taken from the middle of a transcript.
    assert.deepStrictEqual(memoryWritesIn(messages.slice(3), MEMORY_DIR, {}, 3).map((e) => e.message), [3])
  })

  it("does not count reads, other directories or look-alike siblings", () => {
    const session = parseTranscript(fixture("claude-code-session.jsonl")).messages
    assert.deepStrictEqual(memoryWritesIn(session, MEMORY_DIR), [])
    const quiet = [
      toolCall("Read", { file_path: `${MEMORY_DIR}/feedback_x.md` }),
      toolCall("Grep", { pattern: "deploy", path: MEMORY_DIR }),
      toolCall("Write", { file_path: `${MEMORY_DIR}-evil/feedback_x.md`, content: "x" }),
      toolCall("Write", { file_path: "/home/alex/code/shop/notes.md", content: "x" }),
      toolCall("Bash", { command: `cat ${MEMORY_DIR}/MEMORY.md 2>/dev/null | head -5` }),
      toolCall("Bash", { command: "echo hi > /tmp/x" }),
      toolCall("memory_read", { path: "feedback_x.md" })
    ]
    assert.deepStrictEqual(memoryWritesIn(quiet, MEMORY_DIR, { homeDir: "/home/alex" }), [])
  })

  it("resolves relative paths against the agent's cwd, ~ against the home, and knows memdir's commands", () => {
    const writes = [
      toolCall("Edit", { file_path: "../.memdir/projects/-home-alex-code-shop/memory/user_role.md" }, {
        cwd: "/home/alex/code"
      }),
      toolCall("MultiEdit", { file_path: `${MEMORY_DIR}/project_freeze.md`, edits: [] }),
      toolCall("NotebookEdit", { notebook_path: `${MEMORY_DIR}/n.ipynb` }),
      toolCall("Bash", { command: "sed -i 's/x/y/' ~/.memdir/projects/-home-alex-code-shop/memory/user_role.md" }),
      toolCall("Bash", { command: "memdir write --type feedback --name X --description y" }),
      toolCall("mcp__memdir__memory_write", { name: "x" }),
      toolCall("str_replace_based_edit_tool", { command: "create", path: `${MEMORY_DIR}/a.md` })
    ]
    const evidence = memoryWritesIn(writes, MEMORY_DIR, { homeDir: "/home/alex" })
    assert.deepStrictEqual(evidence.map((e) => e.message), [0, 1, 2, 3, 4, 5, 6])
  })
})

describe("renderMessage", () => {
  it("keeps text and timestamps, abridges tool calls and results, drops thinking", () => {
    const messages = parseTranscript(fixture("claude-code-session.jsonl")).messages
    const first = renderMessage(messages[0]!, 0)
    assert.isTrue(first.startsWith("[#1 user 2026-03-03T09:14:22.511Z]\nThe checkout integration test is flaky"))
    const call = renderMessage(messages[1]!, 1)
    assert.include(call, "→ Read {\"file_path\":\"/home/alex/code/shop/test/integration/checkout.test.ts\"}")
    assert.notInclude(call, "Read the test first.")
    const result = renderMessage(messages[2]!, 2, { maxToolChars: 20 })
    assert.include(result, "← result:      1\timport { db }")
    assert.include(result, "more characters]")
    const long = renderMessage({ role: "user", content: "x".repeat(100), line: 1 }, 0, { maxTextChars: 10 })
    assert.include(long, "[… 90 more characters]")
  })
})
