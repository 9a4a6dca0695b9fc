/**
 * `memdir recall --selector model|offline` end to end: the bundled CLI as a child process talks, through the
 * real SDK, to the local Messages API server running in this test process (so the child is spawned
 * asynchronously: a synchronous spawn would block the server's event loop).
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as MessagesApiServer from "@memdir/testing/MessagesApiServer"
import * as Effect from "effect/Effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { buildCli, type CliRun, parseJson, runCli, scratchHomeEnv } from "./support/cli.js"

let scratch: string
let home: string
let project: string

/** The environment of a run: none of the caller's memdir or Anthropic settings leak in. */
/** Asynchronous, so the in-process server keeps answering while the CLI runs. */
const memdir = (args: ReadonlyArray<string>, env: Record<string, string> = {}): Effect.Effect<CliRun> =>
  runCli(args, { cwd: project, env: scratchHomeEnv(home, env) })

const json = parseJson

/** A memory file where memdir looks for this project's memory (written directly: one CLI start less each). */
const writeMemory = (file: string, type: string, name: string, description: string) => {
  const dir = path.join(home, ".memdir", "projects", project.replace(/[^A-Za-z0-9]/g, "-"), "memory")
  fs.mkdirSync(dir, { recursive: true })
  fs.writeFileSync(
    path.join(dir, file),
    `---\nname: ${name}\ndescription: ${description}\ntype: ${type}\n---\n${name}: details.\n`
  )
}

beforeAll(() => {
  buildCli()
  scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "memdir-selector-cli-")))
  home = path.join(scratch, "home")
  project = path.join(scratch, "app")
  fs.mkdirSync(home, { recursive: true })
  fs.mkdirSync(project, { recursive: true })
  execFileSync("git", ["init", "-q"], { cwd: project })
  writeMemory("feedback_testing_policy.md", "feedback", "Testing policy", "Integration tests must hit a real database")
  writeMemory("project_release_freeze.md", "project", "Release freeze", "No deploys from 2026-12-18 to 2027-01-04")
  writeMemory("reference_staging_redis.md", "reference", "Staging redis", "Never FLUSHALL on staging redis (shared)")
})

afterAll(() => {
  fs.rmSync(scratch, { recursive: true, force: true })
})

const QUERY = ["can", "I", "deploy", "the", "release", "next", "week?"]

describe("memdir recall with the model selector", () => {
  it.live("with a key and ANTHROPIC_BASE_URL, the model selects through the endpoint", () =>
    Effect.gen(function*() {
      const server = yield* MessagesApiServer.make({
        apiKey: "test",
        replies: [
          MessagesApiServer.toolUse("select_memories", {
            selected_memories: ["project_release_freeze.md", "made_up.md"]
          })
        ]
      })
      const run = yield* memdir(["recall", "--json", "--recent-tools", "kubectl,Bash", ...QUERY], {
        ANTHROPIC_API_KEY: "test",
        ANTHROPIC_BASE_URL: server.url
      })
      assert.strictEqual(run.status, 0, run.stderr)
      const out = json(run)
      assert.strictEqual(out.selector, "model")
      assert.isUndefined(out.degraded)
      assert.strictEqual(out.candidates, 3)
      assert.deepStrictEqual(out.selected.map((m: any) => m.path), ["project_release_freeze.md"])
      assert.include(out.selected[0].content, "Release freeze: details.")

      const requests = yield* server.requests
      assert.strictEqual(requests.length, 1)
      const body = requests[0]!.body
      assert.strictEqual(MessagesApiServer.apiKeyOf(requests[0]!), "test")
      assert.strictEqual(body.model, "claude-sonnet-5-5")
      assert.strictEqual(body.max_tokens, 256)
      assert.deepStrictEqual(body.tool_choice, { type: "tool", name: "select_memories" })
      assert.deepStrictEqual(body.system[0].cache_control, { type: "ephemeral" })
      const [manifest, query] = body.messages[0].content
      assert.match(manifest.text, /- \[project\] project_release_freeze\.md \(\d{4}-\d\d-\d\dT[^)]+\): No deploys/)
      assert.match(manifest.text, /- \[feedback\] feedback_testing_policy\.md /)
      assert.match(manifest.text, /- \[reference\] reference_staging_redis\.md /)
      assert.include(query.text, QUERY.join(" "))
      assert.include(query.text, "kubectl, Bash")
    }).pipe(Effect.scoped))

  it.live("MEMDIR_MODEL_SELECTOR picks the model; --selector offline never calls it", () =>
    Effect.gen(function*() {
      const server = yield* MessagesApiServer.make({
        replies: [MessagesApiServer.toolUse("select_memories", { selected_memories: [] })]
      })
      const env = {
        ANTHROPIC_API_KEY: "test",
        ANTHROPIC_BASE_URL: server.url,
        MEMDIR_MODEL_SELECTOR: "claude-haiku-5-5"
      }
      const viaModel = json(yield* memdir(["recall", "--json", ...QUERY], env))
      assert.strictEqual(viaModel.selector, "model")
      assert.deepStrictEqual(viaModel.selected, [])
      assert.strictEqual((yield* server.requests)[0]!.body.model, "claude-haiku-5-5")

      const offline = json(yield* memdir(["recall", "--json", "--selector", "offline", ...QUERY], env))
      assert.strictEqual(offline.selector, "offline")
      assert.isUndefined(offline.degraded)
      assert.strictEqual((yield* server.requests).length, 1)
    }).pipe(Effect.scoped))

  it.live("a model failure is never a failed recall: offline answers and the output says why", () =>
    Effect.gen(function*() {
      const server = yield* MessagesApiServer.make({
        replies: [
          MessagesApiServer.toolUse("select_memories", { selected_memories: "not a list" }),
          MessagesApiServer.unauthorized()
        ]
      })
      const env = { ANTHROPIC_API_KEY: "test", ANTHROPIC_BASE_URL: server.url }
      const malformed = yield* memdir(["recall", "--json", ...QUERY], env)
      assert.strictEqual(malformed.status, 0, malformed.stderr)
      const out = json(malformed)
      assert.strictEqual(out.selector, "offline")
      assert.match(out.degraded, /^malformed-output: /)
      assert.deepStrictEqual(out.selected.map((m: any) => m.path), ["project_release_freeze.md"])

      const refused = yield* memdir(["recall", ...QUERY], env)
      assert.strictEqual(refused.status, 0, refused.stderr)
      assert.include(refused.stderr, "note: the model selector failed")
      assert.include(refused.stderr, "authentication")
      assert.include(refused.stdout, "selected by the offline selector")
    }).pipe(Effect.scoped))

  it.live("without a key: offline by default, and --selector model degrades with not-configured", () =>
    Effect.gen(function*() {
      const byDefault = json(yield* memdir(["recall", "--json", ...QUERY]))
      assert.strictEqual(byDefault.selector, "offline")
      assert.isUndefined(byDefault.degraded)
      const forced = yield* memdir(["recall", "--json", "--selector", "model", ...QUERY])
      assert.strictEqual(forced.status, 0, forced.stderr)
      assert.match(json(forced).degraded, /^not-configured: .*ANTHROPIC_API_KEY/)
    }))
})
