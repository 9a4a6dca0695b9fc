/**
 * One agent session across memdir's doors (docs/mcp.md#sessions): the bundled CLI's `memdir hook` fed the JSON Claude
 * Code writes on stdin, and `memdir mcp` driven by the MCP SDK's real `Client` over stdio, started with the
 * environment Claude Code gives its MCP servers (`CLAUDE_CODE_SESSION_ID`, the id its hooks get as `session_id`).
 * A memory the hook injected is not recalled again through MCP in the same session, and the other way round; another
 * session gets it; a memory asked for by name is always given.
 */
import { assert, describe, it } from "@effect/vitest"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { cliPath, type CliRun } from "./support/cli.js"
import { connectMcp, doorEnv, mcpScratch, promptHook, writeTwoTopics } from "./support/mcp.js"

const scratch = mcpScratch("memdir-mcp-session-")

let dirs = 0
/** A fresh memory directory holding two memories on unrelated topics. */
const memoryWithTwoTopics = (): string => {
  const memoryDir = path.join(scratch.dir, `memory-${++dirs}`)
  fs.mkdirSync(memoryDir, { recursive: true })
  writeTwoTopics(memoryDir)
  return memoryDir
}

const DATABASE = "should the new integration tests mock the postgres database?"
const RELEASE = "when does the next release leave, and who signs it off?"

const envOf = (memoryDir: string, extra: Record<string, string> = {}) => doorEnv(scratch, memoryDir, extra)

/** What the hook injected ("" when it answered nothing). */
const injected = (run: CliRun): string => {
  assert.strictEqual(run.status, 0, run.stderr)
  return run.stdout === "" ? "" : JSON.parse(run.stdout).hookSpecificOutput.additionalContext
}

/** `memdir mcp` as Claude Code starts it for a session (its environment names the session). */
const server = (memoryDir: string, env: Record<string, string>): Promise<Client> =>
  connectMcp(scratch, { env: envOf(memoryDir, env), name: "claude-code", version: "2.1.332" })

const text = async (client: Client, name: string, args: Record<string, unknown>): Promise<string> => {
  const result = await client.callTool({ name, arguments: args }) as {
    readonly isError?: boolean
    readonly content: ReadonlyArray<{ readonly text?: string }>
  }
  const words = result.content.map((c) => c.text ?? "").join("\n")
  assert.isNotTrue(result.isError, words)
  return words
}

const recalled = (words: string) => [...words.matchAll(/^Memory (\S+) \(/gm)].map((m) => m[1])

describe("one session across the hook and memdir mcp", () => {
  it("a memory the hook injected is not recalled again through MCP in that session; another session gets it", async () => {
    const memoryDir = memoryWithTwoTopics()
    const session = "6f1c2d3e-0000-4000-8000-00000000a001"
    assert.include(injected(await promptHook(scratch, memoryDir, session, DATABASE)), "feedback_database_tests.md")

    const same = await server(memoryDir, { CLAUDE_CODE_SESSION_ID: session })
    const again = await text(same, "memory_recall", { query: DATABASE })
    assert.deepStrictEqual(recalled(again), [])
    assert.include(again, "No relevant memory")
    // asked for by name, it is given whole
    assert.include(
      await text(same, "memory_read", { path: "feedback_database_tests.md" }),
      "Mocking the database hid a broken migration"
    )
    // what the hook did not inject is recalled as ever
    assert.deepStrictEqual(recalled(await text(same, "memory_recall", { query: RELEASE })), [
      "reference_release_train.md"
    ])

    const other = await server(memoryDir, { CLAUDE_CODE_SESSION_ID: "6f1c2d3e-0000-4000-8000-00000000b002" })
    assert.deepStrictEqual(recalled(await text(other, "memory_recall", { query: DATABASE })), [
      "feedback_database_tests.md"
    ])
    // MEMDIR_SESSION_ID names the session for any client, before the agent's variable
    const named = await server(memoryDir, {
      MEMDIR_SESSION_ID: session,
      CLAUDE_CODE_SESSION_ID: "6f1c2d3e-0000-4000-8000-00000000c003"
    })
    assert.deepStrictEqual(recalled(await text(named, "memory_recall", { query: DATABASE })), [])
  })

  it("what MCP recalled or read is not injected by the hook later in that session; another session gets it", async () => {
    const memoryDir = memoryWithTwoTopics()
    const session = "7a2b3c4d-0000-4000-8000-00000000a001"
    const client = await server(memoryDir, { CLAUDE_CODE_SESSION_ID: session })
    assert.deepStrictEqual(recalled(await text(client, "memory_recall", { query: DATABASE })), [
      "feedback_database_tests.md"
    ])
    await text(client, "memory_read", { path: "reference_release_train.md" })

    assert.strictEqual(injected(await promptHook(scratch, memoryDir, session, DATABASE)), "")
    assert.strictEqual(injected(await promptHook(scratch, memoryDir, session, RELEASE)), "")
    const other = "7a2b3c4d-0000-4000-8000-00000000b002"
    assert.include(injected(await promptHook(scratch, memoryDir, other, DATABASE)), "feedback_database_tests.md")
    assert.include(injected(await promptHook(scratch, memoryDir, other, RELEASE)), "reference_release_train.md")
  })

  it("the session's recall budget is shared: spent by the hooks, memory_recall says so", async () => {
    const memoryDir = memoryWithTwoTopics()
    const session = "8b3c4d5e-0000-4000-8000-00000000a001"
    fs.mkdirSync(path.join(memoryDir, ".sessions"))
    fs.writeFileSync(
      path.join(memoryDir, ".sessions", `${session}.json`),
      JSON.stringify({ version: 1, surfaced: [], bytes: 61_440, updatedAt: Date.now() }) + "\n"
    )
    const client = await server(memoryDir, { CLAUDE_CODE_SESSION_ID: session })
    const spent = await text(client, "memory_recall", { query: DATABASE })
    assert.deepStrictEqual(recalled(spent), [])
    assert.include(spent, "Memory was not consulted: budget-exhausted")
  })

  it("a malformed MEMDIR_SESSION_ID stops the server with the variable named; a malformed agent id is said", async () => {
    const memoryDir = memoryWithTwoTopics()
    const refused = await new Promise<CliRun>((resolve) => {
      const child = execFile(
        process.execPath,
        [cliPath, "mcp"],
        { cwd: scratch.project, env: envOf(memoryDir, { MEMDIR_SESSION_ID: "../../etc/passwd" }), encoding: "utf8" },
        (error, stdout, stderr) =>
          resolve({ status: error === null ? 0 : typeof error.code === "number" ? error.code : -1, stdout, stderr })
      )
      child.stdin?.end()
    })
    assert.notStrictEqual(refused.status, 0)
    assert.strictEqual(refused.stdout, "")
    assert.include(refused.stderr, "MEMDIR_SESSION_ID")
    assert.include(refused.stderr, "letters, digits")

    // the agent's own variable, malformed: the process is its own session, and recall works
    let stderr = ""
    const client = await connectMcp(scratch, {
      env: envOf(memoryDir, { CLAUDE_CODE_SESSION_ID: "not a session/id" }),
      name: "claude-code",
      version: "2.1.332",
      onStderr: (chunk) => (stderr += chunk)
    })
    assert.deepStrictEqual(recalled(await text(client, "memory_recall", { query: DATABASE })), [
      "feedback_database_tests.md"
    ])
    assert.include(stderr, "CLAUDE_CODE_SESSION_ID is not a session id memdir keeps")
    assert.isFalse(fs.existsSync(path.join(memoryDir, ".sessions")))
  })
})
