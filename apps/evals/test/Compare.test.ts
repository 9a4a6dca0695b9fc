/**
 * `evals compare` and `run --baseline`: per variant and per scenario changes between two runs, a paired test on
 * the matching (scenario, trial) pairs, and a gate that fails on a significant drop. The real case: a variant
 * deliberately worsened between two runs of the same suite.
 */
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Path from "effect/Path"
import { compareRuns, renderComparisonTerminal, significantDrops } from "../src/Compare.js"
import { RESULTS_FORMAT, type RunResults, type TrialResult } from "../src/Results.js"
import { compareCommandProgram, runCommand } from "../src/Run.js"
import { demoSuite, runEvals } from "./fixtures.js"

const trial = (variant: string, scenario: string, n: number, passed: boolean): TrialResult => ({
  variant,
  scenario,
  trial: n,
  passed,
  scores: [],
  metrics: {},
  latencyMs: 1
})

const runOf = (results: ReadonlyArray<TrialResult>, mode: RunResults["provenance"]["mode"] = "live"): RunResults => {
  const variants = [...new Set(results.map((r) => r.variant))]
  const scenarios = [...new Set(results.map((r) => r.scenario))]
  return {
    format: RESULTS_FORMAT,
    suite: "demo",
    kind: "agent",
    section: "recall-trust",
    description: "d",
    startedAt: "2026-03-10T12:00:00.000Z",
    finishedAt: "2026-03-10T12:00:01.000Z",
    trials: Math.max(...results.map((r) => r.trial)),
    variants: variants.map((name) => ({ name })),
    baseline: variants[0]!,
    scenarios: scenarios.map((id) => ({ id })),
    provenance: { mode, models: [], realModel: true, note: "test" },
    results
  }
}

/** `passes` of the scenarios s1…sN pass, one trial each. */
const scenarios = (variant: string, n: number, passes: number) =>
  Array.from({ length: n }, (_, i) => trial(variant, `s${i + 1}`, 1, i < passes))

describe("compareRuns", () => {
  it("a drop from 10/10 to 2/10 on the same pairs is significant; 10/10 to 8/10 is not", () => {
    const before = runOf([...scenarios("a", 10, 10), ...scenarios("b", 10, 10)])
    const after = runOf([...scenarios("a", 10, 8), ...scenarios("b", 10, 2)])
    const c = compareRuns(before, after)
    const [a, b] = c.variants
    assert.strictEqual(a!.verdict, "no significant change")
    assert.deepStrictEqual(a!.lost, ["s9#1", "s10#1"])
    assert.strictEqual(b!.verdict, "significant drop")
    assert.strictEqual(b!.lost.length, 8)
    assert.approximately(b!.paired!.pValue, 2 * 0.5 ** 8, 1e-12)
    assert.deepStrictEqual(significantDrops(c).map((v) => v.variant), ["b"])
    assert.strictEqual(c.scenarios.filter((s) => s.variant === "b").length, 8)
    assert.include(renderComparisonTerminal(c), "SIGNIFICANT DROP")
  })

  it("pairs only the scenarios both runs have, and says which were left out", () => {
    const before = runOf([trial("a", "s1", 1, true), trial("a", "old", 1, true)])
    const after = runOf([trial("a", "s1", 1, false), trial("a", "new", 1, true)])
    const c = compareRuns(before, after, { before: "yesterday", after: "today" })
    assert.strictEqual(c.variants[0]!.paired!.pairs, 1)
    assert.include(c.notes.join("\n"), "only in yesterday: old")
    assert.include(c.notes.join("\n"), "only in today: new")
    assert.strictEqual(c.variants[0]!.verdict, "no significant change")
  })

  it("a variant run in one of the two only is not compared", () => {
    const c = compareRuns(runOf(scenarios("a", 3, 3)), runOf([...scenarios("a", 3, 3), ...scenarios("b", 3, 0)]))
    assert.strictEqual(c.variants.find((v) => v.variant === "b")!.verdict, "not in both runs")
    assert.deepStrictEqual(significantDrops(c), [])
  })
})

layer(NodeServices.layer)("comparing two real runs", (it) => {
  it.effect(
    "a deliberately worsened variant is a significant drop: in compare, its HTML, and the CLI gate",
    () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const path = yield* Path.Path
        const root = yield* fs.makeTempDirectoryScoped()
        const runsDir = path.join(root, "runs")
        const suiteFile = path.join(root, "demo", "suite.yaml")
        yield* fs.makeDirectory(path.join(root, "demo"))
        const withTrials = (text: string) => text.replace("trials: 1", "trials: 6")
        yield* fs.writeFileString(suiteFile, withTrials(demoSuite()))
        const good = yield* runCommand({ evalsDir: root, runsDir, suite: "demo", scripted: true })
        // the candidate's heading worsened to the wording the scripted responder does not verify under
        yield* fs.writeFileString(suiteFile, withTrials(demoSuite({ heading: "Trusting what you recall" })))
        const worse = yield* runCommand({ evalsDir: root, runsDir, suite: "demo", scripted: true })

        const { comparison, html } = yield* compareCommandProgram({
          before: good.directory,
          after: worse.directory,
          runsDir
        })
        const candidate = comparison.variants.find((v) => v.variant === "candidate")!
        assert.strictEqual(candidate.verdict, "significant drop")
        assert.strictEqual(candidate.lost.length, 6)
        assert.approximately(candidate.paired!.pValue, 2 * 0.5 ** 6, 1e-12)
        assert.strictEqual(comparison.variants.find((v) => v.variant === "before")!.verdict, "no significant change")
        const page = yield* fs.readFileString(html)
        assert.include(page, "significant drop")
        assert.include(page, "report.html#trial--candidate--pool--1")

        // run --baseline: the same comparison, and the gate fails
        const gated = yield* runCommand({
          evalsDir: root,
          runsDir,
          suite: "demo",
          scripted: true,
          baseline: path.join(good.directory, "results.json")
        })
        assert.strictEqual(significantDrops(gated.comparison!).map((v) => v.variant)[0], "candidate")
        assert.isDefined(gated.gate)
        assert.include(gated.gate!.message, "candidate: pass rate fell from 100% to 0%")
        assert.isTrue(yield* fs.exists(path.join(gated.directory, "compare.html")))

        const cli = yield* runEvals(["compare", "--dir", root, good.directory, worse.directory, "--fail-on-drop"])
        assert.strictEqual(cli.code, 2, cli.stderr)
        assert.include(cli.stdout, "SIGNIFICANT DROP")
        assert.include(cli.stderr, "candidate: 6/6 → 0/6")
        const noGate = yield* runEvals(["compare", "--dir", root, good.directory, worse.directory])
        assert.strictEqual(noGate.code, 0, noGate.stderr)
      }),
    240_000
  )
})
