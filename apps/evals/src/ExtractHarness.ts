/**
 * Extraction suites: one scenario is one run of core's background extractor (`Extract.extract`) over the
 * scenario's conversation, written as a memdir JSONL transcript, with the scenario's memory directory and
 * project. The memory directory before and after is what the scorers see: capture rate of the known memorable
 * facts, false saves of the known derivable noise.
 *
 * Like the dream, the extractor reads "today" from `Clock`: the trial runs on a clock pinned to the scenario's
 * "now".
 */
import { extract } from "@memdir/core/Extract"
import type { MemoryIndex } from "@memdir/core/MemoryIndex"
import type { Model } from "@memdir/core/Model"
import type { Scanner } from "@memdir/core/Scanner"
import { toJsonl } from "@memdir/core/Transcript"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Path from "effect/Path"
import * as Result from "effect/Result"
import { inTrial } from "./Cassette.js"
import { pinnedClock, snapshotTexts } from "./DreamHarness.js"
import { EvalIoError } from "./Errors.js"
import type { TrialOutcome, TrialSpec } from "./Runner.js"
import { makeSandbox } from "./Sandbox.js"
import { hideSandbox, type RunOutcome, scoreDeterministicScorers } from "./Scoring.js"
import { type ModelSuite, scorersFor } from "./Suite.js"

type ModelSuiteLoaded = ModelSuite & { readonly directory: string; readonly file: string }

const textOfLast = (messages: ReadonlyArray<{ readonly role: string; readonly content: unknown }>): string => {
  const last = [...messages].reverse().find((m) => m.role === "assistant")
  if (last === undefined) return ""
  if (typeof last.content === "string") return last.content
  return (last.content as ReadonlyArray<{ readonly type: string; readonly text?: string }>)
    .flatMap((b) => b.type === "text" && b.text !== undefined ? [b.text] : []).join("\n")
}

export const prepareExtractionSuite = (suite: ModelSuiteLoaded) =>
  Effect.gen(function*() {
    const scenarios = new Map(suite.scenarios.map((s) => [s.id, s]))
    const variants = new Map(suite.variants.map((v) => [v.name, v]))
    const context = yield* Effect.context<FileSystem.FileSystem | Path.Path | MemoryIndex | Scanner | Model>()
    return (spec: TrialSpec, trialKey: string) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const path = yield* Path.Path
        const scenario = scenarios.get(spec.scenario)!
        const nowMs = Date.parse(scenario.now ?? suite.now)
        const sandbox = yield* makeSandbox({
          suiteDirectory: suite.directory,
          nowMs,
          memories: scenario.memories,
          project: scenario.project
        })
        const transcript = path.join(sandbox.root, `${scenario.id}.jsonl`)
        yield* fs.writeFileString(transcript, toJsonl(scenario.conversation)).pipe(
          Effect.mapError((error) => new EvalIoError({ op: "write", path: transcript, detail: error.message }))
        )
        const before = yield* snapshotTexts(sandbox.memoryDir)
        const ran = yield* extract({
          memoryDir: sandbox.memoryDir,
          projectRoot: sandbox.projectDir,
          transcript,
          sessionId: scenario.id,
          // built-in variants only (checked when the suite was loaded): extract takes a variant name
          variant: variants.get(spec.variant)!.builtin,
          maxTurns: suite.maxTurns,
          maxTokens: suite.maxTokens,
          homeDir: path.join(sandbox.root, "home")
        }).pipe(
          inTrial({ trial: trialKey, sandboxRoot: sandbox.root }),
          Effect.provideService(Clock.Clock, pinnedClock(nowMs)),
          Effect.result
        )
        if (Result.isFailure(ran)) return { scores: [], error: ran.failure.message } satisfies TrialOutcome
        const result = ran.success
        if (result.status !== "extracted" || result.agent === undefined) {
          return { scores: [], error: `the extractor did not run (${result.status})` } satisfies TrialOutcome
        }
        const agent = result.agent
        const after = yield* snapshotTexts(sandbox.memoryDir)
        const outcome: RunOutcome = {
          finalText: textOfLast(agent.messages),
          toolCalls: agent.toolCalls.map((c) => ({
            turn: c.turn,
            name: c.name,
            input: c.input,
            isError: c.isError,
            content: c.content
          })),
          turns: agent.turns,
          stop: agent.stop,
          memoryBefore: before,
          memoryAfter: after
        }
        const scores = scoreDeterministicScorers(scorersFor(suite, scenario), outcome)
        return {
          scores,
          output: hideSandbox(sandbox.root, {
            finalText: outcome.finalText,
            stop: agent.stop,
            turns: agent.turns,
            toolCalls: outcome.toolCalls,
            memoryChanges: result.changes.map((c) => ({ file: c.file, op: c.op, after: c.after })),
            refusals: result.refusals,
            messages: agent.messages
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
