/**
 * memdir inside the real Claude Code CLI (docs/hooks.md#one-memory-in-claude-code): `claude -p` 2.1.332, installed
 * from the npm registry into a cache on first run, headless against the local Messages API stand-in
 * (`@memdir/testing/MessagesApiServer`), in a scratch HOME where `memdir hooks install --agent claude` set it up.
 * What the stand-in receives is what the model would: one `# Memory` section, memdir's index once, a `Write` into
 * the memory directory allowed, memdir's MCP `memory_write` allowed (the server added as docs/mcp.md says), and each
 * memory recalled on a later prompt. Without the setup, the same session carries Claude Code's own memory too and the
 * `Write` is denied.
 *
 * The CLI is ~400 MB (a native binary): it is installed once into `$MEMDIR_TEST_CACHE/claude-code` (default
 * `~/.cache/memdir-test/claude-code`). Only when the registry cannot be reached are these tests skipped, and they
 * say so on stderr; any other install failure fails them.
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
import { removeScratch } from "./support/scratch.js"

const skipReason = ensureClaudeCode()
if (skipReason !== undefined) {
  console.error(`\n*** test/claude-code.test.ts SKIPPED: ${skipReason} ***\n`)
}

let scratch: string

/** A scratch user (HOME and MEMDIR_HOME, a git project, `memdir` on PATH) with one memory. */
const makeUser = (name: string) => {
  const user = makeScratchUser(scratch, name)
  fs.writeFileSync(
    path.join(user.memoryDir, "reference_release_train.md"),
    "---\nname: Release train\ndescription: releases leave every Tuesday from the release branch\n" +
      "type: reference\n---\n\nAsk the release captain in #releases before merging late fixes.\n"
  )
  fs.writeFileSync(
    path.join(user.memoryDir, "MEMORY.md"),
    "- [Release train](reference_release_train.md) — releases leave every Tuesday from the release branch\n"
  )
  return user
}

const count = (text: string, needle: RegExp) => [...text.matchAll(needle)].length
/** A `# Memory` heading: Claude Code's starts a line; a hook's context arrives after "… additional context: ". */
const MEMORY_HEADING = /(?:^|additional context: )# Memory$/gm
const INDEX_LINE = "- [Release train](reference_release_train.md) — releases leave every Tuesday"
const NEW_MEMORY =
  "---\nname: Database tests\ndescription: integration tests must hit a real postgres database, never mocks\n" +
  "type: feedback\n---\n\nUse the docker compose postgres.\n**Why:** mocks hid a broken migration.\n"

/** The stand-in's model: asked to remember, it writes the memory file with Write; otherwise it answers "done". */
const model = (memoryFile: string): MessagesApiServer.Handler => (request) => {
  const all = JSON.stringify(request.body.messages)
  return all.includes("Remember that") && !all.includes("tool_result")
    ? MessagesApiServer.toolUse("Write", { file_path: memoryFile, content: NEW_MEMORY })
    : MessagesApiServer.text("done")
}

/** The first tool result Claude Code sent back (for the model's one tool call), as the model reads it. */
const writeResult = (requests: ReadonlyArray<MessagesApiServer.RecordedRequest>) => {
  const result = requests.flatMap((request) => toolResultsOf(request.body))[0]
  return result === undefined
    ? undefined
    : { isError: result.isError, text: textOf({ messages: [{ content: result.content }] }) }
}

beforeAll(() => {
  buildCli()
  scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "memdir-claude-code-")))
})

// background jobs and a lingering hook daemon may still be writing into the tree
afterAll(() => removeScratch(scratch))

type User = ReturnType<typeof makeUser>

/** `memdir hooks install --agent claude` with `flags` and model calls off, for `user`; it succeeds. */
const installHooks = (user: User, flags: ReadonlyArray<string> = []) =>
  Effect.gen(function*() {
    const install = yield* run(
      process.execPath,
      [cliPath, "hooks", "install", "--agent", "claude", ...flags, "--model-calls", "off"],
      user.project,
      user.env()
    )
    assert.strictEqual(install.status, 0, install.stderr)
    return install
  })

/** `claude ...args` in the user's project with `env`; it succeeds. */
const claude = (user: User, args: ReadonlyArray<string>, env: Record<string, string> = user.env()) =>
  Effect.gen(function*() {
    const session = yield* run(claudeBin, args, user.project, env)
    assert.strictEqual(session.status, 0, session.stderr)
    return session
  })

/** The user's environment with Claude Code talking to the stand-in at `url`. */
const standInEnv = (user: User, url: string) =>
  user.env({ ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: "sk-ant-test-dummy" })

