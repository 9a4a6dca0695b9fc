/**
 * `memdir extract` end to end: the bundled CLI as a child process, a real git repository, a scratch HOME, and the
 * real SDK against the local Messages API server of this test process. Covers the no-key exit, a whole extraction
 * (reads then parallel writes, what memdir sends, the cursor), the skip when the main agent wrote memory itself,
 * a refused write reported, and the exit codes of a bad variant and a missing transcript.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as MessagesApiServer from "@memdir/testing/MessagesApiServer"
import * as Effect from "effect/Effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { buildCli, type CliRun, parseJson, repoRoot, runCli, scratchHomeEnv } from "./support/cli.js"

const fixtures = path.join(repoRoot, "packages/core/test/fixtures/transcripts")
const SESSION_ID = "6b0d9a4e-2f7c-4c1e-8d35-91a2f0e7c3d1"

let scratch: string
let home: string
let project: string
let memoryDir: string

/** Asynchronous, so that the Messages API server of this process can answer the child. */
const memdir = (args: ReadonlyArray<string>, env: Record<string, string> = {}): Effect.Effect<CliRun> =>
  runCli(args, { cwd: project, env: scratchHomeEnv(home, env) })

const json = parseJson

const memoryText = (type: string, name: string, description: string, body: string) =>
  `---\nname: ${name}\ndescription: ${description}\ntype: ${type}\n---\n\n${body}\n`

/** A copy of a fixture transcript in the scratch directory (`__MEMORY_DIR__` filled in). */
const transcript = (fixture: string, name = fixture) => {
  const file = path.join(scratch, name)
  fs.writeFileSync(
    file,
    fs.readFileSync(path.join(fixtures, fixture), "utf8").replaceAll("__MEMORY_DIR__", memoryDir.replace(/\/$/, ""))
  )
  return file
}

beforeAll(() => {
  buildCli()
  scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "memdir-extract-cli-")))
  home = path.join(scratch, "home")
  project = path.join(scratch, "shop")
  fs.mkdirSync(path.join(project, "test"), { recursive: true })
  fs.writeFileSync(path.join(project, "test/db.ts"), "// integration tests use the real database; never mock it\n")
  execFileSync("git", ["init", "-q"], { cwd: project })
  memoryDir = path.join(home, ".memdir", "projects", project.replace(/[^A-Za-z0-9]/g, "-"), "memory")
})

afterAll(() => {
  fs.rmSync(scratch, { recursive: true, force: true })
})

