/**
 * `memdir extract --transcript FILE`: background extraction run by hand (docs/extraction.md). Reads the session's new
 * complete messages (after its cursor), skips them when the main agent wrote memory itself, else lets the extractor
 * agent save what was missed; prints what was written, refused or skipped. Needs a model (ANTHROPIC_API_KEY):
 * without one it exits with ModelError "not-configured" (13). A backlog larger than one run's budget is read in
 * several runs, one after the other.
 */
import * as Extract from "@memdir/core/Extract"
import { Model } from "@memdir/core/Model"
import { TeamMemory } from "@memdir/core/TeamMemory"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as NodePath from "node:path"
import { common, jsonOption, locate, requireEnabled } from "../Common.js"
import { makeModelCalls, type ModelCalls, withModelProgress } from "../ModelProgress.js"
import { InterruptNote, printJson } from "../Output.js"
import { memdirHandler } from "../Services.js"

/** Runs at most, for one invocation (each reads up to `DEFAULT_MAX_MESSAGE_CHARS` of messages). */
const MAX_RUNS = 20

const describeRange = (result: Extract.ExtractResult): string =>
  `messages #${result.range.from + 1}–#${result.range.to} of ${result.range.total}`

const printRun = (result: Extract.ExtractResult) =>
  Effect.gen(function*() {
    switch (result.status) {
      case "up-to-date":
        return yield* Console.log(
          `extract: session ${result.sessionId}: nothing new since the last extraction ` +
            `(${result.range.from} of ${result.range.total} messages read)`
        )
      case "skipped-main-agent-wrote": {
        yield* Console.log(
          `extract: session ${result.sessionId}: ${describeRange(result)} skipped — the main agent wrote memory ` +
            `itself; cursor advanced`
        )
        for (const write of result.mainAgentWrites) {
          yield* Console.log(`  by ${write.tool} (message #${write.message + 1}): ${write.target.slice(0, 160)}`)
        }
        return
      }
      case "extracted": {
        yield* Console.log(`extract: session ${result.sessionId}: ${describeRange(result)}`)
        if (result.changes.length === 0) yield* Console.log("  nothing worth saving")
        for (const change of result.changes) {
          const kept = change.backup === undefined ? "" : ` (previous: ${change.backup})`
          yield* Console.log(`  ${change.op.padEnd(8)} ${change.file}${kept}`)
        }
        for (const refusal of result.refusals) {
          yield* Console.log(`  refused  ${refusal.tool} ${JSON.stringify(refusal.path)}: ${refusal.reason}`)
        }
        const agent = result.agent
        if (agent !== undefined) {
          yield* Console.log(
            `  (${agent.turns} turn${agent.turns === 1 ? "" : "s"}, ${agent.model}, ${agent.usage.inputTokens} in / ` +
              `${agent.usage.outputTokens} out tokens, ${agent.usage.cacheReadInputTokens} read from cache)`
          )
        }
      }
    }
  })

/** A change as `--json` shows it: what was done to which file, and where the text it replaced was kept. */
const changeJson = (change: Extract.ExtractResult["changes"][number]) => ({
  op: change.op,
  file: change.file,
  ...(change.backup === undefined ? {} : { backup: change.backup })
})

const runJson = (result: Extract.ExtractResult) => ({
  status: result.status,
  range: result.range,
  remaining: result.remaining,
  changes: result.changes.map(changeJson),
  ...(result.backupDir === undefined ? {} : { backupDir: result.backupDir }),
  refusals: result.refusals,
  mainAgentWrites: result.mainAgentWrites,
  ...(result.agent === undefined ? {} : {
    agent: {
      turns: result.agent.turns,
      stop: result.agent.stop,
      model: result.agent.model,
      usage: result.agent.usage,
      toolCalls: result.agent.toolCalls.map((c) => ({ turn: c.turn, name: c.name, isError: c.isError }))
    }
  })
})

/**
 * What an extraction a signal stopped kept, from what its runs had done. The cursor moves only after a run's
 * agent has finished (or when the messages are skipped, which calls no model), and the extractor writes only
 * through tool calls, which run only after a model answer: a run stopped while waiting for its first answer wrote
 * nothing and left its cursor alone.
 */
