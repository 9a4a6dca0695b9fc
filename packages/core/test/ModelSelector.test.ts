/**
 * The LLM selector: what it sends, what it keeps of the answer, and that any model failure degrades the turn to
 * the offline selector instead of failing it. Scripted with `Model.layerTest`, then end to end with the REAL SDK
 * against the local Messages API server, and through a real recall.
 */
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Server from "../../testing/src/MessagesApiServer.js"
import { ModelError } from "../src/Errors.js"
import * as Memdir from "../src/Memdir.js"
import { manifestLine, type MemoryHeader } from "../src/Memory.js"
import * as Model from "../src/Model.js"
import * as ModelSelector from "../src/ModelSelector.js"
import { RecallSession } from "../src/Recall.js"
import { type SelectionRequest, Selector, selectRelevantMemories } from "../src/Selector.js"

const DAY = 86_400_000
const NOW = Date.parse("2026-11-30T09:00:00Z")

const memory = (
  path: string,
  type: MemoryHeader["type"],
  name: string,
  description: string,
  age = 0
): MemoryHeader => ({
  path,
  absolutePath: `/mem/${path}`,
  name,
  description,
  type,
  mtime: NOW - age * DAY,
  extra: {}
})

const candidates: ReadonlyArray<MemoryHeader> = [
  memory(
    "feedback_testing.md",
    "feedback",
    "Testing policy",
    "Integration tests must hit a real database, never mocks"
  ),
  memory("project_pool.md", "project", "Connection pool", "Database pool capped at 10 for the hosting plan", 47),
  memory("reference_redis_cli.md", "reference", "redis-cli usage", "How to run redis-cli against staging", 3),
  memory("reference_redis_flush.md", "reference", "redis-cli gotcha", "Never run FLUSHALL: staging redis is shared", 9),
  memory("user_role.md", "user", "Role", "Data engineer, new to React"),
  memory("project_release.md", "project", "Release freeze", "Release freeze from 2026-12-18 for the holidays", 1),
  memory("feedback_commits.md", "feedback", "Commit style", "One logical change per commit, imperative subject")
]

const request: SelectionRequest = {
  query: "how should I write the integration tests for the pool?",
  candidates,
  recentTools: ["redis-cli", "Bash"]
}

const select = (selectionRequest: SelectionRequest = request) =>
  Effect.flatMap(Selector, (selector) => selector.select(selectionRequest))

const selectorWith = (script: Model.ModelScript, options: Model.TestModelOptions = {}) =>
  ModelSelector.layer.pipe(Layer.provideMerge(Model.layerTest(script, options)))

const picks = (...paths: ReadonlyArray<string>) =>
  Model.toolUseReply(ModelSelector.SELECT_TOOL_NAME, { selected_memories: paths })

// ---------------------------------------------------------------------------------------------------------------
// Pure parts
// ---------------------------------------------------------------------------------------------------------------

