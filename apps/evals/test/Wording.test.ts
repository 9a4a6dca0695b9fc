/**
 * The sentences a run prints read as English: one trial is "1 trial", a tiny p-value is "p < 0.001" (never
 * "p = < 0.001"), and a trial that called no tool says "none" without numbering it.
 */
import { assert, describe, it } from "@effect/vitest"
import { RecordingIncompleteError } from "../src/Errors.js"
import { answeredText, comparisonSentence } from "../src/Report.js"
import { renderHtml } from "../src/ReportHtml.js"
import { RESULTS_FORMAT, type RunResults } from "../src/Results.js"
import { pText } from "../src/Stats.js"

const agentRun: RunResults = {
  format: RESULTS_FORMAT,
  suite: "quiet",
  kind: "agent",
  section: "recall-trust",
  description: "d",
  startedAt: "2026-03-10T12:00:00.000Z",
  finishedAt: "2026-03-10T12:00:01.000Z",
  trials: 1,
  variants: [{ name: "default" }],
  baseline: "default",
  scenarios: [{ id: "no-tools", kind: "direct", inputs: { tags: [], query: "hello", relevant: [] } }],
  provenance: { mode: "replay", models: ["claude-sonnet-5-5"], realModel: true, note: "cassette" },
  results: [{
    variant: "default",
    scenario: "no-tools",
    trial: 1,
    passed: true,
    scores: [],
    metrics: {},
    latencyMs: 1,
    output: { toolCalls: [], finalText: "Hi." }
  }]
}

describe("wording of runs and reports", () => {
  it("one trial is singular", () => {
    assert.match(answeredText(agentRun), /^\d+ of 1 trial got an answer$/)
    const error = new RecordingIncompleteError({
      cassette: "c.json",
      kept: false,
      trials: 1,
      unanswered: 1,
      reason: "no key",
      report: "r.html"
    })
    assert.include(error.message, "1 of 1 trial got no answer")
  })

  it("a p-value under 0.001 reads p < 0.001", () => {
    assert.strictEqual(pText(0.0001), "p < 0.001")
    assert.strictEqual(pText(0.031), "p = 0.031")
    const sentence = comparisonSentence(
      {
        variant: "b",
        baseline: "a",
        pairs: 40,
        bothPassed: 0,
        onlyFirstPassed: 0,
        onlySecondPassed: 20,
        bothFailed: 20,
        difference: -0.5,
        pValue: 0.000001
      } as Parameters<typeof comparisonSentence>[0]
    )
    assert.include(sentence, "p < 0.001 (exact McNemar)")
    assert.notInclude(sentence, "p = <")
  })

  it("a trial that called no tool says none, not \"1. none\"", () => {
    const html = renderHtml(agentRun)
    assert.include(html, "<p><b>Tool calls</b></p><p>none</p>")
    assert.notInclude(html, "<li>none</li></ol>")
  })
})
