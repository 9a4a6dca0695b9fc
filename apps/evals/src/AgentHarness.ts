/**
 * Agent suites: one scenario is one run of core's tool-use loop (`Agent.run`, role `agent`) in a scratch world —
 * the memory directory with its aged files, the small project — with the memory tools and the read-only project
 * tools of `MemoryTools` (sandboxed by code), so the model can verify a memory before recommending from it.
 *
 * What the model sees:
 * - system: a neutral agent preamble (where the project is, today's date, that tools exist), then the memory
 *   section of the prompt exactly as core renders it, with the suite's section replaced by the variant;
 * - messages: the scenario's earlier conversation, then the task, preceded by the memories the scenario says were
 *   recalled, each rendered by core's `renderRecalledMemory` (age in words and the staleness caveat).
 *
 * Every date comes from the scenario's pinned "now", every path from the trial's scratch root (which cassettes
 * replace by `<sandbox>`), so the same trial sends the same requests on any machine.
 */
import type Anthropic from "@anthropic-ai/sdk"
import * as Agent from "@memdir/core/Agent"
import { snapshotMemoryDir } from "@memdir/core/Dream"
import { parseMemoryFile } from "@memdir/core/Frontmatter"
import { MemoryIndex } from "@memdir/core/MemoryIndex"
import * as MemoryTools from "@memdir/core/MemoryTools"
import type { Model } from "@memdir/core/Model"
import { renderRecalledMemory } from "@memdir/core/Recall"
import { Scanner } from "@memdir/core/Scanner"
import { selectRelevantMemories } from "@memdir/core/Selector"
import { describeAge } from "@memdir/core/Staleness"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Path from "effect/Path"
import * as Result from "effect/Result"
import { inTrial } from "./Cassette.js"
import { EvalIoError } from "./Errors.js"
import { graderMaterial, gradeRubric } from "./Grader.js"
import type { TrialOutcome, TrialSpec } from "./Runner.js"
import { makeSandbox } from "./Sandbox.js"
import { changedMemories, hideSandbox, type RunOutcome, scoreOutcome, type ScoreOutput } from "./Scoring.js"
import { type ModelSuite, type Scenario, scorerIds, scorersFor } from "./Suite.js"
import { renderMemoryPromptWith, resolveVariant, type SectionCatalog } from "./Variants.js"

/** The agent's own instructions around the memory section: neutral on purpose (the variant is what is measured). */
export const agentPreamble = (input: { readonly projectDir: string; readonly today: string }): string =>
  [
    "You are a coding assistant working with a user in the project at `" + input.projectDir + "`. Today is " +
    input.today + ".",
    "You can look at the project with read_file, list_dir and grep, and read and write your memory with the memory " +
    "tools. Use them as you see fit, then give the user your answer. Keep the answer short and concrete."
  ].join("\n\n")

/** The recalled memories and the task, as the final user message. */
export const taskMessage = (recalled: ReadonlyArray<string>, task: string): string =>
  recalled.length === 0 ?
    task :
    `<system-reminder>\nMemories recalled for this message:\n\n${
      recalled.join("\n\n---\n\n")
    }\n</system-reminder>\n\n${task}`

type ModelSuiteLoaded = ModelSuite & { readonly directory: string; readonly file: string }

const ioError = (op: string, path: string) => (error: { readonly message: string }) =>
  new EvalIoError({ op, path, detail: error.message })

const snapshotTexts = (memoryDir: string) =>
  Effect.map(
    snapshotMemoryDir(memoryDir),
    (snapshot) => new Map([...snapshot].flatMap(([p, f]) => f.content === undefined ? [] : [[p, f.content] as const]))
  )

/** The recalled memories of a scenario, rendered as the runtime shows them. */
const recallFor = (scenario: Scenario, memoryDir: string, nowMs: number) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const scanner = yield* Scanner
    if (scenario.recall === undefined) return []
    const scan = yield* scanner.scan(memoryDir)
    const paths = scenario.recall === "selector" ?
      selectRelevantMemories({ query: scenario.task ?? "", candidates: scan.memories }) :
      scenario.recall
    const rendered: Array<string> = []
    for (const relative of paths) {
      const header = scan.memories.find((m) => m.path === relative)
      if (header === undefined) continue
      const absolutePath = path.join(memoryDir, relative)
      const text = yield* fs.readFileString(absolutePath).pipe(Effect.mapError(ioError("read", absolutePath)))
      const body = Result.match(parseMemoryFile(text, relative), { onFailure: () => text, onSuccess: (f) => f.body })
      const age = describeAge(nowMs, header.writtenAt ?? header.mtime)
      // Built apart from the call so that fields core adds to RecalledMemory later are not excess properties here.
      const memory = {
        path: relative,
        absolutePath,
        scope: "private" as const,
        name: header.name,
        type: header.type,
        description: header.description,
        mtime: header.mtime,
        writtenAt: header.writtenAt ?? header.mtime,
        ...age,
        content: body,
        truncated: false
      }
      rendered.push(renderRecalledMemory(memory))
    }
    return rendered
  })