describe("selector prompt and message", () => {
  it("the default variant exists, all variants keep the rules that matter, unknown names are typed errors", () => {
    assert.isTrue(Result.isSuccess(ModelSelector.selectorPrompt()))
    for (const [name, text] of Object.entries(ModelSelector.selectorPromptVariants)) {
      assert.include(text, "at most 5", name)
      assert.include(text, "warnings, gotchas or known bugs", name)
      assert.include(text, ModelSelector.SELECT_TOOL_NAME, name)
    }
    assert.include(ModelSelector.selectorPromptVariants.conservative!, "If you are unsure")
    assert.include(ModelSelector.selectorPromptVariants.conservative!, "An empty list is a good answer")
    const unknown = ModelSelector.selectorPrompt("optimistic")
    assert.isTrue(Result.isFailure(unknown))
    if (Result.isFailure(unknown)) {
      assert.strictEqual(unknown.failure._tag, "UnknownPromptVariantError")
      assert.deepStrictEqual([...unknown.failure.known].sort(), ["conservative", "generous", "strict"])
    }
  })

  it("the user message: a cacheable manifest block of manifest lines, then the query and the recent tools", () => {
    const message = ModelSelector.buildSelectorMessage(request)
    assert.strictEqual(message.role, "user")
    const [manifest, rest] = message.content
    assert.deepStrictEqual(manifest!.cache_control, { type: "ephemeral" })
    for (const m of candidates) assert.include(manifest!.text, manifestLine(m))
    assert.include(manifest!.text, "- [project] project_pool.md (2026-10-14T09:00:00.000Z): Database pool capped")
    assert.notInclude(manifest!.text, request.query)
    assert.include(rest!.text, request.query)
    assert.include(rest!.text, "redis-cli, Bash")
    assert.notInclude(rest!.text, "Select at most")
    const none = ModelSelector.buildSelectorMessage({ query: "q", candidates, max: 2 })
    assert.include(none.content[1]!.text, "(none)")
    assert.include(none.content[1]!.text, "Select at most 2.")
  })

  it("resolveSelection keeps only manifest paths, once each, in the model's order, at most max (≤ 5)", () => {
    const names = [
      "project_pool.md",
      "./feedback_testing.md",
      "`user_role.md`",
      "invented_memory.md",
      "project_pool.md",
      "Testing policy",
      "feedback_commits.md",
      "project_release.md",
      "reference_redis_flush.md"
    ]
    const all = ModelSelector.resolveSelection(names, candidates, undefined)
    assert.deepStrictEqual(all.selected, [
      "project_pool.md",
      "feedback_testing.md",
      "user_role.md",
      "feedback_commits.md",
      "project_release.md"
    ])
    assert.deepStrictEqual(all.dropped, ["invented_memory.md", "Testing policy"])
    assert.deepStrictEqual(ModelSelector.resolveSelection(names, candidates, 2).selected, [
      "project_pool.md",
      "feedback_testing.md"
    ])
    assert.deepStrictEqual(ModelSelector.resolveSelection([], candidates, 5).selected, [])
  })
})

// ---------------------------------------------------------------------------------------------------------------
// Scripted model
// ---------------------------------------------------------------------------------------------------------------

