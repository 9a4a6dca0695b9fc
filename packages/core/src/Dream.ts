/**
 * Dream: consolidation of a memory directory while nobody waits. The program reads as its steps, each in its own
 * module under `dream/`:
 *
 * - **gates** (`dream/gates.ts`): time, sessions touched since the last dream, the lock; `force` bypasses the
 *   first two, never the lock;
 * - **the dream** is an agent (`Agent.run`, role `dreamer`) over the sandboxed memory tools (`MemoryTools`, with
 *   delete, without team or log writes), plus read-only project tools and a narrow `transcript_search`
 *   (`dream/transcriptSearch.ts`) over the sessions touched since the last dream. Its prompt names four phases —
 *   orient, gather, consolidate, prune — and is data with named variants (`dream/prompt.ts`);
 * - **snapshot, diff and backups** (`dream/snapshot.ts`): the memory files before and after, what changed, and
 *   the previous version of every updated or deleted file under `<memdir>/.dream/<timestamp>/`;
 * - **the index back under its caps** (`dream/indexCaps.ts`);
 * - **one git commit** where the memory directory is the root of a git repository (`dream/commit.ts`);
 * - **the report** (`dream/report.ts`), memdir's own, in `.dream/<timestamp>/report.json`.
 *
 * Failure (model error, an I/O failure of a tool) rolls the lock back so the next run retries; whatever the model
 * changed before it failed is still backed up and reported.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Path from "effect/Path"
import type { ChildProcessSpawner } from "effect/process/ChildProcessSpawner"
import * as Agent from "./Agent.js"
import type { Containment } from "./Containment.js"
import { readRecentLogs } from "./DailyLog.js"
import { commitDream, commitMessage } from "./dream/commit.js"
import { DREAM_SCAN_FILE, type DreamGateInput, type DreamGates, evaluateGates } from "./dream/gates.js"
import { enforceIndexCaps } from "./dream/indexCaps.js"
import { orientMessage, renderDreamSystemPrompt } from "./dream/prompt.js"
import { buildReport, type DreamPreview, type DreamReport, runSucceeded, writeReport } from "./dream/report.js"
import {
  diffSnapshots,
  discardUnfinishedTrace,
  DREAM_BACKUP_DIR,
  type DreamTrace,
  keepTrace,
  reserveTrace,
  snapshotMemoryDir,
  UNTOUCHED_DIRS
} from "./dream/snapshot.js"
import { transcriptSearchTool } from "./dream/transcriptSearch.js"
import { DREAM_LOCK_FILE, DREAM_LOCK_GUARD, DreamLock, withDreamLock } from "./DreamLock.js"
import { type LockTimeoutError, type MemoryIoError, ModelError, type UnknownPromptVariantError } from "./Errors.js"
import * as Git from "./Git.js"
import { manifestLine } from "./Memory.js"
import type { MemoryFs } from "./MemoryFs.js"
import { MemoryIndex } from "./MemoryIndex.js"
import type { MemoryStore } from "./MemoryStore.js"
import * as MemoryTools from "./MemoryTools.js"
import { Model } from "./Model.js"
import { Scanner } from "./Scanner.js"

export * from "./dream/commit.js"
export * from "./dream/gates.js"
export * from "./dream/indexCaps.js"
export * from "./dream/prompt.js"
export * from "./dream/report.js"
export * from "./dream/snapshot.js"
export * from "./dream/transcriptSearch.js"

/** Model calls per dream at most, and output tokens per call. */
export const DREAM_MAX_TURNS = 20
export const DREAM_MAX_TOKENS = 8192

export interface DreamInput extends DreamGateInput {
  /** Root of the read-only project tools (verify drifted memories against the code); none: no project tools. */
  readonly projectRoot?: string | undefined
  /** Evaluate the gates and show what would be sent; write nothing and call no model. */
  readonly dryRun?: boolean | undefined
  /** Dream prompt variant (`dreamPromptVariants`). */
  readonly variant?: string | undefined
  readonly maxTurns?: number | undefined
  readonly maxTokens?: number | undefined
  /** Commit to git where the memory directory is a repository (default true). */
  readonly commit?: boolean | undefined
}

