/**
 * The activity view of `memdir ui` (docs/ui.md): what memory gave the agents' sessions, what extraction saved, and
 * the background runs that failed, from the records memdir keeps in the memory directory:
 *
 * - each session's record (`HookSessionState`, `.sessions/<id>.json`): every time the hook or the MCP server gave
 *   it memories, when, which, and (when the door says so) the event and the start of the prompt or query;
 * - each extraction run that saved something (`.extract/<session>/<stamp>/report.json`, `Extract.ExtractReport`);
 * - the hooks' background-run log (`BackgroundRuns`, `.runs/background.jsonl`): extraction runs that saved nothing
 *   or failed, and every failed or dead run.
 *
 * Every record is read bounded through `MemoryFs` inside the memory directory; one that is missing is an empty
 * list, one that cannot be read is counted in `unreadable`, never a failure of the view.
 */
import * as BackgroundRuns from "@memdir/core/BackgroundRuns"
import * as Backups from "@memdir/core/Backups"
import { CURSOR_DIR, EXTRACT_REPORT_FILE } from "@memdir/core/Extract"
import * as HookSessionState from "@memdir/core/HookSessionState"
import { MemoryFs } from "@memdir/core/MemoryFs"
import type { MemoryRoot } from "@memdir/core/MemoryStore"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as NodePath from "node:path"

/** Entries of each list at most. */
export const ACTIVITY_MAX = 500
/** Session records read at most (the most recently updated). */
const SESSIONS_READ = 100
/** An extraction report is a few hundred bytes per change. */
const REPORT_MAX_BYTES = 256 * 1024

// ---------------------------------------------------------------------------------------------------------------
// Shapes
// ---------------------------------------------------------------------------------------------------------------

export const InjectionView = Schema.Struct({
  /** ISO 8601. */
  at: Schema.String,
  session: Schema.String,
  /** `UserPromptSubmit`, `mcp memory_recall`, `mcp memory_read`; `hook` when the record does not say. */
  event: Schema.String,
  /** The start of the prompt or query (one line, at most 200 characters, secrets redacted), when recorded. */
  prompt: Schema.optionalKey(Schema.String),
  /** The memories given (relative to the memory directory). */
  memories: Schema.Array(Schema.String)
})
export type InjectionView = typeof InjectionView.Type

export const ExtractionView = Schema.Struct({
  at: Schema.String,
  ok: Schema.Boolean,
  /** Memories it created or updated. */
  saved: Schema.Array(Schema.String),
  /** Memories it deleted. */
  deleted: Schema.Array(Schema.String),
  session: Schema.optionalKey(Schema.String),
  /** Messages of the conversation it read, when known. */
  messagesRead: Schema.optionalKey(Schema.Int),
  /** Memory writes its sandbox refused. */
  refused: Schema.optionalKey(Schema.Int),
  /** `report`: the run's own report; `run-log`: the background-run log (no paths, a count and the outcome). */
  from: Schema.Literals(["report", "run-log"]),
  /** What happened, in words, when there is more to say than `saved` (skipped, nothing new, how many). */
  note: Schema.optionalKey(Schema.String),
  error: Schema.optionalKey(Schema.String)
})
export type ExtractionView = typeof ExtractionView.Type

export const BackgroundFailure = Schema.Struct({
  at: Schema.String,
  /** What failed: `extraction`, `dream`, or `background job` (before either started, or the job as a whole). */
  kind: Schema.String,
  /** `failed` (it said why) or `died` (it never wrote its end: killed, out of memory, a crash). */
  state: Schema.Literals(["failed", "died"]),
  session: Schema.String,
  error: Schema.String,
  /** What to do about it, when memdir knows. */
  fix: Schema.optionalKey(Schema.String)
})
export type BackgroundFailure = typeof BackgroundFailure.Type

export const Activity = Schema.Struct({
  injections: Schema.Array(InjectionView),
  extractions: Schema.Array(ExtractionView),
  backgroundFailures: Schema.Array(BackgroundFailure),
  /** Records that exist but cannot be read (corrupt, or not memdir's): their entries are missing above. */
  unreadable: Schema.Array(Schema.String)
})
export type Activity = typeof Activity.Type

/** The background-run log as the view reads it. */
interface RecentRuns {
  readonly runs: ReadonlyArray<BackgroundRuns.BackgroundRun>
  readonly stderrTail?: string | undefined
  readonly unreadable?: string | undefined
}

export interface ActivityOptions {
  /** At most this many entries in each list, the newest (default 50, at most `ACTIVITY_MAX`). */
  readonly limit?: number | undefined
}

// ---------------------------------------------------------------------------------------------------------------
// Injections
// ---------------------------------------------------------------------------------------------------------------

const iso = (ms: number) => new Date(ms).toISOString()