describe("memdir extract (CLI, real SDK, local Messages API server)", () => {
  it.live("without a key: exit 13 with ModelError not-configured, nothing written", () =>
    Effect.gen(function*() {
      const file = transcript("claude-code-session.jsonl", "no-key.jsonl")
      const human = yield* memdir(["extract", "--transcript", file])
      assert.strictEqual(human.status, 13, human.stderr)
      assert.include(human.stderr, "no model is configured: set ANTHROPIC_API_KEY")
      const machine = yield* memdir(["extract", "--transcript", file, "--json"])
      assert.strictEqual(machine.status, 13)
      assert.strictEqual(json(machine).error._tag, "ModelError")
      assert.strictEqual(json(machine).error.kind, "not-configured")
      assert.isFalse(fs.existsSync(path.join(memoryDir, ".extract", `${SESSION_ID}.json`)))
    }))

  it.live("extracts through the real SDK: read round, parallel write round, cursor; then nothing new", () =>
    Effect.scoped(Effect.gen(function*() {
      const file = transcript("claude-code-session.jsonl")
      const server = yield* MessagesApiServer.make({
        replies: [
          MessagesApiServer.message([
            { type: "tool_use", id: "toolu_r1", name: "memory_list", input: {} },
            { type: "tool_use", id: "toolu_r2", name: "grep", input: { pattern: "mock" } }
          ]),
          MessagesApiServer.message([
            {
              type: "tool_use",
              id: "toolu_w1",
              name: "memory_write",
              input: {
                path: "feedback_no_db_mocks.md",
                content: memoryText(
                  "feedback",
                  "No database mocks in integration tests",
                  "Integration tests hit a real database, never mocks",
                  "Never mock the database in integration tests.\n**Why:** mocked tests passed while a broken " +
                    "migration shipped.\n**How to apply:** everything under test/integration."
                )
              }
            },
            {
              type: "tool_use",
              id: "toolu_w2",
              name: "memory_write",
              input: {
                path: "project_mobile_freeze.md",
                content: memoryText(
                  "project",
                  "Mobile release merge freeze",
                  "Merge freeze for the mobile release starts 2026-03-05",
                  "Merge freeze from 2026-03-05 (\"Thursday\", said on 2026-03-03)."
                )
              }
            },
            { type: "tool_use", id: "toolu_w3", name: "memory_write", input: { path: "../../escape.md", content: "x" } }
          ]),
          MessagesApiServer.text("Saved two memories.")
        ]
      })
      const env = { ANTHROPIC_API_KEY: "sk-test-extract", ANTHROPIC_BASE_URL: server.url }
      const run = yield* memdir(["extract", "--transcript", file, "--json"], env)
      assert.strictEqual(run.status, 0, run.stderr)
      const out = json(run)
      assert.strictEqual(out.sessionId, SESSION_ID)
      assert.strictEqual(out.status, "extracted")
      // The two writes of one turn run in parallel: they complete in either order.
      assert.deepStrictEqual([...out.changes].sort((a: any, b: any) => a.file.localeCompare(b.file)), [
        { op: "created", file: "feedback_no_db_mocks.md" },
        { op: "created", file: "project_mobile_freeze.md" }
      ])
      assert.deepStrictEqual(out.refusals.map((r: any) => [r.tool, r.reason]), [["memory_write", "escapes-root"]])
      assert.deepStrictEqual(out.runs[0].range, { from: 0, to: 6, total: 6 })
      assert.strictEqual(out.runs[0].agent.turns, 3)
      assert.isFalse(fs.existsSync(path.join(scratch, "escape.md")))
      assert.isFalse(fs.existsSync(path.join(home, ".memdir", "projects", "escape.md")))

      const index = fs.readFileSync(path.join(memoryDir, "MEMORY.md"), "utf8")
      assert.include(index, "- [No database mocks in integration tests](feedback_no_db_mocks.md) — ")
      assert.include(index, "(project_mobile_freeze.md)")
      const cursor = JSON.parse(fs.readFileSync(path.join(memoryDir, ".extract", `${SESSION_ID}.json`), "utf8"))
      assert.strictEqual(cursor.messageCount, 6)
      assert.strictEqual(cursor.transcript, file)

      // What memdir sent, as the API received it.
      const requests = yield* server.requests
      assert.strictEqual(requests.length, 3)
      assert.strictEqual(MessagesApiServer.apiKeyOf(requests[0]!), "sk-test-extract")
      const first = requests[0]!.body
      assert.strictEqual(first.max_tokens, 4096)
      assert.deepStrictEqual(first.system[0].cache_control, { type: "ephemeral" })
      assert.include(first.system[0].text, memoryDir)
      assert.include(first.system[0].text, "never write it") // MEMORY.md is kept by code
      assert.deepStrictEqual(first.tools.map((t: any) => t.name), [
        "read_file",
        "list_dir",
        "grep",
        "memory_list",
        "memory_read",
        "memory_write",
        "memory_edit"
      ])
      assert.include(first.messages[0].content[0].text, "the merge freeze for the mobile release starts Thursday")
      const grepResult = requests[1]!.body.messages[2].content[1]
      assert.strictEqual(grepResult.tool_use_id, "toolu_r2")
      assert.include(grepResult.content, "test/db.ts:1:")
      const refused = requests[2]!.body.messages[4].content[2]
      assert.strictEqual(refused.is_error, true)
      assert.include(refused.content, "escapes-root")

      // Nothing new: no model call, exit 0, said in words.
      const again = yield* memdir(["extract", "--transcript", file], env)
      assert.strictEqual(again.status, 0, again.stderr)
      assert.include(again.stdout, `extract: session ${SESSION_ID}: nothing new since the last extraction`)
      assert.strictEqual((yield* server.requests).length, 3)
    })))

  it.live("skips (and advances) when the main agent wrote memory itself; calls no model", () =>
    Effect.scoped(Effect.gen(function*() {
      const file = transcript("claude-code-wrote-memory.jsonl")
      const server = yield* MessagesApiServer.make({})
      const env = { ANTHROPIC_API_KEY: "sk-test", ANTHROPIC_BASE_URL: server.url }
      const run = yield* memdir(["extract", "--transcript", file, "--session", "custom/id"], env)
      assert.strictEqual(run.status, 0, run.stderr)
      assert.include(run.stdout, "messages #1–#6 of 6 skipped — the main agent wrote memory itself; cursor advanced")
      assert.include(run.stdout, "by Write (message #2)")
      assert.include(run.stdout, "by Bash (message #4)")
      assert.strictEqual((yield* server.requests).length, 0)
      const cursors = fs.readdirSync(path.join(memoryDir, ".extract")).filter((f) => f.startsWith("custom-id"))
      assert.strictEqual(cursors.length, 1)
      assert.match(cursors[0]!, /^custom-id-[0-9a-f]{8}\.json$/)
    })))

  it.live("Codex rollouts: a session that wrote memory is skipped; another is extracted under its session id", () =>
    Effect.scoped(Effect.gen(function*() {
      const wrote = transcript("codex-rollout.jsonl")
      const idle = yield* MessagesApiServer.make({})
      const skipped = yield* memdir(["extract", "--transcript", wrote], {
        ANTHROPIC_API_KEY: "sk-test",
        ANTHROPIC_BASE_URL: idle.url
      })
      assert.strictEqual(skipped.status, 0, skipped.stderr)
      assert.include(skipped.stdout, "the main agent wrote memory itself; cursor advanced")
      assert.include(skipped.stdout, "by apply_patch (message #4)")
      assert.include(skipped.stdout, "by shell (message #6)")
      assert.strictEqual((yield* idle.requests).length, 0)

      const file = transcript("codex-rollout-no-writes.jsonl")
      const server = yield* MessagesApiServer.make({
        replies: [
          MessagesApiServer.message([{
            type: "tool_use",
            id: "toolu_c1",
            name: "memory_write",
            input: {
              path: "feedback_real_postgres.md",
              content: memoryText(
                "feedback",
                "Real Postgres in integration tests",
                "Integration tests hit a real Postgres, never mocks",
                "Never mock the database in integration tests.\n**Why:** a mocked migration burned us last quarter."
              )
            }
          }]),
          MessagesApiServer.text("Saved one memory.")
        ]
      })
      const env = { ANTHROPIC_API_KEY: "sk-test-codex", ANTHROPIC_BASE_URL: server.url }
      const run = yield* memdir(["extract", "--transcript", file, "--json"], env)
      assert.strictEqual(run.status, 0, run.stderr)
      const out = json(run)
      assert.strictEqual(out.sessionId, "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b")
      assert.strictEqual(out.status, "extracted")
      assert.deepStrictEqual(out.changes, [{ op: "created", file: "feedback_real_postgres.md" }])
      assert.deepStrictEqual(out.runs[0].range, { from: 0, to: 4, total: 4 })
      // the model read the Codex conversation: the user's words and the shell call, not the injected context
      const sent = JSON.stringify((yield* server.requests)[0]!.body.messages)
      assert.include(sent, "real Postgres, never mocks")
      assert.include(sent, "cat test/db.test.ts")
      assert.notInclude(sent, "environment_context")
      assert.include(fs.readFileSync(path.join(memoryDir, "MEMORY.md"), "utf8"), "(feedback_real_postgres.md)")
    })))

  it.live("a bad variant exits 12, a missing transcript 11, auto memory off 9", () =>
    Effect.gen(function*() {
      const env = { ANTHROPIC_API_KEY: "sk-test", ANTHROPIC_BASE_URL: "http://127.0.0.1:9" }
      const file = transcript("messages.jsonl")
      const variant = yield* memdir(["extract", "--transcript", file, "--variant", "nope", "--json"], env)
      assert.strictEqual(variant.status, 12, variant.stderr)
      assert.strictEqual(json(variant).error._tag, "UnknownPromptVariantError")
      assert.include(json(variant).error.message, "default, without-strategy, minimal")
      const missing = yield* memdir(["extract", "--transcript", path.join(scratch, "gone.jsonl")], env)
      assert.strictEqual(missing.status, 11, missing.stderr)
      assert.include(missing.stderr, "gone.jsonl")
      // Auto memory off stops the background jobs too.
      const off = yield* memdir(["extract", "--transcript", file], { ...env, MEMDIR_DISABLE_AUTO_MEMORY: "1" })
      assert.strictEqual(off.status, 9, off.stderr)
    }))

  it.live("progress on stderr while the model is slow to answer; stdout stays one JSON document", () =>
    Effect.scoped(Effect.gen(function*() {
      const file = transcript("claude-code-session.jsonl", "slow-model.jsonl")
      const server = yield* MessagesApiServer.make({
        replies: [MessagesApiServer.slow(MessagesApiServer.text("Nothing worth saving."), 1_600)]
      })
      const run = yield* memdir(["extract", "--transcript", file, "--session", "slow-model", "--json"], {
        ANTHROPIC_API_KEY: "sk-test",
        ANTHROPIC_BASE_URL: server.url,
        MEMDIR_PROGRESS_EVERY: "400 millis"
      })
      assert.strictEqual(run.status, 0, run.stderr)
      assert.strictEqual(json(run).status, "extracted")
      assert.notInclude(run.stdout, "waiting")
      assert.match(run.stderr, /^memdir extract: model call 1 to claude-\S+ started, waiting…$/m)
      const waited = [...run.stderr.matchAll(/^memdir extract: still waiting on claude-\S+ \(call 1\): (\d+\.\d) s$/gm)]
        .map((m) => Number(m[1]))
      assert.isAtLeast(waited.length, 2, run.stderr)
      for (let i = 1; i < waited.length; i++) assert.isAbove(waited[i]!, waited[i - 1]!)
      const answered = /^memdir extract: claude-\S+ answered call 1 in (\d+\.\d) s$/m.exec(run.stderr)
      assert.isNotNull(answered, run.stderr)
      assert.isAtLeast(Number(answered![1]), 1.5)
    })))
})