const interruptedExtraction = (finished: ReadonlyArray<Extract.ExtractResult>, calls: ModelCalls) =>
  Effect.gen(function*() {
    const started = yield* Ref.get(calls.started)
    const answered = yield* Ref.get(calls.answered)
    const current = started === 0 ?
      "the extractor model had not been called yet: nothing was written; the extraction cursor is unchanged" :
      answered === 0 ?
      "nothing was written; the extraction cursor is unchanged, so the next `memdir extract` reads these " +
      "messages again" :
      `the extractor had answered ${answered} of ${started} model call${started === 1 ? "" : "s"}: memories it ` +
      "wrote before the signal stay; the extraction cursor did not move, so the next " +
      "`memdir extract` reads these messages again"
    if (finished.length === 0) return current
    const last = finished[finished.length - 1]!
    return `${finished.length} run${finished.length === 1 ? "" : "s"} finished (messages up to #${last.range.to}, ` +
      `their memories and cursor kept); in the interrupted one ${current}`
  })

export const extractCommand = Command.make(
  "extract",
  {
    ...common,
    json: jsonOption,
    transcript: Flag.File("transcript").pipe(
      Flag.withDescription(
        "The session's JSONL transcript: memdir's {role, content} lines or a ~/.claude/projects/<slug>/*.jsonl file"
      )
    ),
    session: Flag.String("session").pipe(
      Flag.withMetavar("ID"),
      Flag.withDescription("Session id naming the cursor (default: the transcript's sessionId, else its file name)"),
      Flag.optional
    ),
    variant: Flag.String("variant").pipe(
      Flag.withMetavar("NAME"),
      Flag.withDescription(`Extraction prompt variant: ${Object.keys(Extract.extractionPrompts).join(", ")}`),
      Flag.optional
    ),
    maxTurns: Flag.Int("max-turns").pipe(
      Flag.withDescription(`Model calls per run at most (default ${Extract.DEFAULT_MAX_TURNS})`),
      Flag.optional
    )
  },
  memdirHandler((args) =>
    Effect.gen(function*() {
      const location = yield* locate(args.cwd)
      yield* requireEnabled(location)
      const model = yield* Model
      const team = yield* (yield* TeamMemory).locate(location)
      const input: Extract.ExtractInput = {
        memoryDir: location.memoryDir,
        projectRoot: location.root.root,
        transcript: NodePath.resolve(args.transcript),
        sessionId: Option.getOrUndefined(args.session),
        variant: Option.getOrUndefined(args.variant),
        maxTurns: Option.getOrUndefined(args.maxTurns),
        teamEnabled: team.enabled
      }
      const runs: Array<Extract.ExtractResult> = []
      const note = yield* InterruptNote
      for (let i = 0; i < MAX_RUNS; i++) {
        const calls = yield* makeModelCalls
        const result = yield* Extract.extract(input).pipe(
          withModelProgress("extract", calls),
          // runs after the run's own finalizers (its session lock released)
          Effect.onInterrupt(() =>
            Effect.flatMap(interruptedExtraction(runs, calls), (kept) => Ref.set(note, Option.some(kept)))
          )
        )
        runs.push(result)
        if (!args.json) yield* printRun(result)
        if (result.remaining === 0 || result.range.to === result.range.from) break
      }
      const last = runs[runs.length - 1]!
      if (last.transcriptProblems > 0) {
        yield* Console.error(`memdir: ${last.transcriptProblems} unreadable transcript line(s) skipped`)
      }
      if (args.json) {
        return yield* printJson({
          sessionId: last.sessionId,
          transcript: input.transcript,
          cursorFile: last.cursorFile,
          model: model.modelFor("extractor"),
          status: last.status,
          remaining: last.remaining,
          changes: runs.flatMap((r) => r.changes.map(changeJson)),
          refusals: runs.flatMap((r) => r.refusals),
          transcriptProblems: last.transcriptProblems,
          runs: runs.map(runJson)
        })
      }
      if (last.remaining > 0) {
        yield* Console.log(`${last.remaining} more messages remain: run \`memdir extract\` again to read them`)
      }
    })
  )
).pipe(
  Command.withDescription(
    "Save what the main agent missed: read a session transcript's new messages and write memories (needs a model)"
  )
)
