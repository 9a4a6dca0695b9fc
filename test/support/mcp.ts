/**
 * The set-up MCP system tests share: a scratch HOME and git project for the test file (the bundled CLI built first),
 * the clients a test opened closed after it, the scratch removed after the file; and a client of the MCP SDK (its real
 * `Client`) connected over stdio to the bundled CLI's `memdir mcp`.
 */
import { afterAll, afterEach, beforeAll } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { buildCli, cliPath, type CliRun, makeScratchProject, scratchHomeEnv } from "./cli.js"
import { removeScratch } from "./scratch.js"

/** A test file's scratch directory, its `home` and `project` (set in `beforeAll`), and the clients still open. */
export interface McpScratch {
  dir: string
  home: string
  project: string
  readonly open: Array<Client>
}

/** Registers the file's hooks; the scratch goes with whatever memdir process still runs inside it. */
export const mcpScratch = (prefix: string): McpScratch => {
  const scratch: McpScratch = { dir: "", home: "", project: "", open: [] }
  beforeAll(() => {
    buildCli()
    const made = makeScratchProject(prefix)
    scratch.dir = made.scratch
    scratch.home = made.home
    scratch.project = made.project
  })
  afterEach(async () => {
    for (const client of scratch.open.splice(0)) await client.close()
  })
  afterAll(() => removeScratch(scratch.dir))
  return scratch
}

/**
 * A client named `name` connected to `command args` (by default `node <bundle> mcp`) in the scratch project with
 * exactly `env`, closed after the test; `onStderr` reads the server's stderr.
 */
export const connectMcp = async (scratch: McpScratch, options: {
  readonly env: Record<string, string>
  readonly name: string
  readonly version?: string
  readonly command?: string
  readonly args?: ReadonlyArray<string>
  readonly cwd?: string
  readonly onStderr?: (chunk: string) => void
}): Promise<Client> => {
  const transport = new StdioClientTransport({
    command: options.command ?? process.execPath,
    args: [...(options.args ?? [cliPath, "mcp"])],
    cwd: options.cwd ?? scratch.project,
    env: options.env,
    stderr: "pipe"
  })
  if (options.onStderr !== undefined) transport.stderr?.on("data", (chunk) => options.onStderr!(String(chunk)))
  const client = new Client({ name: options.name, version: options.version ?? "0" })
  await client.connect(transport)
  scratch.open.push(client)
  return client
}

/** Two memories on unrelated topics: a rule for database tests and the release train. */
export const TWO_TOPICS = [
  {
    file: "feedback_database_tests.md",
    type: "feedback",
    name: "Database tests",
    description: "integration tests must hit a real postgres database, never mocks",
    body: "Use the docker compose postgres. Mocking the database hid a broken migration last quarter."
  },
  {
    file: "reference_release_train.md",
    type: "reference",
    name: "Release train",
    description: "releases leave every Tuesday from the release branch after QA sign-off",
    body: "Ask the release captain in #releases before merging late fixes."
  }
] as const

/** Writes the `TWO_TOPICS` memory files (no index) into `memoryDir`, which exists. */
export const writeTwoTopics = (memoryDir: string): void => {
  for (const m of TWO_TOPICS) {
    fs.writeFileSync(
      path.join(memoryDir, m.file),
      `---\nname: ${m.name}\ndescription: ${m.description}\ntype: ${m.type}\n---\n\n${m.body}\n`
    )
  }
}

/** The environment of both doors: the scratch HOME, the memory directory, no session of the shell running tests. */
export const doorEnv = (scratch: McpScratch, memoryDir: string, extra: Record<string, string> = {}) =>
  scratchHomeEnv(scratch.home, { MEMDIR_MEMORY_DIR: memoryDir, CLAUDE_CODE_SESSION_ID: "", ...extra })

/** `memdir hook` answering Claude Code's UserPromptSubmit of `prompt` for `session`, in the scratch project. */
export const promptHook = (scratch: McpScratch, memoryDir: string, session: string, prompt: string): Promise<CliRun> =>
  new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [cliPath, "hook"],
      { cwd: scratch.project, env: doorEnv(scratch, memoryDir, { MEMDIR_HOOK_GUARD_MS: "120000" }), encoding: "utf8" },
      (error, stdout, stderr) =>
        resolve({ status: error === null ? 0 : typeof error.code === "number" ? error.code : -1, stdout, stderr })
    )
    child.stdin?.end(JSON.stringify({
      session_id: session,
      transcript_path: path.join(scratch.home, ".claude", "projects", "p", `${session}.jsonl`),
      cwd: scratch.project,
      permission_mode: "default",
      hook_event_name: "UserPromptSubmit",
      prompt
    }))
  })