describe("ModelSelector with a scripted model", () => {
  it.effect("sends a forced select_memories call with the conservative prompt and 256 tokens; keeps known names", () =>
    Effect.gen(function*() {
      const selection = yield* select()
      assert.deepStrictEqual(selection, { selected: ["feedback_testing.md", "project_pool.md"], selector: "model" })
      const [sent] = yield* (yield* Model.ModelRequests).all
      assert.strictEqual(sent!.role, "selector")
      assert.strictEqual(sent!.maxTokens, ModelSelector.SELECTOR_MAX_TOKENS)
      assert.strictEqual(sent!.maxTokens, 256)
      assert.deepStrictEqual(sent!.system, [{ text: ModelSelector.selectorPromptVariants.conservative!, cache: true }])
      assert.deepStrictEqual(sent!.toolChoice, { type: "tool", name: "select_memories" })
      assert.strictEqual(sent!.tools?.[0]?.name, "select_memories")
      assert.deepStrictEqual(sent!.messages, [ModelSelector.buildSelectorMessage(request)])
    }).pipe(Effect.provide(selectorWith([picks("feedback_testing.md", "hallucinated.md", "project_pool.md")]))))

  it.effect("an empty answer is a fine answer; no candidates or max 0 means no call at all", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual((yield* select()).selected, [])
      assert.deepStrictEqual((yield* select({ ...request, candidates: [] })).selected, [])
      assert.deepStrictEqual((yield* select({ ...request, max: 0 })).selected, [])
      assert.strictEqual((yield* (yield* Model.ModelRequests).all).length, 1)
    }).pipe(Effect.provide(selectorWith([picks()]))))

  it.effect("never more than 5, nor more than max", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* select()).selected.length, 5)
      assert.deepStrictEqual(
        (yield* select({ ...request, max: 2 })).selected,
        candidates.slice(0, 2).map((m) => m.path)
      )
    }).pipe(Effect.provide(selectorWith(() => picks(...candidates.map((m) => m.path))))))

  it.effect("any model failure degrades to the offline selector for that turn, and says why", () =>
    Effect.gen(function*() {
      const offline = selectRelevantMemories(request)
      assert.isAbove(offline.length, 0)
      for (const expected of ["rate-limited", "timeout", "malformed-output", "malformed-output"]) {
        const selection = yield* select()
        assert.strictEqual(selection.selector, "offline")
        assert.deepStrictEqual(selection.selected, offline)
        assert.match(selection.degraded ?? "", new RegExp(`^${expected}: selector model`))
      }
      // the next turn uses the model again
      assert.deepStrictEqual(yield* select(), { selected: ["user_role.md"], selector: "model" })
    }).pipe(Effect.provide(selectorWith([
      new ModelError({ kind: "rate-limited", role: "selector", model: "m", status: 429, detail: "slow down" }),
      new ModelError({ kind: "timeout", role: "selector", model: "m", detail: "no answer" }),
      Model.toolUseReply("select_memories", { selected_memories: "project_pool.md" }),
      Model.textReply("project_pool.md"),
      picks("user_role.md")
    ]))))

  it.effect("layerWith picks a prompt variant; an unknown variant fails the layer with a typed error", () =>
    Effect.gen(function*() {
      yield* select().pipe(
        Effect.provide(
          ModelSelector.layerWith({ variant: "strict" }).pipe(Layer.provideMerge(Model.layerTest([picks()])))
        )
      )
      const error = yield* Effect.flip(
        select().pipe(Effect.provide(
          ModelSelector.layerWith({ variant: "nope" }).pipe(
            Layer.provide(Model.layerTest([]))
          )
        ))
      )
      assert.strictEqual(error._tag, "UnknownPromptVariantError")
    }))

  it.effect("layerFor: auto is the model with a key and offline without; model without a key degrades", () =>
    Effect.gen(function*() {
      const withKey = Model.layerTest([picks("user_role.md")])
      const noKey = Model.layerTest([], { available: false })
      const run = (choice: ModelSelector.SelectorChoice, model: Layer.Layer<Model.Model>) =>
        select().pipe(Effect.provide(ModelSelector.layerFor(choice).pipe(Layer.provide(model))))
      assert.strictEqual((yield* run("auto", withKey)).selector, "model")
      const autoOffline = yield* run("auto", noKey)
      assert.strictEqual(autoOffline.selector, "offline")
      assert.isUndefined(autoOffline.degraded)
      const forced = yield* run("model", noKey)
      assert.strictEqual(forced.selector, "offline")
      assert.match(forced.degraded ?? "", /^not-configured: .*ANTHROPIC_API_KEY/)
      assert.strictEqual((yield* run("offline", withKey)).selector, "offline")
    }))

  it.effect("the …-if-allowed choices call the model only while AutomaticModelCallsAllowed is on (off unless set)", () =>
    Effect.gen(function*() {
      const model = Model.layerTest([picks("user_role.md"), picks("user_role.md")])
      const check = (choice: ModelSelector.SelectorChoice) =>
        Effect.gen(function*() {
          const unset = yield* select()
          assert.strictEqual(unset.selector, "offline")
          assert.isUndefined(unset.degraded)
          assert.strictEqual(
            (yield* select().pipe(
              Effect.provideService(ModelSelector.AutomaticModelCallsAllowed, false)
            )).selector,
            "offline"
          )
          assert.strictEqual((yield* (yield* Model.ModelRequests).all).length, 0)
          assert.strictEqual(
            (yield* select().pipe(
              Effect.provideService(ModelSelector.AutomaticModelCallsAllowed, true)
            )).selector,
            "model"
          )
          assert.strictEqual((yield* (yield* Model.ModelRequests).all).length, 1)
        }).pipe(Effect.provide(Layer.provideMerge(ModelSelector.layerFor(choice), model)))
      yield* check("auto-if-allowed")
      yield* check("model-if-allowed")
      // without a key, auto-if-allowed stays offline even when allowed
      const noKey = yield* select().pipe(
        Effect.provideService(ModelSelector.AutomaticModelCallsAllowed, true),
        Effect.provide(
          ModelSelector.layerFor("auto-if-allowed").pipe(
            Layer.provide(Model.layerTest([], { available: false }))
          )
        )
      )
      assert.strictEqual(noKey.selector, "offline")
      assert.isUndefined(noKey.degraded)
    }))
})

