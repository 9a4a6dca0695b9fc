/**
 * `memdir hook --background`: what a `Stop` or `SessionEnd` hook starts, detached, after the agent's turn
 * (docs/hooks.md): background extraction of the session's transcript (docs/extraction.md), then the dream's gates
 * and, when they are open, the dream (docs/dream-and-logs.md). Loaded only by that process, so the hook itself
 * never evaluates the extractor or the dream. Its input (ids and paths) comes in `MEMDIR_HOOK_BACKGROUND_INPUT`.
 */
import * as BackgroundRuns from "@memdir/core/BackgroundRuns"
import * as Dream from "@memdir/core/Dream"
import { InvalidMemoryInputError } from "@memdir/core/Errors"
import * as Extract from "@memdir/core/Extract"
import { decodeSessionId } from "@memdir/core/HookSessionState"
import * as Model from "@memdir/core/Model"
import { Settings } from "@memdir/core/Settings"
import { TeamMemory } from "@memdir/core/TeamMemory"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Struct from "effect/Struct"
import * as NodePath from "node:path"
import { locate, requireEnabled } from "../Common.js"
import { automaticModelCallsBy, automaticModelCallsOn } from "../ModelCalls.js"
import { BACKGROUND_INPUT_ENV } from "./HookHandlers.js"
import { StopInput } from "./HookInput.js"

/** Extraction runs per background job at most (each reads up to one run's budget of messages). */
const MAX_EXTRACT_RUNS = 10

const Job = Schema.fromJsonString(
  StopInput.mapFields((fields) => ({
    ...Struct.omit(fields, ["hook_event_name", "stop_hook_active"]),
    // the run id the hook wrote its `start` line under (BackgroundRuns)
    run: Schema.optional(Schema.String.check(Schema.isPattern(/^[a-z0-9-]{1,40}$/)))
  }))
)

const readJob = Effect.suspend(() => {
  const raw = process.env[BACKGROUND_INPUT_ENV] ?? ""
  return Schema.decodeUnknownEffect(Job)(raw).pipe(
    Effect.mapError(() =>
      new InvalidMemoryInputError({ field: BACKGROUND_INPUT_ENV, value: raw.slice(0, 200), reason: "not a job" })
    )
  )
})

const extractAll = (input: Extract.ExtractInput) => {
  // what the runs did, noted in the run's trace (BackgroundRuns) also when one of them fails
  const total = { runs: 0, messagesRead: 0, written: 0, refused: 0 }
  let status: BackgroundRuns.ExtractionNote["status"] = "up-to-date"
  return Effect.gen(function*() {
    for (let i = 0; i < MAX_EXTRACT_RUNS; i++) {
      const result = yield* Extract.extract(input)
      total.runs++
      total.messagesRead += result.range.to - result.range.from
      total.written += result.changes.length
      total.refused += result.refusals.length
      status = result.status
      if (result.remaining === 0 || result.range.to === result.range.from) return
    }
  }).pipe(
    Effect.tapError((error) =>
      BackgroundRuns.noteExtraction({ ...total, status: "failed", failure: BackgroundRuns.failureOf(error) })
    ),
    Effect.tap(() => BackgroundRuns.noteExtraction({ ...total, status }))
  )
}

const runJob = Effect.gen(function*() {
  const job = yield* readJob
  const sessionId = yield* Effect.fromResult(decodeSessionId(job.session_id))
  const location = yield* locate(Option.some(job.cwd))
  yield* requireEnabled(location)
  // Checked again here (the hook checked before starting this job): no billed call without the user's consent.
  if (!automaticModelCallsOn(location) || !(yield* Model.isConfigured)) {
    return yield* Effect.logWarning(
      `memdir hook: background job not run: automatic model calls are off (${automaticModelCallsBy(location)}) ` +
        "or no key is configured"
    )
  }
  const team = yield* (yield* TeamMemory).locate(location)
  const transcript = job.transcript_path ?? undefined
  if (transcript !== undefined) {
    yield* extractAll({
      memoryDir: location.memoryDir,
      projectRoot: location.root.root,
      transcript,
      sessionId,
      teamEnabled: team.enabled
    }).pipe(
      // An extraction that failed keeps its cursor (retried next time); the dream's gates are still worth a look.
      Effect.catch((error) => Effect.logWarning(`memdir hook: extraction failed: ${error.message}`))
    )
  }
  const settings = yield* Settings
  // The agent keeps a project's transcripts side by side: the dream counts the sessions there.
  const transcriptsDir = transcript !== undefined
    ? NodePath.dirname(transcript)
    : Dream.defaultTranscriptsDir(settings.env.memoryBase, location.root.root)
  const dream = yield* Dream.runDream({
    memoryDir: location.memoryDir,
    transcriptsDir,
    currentSessionId: sessionId,
    projectRoot: location.root.root,
    force: false,
    dryRun: false,
    commit: true
  })
  yield* BackgroundRuns.noteDream(BackgroundRuns.dreamNoteOf(dream))
})

/**
 * The job, traced: its `end` line in `<memdir>/.runs/background.jsonl` (docs/hooks.md#background-runs) whatever way it
 * stops, under the run id the hook wrote the `start` line with. What fails before the memory directory is known is
 * left to the job's stderr file and the `start` line.
 */
export const runBackground = Effect.gen(function*() {
  const job = yield* readJob
  const sessionId = yield* Effect.fromResult(decodeSessionId(job.session_id))
  const location = yield* locate(Option.some(job.cwd))
  return yield* BackgroundRuns.track(
    { memoryDir: location.memoryDir, session: sessionId, run: job.run },
    () => runJob
  ).pipe(Effect.provide(BackgroundRuns.layer))
})
