/**
 * `memdir hook` and `memdir hooks install | uninstall` end to end: the bundled CLI as a child process fed the JSON an
 * agent CLI writes on stdin (docs/hooks.md), a real git repository and a scratch HOME. Covers each event's answer,
 * a Claude-Code-shaped session (start → three prompts → stop), failing open on hostile input, the 10,000-character
 * cap, and install/uninstall merging with the user's own hooks (also the commands of docs/hooks.md as written).
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as MessagesApiServer from "@memdir/testing/MessagesApiServer"
import * as Effect from "effect/Effect"
import { execFile, execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { buildCli, cliPath, type CliRun, parseJson, repoRoot, scratchHomeEnv } from "./support/cli.js"
import { readRepoFile } from "./support/markdown.js"
import { removeScratch } from "./support/scratch.js"

let scratch: string
let home: string
let project: string
let memoryDir: string

/** Runs the CLI with `input` on stdin (asynchronously: nothing in this process is blocked). */
const memdir = (
  args: ReadonlyArray<string>,
  input = "",
  env: Record<string, string> = {}
): Effect.Effect<CliRun> =>
  Effect.callback<CliRun>((resume) => {
    const child = execFile(
      process.execPath,
      [cliPath, ...args],
      { cwd: project, env: scratchHomeEnv(home, env), encoding: "utf8", maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const status = error === null ? 0 : typeof error.code === "number" ? error.code : -1
        resume(Effect.succeed({ status, stdout, stderr }))
      }
    )
    child.stdin?.end(input)
  })

const SESSION = "3f2a9c1e-7b4d-4e8a-9c0f-5d6e7f8a9b0c"

/** The documented input of each event (Claude Code's hooks reference; Codex sends the same fields). */
const event = (name: string, fields: Record<string, unknown> = {}, session = SESSION) =>
  JSON.stringify({
    session_id: session,
    transcript_path: path.join(home, ".claude", "projects", "shop", `${session}.jsonl`),
    cwd: project,
    permission_mode: "default",
    hook_event_name: name,
    ...fields
  })

/** The time guard is tested on its own: here it is wide, so a loaded machine does not turn an answer into nothing. */
const hook = (input: string, env: Record<string, string> = {}) =>
  memdir(["hook"], input, { MEMDIR_HOOK_GUARD_MS: "120000", ...env })

/** The additionalContext of a hook's answer; fails the test when the answer is not the documented JSON. */
const contextOf = (run: CliRun, eventName: string): string => {
  assert.strictEqual(run.status, 0, run.stderr)
  const answer = parseJson(run)
  assert.deepStrictEqual(Object.keys(answer), ["hookSpecificOutput"])
  assert.deepStrictEqual(Object.keys(answer.hookSpecificOutput).sort(), ["additionalContext", "hookEventName"])
  assert.strictEqual(answer.hookSpecificOutput.hookEventName, eventName)
  return answer.hookSpecificOutput.additionalContext
}

const assertSilent = (run: CliRun) => {
  assert.strictEqual(run.status, 0, run.stderr)
  assert.strictEqual(run.stdout, "")
}

const writeMemory = (file: string, type: string, name: string, description: string, body: string) => {
  fs.mkdirSync(memoryDir, { recursive: true })
  fs.writeFileSync(
    path.join(memoryDir, file),
    `---\nname: ${name}\ndescription: ${description}\ntype: ${type}\n---\n\n${body}\n`
  )
}

beforeAll(() => {
  buildCli()
  scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "memdir-hooks-")))
  home = path.join(scratch, "home")
  project = path.join(scratch, "shop")
  fs.mkdirSync(project, { recursive: true })
  execFileSync("git", ["init", "-q"], { cwd: project })
  memoryDir = path.join(home, ".memdir", "projects", project.replace(/[^A-Za-z0-9]/g, "-"), "memory")
  writeMemory(
    "feedback_database_tests.md",
    "feedback",
    "Database tests",
    "integration tests must hit a real postgres database, never mocks",
    "Use the docker compose postgres. Mocking the database hid a broken migration last quarter."
  )
  writeMemory(
    "reference_release_train.md",
    "reference",
    "Release train",
    "releases leave every Tuesday from the release branch after QA sign-off",
    "Ask the release captain in #releases before merging late fixes."
  )
  fs.writeFileSync(
    path.join(memoryDir, "MEMORY.md"),
    "- [Database tests](feedback_database_tests.md) — real postgres in integration tests, never mocks\n" +
      "- [Release train](reference_release_train.md) — releases leave every Tuesday\n"
  )
})

