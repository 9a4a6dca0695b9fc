/**
 * `memdir doctor`'s "background runs" section (docs/hooks.md#background-runs): the last runs of the job the
 * `Stop` / `SessionEnd` hooks start, what they did, whether they failed and how to fix it. Read from the trace
 * `BackgroundRuns` keeps in the memory directory; quiet when there is none.
 */
import * as BackgroundRuns from "@memdir/core/BackgroundRuns"
import * as Effect from "effect/Effect"
import { terminalLine } from "./Terminal.js"

/** Runs shown in the text report (`--json` gives `RUNS_READ`). */
export const RUNS_SHOWN = 5
const RUNS_READ = 10

export interface BackgroundRunsReport {
  /** Newest first. */
  readonly runs: ReadonlyArray<BackgroundRuns.BackgroundRun>
  /** How many of the newest runs failed or died in a row. */
  readonly failingInARow: number
  /** The warning, when the last run failed or died. */
  readonly warning?: string | undefined
  /** What to do about the last run's failure. */
  readonly fix?: string | undefined
  /** The last lines of the job's stderr file (redacted), shown when the last run died. */
  readonly stderrTail?: string | undefined
  /** The trace could not be read (not a regular file, no permission). */
  readonly unreadable?: string | undefined
}

const failed = (run: BackgroundRuns.BackgroundRun) => run.state === "failed" || run.state === "died"

/** The report; `undefined` when there are no runs (the section is left out). */
export const backgroundRunsReport = (memoryDir: string) =>
  Effect.gen(function*() {
    const runs = yield* BackgroundRuns.BackgroundRuns
    const recent = yield* runs.recent(memoryDir, RUNS_READ)
    if (recent.runs.length === 0) return undefined
    const failingInARow = recent.runs.findIndex((run) => !failed(run))
    const inARow = failingInARow === -1 ? recent.runs.length : failingInARow
    const last = recent.runs[0]!
    const ofLast = recent.runs.filter(failed).length
    const warning = !failed(last) ?
      undefined :
      inARow > 1 ?
      `the last ${inARow} background runs failed` :
      last.state === "died" ?
      "the last background run died before it could finish (killed, out of memory, or a crash): see its stderr below" :
      recent.runs.length === 1 ?
      "the last background run failed" :
      `the last background run failed (${ofLast} of the last ${recent.runs.length})`
    const fix = last.failure === undefined ? undefined : BackgroundRuns.fixHint(last.failure)
    return {
      runs: recent.runs,
      failingInARow: inARow,
      ...(warning === undefined ? {} : { warning }),
      ...(fix === undefined ? {} : { fix }),
      // what the process printed is the only word from a run that died; a failed run's own line says more
      ...(last.state === "died" && recent.stderrTail !== undefined ? { stderrTail: recent.stderrTail } : {})
    } satisfies BackgroundRunsReport
  }).pipe(
    Effect.catch((error) =>
      Effect.succeed<BackgroundRunsReport>({ runs: [], failingInARow: 0, unreadable: error.message })
    ),
    Effect.provide(BackgroundRuns.layer)
  )

const when = (ms: number | undefined) =>
  ms === undefined ? "(time unknown)        " : `${new Date(ms).toISOString().slice(0, 19).replace("T", " ")} UTC`

const failureText = (failure: BackgroundRuns.RunFailure) =>
  `${failure.tag}${failure.kind === undefined ? "" : ` ${failure.kind}`}: ${failure.message}`

const extractionText = (note: BackgroundRuns.ExtractionNote) =>
  note.status === "failed" && note.failure !== undefined ?
    `extraction failed (${failureText(note.failure)})` :
    note.status === "skipped-main-agent-wrote" ?
    "extraction: skipped (the agent wrote memory itself)" :
    `extraction: ${note.messagesRead} messages read, ${note.written} written` +
    (note.refused > 0 ? `, ${note.refused} refused` : "")

const dreamText = (note: BackgroundRuns.DreamNote) =>
  note.ran ?
    `dream ${note.status ?? "ran"}: ${note.created ?? 0} created, ${note.updated ?? 0} updated, ` +
    `${note.merged ?? 0} merged, ${note.deleted ?? 0} deleted` :
    `dream: not due${note.stoppedBy === undefined ? "" : ` (${note.stoppedBy}: ${note.reason ?? ""})`}`

/** One run in one line: when, its state, what ran, and its failure. */
export const runLine = (run: BackgroundRuns.BackgroundRun): string => {
  const parts = [
    ...(run.extraction === undefined ? [] : [extractionText(run.extraction)]),
    ...(run.dream === undefined ? [] : [dreamText(run.dream)]),
    ...(run.failure !== undefined &&
        (run.extraction?.failure === undefined || failureText(run.failure) !== failureText(run.extraction.failure)) ?
      [failureText(run.failure)] :
      []),
    ...(run.state === "died" ? ["never finished (killed, out of memory or a crash)"] : []),
    ...(run.state === "running" ? ["still running"] : []),
    ...(run.warnings === undefined || run.warnings.length === 0 || run.state !== "ok" ? [] : [run.warnings[0]!])
  ]
  return `  ${when(run.startedAt ?? run.endedAt)}  ${run.state.padEnd(7)}  ${terminalLine(parts.join("; "))}`
}

/** The section as text lines (empty when there are no runs). */
export const backgroundRunsLines = (report: BackgroundRunsReport | undefined): Array<string> => {
  if (report === undefined) return []
  if (report.unreadable !== undefined) {
    return ["", `background runs: the trace could not be read: ${terminalLine(report.unreadable)}`]
  }
  return [
    "",
    `background runs (newest first; ${BackgroundRuns.RUNS_DIR}/${BackgroundRuns.RUNS_FILE}):`,
    ...report.runs.slice(0, RUNS_SHOWN).map(runLine),
    ...(report.warning === undefined ? [] : [`warning: ${terminalLine(report.warning)}`]),
    ...(report.fix === undefined ? [] : [`  fix: ${terminalLine(report.fix)}`]),
    ...(report.stderrTail === undefined ?
      [] :
      [
        `  its stderr (${BackgroundRuns.RUNS_DIR}/${BackgroundRuns.STDERR_FILE}, last lines):`,
        ...report.stderrTail.split("\n").map((line) => `    ${terminalLine(line)}`)
      ])
  ]
}
