/**
 * memdir's MCP server inside the real Claude Code CLI (docs/mcp.md#what-the-model-reads, docs/mcp.md#sessions):
 * `claude -p` 2.1.332 headless against the local Messages API stand-in, in a scratch HOME set up as a user would
 * (`memdir hooks install --agent claude`, `claude mcp add memdir -- memdir mcp`). The stand-in's model calls
 * `memory_recall`; what Claude Code sends back as the tool result is what the model reads: the memory as text with
 * its age and caveat (not JSON), and nothing for a memory the UserPromptSubmit hook already injected in that session,
 * while another session gets it. Claude Code's tool search is off (`ENABLE_TOOL_SEARCH=false`) so the MCP tools are
 * offered directly, as a model that has loaded them sees them.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as MessagesApiServer from "@memdir/testing/MessagesApiServer"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import {
  CLAUDE_CODE_VERSION,
  claudeBin,
  ensureClaudeCode,
  makeScratchUser,
  run,
  textOf,
  toolResultsOf
} from "./support/claudeCode.js"
import { buildCli, cliPath } from "./support/cli.js"
import { TWO_TOPICS, writeTwoTopics } from "./support/mcp.js"
import { removeScratch } from "./support/scratch.js"

const skipReason = ensureClaudeCode()
if (skipReason !== undefined) console.error(`\n*** test/claude-code-mcp.test.ts SKIPPED: ${skipReason} ***\n`)

let scratch: string

const RECALL = "mcp__memdir__memory_recall"
const DATABASE = "Should the new integration tests mock the postgres database?"
const RELEASE = "when does the next release leave, and who signs it off?"
const CAVEAT = "This memory is 40 days old. Memories are point-in-time observations, not live state"

/** A scratch user with two memories written 40 days ago, memdir's hooks installed and its MCP server added. */
const makeUser = (name: string) =>
  Effect.gen(function*() {
    const user = makeScratchUser(scratch, name)
    const { memoryDir, project } = user
    writeTwoTopics(memoryDir)
    const old = new Date(Date.now() - 40 * 86_400_000 - 3_600_000)
    for (const m of TWO_TOPICS) fs.utimesSync(path.join(memoryDir, m.file), old, old)
    const index = TWO_TOPICS.map((m) => `- [${m.name}](${m.file}) — ${m.description}`)
    fs.writeFileSync(path.join(memoryDir, "MEMORY.md"), index.join("\n") + "\n")
    const env = (extra: Record<string, string> = {}) => user.env({ ENABLE_TOOL_SEARCH: "false", ...extra })
    const install = yield* run(
      process.execPath,
      [cliPath, "hooks", "install", "--agent", "claude", "--model-calls", "off"],
      project,
      env()
    )
    assert.strictEqual(install.status, 0, install.stderr)
    // as docs/mcp.md says for Claude Code
    const added = yield* run(claudeBin, ["mcp", "add", "memdir", "--", "memdir", "mcp"], project, env())
    assert.strictEqual(added.status, 0, added.stderr)
    return { project, env }
  })

/** The stand-in's model: in a turn that offers memdir's tools, it recalls each query in turn, then answers "done". */
const recallEach = (queries: ReadonlyArray<string>): MessagesApiServer.Handler => (request) => {
  const offered = (request.body?.tools ?? []).some((tool: { name?: string }) => tool.name === RECALL)
  const answered = toolResultsOf(request.body).length
  return offered && answered < queries.length ?
    MessagesApiServer.toolUse(RECALL, { query: queries[answered] }) :
    MessagesApiServer.text("done")
}

/** The tool results of the session's last request, as the model reads them. */
const toolResults = (requests: ReadonlyArray<MessagesApiServer.RecordedRequest>) => {
  const last = requests.filter((r) => toolResultsOf(r.body).length > 0).at(-1)
  assert.isDefined(last, "Claude Code sent the tool results back")
  return toolResultsOf(last!.body).map((result) => ({
    ...result,
    raw: JSON.stringify(result.content),
    text: textOf({ messages: [{ content: result.content }] })
  }))
}

beforeAll(() => {
  buildCli()
  scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "memdir-claude-code-mcp-")))
})

// background jobs and a lingering hook daemon may still be writing into the tree
afterAll(() => removeScratch(scratch))

describe.skipIf(skipReason !== undefined)(`memdir mcp in the real Claude Code ${CLAUDE_CODE_VERSION}`, () => {
  it.live("the model reads memory_recall's text with its age and caveat; the hook's memory is not recalled twice", () =>
    Effect.scoped(Effect.gen(function*() {
      const user = yield* makeUser("one-session")
      const server = yield* MessagesApiServer.make({ handler: recallEach([RELEASE, DATABASE]) })
      const env = user.env({ ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: "sk-ant-test-dummy" })
      const session = yield* run(claudeBin, ["-p", DATABASE], user.project, env)
      assert.strictEqual(session.status, 0, session.stderr)
      const requests = yield* server.requests
      // the UserPromptSubmit hook injected the database memory
      assert.include(textOf(requests[0]!.body), "Memory feedback_database_tests.md (feedback, saved 40 days ago)")

      const [release, database] = toolResults(requests)
      assert.isFalse(release!.isError, release!.text)
      assert.isTrue(
        release!.text.startsWith("Memory reference_release_train.md (reference, saved 40 days ago): Release train"),
        release!.text
      )
      assert.include(release!.text, `\n${CAVEAT}`)
      assert.include(release!.text, "Ask the release captain in #releases")
      assert.notInclude(release!.raw, "\\\"caveat\\\"", "not the structured result as JSON")
      // the same session: what the hook injected is not returned again
      assert.isFalse(database!.isError, database!.text)
      assert.include(database!.text, "No relevant memory")
      assert.notInclude(database!.text, "feedback_database_tests.md")
    })))

  it.live("another session recalls the memory through MCP", () =>
    Effect.scoped(Effect.gen(function*() {
      const user = yield* makeUser("other-session")
      const server = yield* MessagesApiServer.make({ handler: recallEach([DATABASE]) })
      const env = user.env({ ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: "sk-ant-test-dummy" })
      const first = yield* run(claudeBin, ["-p", DATABASE], user.project, env)
      assert.strictEqual(first.status, 0, first.stderr)
      const before = (yield* server.requests).length
      // a new session, on a prompt the hook finds nothing for: memory_recall gives the database memory again
      const second = yield* run(claudeBin, ["-p", "Hello, please look around this project."], user.project, env)
      assert.strictEqual(second.status, 0, second.stderr)
      const [database] = toolResults((yield* server.requests).slice(before))
      assert.include(database!.text, "Memory feedback_database_tests.md (feedback, saved 40 days ago): Database tests")
      assert.include(database!.text, CAVEAT)
    })))
})