// ---------------------------------------------------------------------------------------------------------------
// Real SDK against the local Messages API server
// ---------------------------------------------------------------------------------------------------------------

const liveSelector = (server: Server.MessagesApiServerService, env: Record<string, string> = {}) =>
  ModelSelector.layer.pipe(
    Layer.provide(Model.layerWith({ retry: { baseDelay: Duration.millis(5), maxDelay: Duration.millis(20) } })),
    Layer.provide(
      ConfigProvider.layer(
        ConfigProvider.fromEnvRecord(
          { ANTHROPIC_API_KEY: "sk-test", ANTHROPIC_BASE_URL: server.url, ...env },
          { preserveEmptyStrings: true }
        )
      )
    )
  )

describe("ModelSelector through the real SDK", () => {
  it.live("what memdir sends on the wire, and the selection from a tool_use reply", () =>
    Effect.gen(function*() {
      const server = yield* Server.make({
        replies: [Server.toolUse("select_memories", { selected_memories: ["reference_redis_flush.md", "nope.md"] })]
      })
      const selection = yield* select().pipe(
        Effect.provide(liveSelector(server, { MEMDIR_MODEL_SELECTOR: "claude-haiku-5-5" }))
      )
      assert.deepStrictEqual(selection, { selected: ["reference_redis_flush.md"], selector: "model" })
      const [sent] = yield* server.requests
      const body = sent!.body
      assert.strictEqual(Server.apiKeyOf(sent!), "sk-test")
      assert.strictEqual(body.model, "claude-haiku-5-5")
      assert.strictEqual(body.max_tokens, 256)
      assert.deepStrictEqual(body.system, [{
        type: "text",
        text: ModelSelector.selectorPromptVariants.conservative,
        cache_control: { type: "ephemeral" }
      }])
      assert.deepStrictEqual(body.tool_choice, { type: "tool", name: "select_memories" })
      assert.strictEqual(body.tools.length, 1)
      assert.strictEqual(body.tools[0].name, "select_memories")
      assert.deepStrictEqual(body.tools[0].input_schema.required, ["selected_memories"])
      assert.strictEqual(body.tools[0].input_schema.properties.selected_memories.type, "array")
      assert.strictEqual(body.messages.length, 1)
      const [manifest, query] = body.messages[0].content
      assert.deepStrictEqual(manifest.cache_control, { type: "ephemeral" })
      for (const m of candidates) assert.include(manifest.text, manifestLine(m))
      assert.include(query.text, request.query)
      assert.include(query.text, "redis-cli, Bash")
    }).pipe(Effect.scoped))

  it.live("the prefix (tools, system, manifest) is cached across turns; only the query varies", () =>
    Effect.gen(function*() {
      const server = yield* Server.make({ handler: () => Server.toolUse("select_memories", { selected_memories: [] }) })
      const layer = liveSelector(server)
      yield* Effect.gen(function*() {
        const selector = yield* Selector
        yield* selector.select(request)
        yield* selector.select({ ...request, query: "what is the release freeze date?" })
      }).pipe(Effect.provide(layer))
      const [first, second] = yield* server.requests
      assert.strictEqual(Server.cachePrefix(first!.body), Server.cachePrefix(second!.body))
      assert.notStrictEqual(first!.rawBody, second!.rawBody)
    }).pipe(Effect.scoped))

  it.live("429 then success: one retry, still the model's selection", () =>
    Effect.gen(function*() {
      const server = yield* Server.make({
        replies: [Server.rateLimited(0), Server.toolUse("select_memories", { selected_memories: ["user_role.md"] })]
      })
      const selection = yield* select().pipe(Effect.provide(liveSelector(server)))
      assert.deepStrictEqual(selection, { selected: ["user_role.md"], selector: "model" })
      assert.strictEqual((yield* server.requests).length, 2)
    }).pipe(Effect.scoped))

  it.live("malformed tool input, 401, 529 after retries and a timeout each degrade to offline, never fail", () =>
    Effect.gen(function*() {
      const server = yield* Server.make({
        replies: [
          Server.toolUse("select_memories", { selected_memories: [1, 2] }),
          Server.unauthorized(),
          Server.overloaded(),
          Server.overloaded(),
          Server.slow(Server.toolUse("select_memories", { selected_memories: [] }), 20_000)
        ]
      })
      const layer = liveSelector(server, { MEMDIR_MODEL_MAX_RETRIES: "1", MEMDIR_MODEL_TIMEOUT: "300 millis" })
      const kinds = yield* Effect.gen(function*() {
        const selector = yield* Selector
        const out: Array<string> = []
        for (let i = 0; i < 4; i++) {
          const selection = yield* selector.select(request)
          assert.strictEqual(selection.selector, "offline")
          assert.deepStrictEqual(selection.selected, selectRelevantMemories(request))
          out.push((selection.degraded ?? "").split(":")[0]!)
        }
        return out
      }).pipe(Effect.provide(layer))
      assert.deepStrictEqual(kinds, ["malformed-output", "authentication", "overloaded", "timeout"])
      // malformed: 1, 401: 1 (not retried), 529: 2 (one retry), timeout: 1
      assert.strictEqual((yield* server.requests).length, 5)
    }).pipe(Effect.scoped))
})