/**
 * Prepares an agent suite (resolved variant texts) and returns the function that runs one trial in its own
 * scratch world.
 */
export const prepareAgentSuite = (suite: ModelSuiteLoaded, catalog: SectionCatalog) =>
  Effect.gen(function*() {
    const source = catalog[suite.section]!
    const templates = new Map<string, string>()
    for (const variant of suite.variants) {
      // checked when the suite was loaded
      templates.set(variant.name, Result.getOrThrow(resolveVariant(source, variant)))
    }
    const scenarios = new Map(suite.scenarios.map((s) => [s.id, s]))
    const context = yield* Effect.context<FileSystem.FileSystem | Path.Path | MemoryIndex | Scanner | Model>()

    const runOne = (spec: TrialSpec, trialKey: string) =>
      Effect.gen(function*() {
        const scenario = scenarios.get(spec.scenario)!
        const nowMs = Date.parse(scenario.now ?? suite.now)
        const sandbox = yield* makeSandbox({
          suiteDirectory: suite.directory,
          nowMs,
          memories: scenario.memories,
          project: scenario.project
        })
        const index = yield* MemoryIndex
        const loaded = yield* index.load(sandbox.memoryDir)
        const memoryPrompt = renderMemoryPromptWith({
          memoryDir: sandbox.memoryDir,
          index: loaded,
          templates: { [suite.section]: templates.get(spec.variant)! }
        })
        if (Result.isFailure(memoryPrompt)) return yield* Effect.die(new Error(memoryPrompt.failure))
        const system = `${
          agentPreamble({ projectDir: sandbox.projectDir, today: new Date(nowMs).toISOString().slice(0, 10) })
        }\n\n${memoryPrompt.success}`
        const recalled = yield* recallFor(scenario, sandbox.memoryDir, nowMs)
        const task = scenario.task ?? ""
        const messages: Array<Anthropic.MessageParam> = [
          ...scenario.conversation.map((m) => ({ role: m.role, content: m.content })),
          { role: "user", content: taskMessage(recalled, task) }
        ]
        const before = yield* snapshotTexts(sandbox.memoryDir)
        const toolset = yield* MemoryTools.make({ memoryDir: sandbox.memoryDir, projectRoot: sandbox.projectDir })
        const run = yield* Agent.run({
          role: "agent",
          system: [{ text: system, cache: true }],
          messages,
          tools: toolset.tools,
          maxTurns: suite.maxTurns,
          maxTokens: suite.maxTokens,
          temperature: 1
        }).pipe(inTrial({ trial: trialKey, sandboxRoot: sandbox.root }), Effect.result)
        if (Result.isFailure(run)) return { scores: [], error: run.failure.message } satisfies TrialOutcome
        const result = run.success
        const after = yield* snapshotTexts(sandbox.memoryDir)
        const outcome: RunOutcome = {
          finalText: result.finalText,
          toolCalls: result.toolCalls.map((c) => ({
            turn: c.turn,
            name: c.name,
            input: c.input,
            isError: c.isError,
            content: c.content
          })),
          turns: result.turns,
          stop: result.stop,
          memoryBefore: before,
          memoryAfter: after
        }
        const scorers = scorersFor(suite, scenario)
        const ids = scorerIds(scorers)
        const scores: Array<ScoreOutput> = []
        for (const [i, scorer] of scorers.entries()) {
          const deterministic = scoreOutcome(scorer, ids[i]!, outcome)
          if (deterministic !== undefined) scores.push(deterministic)
          else if (scorer.type === "rubric") {
            const material = graderMaterial({
              task,
              toolCalls: outcome.toolCalls,
              finalText: outcome.finalText,
              written: changedMemories(outcome).map((p) => [p, after.get(p) ?? ""] as const)
            })
            scores.push(
              yield* gradeRubric(ids[i]!, scorer.rubric, scorer.required, material).pipe(
                inTrial({ trial: trialKey, sandboxRoot: sandbox.root })
              )
            )
          }
        }
        const root = sandbox.root
        return {
          scores,
          output: hideSandbox(root, {
            finalText: result.finalText,
            stop: result.stop,
            turns: result.turns,
            toolCalls: outcome.toolCalls,
            memoryChanges: (yield* toolset.changes).map((c) => ({ file: c.file, op: c.op, after: c.after })),
            refusals: yield* toolset.refusals,
            messages: result.messages
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
    return runOne
  })
