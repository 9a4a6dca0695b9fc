/**
 * Models in one place, none past its end of life: every Claude model id in the repository's code, tests, examples
 * and docs is one of `ModelCatalog` and none the installed `@anthropic-ai/sdk` lists as deprecated (a request
 * naming one prints "The model '…' is deprecated and will reach end-of-life on …" — in a user's terminal, and in
 * the test suite's output). docs/configuration.md's model table is the catalog's.
 *
 * Everything committed is scanned: the hand-written agent transcripts under packages/core/test/fixtures/transcripts/
 * and the evals' cassettes too (a cassette recorded with a model that is now deprecated is re-recorded:
 * docs/evals.md). Only the output of local eval runs (evals/runs/, git-ignored) keeps the ids it ran with.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ModelCatalog from "@memdir/core/ModelCatalog"
import * as SdkModels from "@memdir/testing/SdkModels"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { repoRoot } from "./support/cli.js"

const TEXT_FILE = /\.(?:[cm]?[jt]s|json|jsonl|md|sh|ya?ml|html)$/
const RECORDED = [/^evals\/runs\//]

/** The repository's files as git sees them (tracked, and new ones not ignored): no node_modules, no build output. */
const repositoryFiles = (): ReadonlyArray<string> =>
  execFileSync("git", ["ls-files", "-co", "--exclude-standard", "-z"], { cwd: repoRoot, encoding: "utf8" })
    .split("\0")
    .filter((file) => TEXT_FILE.test(file) && !RECORDED.some((pattern) => pattern.test(file)))
    .filter((file) => fs.existsSync(path.join(repoRoot, file)))

interface Use {
  readonly id: string
  readonly at: string
}

/** Every `claude-…` token of the repository's files, with where it is. */
const modelIdUses = (): ReadonlyArray<Use> => {
  const uses: Array<Use> = []
  for (const file of repositoryFiles()) {
    const lines = fs.readFileSync(path.join(repoRoot, file), "utf8").split("\n")
    lines.forEach((line, i) => {
      for (const match of line.matchAll(/\bclaude-[a-z0-9]+(?:-[a-z0-9]+)*/g)) {
        uses.push({ id: match[0], at: `${file}:${i + 1}` })
      }
    })
  }
  return uses
}

/** A Claude model id (family and version), as opposed to `claude-code` and other names. */
const isModelId = (id: string): boolean =>
  /^claude-(?:fable|mythos|opus|sonnet|haiku)-(?:\d|preview)/.test(id) || /^claude-\d/.test(id)

describe("model ids", () => {
  const uses = modelIdUses()

  it("none is one the SDK lists as deprecated", () => {
    const deprecated = SdkModels.deprecatedModels()
    assert.isAbove(Object.keys(deprecated).length, 0, "the SDK's deprecated list was read")
    // the scan sees the repository: the default model is named in docs and code
    assert.isTrue(uses.some((use) => use.id === ModelCatalog.DEFAULT_MODEL), "the scan found no model id at all")
    const found = uses
      .filter((use) => Object.hasOwn(deprecated, use.id))
      .map((use) => `${use.at}: ${use.id} (end of life ${deprecated[use.id]})`)
    assert.deepStrictEqual(found, [])
  })

  it("every one is in ModelCatalog, the one table of models", () => {
    const unknown = uses
      .filter((use) => isModelId(use.id) && ModelCatalog.modelInfo(use.id) === undefined)
      .map((use) => `${use.at}: ${use.id}`)
    assert.deepStrictEqual(unknown, [])
  })
})

const dollars = (n: number): string => `$${n}`

/** A catalog entry as a row of docs/configuration.md's model table. */
const docsRow = (m: ModelCatalog.CatalogModel): string => {
  const status = m.id === ModelCatalog.DEFAULT_MODEL ? `${m.status} (the default)` : m.status
  const long = m.price?.longPrompt
  const price = m.price === undefined ?
    "not published" :
    `${dollars(m.price.inputPerMTok)} / ${dollars(m.price.outputPerMTok)}` +
    (long === undefined ?
      "" :
      ` (prompts over ${long.aboveInputTokens.toLocaleString("en-US")} tokens: ` +
      `${dollars(long.inputPerMTok)} / ${dollars(long.outputPerMTok)})`)
  return `| \`${m.id}\` | ${m.name} | ${status} | ${price} |`
}

describe("docs/configuration.md", () => {
  const doc = fs.readFileSync(path.join(repoRoot, "docs/configuration.md"), "utf8")

  it("lists exactly the catalog's models, statuses and prices", () => {
    const start = doc.indexOf("<!-- models:")
    assert.isAbove(start, -1, "the model table's marker is gone")
    const rows = doc.slice(start).split("\n").slice(1).filter((line, i, all) =>
      line.startsWith("| `") && all.slice(0, i).every((l) => l.startsWith("|"))
    )
    assert.deepStrictEqual(rows, ModelCatalog.models.map(docsRow))
  })

  it("gives the catalog's default as every role's default model", () => {
    const roles = [
      ...doc.matchAll(/^\| `MEMDIR_MODEL_(?:SELECTOR|EXTRACTOR|DREAMER|GRADER|AGENT)[A-Z_`, ]*\| `([^`]+)` \|/gm)
    ].map((m) => m[1])
    assert.isAbove(roles.length, 3)
    for (const model of roles) assert.strictEqual(model, ModelCatalog.DEFAULT_MODEL)
  })
})