// ---------------------------------------------------------------------------------------------------------------
// Through a real recall
// ---------------------------------------------------------------------------------------------------------------

describe("recall with the model selector", () => {
  const writeMemory = (dir: string, file: string, type: string, name: string, description: string) =>
    fs.writeFileSync(
      path.join(dir, file),
      `---\nname: ${name}\ndescription: ${description}\ntype: ${type}\n---\n${name} body.\n`
    )

  it.live("the model's choice is read and delivered; a model failure shows in the result and the telemetry", () =>
    Effect.gen(function*() {
      const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "memdir-model-selector-")))
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
      writeMemory(dir, "feedback_testing.md", "feedback", "Testing policy", "Integration tests hit a real database")
      writeMemory(dir, "project_pool.md", "project", "Connection pool", "Database pool capped at 10")
      fs.writeFileSync(path.join(dir, "MEMORY.md"), "")

      const layer = Memdir.layer({
        flagMemoryDir: dir,
        selector: "model",
        model: Model.layerTest([
          picks("project_pool.md"),
          new ModelError({ kind: "overloaded", role: "selector", model: "m", status: 529, detail: "busy" })
        ])
      }).pipe(Layer.provide(NodeServices.layer))

      const [chosen, degraded] = yield* Effect.gen(function*() {
        const session = yield* RecallSession
        const first = yield* session.recall({ memoryDir: dir, query: "how big is the database pool?" })
        const second = yield* session.recall({ memoryDir: dir, query: "how do we write integration tests?" })
        return [first, second] as const
      }).pipe(Effect.provide(layer))

      assert.strictEqual(chosen.selector, "model")
      assert.deepStrictEqual(chosen.selected.map((m) => m.path), ["project_pool.md"])
      assert.include(chosen.selected[0]!.content, "Connection pool body.")
      assert.isUndefined(chosen.degraded)
      assert.strictEqual(chosen.telemetry.selector, "model")

      assert.strictEqual(degraded.selector, "offline")
      assert.match(degraded.degraded ?? "", /^overloaded: /)
      assert.strictEqual(degraded.telemetry.degraded, degraded.degraded)
      assert.deepStrictEqual(degraded.selected.map((m) => m.path), ["feedback_testing.md"])
    }).pipe(Effect.scoped))
})
