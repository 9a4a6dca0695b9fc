/**
 * Dream suites: one scenario is one run of core's consolidation program (`Dream.runDream`, forced past its time
 * and session gates, no git commit) over the scenario's memory directory, with the variant's dream prompt. The
 * memory directory before and after is what the scorers see: merged, dates absolute, nothing lost.
 *
 * The dream reads "today" from `Clock`; the trial runs on a clock pinned to the scenario's "now" (it still
 * ticks, and sleeps are real), so prompts and cassettes do not depend on the day the suite runs.
 */
import { runDream, snapshotMemoryDir } from "@memdir/core/Dream"
import type { DreamLock } from "@memdir/core/DreamLock"
import type { MemoryIndex } from "@memdir/core/MemoryIndex"
import type { Model } from "@memdir/core/Model"
import type { Scanner } from "@memdir/core/Scanner"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { FileSystem } from "effect/FileSystem"
import * as Path from "effect/Path"
import type { ChildProcessSpawner } from "effect/process/ChildProcessSpawner"
import * as Result from "effect/Result"
import { inTrial } from "./Cassette.js"
import type { TrialOutcome, TrialSpec } from "./Runner.js"
import { makeSandbox } from "./Sandbox.js"
import { hideSandbox, type RunOutcome, scoreDeterministicScorers } from "./Scoring.js"
import { type ModelSuite, scorersFor } from "./Suite.js"

/** A clock reading `nowMs` now and ticking from there; sleeps and elapsed time are the real clock's. */
export const pinnedClock = (nowMs: number): Clock.Clock => {
  const real = Clock.Clock.defaultValue()
  const offset = nowMs - real.currentTimeMillisUnsafe()
  const millis = () => real.currentTimeMillisUnsafe() + offset
  const nanos = () => real.currentTimeNanosUnsafe() + BigInt(offset) * 1_000_000n
  return {
    currentTimeMillisUnsafe: millis,
    currentTimeMillis: Effect.sync(millis),
    currentTimeNanosUnsafe: nanos,
    currentTimeNanos: Effect.sync(nanos),
    monotonicTimeNanosUnsafe: () => real.monotonicTimeNanosUnsafe(),
    monotonicTimeNanos: real.monotonicTimeNanos,
    sleep: (duration) => real.sleep(duration)
  }
}

/** Text of every memory file (as the dream snapshots them), by relative path. */
export const snapshotTexts = (memoryDir: string) =>
  Effect.map(
    snapshotMemoryDir(memoryDir),
    (snapshot) => new Map([...snapshot].flatMap(([p, f]) => f.content === undefined ? [] : [[p, f.content] as const]))
  )

type ModelSuiteLoaded = ModelSuite & { readonly directory: string; readonly file: string }

export const prepareDreamSuite = (suite: ModelSuiteLoaded) =>
  Effect.gen(function*() {
    const scenarios = new Map(suite.scenarios.map((s) => [s.id, s]))
    const variants = new Map(suite.variants.map((v) => [v.name, v]))
    const context = yield* Effect.context<
      FileSystem | Path.Path | MemoryIndex | Scanner | DreamLock | Model | ChildProcessSpawner
    >()
    return (spec: TrialSpec, trialKey: string) =>
      Effect.gen(function*() {
        const path = yield* Path.Path
        const scenario = scenarios.get(spec.scenario)!
        const nowMs = Date.parse(scenario.now ?? suite.now)
        const sandbox = yield* makeSandbox({
          suiteDirectory: suite.directory,
          nowMs,
          memories: scenario.memories,
          project: scenario.project
        })
        const before = yield* snapshotTexts(sandbox.memoryDir)
        const ran = yield* runDream({
          memoryDir: sandbox.memoryDir,
          transcriptsDir: path.join(sandbox.root, "sessions"),
          projectRoot: sandbox.projectDir,
          force: true,
          commit: false,
          // built-in variants only (checked when the suite was loaded): runDream takes a variant name
          variant: variants.get(spec.variant)!.builtin,
          maxTurns: suite.maxTurns,
          maxTokens: suite.maxTokens
        }).pipe(
          inTrial({ trial: trialKey, sandboxRoot: sandbox.root }),
          Effect.provideService(Clock.Clock, pinnedClock(nowMs)),
          Effect.result
        )
        if (Result.isFailure(ran)) return { scores: [], error: ran.failure.message } satisfies TrialOutcome
        if (ran.success._tag !== "Completed") {
          return { scores: [], error: `the dream did not run (${ran.success._tag})` } satisfies TrialOutcome
        }
        const report = ran.success.report
        const after = yield* snapshotTexts(sandbox.memoryDir)
        const outcome: RunOutcome = {
          finalText: report.summary,
          toolCalls: [],
          turns: report.turns,
          stop: report.stop,
          memoryBefore: before,
          memoryAfter: after
        }
        const scores = scoreDeterministicScorers(scorersFor(suite, scenario), outcome)
        return {
          scores,
          output: hideSandbox(sandbox.root, {
            finalText: report.summary,
            stop: report.stop,
            turns: report.turns,
            created: report.created,
            updated: report.updated,
            merged: report.merged,
            deleted: report.deleted,
            refusals: report.refusals,
            memoryChanges: [...after].filter(([p, t]) => before.get(p) !== t).map(([file, text]) => ({
              file,
              op: before.has(file) ? "updated" : "created",
              after: text
            })).concat(
              [...before.keys()].filter((p) => !after.has(p)).map((file) => ({
                file,
                op: "deleted",
                after: undefined as unknown as string
              }))
            )
          })
        } satisfies TrialOutcome
      }).pipe(
        Effect.scoped,
        Effect.catchTags({
          MemoryIoError: (error) => Effect.succeed<TrialOutcome>({ scores: [], error: error.message }),
          EvalIoError: (error) => Effect.succeed<TrialOutcome>({ scores: [], error: error.message })
        }),
        Effect.provide(context)
      )
  })
