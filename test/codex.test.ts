/**
 * memdir inside a whole Codex session with a model (docs/hooks.md, "Codex: what 0.171 needs"): the real Codex CLI
 * (`@openai/codex` at `CODEX_VERSION`, from the npm registry into the test cache) runs `codex exec` against the
 * local Responses API stand-in (`@memdir/testing/ResponsesApiServer`), configured as a user would: a
 * `[model_providers.standin]` in `config.toml` (`base_url`, `wire_api = "responses"`, `env_key`; no login),
 * `memdir hooks install --agent codex`, and the hooks trusted. What the stand-in receives is what the model would:
 * untrusted hooks do not run at all (memdir's MCP tools are offered all the same); trusted, memdir's index arrives
 * once (SessionStart), the memory a prompt is about arrives with its age (UserPromptSubmit) and nothing for an
 * unrelated prompt; a `memory_write` the model calls through Codex's MCP namespace lands in the memory directory
 * with its index line, and a later session recalls it. With `--project`, the repository's hooks run only once the
 * project (`codex exec --trust`) and then the hooks are trusted. With model calls on (and a key, here for a local
 * Messages API stand-in), Codex's Stop and SessionEnd each start memdir's background job, which extracts from
 * Codex's own rollout.
 *
 * Trust is given as docs/hooks.md tells a user to: in Codex's own TUI (run in a pseudo-terminal), "Trust all and
 * continue" at "Hooks need review"; Codex records it, no hash is computed here. Codex's app server (`hooks/list`)
 * says which hooks it sees and whether it trusts them.
 *
 * The scratch home lies in the test cache, as in test/codex-sandbox.test.ts: Codex's sandbox lets commands write
 * `/tmp`, which a home there would share.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as MessagesApiServer from "@memdir/testing/MessagesApiServer"
import * as ResponsesApiServer from "@memdir/testing/ResponsesApiServer"
import * as Effect from "effect/Effect"
import { execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { run } from "./support/claudeCode.js"
import { buildCli, cliPath, scratchHomeEnv, writeMemdirShim } from "./support/cli.js"
import { TWO_TOPICS, writeTwoTopics } from "./support/mcp.js"
import { registryTool, testCache } from "./support/registryTool.js"
import { removeScratch } from "./support/scratch.js"

const CODEX_VERSION = "0.171.0"
const codex = registryTool("@openai/codex", CODEX_VERSION, "codex", "codex")
const skipReason = codex.ensure()
if (skipReason !== undefined) console.error(`\n*** test/codex.test.ts SKIPPED: ${skipReason} ***\n`)

const API_KEY = "sk-standin-test"
const DATABASE = "Should the new integration tests mock the postgres database?"
const UNRELATED = "Rename the helper in src/cart.ts to totalPrice."
const [DATABASE_TESTS, RELEASE_TRAIN] = TWO_TOPICS
const indexLine = (m: (typeof TWO_TOPICS)[number]) => `- [${m.name}](${m.file}) — ${m.description}`
const CAVEAT = "This memory is 40 days old. Memories are point-in-time observations, not live state"
/** The opening of the context memdir's UserPromptSubmit hook adds. */
const RECALLED = "Memories from memdir that may help with this prompt"

let scratch: string

beforeAll(() => {
  buildCli()
  fs.mkdirSync(testCache, { recursive: true })
  scratch = fs.realpathSync(fs.mkdtempSync(path.join(testCache, "codex-")))
})

// memdir's hook daemon and background jobs may still be writing into the tree
afterAll(() => removeScratch(scratch))

/**
 * A scratch user `<scratch>/<name>`: HOME, MEMDIR_HOME (or what `extraEnv` sets) and CODEX_HOME, a git project `shop`, `memdir` on PATH (a
 * wrapper around the bundle), the two memories of `TWO_TOPICS` written 40 days ago with their index, and a Codex
 * `config.toml` whose model provider is the stand-in at `baseUrl`.
 */
