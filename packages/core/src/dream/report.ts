/**
 * The dream's report is memdir's, not the model's: built from the diff of the files, the backups, memdir's
 * repair of the index and the commit, and written to `.dream/<timestamp>/report.json` whether the dream
 * succeeded or failed (whatever the model changed before it failed is still reported).
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import type * as Agent from "../Agent.js"
import type { RunTrace } from "../internal/runs/trace.js"
import type * as MemoryTools from "../MemoryTools.js"
import type { DreamCommit } from "./commit.js"
import type { IndexRepair } from "./indexCaps.js"
import type { CreatedFile, DeletedFile, DreamDiff, MergedFile, UpdatedFile } from "./snapshot.js"

/** The report's name in the dream's trace directory. */
export const REPORT_FILE = "report.json"

/** What a dry run shows: exactly what the first model call would carry. */
export interface DreamPreview {
  readonly role: "dreamer"
  readonly model: string
  readonly maxTokens: number
  readonly maxTurns: number
  readonly system: string
  readonly firstMessage: string
  readonly tools: ReadonlyArray<{ readonly name: string; readonly description: string }>
}

export interface DreamReport {
  readonly memoryDir: string
  readonly startedAt: string
  readonly finishedAt: string
  readonly status: "completed" | "failed"
  readonly model: string
  readonly turns: number
  readonly stop: string
  readonly usage: { readonly inputTokens: number; readonly outputTokens: number; readonly cacheReadInputTokens: number }
  readonly created: ReadonlyArray<CreatedFile>
  readonly updated: ReadonlyArray<UpdatedFile>
  readonly merged: ReadonlyArray<MergedFile>
  readonly deleted: ReadonlyArray<DeletedFile>
  /** MEMORY.md as the dream's tools changed it. */
  readonly indexChange: DreamDiff["index"]
  /** What memdir did afterwards to put MEMORY.md back under its caps. */
  readonly index: IndexRepair | undefined
  readonly refusals: ReadonlyArray<MemoryTools.ToolRefusal>
  /** `.dream/<timestamp>` relative to the memory directory: previous versions and report.json. */
  readonly backupDir: string
  readonly commit: DreamCommit | undefined
  /** The model's closing summary. */
  readonly summary: string
  readonly error?: string | undefined
}

const sumUsage = (result: Agent.AgentResult | undefined) => ({
  inputTokens: result?.usage.inputTokens ?? 0,
  outputTokens: result?.usage.outputTokens ?? 0,
  cacheReadInputTokens: result?.usage.cacheReadInputTokens ?? 0
})

/** What the agent run ended with, as the report needs it. */
export interface DreamRun<E> {
  readonly exit: Exit.Exit<Agent.AgentResult, E>
  /** I/O failures of the dream's tools (the dream failed even if the model finished). */
  readonly ioFailures: ReadonlyArray<{ readonly error: { readonly message: string } }>
}

/** Completed: the model finished and no tool failed on I/O. */
export const runSucceeded = <E>(run: DreamRun<E>): boolean => Exit.isSuccess(run.exit) && run.ioFailures.length === 0

/** One line saying why the dream failed (the model's failure, else the first tool I/O failure). */
const failureOf = <E extends { readonly message: string }>(run: DreamRun<E>): string | undefined => {
  const exit = run.exit
  if (Exit.isSuccess(exit)) return run.ioFailures[0]?.error.message
  return Option.match(Cause.findErrorOption(exit.cause), {
    onNone: () => Cause.pretty(exit.cause),
    onSome: (e) => e.message
  })
}

/** Pure: the report from what happened. */
export const buildReport = <E extends { readonly message: string }>(input: {
  readonly memoryDir: string
  readonly startedAt: number
  readonly finishedAt: number
  readonly model: string
  readonly run: DreamRun<E>
  readonly diff: DreamDiff
  readonly backups: ReadonlyMap<string, string>
  readonly backupDir: string
  readonly index: IndexRepair | undefined
  readonly refusals: ReadonlyArray<MemoryTools.ToolRefusal>
  readonly commit: DreamCommit | undefined
}): DreamReport => {
  const result = Exit.isSuccess(input.run.exit) ? input.run.exit.value : undefined
  const failure = failureOf(input.run)
  return {
    memoryDir: input.memoryDir,
    startedAt: new Date(input.startedAt).toISOString(),
    status: runSucceeded(input.run) ? "completed" : "failed",
    model: result?.model ?? input.model,
    turns: result?.turns ?? 0,
    stop: result?.stop ?? "error",
    usage: sumUsage(result),
    created: input.diff.created,
    updated: input.diff.updated.map((u) => ({ ...u, backup: input.backups.get(u.file) })),
    merged: input.diff.merged,
    deleted: input.diff.deleted.map((d) => ({ ...d, backup: input.backups.get(d.file) })),
    indexChange: input.diff.index,
    index: input.index,
    refusals: input.refusals,
    backupDir: input.backupDir,
    summary: result?.finalText ?? "",
    ...(failure === undefined ? {} : { error: failure }),
    finishedAt: new Date(input.finishedAt).toISOString(),
    commit: input.commit
  }
}

/** `<memoryDir>/<backupDir>/report.json`, into the dream's trace directory (inside the memory directory only). */
export const writeReport = Effect.fn("Dream.writeReport")(function*(trace: RunTrace, report: DreamReport) {
  yield* trace.write(REPORT_FILE, JSON.stringify(report, null, 2) + "\n")
})
