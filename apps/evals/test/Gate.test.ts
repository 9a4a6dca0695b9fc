import { assert, describe, it } from "@effect/vitest"
import { gateFailures } from "../src/Gate.js"
import { RESULTS_FORMAT, type RunResults, summarize, type TrialResult } from "../src/Results.js"

const trial = (variant: string, scenario: string, n: number, passed: boolean, error?: string): TrialResult => ({
  variant,
  scenario,
  trial: n,
  passed,
  ...(error === undefined ? {} : { error }),
  scores: [],
  metrics: {},
  latencyMs: 1
})

const runOf = (
  results: ReadonlyArray<TrialResult>,
  mode: RunResults["provenance"]["mode"] = "replay",
  suite = "demo"
): RunResults => {
  const variants = [...new Set(results.map((r) => r.variant))]
  const scenarios = [...new Set(results.map((r) => r.scenario))]
  return {
    format: RESULTS_FORMAT,
    suite,
    kind: "agent",
    section: "recall-trust",
    description: "d",
    startedAt: "2026-03-10T12:00:00.000Z",
    finishedAt: "2026-03-10T12:00:01.000Z",
    trials: Math.max(...results.map((r) => r.trial)),
    variants: variants.map((name) => ({ name })),
    baseline: variants[0]!,
    scenarios: scenarios.map((id) => ({ id })),
    provenance: { mode, models: [], realModel: false, note: "test" },
    results
  }
}

/** `passes` of `n` trials of one scenario pass. */
const trials = (variant: string, scenario: string, n: number, passes: number) =>
  Array.from({ length: n }, (_, i) => trial(variant, scenario, i + 1, i < passes))

describe("summarize", () => {
  it("3/3 vs 0/3 on the same trials: intervals that overlap and p = 0.25", () => {
    const run = runOf([...trials("before", "stale", 3, 3), ...trials("trusting", "stale", 3, 0)])
    const summary = summarize(run)
    const [before, trusting] = summary.variants
    assert.strictEqual(before!.passRate, 1)
    assert.approximately(before!.interval.low, 0.4385, 1e-4)
    assert.strictEqual(trusting!.passRate, 0)
    assert.approximately(trusting!.interval.high, 0.5615, 1e-4)
    const [comparison] = summary.comparisons
    assert.strictEqual(comparison!.variant, "trusting")
    assert.strictEqual(comparison!.onlySecondPassed, 3)
    assert.approximately(comparison!.pValue, 0.25, 1e-12)
  })

  it("leaves errored trials out of the pass rate and counts them apart", () => {
    const run = runOf([
      trial("a", "s", 1, true),
      trial("a", "s", 2, false, "model timed out"),
      trial("a", "s", 3, false)
    ])
    const [a] = summarize(run).variants
    assert.strictEqual(a!.total, 2)
    assert.strictEqual(a!.passed, 1)
    assert.strictEqual(a!.errored, 1)
  })
})

describe("gateFailures", () => {
  it("--min-pass-rate fails each variant under it, and any variant with errored trials", () => {
    const run = runOf([...trials("good", "s", 4, 4), ...trials("bad", "s", 4, 1)])
    assert.deepStrictEqual(gateFailures(run, { minPassRate: 0.25 }), [])
    const failures = gateFailures(run, { minPassRate: 0.5 })
    assert.strictEqual(failures.length, 1)
    assert.include(failures[0]!, "bad: pass rate 1/4 = 25% is under --min-pass-rate 50%")
    const errored = runOf([trial("a", "s", 1, true), trial("a", "s", 2, false, "boom")])
    assert.include(gateFailures(errored, { minPassRate: 0 }).join("\n"), "errored")
  })

  it("a reference system (the BM25 baseline) is not held to --min-pass-rate, but to its stored baseline", () => {
    const mark = (run: RunResults): RunResults => ({
      ...run,
      variants: run.variants.map((v) => v.name === "bm25" ? { ...v, reference: true } : v)
    })
    const run = mark(runOf([...trials("offline", "s", 4, 4), ...trials("bm25", "s", 4, 1)]))
    assert.deepStrictEqual(gateFailures(run, { minPassRate: 0.5 }), [])
    // memdir's own variants still are
    assert.include(gateFailures(run, { minPassRate: 1.01 }).join("\n"), "offline: pass rate 4/4")
    assert.notInclude(gateFailures(run, { minPassRate: 1.01 }).join("\n"), "bm25")
    // an errored reference trial still fails the gate, and so does a reference trial lost against the baseline
    const errored = mark(runOf([trial("offline", "s", 1, true), trial("bm25", "s", 1, false, "boom")]))
    assert.include(gateFailures(errored, { minPassRate: 0.5 }).join("\n"), "bm25: 1 trial(s) errored")
    const baseline = mark(runOf([trial("offline", "s", 1, true), trial("bm25", "s", 1, true)]))
    const lost = mark(runOf([trial("offline", "s", 1, true), trial("bm25", "s", 1, false)]))
    assert.include(gateFailures(lost, { baseline })[0]!, "bm25: 1 scenario(s) passed")
  })

  it("a deterministic run (replay/offline) fails on any scenario that passed in the baseline and fails now", () => {
    const baseline = runOf([trial("a", "s1", 1, true), trial("a", "s2", 1, true), trial("a", "s3", 1, false)])
    const same = runOf([trial("a", "s1", 1, true), trial("a", "s2", 1, true), trial("a", "s3", 1, false)])
    assert.deepStrictEqual(gateFailures(same, { baseline }), [])
    const better = runOf([trial("a", "s1", 1, true), trial("a", "s2", 1, true), trial("a", "s3", 1, true)])
    assert.deepStrictEqual(gateFailures(better, { baseline }), [])
    // one lost, one gained: the pass rate is unchanged, but a deterministic regression is still a regression
    const swapped = runOf([trial("a", "s1", 1, true), trial("a", "s2", 1, false), trial("a", "s3", 1, true)])
    const failures = gateFailures(swapped, { baseline, baselinePath: "base.json" })
    assert.strictEqual(failures.length, 1)
    assert.include(failures[0]!, "s2#1")
    assert.include(failures[0]!, "base.json")
  })

  it("a live run fails only on a significant paired drop", () => {
    const baseline = runOf([...trials("a", "s", 10, 10)], "live")
    const slightlyWorse = runOf([...trials("a", "s", 10, 8)], "live")
    assert.deepStrictEqual(gateFailures(slightlyWorse, { baseline }), [])
    const muchWorse = runOf([...trials("a", "s", 10, 2)], "live")
    const failures = gateFailures(muchWorse, { baseline })
    assert.strictEqual(failures.length, 1)
    assert.include(failures[0]!, "fell from 100% to 20%")
  })

  it("refuses a baseline from another suite", () => {
    const baseline = runOf([trial("a", "s", 1, true)], "replay", "other")
    const run = runOf([trial("a", "s", 1, true)])
    assert.include(gateFailures(run, { baseline })[0]!, "suite other")
  })
})
