/**
 * No model call the user did not ask for (docs/configuration.md#automatic-model-calls): with ANTHROPIC_API_KEY and
 * ANTHROPIC_BASE_URL pointing at a local Messages API stand-in, but automatic model calls off, a Stop hook starts
 * nothing and the MCP server's memory_recall sends no request; turned on in the user settings (by
 * `memdir hooks install --model-calls on`), both call the model. `memdir doctor` says which it is.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as MessagesApiServer from "@memdir/testing/MessagesApiServer"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import * as Effect from "effect/Effect"
import { execFile, execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import {
  buildCli,
  cliPath,
  type CliRun,
  makeScratchProject,
  parseJson,
  repoRoot,
  runCli,
  scratchHomeEnv
} from "./support/cli.js"
import { removeScratch } from "./support/scratch.js"

let scratch: string
let home: string
let project: string
let memoryDir: string

const userSettings = () => path.join(home, ".memdir", "settings.json")

beforeAll(() => {
  buildCli()
  ;({ home, project, scratch } = makeScratchProject("memdir-model-calls-"))
  memoryDir = path.join(home, ".memdir", "projects", project.replace(/[^A-Za-z0-9]/g, "-"), "memory")
  fs.mkdirSync(memoryDir, { recursive: true })
  fs.writeFileSync(
    path.join(memoryDir, "feedback_database_tests.md"),
    "---\nname: Database tests\ndescription: integration tests must hit a real postgres database, never mocks\n" +
      "type: feedback\n---\n\nUse the docker compose postgres.\n"
  )
  fs.writeFileSync(path.join(memoryDir, "MEMORY.md"), "- [Database tests](feedback_database_tests.md) — real db\n")
})

// background jobs and a lingering hook daemon may still be writing into the tree
afterAll(() => removeScratch(scratch))

const memdir = (args: ReadonlyArray<string>, env: Record<string, string> = {}, input?: string) =>
  input === undefined ?
    runCli(args, { cwd: project, env: scratchHomeEnv(home, env) }) :
    Effect.callback<CliRun>((resume) => {
      const child = execFile(
        process.execPath,
        [cliPath, ...args],
        { cwd: project, env: scratchHomeEnv(home, env), encoding: "utf8" },
        (error, stdout, stderr) => {
          const status = error === null ? 0 : typeof error.code === "number" ? error.code : -1
          resume(Effect.succeed({ status, stdout, stderr }))
        }
      )
      child.stdin?.end(input)
    })

const stop = (session: string, transcript: string) =>
  JSON.stringify({
    session_id: session,
    transcript_path: transcript,
    cwd: project,
    hook_event_name: "Stop",
    stop_hook_active: false
  })

const transcriptFor = (session: string) => {
  const file = path.join(scratch, `${session}.jsonl`)
  const fixture = path.join(repoRoot, "packages/core/test/fixtures/transcripts/claude-code-session.jsonl")
  fs.writeFileSync(file, fs.readFileSync(fixture, "utf8").replaceAll("__MEMORY_DIR__", memoryDir))
  return file
}

/** memory_recall over a real MCP client; the server's env carries the key and the stand-in's URL. */
const mcpRecall = (env: Record<string, string>) =>
  Effect.promise(async () => {
    const client = new Client({ name: "memdir-test", version: "0" })
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [cliPath, "mcp"],
        cwd: project,
        env: scratchHomeEnv(home, env),
        stderr: "pipe"
      })
    )
    try {
      const result: any = await client.callTool({
        name: "memory_recall",
        arguments: { query: "should the integration tests mock the database?" }
      })
      return result.structuredContent
    } finally {
      await client.close()
    }
  })

