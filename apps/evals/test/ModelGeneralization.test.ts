/**
 * `pnpm evals:generalize --model`: the model selector over labelled directories, through the real
 * `@anthropic-ai/sdk` client against a local server speaking the Messages API, scored in the same report as the
 * other systems; a request it fails is counted, never hidden; without a key the command says what it needs.
 */
import { assert, describe, it } from "@effect/vitest"
import type { MemoryHeader } from "@memdir/core/Memory"
import * as ModelModule from "@memdir/core/Model"
import { SELECT_TOOL_NAME } from "@memdir/core/ModelSelector"
import * as MessagesApiServer from "@memdir/testing/MessagesApiServer"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import { spawnSync } from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { type LabelledDirectory, type LabelledQuery, leaveOneDirectoryOut } from "../src/Generalization.js"
import { memdirModelSelector, modelAnswers } from "../src/ModelGeneralization.js"

const header = (file: string, name: string, description: string): MemoryHeader => ({
  path: file,
  absolutePath: `/m/${file}`,
  name,
  description,
  type: "project",
  mtime: 1,
  extra: {},
  bodyHead: ""
})

const directory = (dir: string): LabelledDirectory => ({
  dir,
  candidates: [
    header("lumen_design.md", "Lumen design system", "Tokens and components of the Lumen design system"),
    header("deploy.md", "Deploy", "How releases are tagged and shipped")
  ],
  bodies: new Map()
})

const query = (dir: string, id: string, text: string, relevant: ReadonlyArray<string>): LabelledQuery => ({
  id,
  dir,
  language: "en",
  kind: relevant.length === 0 ? "trap" : "paraphrase",
  query: text,
  relevant,
  acceptable: []
})

const queries = [
  query("a", "a-tokens", "Which Lumen tokens does the button use?", ["lumen_design.md"]),
  query("a", "a-lamp", "How many lumens should a desk lamp have?", []),
  query("b", "b-release", "How do we ship a release?", ["deploy.md"]),
  query("b", "b-broken", "the model fails on this one", ["deploy.md"])
]

/** What the stand-in model answers: by the request's words, as a model reading the request would. */
const handler: MessagesApiServer.Handler = (request) => {
  const body = JSON.stringify(request.body)
  if (body.includes("the model fails")) {
    return { kind: "error", status: 400, type: "invalid_request_error", message: "scripted failure" }
  }
  const selected = body.includes("desk lamp") ?
    [] :
    body.includes("ship a release") ?
    ["deploy.md", "ghost.md"] :
    ["lumen_design.md"]
  return MessagesApiServer.toolUse(SELECT_TOOL_NAME, { selected_memories: selected })
}

describe("the model selector in the generalization report", () => {
  it.effect("asks the Messages API about every request and scores its answers beside the others", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* MessagesApiServer.make({ handler })
      const directories = new Map([["a", directory("a")], ["b", directory("b")]])
      const answers = yield* modelAnswers(directories, queries).pipe(
        Effect.provide(ModelModule.layer),
        Effect.provideService(
          ConfigProvider.ConfigProvider,
          ConfigProvider.fromEnvRecord({ ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: "test-key" })
        )
      )
      const requests = yield* server.requests
      assert.strictEqual(requests.length, 4, "one request per labelled request, none retried")
      assert.deepStrictEqual(answers.failures.map((f) => f.id), ["b-broken"])
      assert.include(answers.failures[0]!.error, "scripted failure")

      const [result] = leaveOneDirectoryOut([memdirModelSelector(answers)], directories, queries)
      // a name the model made up ("ghost.md") is dropped; the trap gets nothing; the failed request selects nothing
      assert.deepStrictEqual(
        result!.folds.flatMap((fold) => fold.perQuery.map((q) => [q.query.id, q.selected])),
        [["a-tokens", ["lumen_design.md"]], ["a-lamp", []], ["b-release", ["deploy.md"]], ["b-broken", []]]
      )
      assert.strictEqual(result!.overall.offTopicPicks, 0)
      assert.strictEqual(result!.overall.recall, 2 / 3)
    })))

  it("says what --model needs when no key is set, and exits 2", () => {
    const run = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../run.mjs")
    const env = { ...process.env }
    delete env["ANTHROPIC_API_KEY"]
    const child = spawnSync(process.execPath, [run, "generalize", "--model"], { env, encoding: "utf8" })
    assert.strictEqual(child.status, 2, child.stderr)
    assert.match(child.stderr, /--model needs ANTHROPIC_API_KEY/)
  })
})