const injectionsOf = (memoryDir: string, limit: number) =>
  Effect.gen(function*() {
    const state = yield* HookSessionState.HookSessionState
    const { sessions, unreadable } = yield* state.sessions(memoryDir, SESSIONS_READ)
    const all = sessions.flatMap((record) =>
      record.injections.map((injection) => ({
        ms: injection.at,
        view: {
          at: iso(injection.at),
          session: record.sessionId,
          event: injection.event ?? "hook",
          ...(injection.prompt === undefined ? {} : { prompt: injection.prompt }),
          memories: injection.paths
        } satisfies InjectionView
      }))
    ).sort((a, b) => b.ms - a.ms)
    return {
      injections: all.slice(0, limit).map((i) => i.view),
      unreadable: unreadable === 0 ?
        [] :
        [`${unreadable} session record${unreadable === 1 ? "" : "s"} in ${HookSessionState.SESSIONS_DIR}/`]
    }
  }).pipe(
    // `.sessions/` that cannot be listed (its permissions): said, and the rest of the view is still shown
    Effect.catchTag("MemoryIoError", (error) =>
      Effect.succeed({
        injections: [] as Array<InjectionView>,
        unreadable: [`${HookSessionState.SESSIONS_DIR}/: ${error.message}`]
      })),
    Effect.provide(HookSessionState.layer)
  )

// ---------------------------------------------------------------------------------------------------------------
// Extractions
// ---------------------------------------------------------------------------------------------------------------

const ReportFields = Schema.Struct({
  at: Schema.String,
  sessionId: Schema.String,
  range: Schema.Struct({ from: Schema.Number, to: Schema.Number, total: Schema.Number }),
  changes: Schema.Array(Schema.Struct({ op: Schema.Literals(["created", "updated", "deleted"]), file: Schema.String })),
  refused: Schema.Number
})
const decodeReport = Schema.decodeUnknownOption(Schema.fromJsonString(ReportFields))

/** Every extraction run directory (`.extract/<session>/<stamp>`), newest first. */
const extractionRuns = (fs: MemoryFs["Service"], root: string) =>
  Effect.gen(function*() {
    const dirsOf = (dir: string) =>
      fs.readDirectory(dir).pipe(
        Effect.map((entries) => entries.filter((e) => e.kind === "Directory").map((e) => e.name)),
        Effect.orElseSucceed((): ReadonlyArray<string> => [])
      )
    const runs: Array<{ readonly dir: string; readonly at: number; readonly n: number }> = []
    for (const session of yield* dirsOf(NodePath.join(root, CURSOR_DIR))) {
      for (const name of yield* dirsOf(NodePath.join(root, CURSOR_DIR, session))) {
        const stamp = Backups.parseStamp(name)
        if (stamp !== undefined) runs.push({ dir: `${CURSOR_DIR}/${session}/${name}`, ...stamp })
      }
    }
    return runs.sort((a, b) => b.at - a.at || b.n - a.n)
  })

const reportedExtractions = (memoryDir: string, limit: number) =>
  Effect.gen(function*() {
    const fs = yield* MemoryFs
    const root = yield* fs.realPathOfDeepestExisting(NodePath.resolve(memoryDir))
    const extractions: Array<{ readonly ms: number; readonly view: ExtractionView }> = []
    const unreadable: Array<string> = []
    for (const run of yield* extractionRuns(fs, root)) {
      if (extractions.length >= limit) break
      const file = `${run.dir}/${EXTRACT_REPORT_FILE}`
      const read = yield* fs.readFile(NodePath.join(root, ...file.split("/")), {
        maxBytes: REPORT_MAX_BYTES,
        within: root
      })
        .pipe(Effect.option)
      // a run of an older memdir keeps backups only: nothing to say what it saved
      if (Option.isNone(read)) continue
      const report = decodeReport(read.value.text)
      if (Option.isNone(report)) {
        unreadable.push(file)
        continue
      }
      const r = report.value
      const ms = Date.parse(r.at)
      extractions.push({
        ms: Number.isNaN(ms) ? run.at : ms,
        view: {
          at: Number.isNaN(ms) ? iso(run.at) : iso(ms),
          ok: true,
          saved: [...new Set(r.changes.filter((c) => c.op !== "deleted").map((c) => c.file))],
          deleted: [...new Set(r.changes.filter((c) => c.op === "deleted").map((c) => c.file))],
          session: r.sessionId,
          messagesRead: Math.max(0, r.range.to - r.range.from),
          refused: r.refused,
          from: "report"
        }
      })
    }
    return { extractions, unreadable }
  }).pipe(
    Effect.catchTag("MemoryFsError", () => Effect.succeed({ extractions: [], unreadable: [] as Array<string> }))
  )

const failureText = (failure: BackgroundRuns.RunFailure): string =>
  `${failure.tag}${failure.kind === undefined ? "" : ` (${failure.kind})`}: ${failure.message}`