const makeUser = (name: string, baseUrl: string, extraEnv: (home: string) => Record<string, string> = () => ({})) => {
  const home = path.join(scratch, name)
  const project = path.join(home, "shop")
  const bin = path.join(home, "bin")
  const codexHome = path.join(home, ".codex")
  for (const dir of [project, bin, codexHome]) fs.mkdirSync(dir, { recursive: true })
  execFileSync("git", ["init", "-q"], { cwd: project })
  writeMemdirShim(bin)
  const base = scratchHomeEnv(home)
  // a developer's own OpenAI key or Codex settings never reach the run
  for (const key of Object.keys(base)) if (key.startsWith("OPENAI_") || key.startsWith("CODEX_")) delete base[key]
  const env: Record<string, string> = {
    ...base,
    CODEX_HOME: codexHome,
    STANDIN_API_KEY: API_KEY,
    PATH: `${bin}${path.delimiter}${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ""}`,
    ...extraEnv(home)
  }
  const memoryDir = execFileSync(process.execPath, [cliPath, "path"], { cwd: project, env, encoding: "utf8" }).trim()
  fs.mkdirSync(memoryDir, { recursive: true })
  writeTwoTopics(memoryDir)
  const old = new Date(Date.now() - 40 * 86_400_000 - 3_600_000)
  for (const m of TWO_TOPICS) fs.utimesSync(path.join(memoryDir, m.file), old, old)
  fs.writeFileSync(path.join(memoryDir, "MEMORY.md"), TWO_TOPICS.map(indexLine).join("\n") + "\n")
  // the user's Codex set up for their model provider, before memdir is installed
  fs.writeFileSync(
    path.join(codexHome, "config.toml"),
    [
      "model = \"gpt-test\"",
      "model_provider = \"standin\"",
      "",
      // nothing but the stand-in: Codex otherwise looks up chatgpt.com (analytics) and github.com (plugins)
      "[analytics]",
      "enabled = false",
      "",
      "[features]",
      "plugins = false",
      "",
      "[model_providers.standin]",
      "name = \"Responses API stand-in\"",
      `base_url = ${JSON.stringify(baseUrl)}`,
      "wire_api = \"responses\"",
      "env_key = \"STANDIN_API_KEY\"",
      // a failed request fails the session at once instead of being retried with backoff
      "request_max_retries = 0",
      "stream_max_retries = 0",
      ""
    ].join("\n")
  )
  return { home, project, codexHome, memoryDir, env }
}

type User = ReturnType<typeof makeUser>

/** `memdir hooks install --agent codex`, model calls off unless `modelCalls`; it succeeds. */
const installHooks = (user: User, modelCalls: "on" | "off" = "off") =>
  Effect.gen(function*() {
    const install = yield* run(
      process.execPath,
      [cliPath, "hooks", "install", "--agent", "codex", "--model-calls", modelCalls],
      user.project,
      user.env
    )
    assert.strictEqual(install.status, 0, install.stderr)
    return install
  })

/** `codex exec <prompt>` in the user's project; it succeeds. */
const codexExec = (user: User, prompt: string) =>
  Effect.gen(function*() {
    const session = yield* run(codex.bin, ["exec", prompt], user.project, user.env)
    assert.strictEqual(session.status, 0, `${session.stdout}\n${session.stderr}`)
    return session
  })

interface ListedHook {
  readonly key: string
  readonly eventName: string
  readonly command: string | null
  readonly currentHash: string
  readonly trustStatus: string
}

/** The hooks of the user's project as Codex lists them (its app server's `hooks/list`), with their trust. */
const codexHooks = (user: User) =>
  Effect.promise(async (): Promise<ReadonlyArray<ListedHook>> => {
    const server = spawn(codex.bin, ["app-server"], {
      cwd: user.project,
      env: user.env,
      stdio: ["pipe", "pipe", "ignore"]
    })
    // answers by request id; a line that is not JSON-RPC, or the server gone, fails every call still waiting
    const waiting = new Map<number, (message: any) => void>()
    const failAll = (reason: string) => {
      for (const settle of waiting.values()) settle({ error: reason })
      waiting.clear()
    }
    server.on("error", (error) => failAll(`codex app-server: ${error}`))
    server.on("exit", (code, signal) => failAll(`codex app-server exited (${code ?? signal})`))
    server.stdin.on("error", (error) => failAll(`codex app-server's stdin: ${error}`))
    let buffered = ""
    server.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      buffered += chunk
      for (let end = buffered.indexOf("\n"); end >= 0; end = buffered.indexOf("\n")) {
        const line = buffered.slice(0, end)
        buffered = buffered.slice(end + 1)
        let message: any
        try {
          message = JSON.parse(line)
        } catch {
          failAll(`codex app-server wrote a line that is not JSON: ${line.slice(0, 200)}`)
          continue
        }
        const settle = waiting.get(message?.id)
        waiting.delete(message?.id)
        settle?.(message)
      }
    })
    let nextId = 0
    const call = (method: string, params: unknown) =>
      new Promise<any>((resolve, reject) => {
        const id = ++nextId
        waiting.set(
          id,
          (message) =>
            message.error === undefined ? resolve(message.result) : reject(new Error(JSON.stringify(message.error)))
        )
        server.stdin.write(JSON.stringify({ id, method, params }) + "\n")
      })
    try {
      await call("initialize", { clientInfo: { name: "memdir-test", version: "0" } })
      server.stdin.write(JSON.stringify({ method: "initialized" }) + "\n")
      return (await call("hooks/list", { cwds: [user.project] })).data[0].hooks
    } finally {
      server.kill()
    }
  })