// background jobs and a lingering hook daemon may still be writing into the tree
afterAll(() => removeScratch(scratch))

describe("memdir hook: a Claude-Code-shaped session", () => {
  it.live("start → a relevant prompt → an off-topic prompt → the relevant topic again → stop", () =>
    Effect.gen(function*() {
      const session = "9a8b7c6d-0000-4000-8000-00000000e2e0"
      const start = contextOf(yield* hook(event("SessionStart", { source: "startup" }, session)), "SessionStart")
      assert.include(start, "# Memory")
      assert.include(start, "- [Database tests](feedback_database_tests.md)")
      assert.include(start, "- [Release train](reference_release_train.md)")

      const relevant = contextOf(
        yield* hook(event("UserPromptSubmit", { prompt: "should the new tests mock the database?" }, session)),
        "UserPromptSubmit"
      )
      assert.include(relevant, "Memory feedback_database_tests.md (feedback, saved today): Database tests")
      assert.include(relevant, "Mocking the database hid a broken migration")
      assert.notInclude(relevant, "release_train")

      assertSilent(yield* hook(event("UserPromptSubmit", { prompt: "what is the capital of Portugal?" }, session)))
      // The same topic again: already surfaced in this session, so nothing twice.
      assertSilent(
        yield* hook(event("UserPromptSubmit", { prompt: "so how do I write database tests without mocks?" }, session))
      )

      // Without a key there is nothing to start in the background: Stop answers nothing, at once.
      assertSilent(yield* hook(event("Stop", { stop_hook_active: false }, session)))
      assert.deepStrictEqual(fs.readdirSync(path.join(memoryDir, ".sessions")), [`${session}.json`])
    }))

  it.live("another session gets the memory again; one-word prompts never recall", () =>
    Effect.gen(function*() {
      const other = "b1b2b3b4-0000-4000-8000-0000000000b1"
      const again = contextOf(
        yield* hook(event("UserPromptSubmit", { prompt: "can I mock the database in these tests?" }, other)),
        "UserPromptSubmit"
      )
      assert.include(again, "feedback_database_tests.md")
      assertSilent(
        yield* hook(event("UserPromptSubmit", { prompt: "database" }, "c1c2c3c4-0000-4000-8000-0000000000c1"))
      )
    }))

  it.live("SessionEnd and Stop with stop_hook_active answer nothing", () =>
    Effect.gen(function*() {
      assertSilent(yield* hook(event("SessionEnd", { reason: "prompt_input_exit" })))
      assertSilent(yield* hook(event("Stop", { stop_hook_active: true }), { ANTHROPIC_API_KEY: "sk-test" }))
    }))
})

describe("memdir hook: the JSON Codex 0.171 sends", () => {
  // Captured verbatim from codex-cli 0.171.0 (`codex exec`, a hooks.json in CODEX_HOME running a stdin dump, against
  // a loopback Responses server), only session, paths and prompt replaced; the fields match openai/codex
  // codex-rs/hooks/schema/generated/*.command.input.schema.json. SessionStart and SessionEnd carry no turn_id,
  // SessionEnd no model nor permission_mode; Codex session ids are UUIDv7.
  const session = "01a242c5-fd07-74d3-b5c7-a0ca64042f60"
  const codex = (fields: Record<string, unknown>) =>
    JSON.stringify({
      session_id: session,
      transcript_path: path.join(
        home,
        ".codex",
        "sessions",
        "2026",
        "12",
        "04",
        `rollout-2026-12-04T20-36-41-${session}.jsonl`
      ),
      cwd: project,
      ...fields
    })
  const turn = "01a242c5-fd61-78c3-b3ac-30cf95277add"

  it.live("SessionStart and UserPromptSubmit answer additionalContext; Stop and SessionEnd nothing", () =>
    Effect.gen(function*() {
      const start = contextOf(
        yield* hook(codex({
          hook_event_name: "SessionStart",
          model: "gpt-5.4",
          permission_mode: "bypassPermissions",
          source: "startup"
        })),
        "SessionStart"
      )
      assert.include(start, "- [Database tests](feedback_database_tests.md)")
      const prompt = contextOf(
        yield* hook(codex({
          turn_id: turn,
          hook_event_name: "UserPromptSubmit",
          model: "gpt-5.4",
          permission_mode: "bypassPermissions",
          prompt: "should the new tests mock the database?"
        })),
        "UserPromptSubmit"
      )
      assert.include(prompt, "Memory feedback_database_tests.md (feedback, saved today): Database tests")
      assertSilent(
        yield* hook(codex({
          turn_id: turn,
          hook_event_name: "Stop",
          model: "gpt-5.4",
          permission_mode: "bypassPermissions",
          stop_hook_active: false,
          last_assistant_message: "ok"
        }))
      )
      assertSilent(yield* hook(codex({ hook_event_name: "SessionEnd", reason: "other" })))
    }))
})

