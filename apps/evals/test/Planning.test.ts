/**
 * Planning trials (how many detect a difference at 80% power; stopping once the intervals are narrow enough) and
 * the progress line (per-variant counts and the time left).
 */
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Path from "effect/Path"
import { formatDuration, makeProgressState, progressLine } from "../src/Progress.js"
import { renderPlan } from "../src/Report.js"
import type { TrialResult } from "../src/Results.js"
import { runCommand } from "../src/Run.js"
import { trialsToDetect, widestInterval } from "../src/Stats.js"
import { demoSuite } from "./fixtures.js"

const result = (variant: string, passed: boolean): TrialResult => ({
  variant,
  scenario: "s",
  trial: 1,
  passed,
  scores: [],
  metrics: {},
  latencyMs: 10
})

describe("trialsToDetect", () => {
  it("matches the textbook two-proportion sample sizes at 80% power, α = 0.05", () => {
    // 50% vs 70%: 93 per group; 50% vs 60%: 388 per group (Fleiss, without continuity correction)
    assert.strictEqual(trialsToDetect(0.5, 0.2).trialsPerVariant, 93)
    assert.strictEqual(trialsToDetect(0.5, 0.1).trialsPerVariant, 388)
    const fromTop = trialsToDetect(1, 0.2)
    assert.strictEqual(fromTop.otherRate, 0.8)
    assert.strictEqual(fromTop.trialsPerVariant, 35)
    // a bigger difference needs fewer trials; nothing detects a difference of 0
    assert.isBelow(trialsToDetect(0.7, 0.4).trialsPerVariant, trialsToDetect(0.7, 0.2).trialsPerVariant)
    assert.strictEqual(trialsToDetect(0.7, 0).trialsPerVariant, Infinity)
  })

  it("widestInterval is the widest Wilson interval", () => {
    assert.approximately(widestInterval([{ passed: 3, total: 3 }, { passed: 50, total: 100 }]), 1 - 0.4385, 1e-3)
    assert.strictEqual(widestInterval([]), 0)
  })
})

describe("progressLine", () => {
  it("counts per variant and estimates the time left from the pace so far", () => {
    const state = makeProgressState(0)
    const first = progressLine(state, { done: 1, total: 4, perVariant: 2, result: result("a", true) }, 10_000)
    assert.strictEqual(first, "[1/4] a 1/2 (1 pass) · 10.0 s elapsed, ETA 30.0 s")
    progressLine(state, { done: 2, total: 4, perVariant: 2, result: result("b", false) }, 20_000)
    const third = progressLine(state, { done: 3, total: 4, perVariant: 2, result: result("a", false) }, 90_000)
    assert.strictEqual(third, "[3/4] a 2/2 (1 pass) · b 1/2 (0 pass) · 1m 30s elapsed, ETA 30.0 s")
    const last = progressLine(state, { done: 4, total: 4, perVariant: 2, result: result("b", true) }, 100_000)
    assert.include(last, "b 2/2 (1 pass)")
    assert.include(last, "done")
    assert.strictEqual(formatDuration(2 * 3600_000 + 5 * 60_000), "2h 05m")
  })
})

layer(NodeServices.layer)("planning a real run", (it) => {
  const setUp = Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const root = yield* fs.makeTempDirectoryScoped()
    yield* fs.makeDirectory(path.join(root, "demo"))
    yield* fs.writeFileString(path.join(root, "demo", "suite.yaml"), demoSuite())
    return { root, runsDir: path.join(root, "runs") }
  })

  it.effect("--until-ci-width adds trials until every interval is narrow enough, then stops", () =>
    Effect.gen(function*() {
      const { root, runsDir } = yield* setUp
      const notes: Array<string> = []
      const { run } = yield* runCommand({
        evalsDir: root,
        runsDir,
        suite: "demo",
        scripted: true,
        untilCiWidth: 0.45,
        onNote: (note) => Effect.sync(() => notes.push(note))
      })
      // 4/4 is [51%, 100%] (49 points wide), 5/5 is [57%, 100%] (43): five trials, no more
      assert.strictEqual(run.trials, 5)
      assert.strictEqual(run.results.length, 10)
      assert.deepStrictEqual(
        [...new Set(run.results.map((r) => r.trial))].sort(),
        [1, 2, 3, 4, 5]
      )
      assert.include(notes[notes.length - 1]!, "stopped after 5 trial(s)")
      assert.include(renderPlan(run, 0.2), "each variant needs ≈ 35 scored trials: --trials 35 over 1 scenario")

      const capped = yield* runCommand({
        evalsDir: root,
        runsDir,
        suite: "demo",
        scripted: true,
        untilCiWidth: 0.1,
        maxTrials: 3
      })
      assert.strictEqual(capped.run.trials, 3)
    }))

  it.effect("--until-ci-width is refused where the answers cannot vary (a replay)", () =>
    Effect.gen(function*() {
      const { root, runsDir } = yield* setUp
      yield* runCommand({ evalsDir: root, runsDir, suite: "demo", scripted: true, record: true })
      const error = yield* Effect.flip(
        runCommand({ evalsDir: root, runsDir, suite: "demo", replay: true, untilCiWidth: 0.3 })
      )
      assert.strictEqual(error._tag, "InvalidRunOptionError")
      assert.include(error.message, "same answer to every trial")
    }))
})