describe("automatic model calls", () => {
  it.live("off (the default) with a key: Stop starts nothing, MCP recall sends nothing; on: both call the model", () =>
    Effect.gen(function*() {
      const server = yield* MessagesApiServer.make({
        handler: (request) =>
          Array.isArray(request.body.tools) && request.body.tools.some((t: any) => t.name === "select_memories") ?
            MessagesApiServer.toolUse("select_memories", { selected_memories: ["feedback_database_tests.md"] }) :
            MessagesApiServer.text("Nothing worth saving.")
      })
      const env = { ANTHROPIC_API_KEY: "sk-test-calls", ANTHROPIC_BASE_URL: server.url }

      // off: doctor says so, naming the default and that the key alone does not count
      const doctor = yield* memdir(["doctor"], env)
      assert.strictEqual(doctor.status, 0, doctor.stderr)
      assert.include(
        doctor.stdout,
        "automatic model calls: off (an ANTHROPIC_API_KEY is set, but a key alone never turns them on) — decided by " +
          "the default"
      )
      assert.match(
        doctor.stdout,
        /when on: extraction with claude-sonnet-5-5 after each turn and session \(up to ~\$\d+\.\d\d a run\)/
      )
      assert.include(doctor.stdout, "claude-sonnet-5-5 $2 / $10 per million input / output tokens; estimates:")
      const doctorJson = parseJson(yield* memdir(["doctor", "--json"], env))
      assert.deepStrictEqual(
        [doctorJson.automaticModelCalls.enabled, doctorJson.automaticModelCalls.keyConfigured],
        [false, true]
      )

      const offSession = "a1a2a3a4-0000-4000-8000-0000000mc001"
      const offStop = yield* memdir(["hook"], env, stop(offSession, transcriptFor(offSession)))
      assert.strictEqual(offStop.status, 0, offStop.stderr)
      assert.strictEqual(offStop.stdout, "")
      const offRecall = yield* mcpRecall(env)
      assert.strictEqual(offRecall.selector, "offline")
      assert.deepStrictEqual(offRecall.memories.map((m: any) => m.path), ["feedback_database_tests.md"])
      // a hook asked for the model selector stays offline too, and says why once on stderr
      const prompt = yield* memdir(
        ["hook", "--selector", "auto"],
        env,
        JSON.stringify({
          session_id: "a1a2a3a4-0000-4000-8000-0000000mc002",
          cwd: project,
          hook_event_name: "UserPromptSubmit",
          prompt: "should the integration tests mock the database?"
        })
      )
      assert.strictEqual(prompt.status, 0, prompt.stderr)
      assert.include(prompt.stdout, "feedback_database_tests.md")
      assert.strictEqual(prompt.stderr.match(/automatic model calls are off/g)?.length, 1, prompt.stderr)
      yield* Effect.sleep("1500 millis") // time enough for a detached job to have reached the stand-in
      assert.isFalse(fs.existsSync(path.join(memoryDir, ".extract", `${offSession}.json`)))
      assert.strictEqual((yield* server.requests).length, 0, "no request reached the model while the switch is off")

      // a project's settings cannot turn billing on
      fs.mkdirSync(path.join(project, ".memdir"), { recursive: true })
      fs.writeFileSync(path.join(project, ".memdir", "settings.json"), JSON.stringify({ automaticModelCalls: true }))
      assert.strictEqual((yield* mcpRecall(env)).selector, "offline")
      assert.strictEqual((yield* server.requests).length, 0)
      fs.rmSync(path.join(project, ".memdir"), { recursive: true })

      // on, through `hooks install --model-calls on` (the user settings), other keys kept
      fs.mkdirSync(path.dirname(userSettings()), { recursive: true })
      fs.writeFileSync(userSettings(), JSON.stringify({ memoryLayout: "auto" }))
      const install = yield* memdir(["hooks", "install", "--agent", "claude", "--model-calls", "on"], env)
      assert.strictEqual(install.status, 0, install.stderr)
      assert.include(install.stdout, `wrote "automaticModelCalls": true to ${userSettings()}`)
      assert.deepStrictEqual(JSON.parse(fs.readFileSync(userSettings(), "utf8")), {
        memoryLayout: "auto",
        automaticModelCalls: true
      })
      const onDoctor = yield* memdir(["doctor"], env)
      assert.include(onDoctor.stdout, `automatic model calls: on — decided by user settings ${userSettings()}`)

      const onRecall = yield* mcpRecall(env)
      assert.strictEqual(onRecall.selector, "model")
      assert.strictEqual((yield* server.requests).length, 1)
      const onSession = "a1a2a3a4-0000-4000-8000-0000000mc003"
      const onStop = yield* memdir(["hook"], env, stop(onSession, transcriptFor(onSession)))
      assert.strictEqual(onStop.status, 0, onStop.stderr)
      const cursor = path.join(memoryDir, ".extract", `${onSession}.json`)
      for (let i = 0; i < 600 && !fs.existsSync(cursor); i++) yield* Effect.sleep("100 millis")
      assert.isTrue(fs.existsSync(cursor), "the background extraction ran")
      assert.isAbove((yield* server.requests).length, 1)

      // off again, by the flag on uninstall; without the flag uninstall leaves it alone
      const uninstall = yield* memdir(["hooks", "uninstall", "--agent", "claude"], env)
      assert.strictEqual(uninstall.status, 0, uninstall.stderr)
      assert.isTrue(JSON.parse(fs.readFileSync(userSettings(), "utf8")).automaticModelCalls)
      yield* memdir(["hooks", "uninstall", "--agent", "claude", "--model-calls", "off"], env)
      assert.isFalse(JSON.parse(fs.readFileSync(userSettings(), "utf8")).automaticModelCalls)
      // a non-terminal install without the flag leaves the setting and says where it stands
      const quiet = yield* memdir(["hooks", "install", "--agent", "claude"], env)
      assert.include(quiet.stderr, "automatic model calls are off (user settings")
      assert.isFalse(JSON.parse(fs.readFileSync(userSettings(), "utf8")).automaticModelCalls)
    }).pipe(Effect.scoped))

  it.live("turned on by the environment after an install without Stop: doctor names the file, install adds Stop", () =>
    Effect.gen(function*() {
      const on = { MEMDIR_AUTOMATIC_MODEL_CALLS: "1" }
      const settings = path.join(home, ".claude", "settings.json")
      const installed = yield* memdir(["hooks", "install", "--agent", "claude", "--model-calls", "off"])
      assert.strictEqual(installed.status, 0, installed.stderr)
      const without = `${settings} runs memdir's hooks without Stop: extraction runs once per session, at its end; ` +
        "`memdir hooks install --agent claude` adds the per-turn Stop hook"

      assert.notInclude((yield* memdir(["doctor"])).stdout, "without Stop", "off: the Stop hook has no work")
      // Codex's hook file is a FIFO with no writer: doctor does not wait on it
      fs.mkdirSync(path.join(home, ".codex"), { recursive: true })
      execFileSync("mkfifo", [path.join(home, ".codex", "hooks.json")])
      const doctor = yield* memdir(["doctor"], on)
      assert.include(doctor.stdout, "automatic model calls: on")
      assert.include(doctor.stdout, without)
      assert.deepStrictEqual(parseJson(yield* memdir(["doctor", "--json"], on)).hooksWithoutStop, [
        { agent: "claude", scope: "user", file: settings }
      ])

      // install without the flag, where the switch is on: Stop is added, and doctor has nothing more to say
      const again = yield* memdir(["hooks", "install", "--agent", "claude", "--json"], on)
      assert.deepStrictEqual(parseJson(again).events, ["Stop"])
      assert.notInclude((yield* memdir(["doctor"], on)).stdout, "without Stop")
      assert.deepStrictEqual(parseJson(yield* memdir(["doctor", "--json"], on)).hooksWithoutStop, [])
    }))
})