/** What Codex's TUI shows, as text without escape sequences and spaces (it places words with cursor moves). */
const squashScreen = (output: string) =>
  output.replace(/\x1b\[[0-9;?>]*[A-Za-z~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[=>]/g, "").replace(/\s+/g, "")

/** The screens on the way to trusted hooks, most specific first, and the key a user presses on each. */
const TRUST_KEYS: ReadonlyArray<readonly [screen: string, key: string]> = [
  ["›2.Trustallandcontinue", "\r"], // "Hooks need review", "Trust all and continue" selected: confirm
  ["2.Trustallandcontinue", "2"], // "Hooks need review": select "Trust all and continue"
  ["Trustthisfolder?", "\r"] // "Trust this folder?": "Trust and continue"
]

/**
 * Trusts memdir's hooks as docs/hooks.md tells a user to: start `codex` (its TUI, in a pseudo-terminal from
 * util-linux `script`), trust the folder if asked, and at "Hooks need review" choose "Trust all and continue".
 * Each key is pressed once the screen that asks for it has stopped changing. Done when `config.toml` holds a
 * `trusted_hash` for each of `hooks`; Codex is then stopped (the app-server daemon it leaves is the scratch's, and
 * `removeScratch` stops it).
 */
const trustInCodex = (user: User, hooks: number) =>
  Effect.promise(() =>
    new Promise<void>((resolve, reject) => {
      const tui = spawn("script", ["-q", "-e", "-c", `stty rows 40 cols 120; exec '${codex.bin}'`, "/dev/null"], {
        cwd: user.project,
        env: { ...user.env, TERM: "xterm-256color" },
        stdio: ["pipe", "pipe", "ignore"],
        detached: true
      })
      let screen = ""
      let still: NodeJS.Timeout | undefined
      const config = path.join(user.codexHome, "config.toml")
      const trusted = () => (fs.readFileSync(config, "utf8").match(/^trusted_hash = /gm) ?? []).length
      const started = Date.now()
      const poll = setInterval(() => {
        const done = trusted() >= hooks
        if (!done && Date.now() - started < 60_000) return
        clearInterval(poll)
        clearTimeout(still)
        process.kill(-tui.pid!, "SIGTERM")
        if (done) resolve()
        else reject(new Error(`Codex's TUI did not trust the hooks within a minute; its screen: ${screen.slice(-600)}`))
      }, 100)
      tui.on("error", (error) => {
        clearInterval(poll)
        reject(error)
      })
      tui.stdout.setEncoding("utf8").on("data", (chunk: string) => {
        // the TUI asks where the cursor is before it draws
        if (chunk.includes("\x1b[6n")) tui.stdin.write("\x1b[1;1R")
        screen += squashScreen(chunk)
        clearTimeout(still)
        still = setTimeout(() => {
          const answer = TRUST_KEYS.find(([asks]) => screen.includes(asks))
          if (answer === undefined) return
          screen = ""
          tui.stdin.write(answer[1])
        }, 700)
      })
    })
  )

const requestsSince = (server: ResponsesApiServer.ResponsesApiServerService, before: number) =>
  Effect.map(server.requests, (all) => all.slice(before))

const count = (text: string, needle: string) => text.split(needle).length - 1

/** The developer messages that open with memdir's `# Memory` section (its SessionStart context). */
const memorySections = (body: unknown) =>
  ResponsesApiServer.messageTexts(body, "developer").filter((text) => text.startsWith("# Memory\n"))

/** The stand-in's model: asked to remember, it calls memdir's `memory_write` where Codex offers it; else "done". */
const model: ResponsesApiServer.Handler = (request) => {
  const users = ResponsesApiServer.messageTexts(request.body, "user")
  const asked = users.some((text) => text.startsWith("Remember that"))
  const answered = ResponsesApiServer.functionCallOutputs(request.body).length > 0
  const tool = (name: string) => ResponsesApiServer.toolNames(request.body).find((t) => t.endsWith(`/${name}`))
  // a question about staging deploys: the model asks memdir's memory_recall too, in the session the hook served
  const recall = tool("memory_recall")
  const staging = users.find((text) => text.startsWith("Can I deploy"))
  if (staging !== undefined && !answered && recall !== undefined) {
    const [namespace, name] = recall.split("/") as [string, string]
    return ResponsesApiServer.functionCall(name, { query: staging }, { namespace })
  }
  const write = tool("memory_write")
  if (!asked || answered || write === undefined) return ResponsesApiServer.text("done")
  const [namespace, name] = write.split("/") as [string, string]
  return ResponsesApiServer.functionCall(name, {
    type: "feedback",
    name: "Staging deploys",
    description: "staging deploys go out from the release branch only",
    body: "Deploy to staging from the release branch only.\n**Why:** a feature-branch deploy broke QA."
  }, { namespace })
}

describe.skipIf(skipReason !== undefined)(`memdir in a real Codex ${CODEX_VERSION} session`, () => {
  it.live(
    "hooks run once trusted: the index once, the relevant memory with its age, nothing when unrelated",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const server = yield* ResponsesApiServer.make({ apiKey: API_KEY, handler: model })
        const user = makeUser("hooks", server.baseUrl)
        yield* installHooks(user)

        // installed, not yet trusted: `codex exec` runs none of memdir's hooks and says nothing about it
        const listed = yield* codexHooks(user)
        assert.deepStrictEqual(
          listed.map((hook) => [hook.eventName, hook.command, hook.trustStatus]).sort(),
          // no Stop hook with automatic model calls off: it would start nothing (docs/hooks.md#the-stop-hook)
          [
            ["sessionEnd", "memdir-hook", "untrusted"],
            ["sessionStart", "memdir-hook", "untrusted"],
            ["userPromptSubmit", "memdir-hook", "untrusted"]
          ]
        )
        const untrusted = yield* codexExec(user, DATABASE)
        assert.notInclude(untrusted.stderr, "hook:")
        const [bare] = yield* server.requests
        assert.deepStrictEqual(memorySections(bare!.body), [])
        assert.notInclude(ResponsesApiServer.textOf(bare!.body), RECALLED)
        // memdir's MCP server needs no hook trust: its tools are offered in Codex's namespace for it
        const tools = ResponsesApiServer.toolNames(bare!.body)
        for (const tool of ["memory_recall", "memory_search", "memory_read", "memory_write", "memory_delete"]) {
          assert.include(tools, `mcp__memdir/${tool}`)
        }

        yield* trustInCodex(user, 3)
        const trusted = yield* codexHooks(user)
        assert.deepStrictEqual(trusted.map((hook) => hook.trustStatus), ["trusted", "trusted", "trusted"])

        // a prompt about the postgres memory
        let before = (yield* server.requests).length
        const relevant = yield* codexExec(user, DATABASE)
        for (const event of ["SessionStart", "UserPromptSubmit"]) {
          assert.include(relevant.stderr, `hook: ${event} Completed`)
        }
        assert.notInclude(relevant.stderr, "hook: Stop")
        const [first, ...rest] = yield* requestsSince(server, before)
        assert.isDefined(first)
        assert.deepStrictEqual(rest, [], "one model call: the model answered in text")
        const sections = memorySections(first!.body)
        assert.strictEqual(sections.length, 1, "memdir's # Memory section once")
        assert.include(sections[0], `persistent, file-based memory at \`${user.memoryDir}`)
        const text = ResponsesApiServer.textOf(first!.body)
        for (const m of TWO_TOPICS) assert.strictEqual(count(text, indexLine(m)), 1, `the index line of ${m.file} once`)
        // the recalled memory arrives after the prompt, with its age and memdir's caveat
        const messages = ResponsesApiServer.messageTexts(first!.body)
        const prompt = messages.indexOf(DATABASE)
        const recalled = messages.findIndex((message) => message.startsWith(RECALLED))
        assert.isAbove(prompt, -1)
        assert.isAbove(recalled, prompt)
        const memory = messages[recalled]!
        assert.include(memory, `Memory ${DATABASE_TESTS.file} (feedback, saved 40 days ago)`)
        assert.include(memory, DATABASE_TESTS.body)
        assert.include(memory, CAVEAT)
        assert.notInclude(memory, RELEASE_TRAIN.body)

        // a prompt about nothing memdir knows: the index again, no memory
        before = (yield* server.requests).length
        yield* codexExec(user, UNRELATED)
        const [other] = yield* requestsSince(server, before)
        assert.strictEqual(memorySections(other!.body).length, 1)
        const otherText = ResponsesApiServer.textOf(other!.body)
        assert.notInclude(otherText, RECALLED)
        assert.notInclude(otherText, DATABASE_TESTS.body)
        assert.notInclude(otherText, RELEASE_TRAIN.body)

        // model calls are off: every request the stand-in saw came from Codex, none from memdir's hooks
        for (const request of yield* server.requests) assert.match(request.headers["user-agent"] ?? "", /^codex_exec\//)
      })),
    { timeout: 120_000 }
  )

  it.live(
    "--project: the repository's hooks run once the project and then the hooks are trusted",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const server = yield* ResponsesApiServer.make({ apiKey: API_KEY, handler: model })
        const user = makeUser("project", server.baseUrl)
        const install = yield* run(
          process.execPath,
          [cliPath, "hooks", "install", "--agent", "codex", "--project", "--model-calls", "off"],
          user.project,
          user.env
        )
        assert.strictEqual(install.status, 0, install.stderr)
        assert.isTrue(fs.existsSync(path.join(user.project, ".codex", "hooks.json")))
        const sessionHasMemory = Effect.gen(function*() {
          const before = (yield* server.requests).length
          yield* codexExec(user, DATABASE)
          const [first] = yield* requestsSince(server, before)
          return memorySections(first!.body).length === 1 &&
            ResponsesApiServer.textOf(first!.body).includes(DATABASE_TESTS.body)
        })

        // an untrusted project: Codex does not even list its hooks
        assert.deepStrictEqual(yield* codexHooks(user), [])
        assert.isFalse(yield* sessionHasMemory)
        // `codex exec --trust` once, as the docs say: the project is trusted, its hooks still wait for their own trust
        const trustProject = yield* run(codex.bin, ["exec", "--trust", "hello"], user.project, user.env)
        assert.strictEqual(trustProject.status, 0, trustProject.stderr)
        assert.include(
          fs.readFileSync(path.join(user.codexHome, "config.toml"), "utf8"),
          `[projects."${user.project}"]`
        )
        const listed = yield* codexHooks(user)
        assert.deepStrictEqual(listed.map((hook) => hook.trustStatus), ["untrusted", "untrusted", "untrusted"])
        assert.isTrue(listed.every((hook) => hook.key.startsWith(path.join(user.project, ".codex", "hooks.json"))))
        assert.isFalse(yield* sessionHasMemory)
        yield* trustInCodex(user, 3)
        assert.isTrue(yield* sessionHasMemory)
      })),
    { timeout: 120_000 }
  )

  it.live(
    "the model's memory_write through Codex's MCP namespace lands with its index line and is recalled",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const server = yield* ResponsesApiServer.make({ apiKey: API_KEY, handler: model })
        // memdir's home elsewhere than ~/.memdir: Codex passes MEMDIR_HOME on to the MCP server only through the
        // env_vars memdir's install wrote, so without them the write would land in ~/.memdir, not beside the hooks
        const user = makeUser("mcp", server.baseUrl, (home) => ({ MEMDIR_HOME: path.join(home, "memory-home") }))
        assert.isTrue(user.memoryDir.startsWith(path.join(user.home, "memory-home")), user.memoryDir)
        yield* installHooks(user)
        yield* trustInCodex(user, 3)

        const session = yield* codexExec(user, "Remember that staging deploys go out from the release branch only.")
        assert.include(session.stderr, "mcp: memdir/memory_write (completed)")
        const requests = yield* server.requests
        assert.strictEqual(requests.length, 2, "the call, then the answer to its result")
        const [output] = ResponsesApiServer.functionCallOutputs(requests[1]!.body)
        assert.include(output?.text, "Saved feedback_staging_deploys.md")
        const file = path.join(user.memoryDir, "feedback_staging_deploys.md")
        const written = fs.readFileSync(file, "utf8")
        assert.isTrue(written.startsWith("---\n"), written)
        for (
          const line of [
            "name: Staging deploys\n",
            "type: feedback\n",
            "Deploy to staging from the release branch only.\n"
          ]
        ) {
          assert.include(written, line)
        }
        assert.include(
          fs.readFileSync(path.join(user.memoryDir, "MEMORY.md"), "utf8"),
          "- [Staging deploys](feedback_staging_deploys.md) — staging deploys go out from the release branch only\n"
        )
        // the session carried memdir's section once in each of its requests
        for (const request of requests) assert.strictEqual(memorySections(request.body).length, 1)

        // a later session: the new memory is in the index, and recalled for a prompt about it
        const before = requests.length
        yield* codexExec(user, "Can I deploy my feature branch to staging?")
        const [later] = yield* requestsSince(server, before)
        assert.include(memorySections(later!.body)[0], "- [Staging deploys](feedback_staging_deploys.md)")
        const recalled = ResponsesApiServer.messageTexts(later!.body, "developer").find((t) => t.startsWith(RECALLED))
        assert.include(recalled, "Memory feedback_staging_deploys.md (feedback, saved today)")
        assert.include(recalled, "**Why:** a feature-branch deploy broke QA.")
        // the model then calls memory_recall in the same session: Codex names the session in the call's _meta, so
        // memdir knows the hook gave that memory already, and does not give it twice
        const [, afterRecall] = yield* requestsSince(server, before)
        const [recallOutput] = ResponsesApiServer.functionCallOutputs(afterRecall!.body)
        assert.isDefined(recallOutput, "the model's memory_recall was answered")
        assert.notInclude(recallOutput!.text, "feedback_staging_deploys.md", recallOutput!.text)
        assert.notInclude(recallOutput!.text, "feature-branch deploy broke QA")
      })),
    { timeout: 120_000 }
  )

  it.live(
    "model calls on: Codex's Stop and SessionEnd start memdir's extraction over Codex's own rollout",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const server = yield* ResponsesApiServer.make({ apiKey: API_KEY, handler: model })
        const anthropic = yield* MessagesApiServer.make({ handler: () => MessagesApiServer.text("Nothing to save.") })
        const user = makeUser("extraction", server.baseUrl)
        Object.assign(user.env, { ANTHROPIC_API_KEY: "sk-ant-test-dummy", ANTHROPIC_BASE_URL: anthropic.url })
        yield* installHooks(user, "on")
        yield* trustInCodex(user, 4)
        const session = yield* codexExec(user, "Let's use the docker compose postgres for the cart integration tests.")
        const sessionId = /session id: (\S+)/.exec(session.stderr)?.[1]
        const [turn] = yield* server.requests
        assert.include(ResponsesApiServer.textOf(turn!.body), RECALLED, "the hook recalled a memory into the session")
        const log = path.join(user.memoryDir, ".runs", "background.jsonl")
        const lines = () =>
          fs.existsSync(log) ? fs.readFileSync(log, "utf8").trim().split("\n").map((line) => JSON.parse(line)) : []
        // the detached jobs write their end lines last: poll for both (bounded), no fixed sleep
        const ends = () => lines().filter((line) => line.event === "end")
        for (let i = 0; i < 600 && ends().length < 2; i++) yield* Effect.sleep("100 millis")
        const starts = lines().filter((line) => line.event === "start")
        assert.strictEqual(starts.length, 2, "one job for the turn's Stop, one for SessionEnd")
        assert.isDefined(sessionId)
        for (const line of [...starts, ...ends()]) assert.strictEqual(line.session, sessionId, "Codex's session id")
        assert.strictEqual(ends().length, 2)
        for (const end of ends()) assert.strictEqual(end.outcome, "ok", JSON.stringify(end))
        const extracted = ends().find((end) => end.extraction.status === "extracted")
        assert.strictEqual(extracted?.extraction.messagesRead, 2, "the prompt and the answer of Codex's rollout")
        // what the extractor sent: the conversation from Codex's rollout, without the context memdir injected into it
        const [request] = yield* anthropic.requests
        const conversation = JSON.stringify(request!.body.messages)
        assert.include(conversation, "docker compose postgres for the cart integration tests")
        assert.notInclude(conversation, RECALLED)
      })),
    { timeout: 120_000 }
  )
})