export type DreamOutcome =
  | { readonly _tag: "Stopped"; readonly gates: DreamGates }
  | { readonly _tag: "DryRun"; readonly gates: DreamGates; readonly preview: DreamPreview }
  | { readonly _tag: "Completed"; readonly gates: DreamGates; readonly report: DreamReport }

/** Everything the first model call needs (also what a dry run shows). */
const prepare = (input: DreamInput, gates: DreamGates, trace?: DreamTrace) =>
  Effect.gen(function*() {
    const index = yield* MemoryIndex
    const scanner = yield* Scanner
    const model = yield* Model
    const system = yield* Effect.fromResult(renderDreamSystemPrompt({
      memoryDir: input.memoryDir,
      now: gates.now,
      variant: input.variant
    }))
    const loaded = yield* index.load(input.memoryDir)
    const scan = yield* scanner.scan(input.memoryDir, {
      skipDirs: [...UNTOUCHED_DIRS],
      writeCache: input.dryRun !== true
    })
    const logs = yield* readRecentLogs({ memoryDir: input.memoryDir })
    const firstMessage = orientMessage({
      memoryDir: input.memoryDir,
      indexContent: loaded.content,
      manifest: scan.memories.map(manifestLine),
      problems: scan.problems.map((p) => `- ${p.path}: ${p.message}`),
      logs,
      sessions: gates.sessions,
      lastConsolidatedAt: gates.lastConsolidatedAt
    })
    const toolset = yield* MemoryTools.make({
      memoryDir: input.memoryDir,
      projectRoot: input.projectRoot,
      allowDelete: true,
      // each memory the dream replaces or deletes is kept before the change (an interrupted dream loses nothing)
      trace
    })
    const tools = [
      ...toolset.tools,
      ...(gates.sessions.length === 0 ? [] : [yield* transcriptSearchTool(gates.sessions)])
    ]
    const preview: DreamPreview = {
      role: "dreamer",
      model: model.modelFor("dreamer"),
      maxTokens: input.maxTokens ?? DREAM_MAX_TOKENS,
      maxTurns: input.maxTurns ?? DREAM_MAX_TURNS,
      system,
      firstMessage,
      tools: tools.map((tool) => ({ name: tool.definition.name, description: tool.definition.description ?? "" }))
    }
    return { preview, toolset, tools }
  })

const outcome = (value: DreamOutcome): DreamOutcome => value

/** Snapshot → agent → snapshot, diff, backups → (success) index caps and commit → report.json. Under the lock. */
const dreamLocked = (input: DreamInput, gates: DreamGates) =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const startedAt = yield* Clock.currentTimeMillis
    const memoryDir = path.resolve(input.memoryDir)
    // The trace directory's name first: the tools keep what they replace in it, and files too large to hold in
    // memory are byte-copied into it before the dream. It is created with its first file; an interrupted dream
    // takes its copies back (no empty directory).
    const reserved = yield* reserveTrace(memoryDir, startedAt)
    const { preview, tools, toolset } = yield* prepare({ ...input, memoryDir }, gates, reserved)
    return yield* dreamTraced(input, memoryDir, startedAt, preview, tools, toolset, reserved).pipe(
      Effect.onInterrupt(() => Effect.ignoreCause(discardUnfinishedTrace(reserved), { log: "Debug" }))
    )
  })

