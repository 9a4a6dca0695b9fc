/**
 * The HTML report a prompt engineer drills into: a failing trial shows its scenario's inputs, what was expected
 * and what the variant chose, a grid cell links to it, the filters are there, and each variant's prompt is shown
 * as a diff against the default section.
 */
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Path from "effect/Path"
import { renderTerminal } from "../src/Report.js"
import { renderHtml, trialAnchor } from "../src/ReportHtml.js"
import { RESULTS_FORMAT, type RunResults } from "../src/Results.js"
import { runCommand } from "../src/Run.js"
import { diffLines } from "../src/TextDiff.js"
import { demoSuite } from "./fixtures.js"

const selectorRun: RunResults = {
  format: RESULTS_FORMAT,
  suite: "picks",
  kind: "selector",
  section: "selector",
  description: "d",
  startedAt: "2026-03-10T12:00:00.000Z",
  finishedAt: "2026-03-10T12:00:01.000Z",
  trials: 1,
  variants: [{ name: "offline" }, { name: "loose" }],
  baseline: "offline",
  scenarios: [
    {
      id: "pdf-owner",
      kind: "direct",
      inputs: {
        tags: ["direct"],
        query: "who owns the invoice PDF rendering?",
        relevant: ["project_team_owners.md"],
        acceptable: ["project_pdf_renderer.md"]
      }
    },
    { id: "nothing", kind: "none", inputs: { tags: ["none"], query: "what is the weather", relevant: [] } }
  ],
  provenance: { mode: "offline", models: [], realModel: false, note: "no model" },
  results: [
    {
      variant: "offline",
      scenario: "pdf-owner",
      trial: 1,
      passed: false,
      scores: [{
        id: "selection",
        type: "selection",
        passed: false,
        required: true,
        modelGraded: false,
        detail: "selected project_pdf_renderer.md, user_role.md; missed project_team_owners.md; irrelevant user_role.md"
      }],
      metrics: {},
      latencyMs: 1,
      output: { selected: ["project_pdf_renderer.md", "user_role.md"] }
    },
    {
      variant: "loose",
      scenario: "pdf-owner",
      trial: 1,
      passed: true,
      scores: [],
      metrics: {},
      latencyMs: 1,
      output: { selected: ["project_team_owners.md"] }
    },
    { variant: "offline", scenario: "nothing", trial: 1, passed: true, scores: [], metrics: {}, latencyMs: 1 },
    { variant: "loose", scenario: "nothing", trial: 1, passed: true, scores: [], metrics: {}, latencyMs: 1 }
  ]
}

describe("renderTerminal", () => {
  it("a model without a price shows as unpriced, with how to give one", () => {
    const usage = { inputTokens: 10, outputTokens: 5, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 }
    const priced: RunResults = {
      ...selectorRun,
      results: selectorRun.results.map((r) => ({ ...r, model: "model-x", usage, costUsd: null, calls: 1 }))
    }
    const text = renderTerminal(priced)
    assert.include(text, "unpriced")
    assert.notInclude(text, " ? ")
    assert.include(text, "no built-in price for model-x; give one with --price IN,OUT")
  })
})

describe("renderHtml", () => {
  it("a failing selector trial shows the query, the expected and the chosen memories, and the grid links to it", () => {
    const html = renderHtml(selectorRun)
    const anchor = trialAnchor({ variant: "offline", scenario: "pdf-owner", trial: 1 })
    assert.include(html, `id="${anchor}"`)
    // the grid cell of (pdf-owner, offline) links to that trial, the failing one
    assert.match(html, new RegExp(`<td style="[^"]*"><a href="#${anchor}"[^>]*>0/1</a></td>`))
    const section = html.slice(html.indexOf(`id="scenario--pdf-owner"`), html.indexOf(`id="scenario--nothing"`))
    assert.include(section, "who owns the invoice PDF rendering?")
    assert.include(section, "relevant: <code>project_team_owners.md</code>")
    assert.include(section, "<code>user_role.md</code> — irrelevant")
    assert.include(section, "<code>project_pdf_renderer.md</code> — acceptable")
    assert.include(section, "<b>Missed</b>: <code>project_team_owners.md</code>")
    assert.include(section, "✗ <b>selection</b>")
    // filters: failures, discordant pairs between two chosen variants, tags
    for (const id of ["f-failures", "f-discordant", "f-a", "f-b", "f-tag"]) assert.include(html, `id="${id}"`)
    assert.include(html, `<option value="none">none</option>`)
    assert.include(html, `data-tags="direct"`)
    // one file: nothing fetched from anywhere
    assert.notMatch(html, /<(script|link|img)[^>]+(src|href)=/)
  })

  it("diffs lines: changed heading, appended paragraph", () => {
    const diff = diffLines("## Before\nbody\nend", "## Check first\nbody\nend\nextra")
    assert.deepStrictEqual(diff.map((l) => `${l.op}:${l.text}`), [
      "removed:## Before",
      "added:## Check first",
      "same:body",
      "same:end",
      "added:extra"
    ])
  })
})

layer(NodeServices.layer)("the report of a real run", (it) => {
  it.effect("shows each variant's prompt as a diff against the default section, and the scenario's task", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const root = yield* fs.makeTempDirectoryScoped()
      yield* fs.makeDirectory(path.join(root, "demo"))
      yield* fs.writeFileString(path.join(root, "demo", "suite.yaml"), demoSuite())
      const { directory, run } = yield* runCommand({
        evalsDir: root,
        runsDir: path.join(root, "runs"),
        suite: "demo",
        scripted: true
      })
      const candidate = run.variants.find((v) => v.name === "candidate")!.prompt!
      assert.strictEqual(candidate.of, "section recall-trust")
      assert.include(candidate.text, "Check the code before you act on a memory")
      assert.notInclude(candidate.defaultText, "Check the code before you act on a memory")
      const html = yield* fs.readFileString(path.join(directory, "report.html"))
      const prompt = html.slice(html.indexOf(`id="prompt--candidate"`))
      assert.match(prompt, /<span class="added">\+ #+ Check the code before you act on a memory<\/span>/)
      assert.match(prompt, /<span class="removed">− #+ Before recommending from memory<\/span>/)
      assert.include(html.slice(html.indexOf(`id="prompt--before"`)), "Identical to the default")
      assert.include(html, "Where do I raise the pool size?")
      assert.include(html, "tool-before-answer: tool-before-answer {&quot;path&quot;:&quot;src/db/pool.ts&quot;}")
      assert.include(html, "<code>read_file</code>")
    }))
})