describe("memdir hook fails open", () => {
  const cases: ReadonlyArray<readonly [string, () => string, Record<string, string> | undefined]> = [
    ["not JSON", () => "{not json", undefined],
    ["an empty stdin", () => "", undefined],
    ["a JSON array", () => "[1,2]", undefined],
    ["another event", () => event("PreToolUse", { tool_name: "Bash", tool_input: {} }), undefined],
    [
      "a session id with a path",
      () => event("UserPromptSubmit", { prompt: "mock the database tests?" }, "../../etc"),
      undefined
    ],
    ["a relative cwd", () => event("UserPromptSubmit", { prompt: "mock the database tests?", cwd: "shop" }), undefined],
    [
      "a NUL in cwd",
      () => event("UserPromptSubmit", { prompt: "mock the database tests?", cwd: `${project}\0x` }),
      undefined
    ],
    ["a prompt of the wrong type", () => event("UserPromptSubmit", { prompt: 42 }), undefined],
    [
      "auto memory disabled",
      () => event("SessionStart", { source: "startup" }),
      { MEMDIR_DISABLE_AUTO_MEMORY: "1" }
    ],
    ["a malformed memdir setting", () => event("SessionStart", { source: "startup" }), {
      MEMDIR_MEMORY_DIR: "relative/dir"
    }]
  ]
  for (const [name, input, env] of cases) {
    it.live(`${name}: exit 0, nothing on stdout`, () =>
      Effect.gen(function*() {
        assertSilent(yield* hook(input(), env))
      }))
  }

  it.live("a run over its time guard answers nothing and says so", () =>
    Effect.gen(function*() {
      const run = yield* hook(event("SessionStart", { source: "startup" }), { MEMDIR_HOOK_GUARD_MS: "1" })
      assertSilent(run)
      assert.match(run.stderr, /memdir hook: no answer within 1 ms; answered with nothing/)
    }))

  it.live("the reason goes to stderr", () =>
    Effect.gen(function*() {
      const run = yield* hook(event("UserPromptSubmit", { prompt: "mock the database tests?" }, "bad id!"))
      assertSilent(run)
      assert.match(run.stderr, /memdir hook: .*session_id.*answered with nothing/)
    }))
})