const dreamTraced = (
  input: DreamInput,
  memoryDir: string,
  startedAt: number,
  preview: DreamPreview,
  tools: ReadonlyArray<Agent.AgentTool>,
  toolset: MemoryTools.MemoryToolset,
  reserved: DreamTrace
) =>
  Effect.gen(function*() {
    const before = yield* snapshotMemoryDir(memoryDir, { copyLargeTo: reserved.largeCopies })
    const exit = yield* Effect.exit(Agent.run({
      role: "dreamer",
      system: [{ text: preview.system, cache: true }],
      messages: [{ role: "user", content: preview.firstMessage }],
      tools,
      maxTurns: preview.maxTurns,
      maxTokens: preview.maxTokens
    }))
    const after = yield* snapshotMemoryDir(memoryDir)
    const diff = diffSnapshots(before, after, new Set((yield* toolset.changes).map((c) => c.file)))
    const trace = yield* keepTrace(reserved, before, diff)
    const ioFailures = yield* toolset.ioFailures
    const run = { exit, ioFailures }
    const ok = runSucceeded(run)
    const index = ok ? yield* enforceIndexCaps(memoryDir) : undefined
    const summary = Exit.isSuccess(exit) ? exit.value.finalText : ""
    // The commit is the only step that runs git: the Git service (allow-listed environment, safe config).
    const commit = ok && input.commit !== false ?
      yield* commitDream(memoryDir, commitMessage(diff, summary)).pipe(Effect.provide(Git.layer)) :
      undefined
    const report = buildReport({
      memoryDir,
      startedAt,
      finishedAt: yield* Clock.currentTimeMillis,
      model: preview.model,
      run,
      diff,
      backups: trace.backups,
      backupDir: trace.backupDir,
      index,
      refusals: yield* toolset.refusals,
      commit
    })
    yield* writeReport(reserved, report)
    if (Exit.isFailure(exit)) return yield* Effect.failCause(exit.cause)
    if (ioFailures.length > 0) return yield* Effect.fail(ioFailures[0]!.error)
    return report
  })

/** The gates as they are after another dream took the lock between the gate and now. */
const lostRace = (memoryDir: string, gates: DreamGates) =>
  Effect.gen(function*() {
    const lockState = yield* (yield* DreamLock).inspect(memoryDir)
    const raced: DreamGates = {
      ...gates,
      open: false,
      stoppedBy: "lock",
      lock: lockState,
      checks: gates.checks.map((c) =>
        c.gate === "lock" ? { ...c, status: "failed", detail: `taken by pid ${lockState.holder} meanwhile` } : c
      )
    }
    return raced
  })

/**
 * Run the dream program: gates → (dry run: preview) → lock → snapshot → agent → diff, backups, report → index
 * caps → git commit → release. Fails with `ModelError` (not-configured without a key, or the model's failure),
 * or the I/O failure of a tool or of memdir itself; the lock is then rolled back.
 */
export const runDream = Effect.fn("Dream.run")(function*(input: DreamInput) {
  const model = yield* Model
  const dryRun = input.dryRun === true
  const gates = yield* evaluateGates({ ...input, writeCache: !dryRun && input.writeCache !== false })
  if (!gates.open) return outcome({ _tag: "Stopped", gates })
  if (dryRun) {
    const { preview } = yield* prepare(input, gates)
    return outcome({ _tag: "DryRun", gates, preview })
  }
  if (!model.available) {
    return yield* new ModelError({
      kind: "not-configured",
      role: "dreamer",
      model: model.modelFor("dreamer"),
      detail: "The gates are open; `memdir dream --dry-run` shows what would be sent."
    })
  }
  const ran = yield* withDreamLock(input.memoryDir, () => dreamLocked(input, gates))
  if (Option.isNone(ran)) return outcome({ _tag: "Stopped", gates: yield* lostRace(input.memoryDir, gates) })
  return outcome({ _tag: "Completed", gates, report: ran.value })
})

export type DreamError = ModelError | MemoryIoError | LockTimeoutError | UnknownPromptVariantError

/** Files of memdir's own in the memory directory that are not memories (for callers listing the directory). */
export const DREAM_STATE_FILES: ReadonlyArray<string> = [
  DREAM_LOCK_FILE,
  DREAM_LOCK_GUARD,
  DREAM_SCAN_FILE,
  DREAM_BACKUP_DIR
]

/** What `runDream` needs: its files go through `MemoryFs` (snapshots, backups, the lock, the commit's paths). */
export type DreamRequirements =
  | DreamLock
  | Model
  | MemoryIndex
  | Scanner
  | MemoryStore
  | Containment
  | MemoryFs
  | Path.Path
  | ChildProcessSpawner