describe.skipIf(skipReason !== undefined)(`memdir in the real Claude Code ${CLAUDE_CODE_VERSION}`, () => {
  it.live("without the setup: two memories in the prompt, and a Write into memdir's directory is denied", () =>
    Effect.scoped(Effect.gen(function*() {
      const user = makeUser("bare")
      const memoryFile = path.join(user.memoryDir, "feedback_database_tests.md")
      const server = yield* MessagesApiServer.make({ handler: model(memoryFile) })
      // memdir's hooks alone, as a user had them before memdir set Claude Code up
      fs.mkdirSync(path.join(user.home, ".claude"), { recursive: true })
      fs.writeFileSync(
        path.join(user.home, ".claude", "settings.json"),
        JSON.stringify({ hooks: { SessionStart: [{ hooks: [{ type: "command", command: "memdir hook" }] }] } })
      )
      const env = standInEnv(user, server.url)
      yield* claude(user, ["-p", "Remember that integration tests hit a real database"], env)
      const requests = yield* server.requests
      assert.strictEqual(count(textOf(requests[0]!.body), MEMORY_HEADING), 2, "Claude Code's and memdir's")
      const result = writeResult(requests)
      assert.isDefined(result, "the model's Write got an answer")
      assert.isTrue(result!.isError, result!.text)
      assert.isFalse(fs.existsSync(memoryFile))
    })))

  it.live("after `memdir hooks install --agent claude`: one # Memory, the index once, Write allowed and recalled", () =>
    Effect.scoped(Effect.gen(function*() {
      const user = makeUser("installed")
      const memoryFile = path.join(user.memoryDir, "feedback_database_tests.md")
      yield* installHooks(user)

      const server = yield* MessagesApiServer.make({ handler: model(memoryFile) })
      const env = standInEnv(user, server.url)
      yield* claude(user, ["-p", "Remember that integration tests hit a real database"], env)
      const requests = yield* server.requests
      const prompt = textOf(requests[0]!.body)
      assert.strictEqual(count(prompt, MEMORY_HEADING), 1, "memdir's section only")
      assert.include(prompt, `persistent, file-based memory at \`${user.memoryDir}/\``)
      assert.notInclude(prompt, path.join(user.home, ".claude", "projects"), "Claude Code's own memory is off")
      assert.strictEqual(prompt.split(INDEX_LINE).length - 1, 1, "the index once")
      const result = writeResult(requests)
      assert.isDefined(result, "the model's Write got an answer")
      assert.isFalse(result!.isError, result!.text)
      assert.strictEqual(fs.readFileSync(memoryFile, "utf8"), NEW_MEMORY)

      // a later session: the memory written with Write is recalled for a prompt it is about
      const before = requests.length
      yield* claude(user, ["-p", "Should the new integration tests mock the postgres database?"], env)
      const laterPrompt = textOf((yield* server.requests)[before]!.body)
      assert.include(laterPrompt, "Memory feedback_database_tests.md")
      assert.include(laterPrompt, "Use the docker compose postgres.")
      // model calls are off: every request the stand-in saw came from Claude Code, none from memdir's hooks
      for (const request of yield* server.requests) assert.match(request.headers["user-agent"] ?? "", /^claude-cli\//)
    })))

  it.live("--project: the same setup from the repository's .claude/settings.json", () =>
    Effect.scoped(Effect.gen(function*() {
      const user = makeUser("project")
      const memoryFile = path.join(user.memoryDir, "feedback_database_tests.md")
      const install = yield* installHooks(user, ["--project"])
      assert.isTrue(fs.existsSync(path.join(user.project, ".claude", "settings.json")))
      assert.isFalse(fs.existsSync(path.join(user.home, ".claude", "settings.json")), "the user's file untouched")
      assert.include(install.stdout, "trust", "says the rules wait for the workspace's trust")
      const server = yield* MessagesApiServer.make({ handler: model(memoryFile) })
      const env = standInEnv(user, server.url)
      const session = () => claude(user, ["-p", "Remember that integration tests hit a real database"], env)
      // an untrusted workspace: Claude Code takes the project's opt-out of its memory, not its allow rules
      const untrusted = yield* session()
      assert.include(untrusted.stderr, "this workspace has not been trusted")
      const requests = yield* server.requests
      assert.strictEqual(count(textOf(requests[0]!.body), MEMORY_HEADING), 1)
      assert.isTrue(writeResult(requests)?.isError)
      // what accepting Claude Code's trust dialog records in ~/.claude.json
      fs.writeFileSync(
        path.join(user.home, ".claude.json"),
        JSON.stringify({ projects: { [user.project]: { hasTrustDialogAccepted: true } } })
      )
      const before = requests.length
      yield* session()
      const result = writeResult((yield* server.requests).slice(before))
      assert.isFalse(result?.isError ?? true, result?.text)
      assert.strictEqual(fs.readFileSync(memoryFile, "utf8"), NEW_MEMORY)
    })))

  it.live("after install, memdir's MCP tools are allowed: a memory_write lands and is recalled later", () =>
    Effect.scoped(Effect.gen(function*() {
      const user = makeUser("mcp")
      yield* installHooks(user)
      // the MCP server as docs/mcp.md adds it, with Claude Code's own command
      yield* claude(user, ["mcp", "add", "-s", "user", "memdir", "--", "memdir", "mcp"])

      const server = yield* MessagesApiServer.make({
        handler: (request) => {
          const all = JSON.stringify(request.body.messages)
          return all.includes("Save with the tool") && !all.includes("tool_result")
            ? MessagesApiServer.toolUse("mcp__memdir__memory_write", {
              type: "project",
              name: "Release captain",
              description: "Dana is the release captain for the spring releases",
              body: "Ask Dana before merging late fixes into a release branch."
            })
            : MessagesApiServer.text("done")
        }
      })
      const env = standInEnv(user, server.url)
      yield* claude(user, ["-p", "Save with the tool: Dana is the release captain"], env)
      const result = writeResult(yield* server.requests)
      assert.isDefined(result, "the model's memory_write got an answer")
      assert.isFalse(result!.isError, result!.text)
      const index = fs.readFileSync(path.join(user.memoryDir, "MEMORY.md"), "utf8")
      assert.include(index, "Release captain", "memory_write wrote its index line")

      const before = (yield* server.requests).length
      yield* claude(user, ["-p", "Who is the release captain for the spring releases?"], env)
      const laterPrompt = textOf((yield* server.requests)[before]!.body)
      assert.include(laterPrompt, "Ask Dana before merging late fixes")
    })))
})