describe("memdir hook: the 10,000-character cap", () => {
  it.live("a 186-line index: compact rules, the pinned and newest lines kept, the cut stated, under 10,000", () =>
    Effect.gen(function*() {
      const bigHome = path.join(scratch, "big-home")
      const bigMemory = path.join(scratch, "big-memory")
      fs.mkdirSync(bigMemory, { recursive: true })
      // memory i was written (i * 53) % 186 minutes after the start: the newest are spread through the index
      const written = (i: number) => (i * 53) % 186
      const start = Date.UTC(2026, 2, 1)
      const lines = Array.from({ length: 186 }, (_, i) => {
        const file = `project_topic_${i}.md`
        fs.writeFileSync(
          path.join(bigMemory, file),
          `---\nname: Topic ${i}\ndescription: notes on topic ${i}\ntype: project\n` +
            `modified: ${new Date(start + written(i) * 60_000).toISOString()}\n${i === 7 ? "pinned: true\n" : ""}` +
            `---\n\nBody ${i}.\n`
        )
        return `- [Topic ${i}](${file}) — notes on topic ${i}, ${"x".repeat(70)}`
      })
      fs.writeFileSync(path.join(bigMemory, "MEMORY.md"), lines.join("\n") + "\n")
      const run = yield* hook(event("SessionStart", { source: "startup" }), {
        HOME: bigHome,
        MEMDIR_MEMORY_DIR: bigMemory
      })
      const context = contextOf(run, "SessionStart")
      assert.isAtMost(context.length, 10_000)
      assert.isAbove(context.length, 9_700)
      // the compact rules, naming the whole ones
      assert.include(context, "`memdir prompt` prints them whole")
      assert.notInclude(context, "## How to save a memory")
      const shown = [...context.matchAll(/\(project_topic_(\d+)\.md\)/g)].map((m) => Number(m[1]))
      const cut = /\[memdir: MEMORY\.md cut to fit this 10,000-character context: (\d+) of 186 lines shown/.exec(
        context
      )
      assert.isNotNull(cut)
      assert.strictEqual(Number(cut![1]), shown.length)
      // 61 lines of ~126 characters (the whole rules left room for the first 26)
      assert.strictEqual(shown.length, 61)
      // the pinned one (old), then the newest, in the index's order
      assert.include(shown, 7)
      const newest = Array.from({ length: 186 }, (_, i) => i).filter((i) => i !== 7)
        .sort((a, b) => written(b) - written(a)).slice(0, shown.length - 1)
      assert.sameMembers(shown, [7, ...newest])
      assert.deepStrictEqual(shown, [...shown].sort((a, b) => a - b))
      assert.include(context, "`memdir ls` lists every memory")
      assert.isTrue(context.trimEnd().endsWith(`${path.join(bigMemory, "MEMORY.md")}]`))
      // whole lines only
      for (const i of shown) assert.include(context, lines[i] + "\n")
    }))
})

describe("memdir hooks install | uninstall", () => {
  const userSettings = {
    model: "opus",
    permissions: { allow: ["Bash(npm test)"] },
    hooks: {
      Stop: [{ hooks: [{ type: "command", command: "notify-send done" }] }],
      PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "./audit.sh", timeout: 5 }] }]
    }
  }
  const freshHome = (name: string) => {
    const dir = path.join(scratch, name)
    fs.mkdirSync(dir, { recursive: true })
    return dir
  }
  /** A fresh home whose Claude Code settings.json holds the user's own `userSettings`. */
  const withUserSettings = (name: string) => {
    const h = freshHome(name)
    const file = path.join(h, ".claude", "settings.json")
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, JSON.stringify(userSettings))
    return { env: { HOME: h }, file }
  }

  it.live("Claude Code, user scope: merged with the user's hooks, idempotent, removed exactly", () =>
    Effect.gen(function*() {
      const { env, file } = withUserSettings("home-claude")

      const dry = yield* memdir(["hooks", "install", "--agent", "claude", "--dry-run"], "", env)
      assert.strictEqual(dry.status, 0, dry.stderr)
      assert.include(dry.stdout, `+++ ${file}`)
      assert.include(dry.stdout, "+            \"command\": \"memdir-hook\",")
      assert.deepStrictEqual(JSON.parse(fs.readFileSync(file, "utf8")), userSettings, "a dry run writes nothing")

      const install = yield* memdir(["hooks", "install", "--agent", "claude", "--json"], "", env)
      assert.strictEqual(install.status, 0, install.stderr)
      // automatic model calls are off (the default): no Stop hook, it would have nothing to start
      assert.deepStrictEqual(parseJson(install).events, ["SessionStart", "UserPromptSubmit", "SessionEnd"])
      const installed = JSON.parse(fs.readFileSync(file, "utf8"))
      assert.strictEqual(installed.model, "opus")
      // the user's rules first, then memdir's (its Claude Code setup: test/hooks-install.test.ts)
      assert.deepStrictEqual(installed.permissions.allow.slice(0, 1), userSettings.permissions.allow)
      assert.deepStrictEqual(installed.hooks.PreToolUse, userSettings.hooks.PreToolUse)
      assert.deepStrictEqual(installed.hooks.Stop, userSettings.hooks.Stop)
      // SessionEnd only starts background work: Claude Code runs it without waiting (docs/hooks.md#what-the-hooks-cost)
      assert.deepStrictEqual(installed.hooks.SessionEnd, [
        { hooks: [{ type: "command", command: "memdir-hook", timeout: 15, async: true }] }
      ])
      assert.deepStrictEqual(installed.hooks.UserPromptSubmit, [
        { hooks: [{ type: "command", command: "memdir-hook", timeout: 15 }] }
      ])

      const again = yield* memdir(["hooks", "install", "--agent", "claude"], "", env)
      assert.include(again.stdout, "already in")
      assert.deepStrictEqual(JSON.parse(fs.readFileSync(file, "utf8")), installed)

      const uninstall = yield* memdir(["hooks", "uninstall", "--agent", "claude"], "", env)
      assert.strictEqual(uninstall.status, 0, uninstall.stderr)
      assert.deepStrictEqual(JSON.parse(fs.readFileSync(file, "utf8")), userSettings)
      assert.deepStrictEqual(fs.readdirSync(path.dirname(file)), ["settings.json"], "no temp file left behind")
    }))

  it.live("install says when the hooks' program is not on PATH: the agent could not start a single hook", () =>
    Effect.gen(function*() {
      const h = freshHome("home-path")
      const install = (PATH: string, extra: ReadonlyArray<string> = []) =>
        memdir(["hooks", "install", "--agent", "claude", "--dry-run", ...extra], "", { HOME: h, PATH })
      const missing = yield* install("/usr/bin:/bin")
      assert.strictEqual(missing.status, 0, missing.stderr)
      assert.include(missing.stderr, "the hooks run `memdir-hook`, which is not on your PATH")
      assert.include(missing.stderr, "npm i -g @memdir/cli")
      const json = parseJson(yield* install("/usr/bin:/bin", ["--json"]))
      assert.lengthOf(json.warnings, 1)
      // on PATH (as npm links it), or a full path to an executable file: nothing to say
      const bin = path.join(h, "bin")
      fs.mkdirSync(bin)
      fs.writeFileSync(path.join(bin, "memdir-hook"), "#!/bin/sh\n", { mode: 0o755 })
      const found = yield* install(`${bin}:/usr/bin:/bin`)
      assert.notInclude(found.stderr, "not on your PATH")
      assert.isUndefined(parseJson(yield* install(`${bin}:/usr/bin:/bin`, ["--json"])).warnings)
      const full = yield* install("/usr/bin:/bin", ["--command", `${path.join(bin, "memdir-hook")} --selector auto`])
      assert.notInclude(full.stderr, "not on your PATH")
      // a file that is not executable is not a program
      fs.chmodSync(path.join(bin, "memdir-hook"), 0o644)
      const notExecutable = yield* install(`${bin}:/usr/bin:/bin`)
      assert.include(notExecutable.stderr, "not on your PATH")
    }))

  it.live("doctor says what memdir-hook finds on PATH once an agent runs it, and what a missing tool costs", () =>
    Effect.gen(function*() {
      const h = freshHome("home-doctor-tools")
      const doctor = (PATH: string, json = true) =>
        memdir(["doctor", ...(json ? ["--json"] : [])], "", { HOME: h, PATH })
      assert.notProperty(parseJson(yield* doctor("/usr/bin:/bin")), "hookScript", "no agent runs memdir-hook yet")
      const installed = yield* memdir(["hooks", "install", "--agent", "claude"], "", { HOME: h })
      assert.strictEqual(installed.status, 0, installed.stderr)
      assert.deepStrictEqual(parseJson(yield* doctor("/usr/bin:/bin")).hookScript, { missing: [] })
      assert.include(
        (yield* doctor("/usr/bin:/bin", false)).stdout,
        "hooks: memdir-hook finds curl, sha256sum and setsid"
      )
      // a PATH with git (doctor needs it) and sha256sum, without curl or setsid
      const tools = path.join(h, "tools")
      fs.mkdirSync(tools)
      for (const tool of ["git", "sha256sum"]) {
        fs.symlinkSync(
          execFileSync("sh", ["-c", `command -v ${tool}`], { encoding: "utf8" }).trim(),
          path.join(tools, tool)
        )
      }
      assert.deepStrictEqual(parseJson(yield* doctor(tools)).hookScript, { missing: ["curl", "setsid"] })
      assert.include(
        (yield* doctor(tools, false)).stdout,
        "hooks: memdir-hook finds no curl, setsid on this PATH: every hook starts Node, ~50 ms more each"
      )
    }))

  it.live("the Stop hook comes with automatic model calls and goes with them, the user's own Stop hook kept", () =>
    Effect.gen(function*() {
      const { env, file } = withUserSettings("home-claude-stop")
      const ours = { hooks: [{ type: "command", command: "memdir-hook", timeout: 15 }] }
      const settings = () => JSON.parse(fs.readFileSync(file, "utf8"))

      const off = yield* memdir(["hooks", "install", "--agent", "claude", "--model-calls", "off"], "", env)
      assert.strictEqual(off.status, 0, off.stderr)
      assert.include(off.stdout, "(SessionStart, UserPromptSubmit, SessionEnd)")
      assert.include(off.stdout, "no Stop hook: with automatic model calls off it would start nothing")
      assert.deepStrictEqual(settings().hooks.Stop, userSettings.hooks.Stop)

      const on = yield* memdir(["hooks", "install", "--agent", "claude", "--model-calls", "on", "--json"], "", env)
      assert.strictEqual(on.status, 0, on.stderr)
      assert.deepStrictEqual(parseJson(on).events, ["Stop"])
      assert.deepStrictEqual(parseJson(on).removedEvents, [])
      assert.deepStrictEqual(settings().hooks.Stop, [userSettings.hooks.Stop[0], ours])

      // on already, and said so by the settings alone: nothing to change
      const again = yield* memdir(["hooks", "install", "--agent", "claude", "--json"], "", env)
      assert.strictEqual(parseJson(again).changed, false)

      const offAgain = yield* memdir(["hooks", "install", "--agent", "claude", "--model-calls", "off"], "", env)
      assert.strictEqual(offAgain.status, 0, offAgain.stderr)
      assert.include(offAgain.stdout, `took memdir's Stop hook out of ${file}`)
      assert.deepStrictEqual(settings().hooks.Stop, userSettings.hooks.Stop, "the user's Stop hook stays")
      assert.deepStrictEqual(Object.keys(settings().hooks).sort(), [
        "PreToolUse",
        "SessionEnd",
        "SessionStart",
        "Stop",
        "UserPromptSubmit"
      ])
    }))

  it.live("Codex: ~/.codex/hooks.json, created when missing, the events 0.171 runs", () =>
    Effect.gen(function*() {
      const h = freshHome("home-codex")
      const run = yield* memdir(["hooks", "install", "--agent", "codex"], "", { HOME: h })
      assert.strictEqual(run.status, 0, run.stderr)
      assert.include(run.stdout, "Trust all and continue", "says how to trust the hooks")
      const file = path.join(h, ".codex", "hooks.json")
      const hooks = JSON.parse(fs.readFileSync(file, "utf8")).hooks
      // Stop only with automatic model calls on (off here: the default)
      assert.deepStrictEqual(Object.keys(hooks), ["SessionStart", "UserPromptSubmit", "SessionEnd"])
      assert.strictEqual(hooks.SessionEnd[0].hooks[0].timeout, 3, "what Codex allows a SessionEnd hook")
      yield* memdir(["hooks", "uninstall", "--agent", "codex"], "", { HOME: h })
      assert.deepStrictEqual(JSON.parse(fs.readFileSync(file, "utf8")), {})
    }))

  it.live("Codex: $CODEX_HOME/hooks.json; install then uninstall gives the user's file back byte for byte", () =>
    Effect.gen(function*() {
      const h = freshHome("home-codex-own")
      const codexHome = path.join(scratch, "codex-home")
      const file = path.join(codexHome, "hooks.json")
      fs.mkdirSync(codexHome, { recursive: true })
      const own = JSON.stringify(
        {
          hooks: {
            Stop: [{ hooks: [{ type: "command", command: "notify-send done", timeout: 5 }] }],
            PreToolUse: [{ matcher: "^Bash$", hooks: [{ type: "command", command: "./audit.sh" }] }]
          }
        },
        null,
        4
      ) + "\n"
      fs.writeFileSync(file, own)
      const env = { HOME: h, CODEX_HOME: codexHome }
      const install = yield* memdir(["hooks", "install", "--agent", "codex", "--json"], "", env)
      assert.strictEqual(install.status, 0, install.stderr)
      assert.strictEqual(parseJson(install).path, file)
      const installed = fs.readFileSync(file, "utf8")
      assert.include(
        installed,
        "\n                        \"command\": \"memdir-hook\",",
        "in the file's own indentation"
      )
      assert.deepStrictEqual(JSON.parse(installed).hooks.Stop[0], JSON.parse(own).hooks.Stop[0])
      const uninstall = yield* memdir(["hooks", "uninstall", "--agent", "codex"], "", env)
      assert.strictEqual(uninstall.status, 0, uninstall.stderr)
      assert.strictEqual(fs.readFileSync(file, "utf8"), own)
    }))

  it.live("Codex: config.toml gets memdir's writable root and MCP server, and uninstall takes them out byte for byte", () =>
    Effect.gen(function*() {
      const h = freshHome("home-codex-toml")
      const codexHome = path.join(scratch, "codex-home-toml")
      const file = path.join(codexHome, "config.toml")
      fs.mkdirSync(codexHome, { recursive: true })
      // the user's own config, with a sandbox table of theirs: memdir adds one line under its header
      const own = "model = \"gpt-5\"\n\n[sandbox_workspace_write]\nnetwork_access = true\n\n" +
        "[mcp_servers.docs]\ncommand = \"docs-mcp\"\n"
      fs.writeFileSync(file, own)
      const env = { HOME: h, CODEX_HOME: codexHome }
      const install = yield* memdir(["hooks", "install", "--agent", "codex", "--model-calls", "off"], "", env)
      assert.strictEqual(install.status, 0, install.stderr)
      assert.include(install.stdout, `+++ ${file}`, "the diff first")
      const memoryBase = path.join(home, ".memdir")
      const installed = fs.readFileSync(file, "utf8")
      assert.include(
        installed,
        `[sandbox_workspace_write]\nwritable_roots = ["${memoryBase}"] # memdir: added by`,
        "the root under the user's own table"
      )
      const mark = " # memdir: added by `memdir hooks install --agent codex`"
      assert.include(installed, `[mcp_servers.memdir]${mark}\ncommand = "memdir"${mark}\nargs = ["mcp"]${mark}\n`)
      assert.include(installed, "[mcp_servers.docs]\ncommand = \"docs-mcp\"\n", "the user's server kept")
      const again = yield* memdir(["hooks", "install", "--agent", "codex", "--model-calls", "off"], "", env)
      assert.strictEqual(again.status, 0, again.stderr)
      assert.strictEqual(fs.readFileSync(file, "utf8"), installed, "installing again changes nothing")
      const uninstall = yield* memdir(["hooks", "uninstall", "--agent", "codex"], "", env)
      assert.strictEqual(uninstall.status, 0, uninstall.stderr)
      assert.strictEqual(fs.readFileSync(file, "utf8"), own)

      // no config.toml yet: memdir's tables are the file, and uninstall leaves it empty
      fs.rmSync(file)
      yield* memdir(["hooks", "install", "--agent", "codex", "--model-calls", "off"], "", env)
      assert.include(
        fs.readFileSync(file, "utf8"),
        `[sandbox_workspace_write]${mark}\nwritable_roots = ["${memoryBase}"]${mark}\n`
      )
      yield* memdir(["hooks", "uninstall", "--agent", "codex"], "", env)
      assert.strictEqual(fs.readFileSync(file, "utf8"), "")
    }))

  it.live("Codex: a config.toml that is not TOML is refused, named, and left as it was", () =>
    Effect.gen(function*() {
      const h = freshHome("home-codex-bad-toml")
      const codexHome = path.join(scratch, "codex-home-bad-toml")
      fs.mkdirSync(codexHome, { recursive: true })
      fs.writeFileSync(path.join(codexHome, "config.toml"), "model = [unclosed\n")
      const install = yield* memdir(["hooks", "install", "--agent", "codex", "--model-calls", "off"], "", {
        HOME: h,
        CODEX_HOME: codexHome
      })
      assert.strictEqual(install.status, 18, install.stderr)
      assert.include(install.stderr, path.join(codexHome, "config.toml"))
      assert.include(install.stderr, "not valid TOML")
      assert.strictEqual(fs.readFileSync(path.join(codexHome, "config.toml"), "utf8"), "model = [unclosed\n")
    }))

  it.live("--project writes <git root>/.claude/settings.json", () =>
    Effect.gen(function*() {
      const run = yield* memdir(["hooks", "install", "--agent", "claude", "--project"], "", {
        HOME: freshHome("home-p")
      })
      assert.strictEqual(run.status, 0, run.stderr)
      const file = path.join(project, ".claude", "settings.json")
      assert.strictEqual(
        JSON.parse(fs.readFileSync(file, "utf8")).hooks.SessionStart[0].hooks[0].command,
        "memdir-hook"
      )
      fs.rmSync(path.join(project, ".claude"), { recursive: true })
    }))

  it.live("a malformed file is refused, named, and left as it was", () =>
    Effect.gen(function*() {
      const h = freshHome("home-bad")
      const file = path.join(h, ".claude", "settings.json")
      fs.mkdirSync(path.dirname(file), { recursive: true })
      // the last one: valid JSON, but over the 4 MiB memdir reads of an agent's settings
      const huge = JSON.stringify({ notes: "x".repeat(4 * 1024 * 1024 + 1) })
      for (const text of ["{\"hooks\": ", "[]", "{\"hooks\": {\"Stop\": {\"command\": \"x\"}}}", huge]) {
        fs.writeFileSync(file, text)
        const run = yield* memdir(["hooks", "install", "--agent", "claude"], "", { HOME: h })
        assert.strictEqual(run.status, 18, run.stderr)
        assert.include(run.stderr, file)
        assert.strictEqual(fs.readFileSync(file, "utf8"), text)
      }
    }))

  it.live("the commands of docs/hooks.md work as written", () =>
    Effect.gen(function*() {
      const doc = readRepoFile("docs/hooks.md")
      const commands = [...doc.matchAll(/^(memdir hooks (?:install|uninstall) [^\n#]+?)\s*(?:#.*)?$/gm)].map((m) =>
        m[1]!
      )
      assert.isAtLeast(commands.length, 4)
      for (const command of commands) {
        const h = freshHome(`home-doc-${commands.indexOf(command)}`)
        const run = yield* memdir(command.split(/\s+/).slice(1), "", { HOME: h })
        assert.strictEqual(run.status, 0, `${command}: ${run.stderr}`)
      }
      // the plugin's hooks.json is what `install --agent claude` writes, with the same command
      const plugin = JSON.parse(fs.readFileSync(path.join(repoRoot, "plugins/claude-code/hooks/hooks.json"), "utf8"))
      const h = freshHome("home-plugin")
      yield* memdir(["hooks", "install", "--agent", "claude"], "", { HOME: h })
      assert.deepStrictEqual(
        plugin.hooks,
        JSON.parse(fs.readFileSync(path.join(h, ".claude", "settings.json"), "utf8")).hooks
      )
    }))
})

describe("memdir hook: Stop starts extraction in the background", () => {
  it.live("returns at once with nothing; the detached job then extracts the transcript (cursor written)", () =>
    Effect.scoped(Effect.gen(function*() {
      const session = "e1e2e3e4-0000-4000-8000-00000000bg01"
      const transcript = path.join(scratch, `${session}.jsonl`)
      const fixture = path.join(repoRoot, "packages/core/test/fixtures/transcripts/claude-code-session.jsonl")
      fs.writeFileSync(transcript, fs.readFileSync(fixture, "utf8").replaceAll("__MEMORY_DIR__", memoryDir))
      // The model answers only once the test lets it: the hook must have returned before any extraction finished.
      let release: () => void = () => {}
      const gate = new Promise<void>((resolve) => (release = resolve))
      const server = yield* MessagesApiServer.make({
        handler: () => gate.then(() => MessagesApiServer.text("Nothing worth saving."))
      })
      // the key and the user's consent (a key alone starts nothing: test/model-calls.test.ts)
      const env = {
        ANTHROPIC_API_KEY: "sk-test-hook",
        ANTHROPIC_BASE_URL: server.url,
        MEMDIR_AUTOMATIC_MODEL_CALLS: "1"
      }
      const stop = yield* hook(event("Stop", { stop_hook_active: false, transcript_path: transcript }, session), env)
      assertSilent(stop)
      const cursor = path.join(memoryDir, ".extract", `${session}.json`)
      assert.isFalse(fs.existsSync(cursor))
      release()
      // The detached job runs on its own: wait (bounded) for its cursor.
      for (let i = 0; i < 600 && !fs.existsSync(cursor); i++) yield* Effect.sleep("100 millis")
      assert.isTrue(fs.existsSync(cursor), "the background extraction wrote its cursor")
      assert.strictEqual(JSON.parse(fs.readFileSync(cursor, "utf8")).messageCount, 6)
      assert.isAtLeast((yield* server.requests).length, 1)
      // then the dream's gates (one session here: the session gate stops it), the job's last write
      const scan = path.join(memoryDir, ".dream-scan.json")
      for (let i = 0; i < 600 && !fs.existsSync(scan); i++) yield* Effect.sleep("100 millis")
      assert.isTrue(fs.existsSync(scan), "the background job evaluated the dream's gates")
    })))
})