/** Pure: what the run log adds: extraction runs that failed or saved nothing, those no report covers. */
export const extractionsFromRuns = (
  runs: ReadonlyArray<BackgroundRuns.BackgroundRun>,
  reported: ReadonlyArray<{ readonly ms: number; readonly view: ExtractionView }>
): Array<{ readonly ms: number; readonly view: ExtractionView }> =>
  runs.flatMap((run) => {
    const note = run.extraction
    if (note === undefined || note.status === "up-to-date") return []
    const at = run.startedAt ?? run.endedAt ?? 0
    const end = run.endedAt ?? at
    // its reports tell what it saved, by name
    const covered = reported.some((r) => r.view.session === run.session && r.ms >= at - 1_000 && r.ms <= end + 1_000)
    if (note.status !== "failed" && note.written > 0 && covered) return []
    const view: ExtractionView = {
      at: iso(at),
      ok: note.status !== "failed",
      saved: [],
      deleted: [],
      session: run.session,
      messagesRead: note.messagesRead,
      refused: note.refused,
      from: "run-log",
      ...(note.status === "skipped-main-agent-wrote" ?
        { note: "skipped: the agent wrote memory itself in those messages" } :
        note.status === "failed" ?
        {} :
        { note: note.written === 0 ? "read the new messages, saved nothing" : `${note.written} changes` }),
      ...(note.failure === undefined ? {} : { error: failureText(note.failure) })
    }
    return [{ ms: at, view }]
  })

// ---------------------------------------------------------------------------------------------------------------
// Background failures
// ---------------------------------------------------------------------------------------------------------------

/** Pure: the failed and dead runs, newest first, each with what failed and what to do. */
export const failuresOf = (
  runs: ReadonlyArray<BackgroundRuns.BackgroundRun>,
  stderrTail: string | undefined
): Array<BackgroundFailure> =>
  runs.flatMap((run, i) => {
    if (run.state !== "failed" && run.state !== "died") return []
    const failure = run.failure ?? run.extraction?.failure
    // the job extracts, then runs the dream: a failure after a finished extraction is the dream's (its gates,
    // its lock, its run)
    const kind = run.extraction?.failure !== undefined ?
      "extraction" :
      run.dream !== undefined || run.extraction !== undefined ?
      "dream" :
      "background job"
    const error = failure !== undefined ?
      failureText(failure) :
      run.state === "died" ?
      "never finished (killed, out of memory or a crash)" +
      (i === 0 && stderrTail !== undefined ? `; its stderr: ${stderrTail.split("\n").slice(-1)[0]}` : "") :
      "failed without a message"
    const fix = failure === undefined ? undefined : BackgroundRuns.fixHint(failure)
    return [{
      at: iso(run.startedAt ?? run.endedAt ?? 0),
      kind,
      state: run.state,
      session: run.session,
      error,
      ...(fix === undefined ? {} : { fix })
    }]
  })

// ---------------------------------------------------------------------------------------------------------------
// The view
// ---------------------------------------------------------------------------------------------------------------

/**
 * What memory did lately, newest first: the memories given to each session (and for which prompt, when recorded),
 * what each extraction saved, and the background runs that failed. Fails only when the memory directory itself
 * cannot be resolved (`MemoryIoError`); a missing record is an empty list.
 */
export const recentActivity = Effect.fn("ui.recentActivity")(
  function*(root: MemoryRoot, options: ActivityOptions = {}) {
    const limit = Math.max(0, Math.min(ACTIVITY_MAX, Math.floor(options.limit ?? 50)))
    const injected = yield* injectionsOf(root.memoryDir, limit)
    const reported = yield* reportedExtractions(root.memoryDir, limit)
    const recent: RecentRuns = yield* Effect.flatMap(
      BackgroundRuns.BackgroundRuns,
      (runs) => runs.recent(root.memoryDir, BackgroundRuns.MAX_RUNS)
    ).pipe(
      Effect.map((r): RecentRuns => r),
      Effect.catchTag("MemoryIoError", (error) => Effect.succeed<RecentRuns>({ runs: [], unreadable: error.message })),
      Effect.provide(BackgroundRuns.layer)
    )
    const extractions = [...reported.extractions, ...extractionsFromRuns(recent.runs, reported.extractions)]
      .sort((a, b) => b.ms - a.ms)
      .slice(0, limit)
      .map((e) => e.view)
    const result: Activity = {
      injections: injected.injections,
      extractions,
      backgroundFailures: failuresOf(recent.runs, recent.stderrTail).slice(0, limit),
      unreadable: [
        ...injected.unreadable,
        ...reported.unreadable,
        ...(recent.unreadable === undefined
          ? []
          : [`${BackgroundRuns.RUNS_DIR}/${BackgroundRuns.RUNS_FILE}: ${recent.unreadable}`])
      ]
    }
    return result
  }
)
