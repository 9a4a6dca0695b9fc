/**
 * `memdir dream`: consolidate the memory directory. Evaluates the gates (24 h, > 5 sessions, lock) and
 * prints the one that stopped it, or runs the dream and prints memdir's report of every file created, updated,
 * merged or deleted, with the text removed. `--dry-run` writes nothing and shows what would be sent.
 */
import * as Dream from "@memdir/core/Dream"
import { DreamLock, type DreamLockState } from "@memdir/core/DreamLock"
import { Settings } from "@memdir/core/Settings"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as NodePath from "node:path"
import { common, jsonOption, locate, requireEnabled, switchFlag } from "../Common.js"
import { makeModelCalls, type ModelCalls, withModelProgress } from "../ModelProgress.js"
import { InterruptNote, printJson } from "../Output.js"
import { memdirHandler } from "../Services.js"

const indent = (text: string, prefix: string): Array<string> =>
  text.replace(/\n$/, "").split("\n").map((line) => `${prefix}${line}`)

const printGates = (gates: Dream.DreamGates, transcriptsDir: string) =>
  Effect.gen(function*() {
    for (const check of gates.checks) {
      yield* Console.log(`  ${check.gate.padEnd(8)} ${check.status}${check.detail === "" ? "" : `: ${check.detail}`}`)
    }
    yield* Console.log(`  (sessions are the *.jsonl transcripts in ${transcriptsDir})`)
  })

const printReport = (report: Dream.DreamReport) =>
  Effect.gen(function*() {
    yield* Console.log(`dream: consolidated ${report.memoryDir} in ${report.turns} turns (${report.model})`)
    const mergedInto = new Map(report.merged.map((m) => [m.from, m.into]))
    for (const c of report.created) yield* Console.log(`created  ${c.file}${c.byDream ? "" : " (by another session)"}`)
    for (const u of report.updated) {
      yield* Console.log(
        `updated  ${u.file}${u.byDream ? "" : " (by another session)"}` +
          (u.backup === undefined ? "" : ` (previous: ${u.backup})`)
      )
      for (const line of [...indent(u.removed, "  - "), ...indent(u.added, "  + ")]) {
        if (line.trim() !== "-" && line.trim() !== "+") yield* Console.log(line)
      }
    }
    for (const d of report.deleted) {
      const into = mergedInto.get(d.file)
      yield* Console.log(
        `${into === undefined ? "deleted " : "merged  "} ${d.file}${into === undefined ? "" : ` → ${into}`}` +
          (d.backup === undefined ? "" : ` (copy: ${d.backup})`)
      )
      for (const line of indent(d.text ?? "(too large to show: see the copy)", "  | ")) yield* Console.log(line)
    }
    if (report.index !== undefined) {
      const removed = report.index.removed.length
      yield* Console.log(
        `index: ${removed} line${removed === 1 ? "" : "s"} removed, ${report.index.written.length} written; ` +
          `now ${report.index.lines} lines / ${report.index.bytes} bytes` +
          (report.index.underCaps ? " (under its caps)" : " (STILL OVER ITS CAPS)")
      )
      for (const r of report.index.removed) yield* Console.log(`  - ${r.line}   [${r.reason}]`)
    }
    for (const r of report.refusals) yield* Console.log(`refused  ${r.tool} ${r.path}: ${r.reason}`)
    const commit = report.commit
    if (commit !== undefined) {
      yield* Console.log(
        commit.status === "committed" ?
          `commit: ${commit.sha.slice(0, 12)}` :
          commit.status === "skipped" ?
          `commit: skipped (${commit.reason})` :
          `commit: FAILED (${commit.detail})`
      )
    }
    yield* Console.log(`report: ${NodePath.join(report.memoryDir, report.backupDir, "report.json")}`)
    if (report.summary.trim() !== "") yield* Console.log(`\n${report.summary.trim()}`)
  })

/**
 * What a dream a signal stopped kept: the dream lock as it is now, after its rollback ran (compared with before
 * the dream), and whether the dreamer could have changed a memory (its tools run only after a model answer).
 */
const interruptedDream = (memoryDir: string, before: DreamLockState, calls: ModelCalls) =>
  Effect.gen(function*() {
    const answered = yield* Ref.get(calls.answered)
    const memories = answered === 0 ?
      "no memory was changed" :
      `the dreamer had answered ${answered} model call${answered === 1 ? "" : "s"}: changes it made before the ` +
      "signal stay, with no report or backup (`memdir ls` and `memdir doctor` show the memories as they are)"
    const after = yield* (yield* DreamLock).inspect(memoryDir).pipe(Effect.result)
    if (after._tag === "Failure") return `${memories}; the dream lock could not be read: ${after.failure.message}`
    const lock = after.success
    if (lock.holder === process.pid) {
      return `${memories}; the dream lock ${lock.path} still names this process (pid ${lock.holder}): the next ` +
        "dream takes it over once this process has exited"
    }
    const counted = lock.lastConsolidatedAt === before.lastConsolidatedAt ?
      "this dream does not count as a consolidation" :
      "its time of the last consolidation changed meanwhile (another dream?)"
    return `the dream lock was released and ${counted}; ${memories}`
  })

export const dreamCommand = Command.make(
  "dream",
  {
    ...common,
    json: jsonOption,
    force: switchFlag("force").pipe(
      Flag.withDescription("Run even if under 24 h or 5 sessions since the last dream (never while it is locked)")
    ),
    dryRun: switchFlag("dry-run").pipe(
      Flag.withDescription("Evaluate the gates and show what would be sent; write nothing, call no model")
    ),
    transcripts: Flag.Directory("transcripts").pipe(
      Flag.withDescription(
        "Where session transcripts (*.jsonl) are (default: MEMDIR_TRANSCRIPTS_DIR, else <MEMDIR_HOME>/projects/<project>/)"
      ),
      Flag.optional
    ),
    sessionId: Flag.String("session-id").pipe(
      Flag.withMetavar("ID"),
      Flag.withDescription("The current session, not counted by the session gate (default: MEMDIR_SESSION_ID)"),
      Flag.optional
    ),
    variant: Flag.String("variant").pipe(
      Flag.withMetavar("NAME"),
      Flag.withDescription("Dream prompt variant (for evals)"),
      Flag.optional
    ),
    maxTurns: Flag.Int("max-turns").pipe(
      Flag.withDescription(`Model calls at most (default ${Dream.DREAM_MAX_TURNS})`),
      Flag.optional
    ),
    noCommit: switchFlag("no-commit").pipe(
      Flag.withDescription("Do not commit the dream when the memory directory is a git repository")
    )
  },
  memdirHandler((args) =>
    Effect.gen(function*() {
      const location = yield* locate(args.cwd)
      yield* requireEnabled(location)
      const settings = yield* Settings
      const env = yield* Dream.dreamEnv
      const transcriptsDir = Option.getOrElse(
        Option.orElse(args.transcripts, () => env.transcriptsDir),
        () => Dream.defaultTranscriptsDir(settings.env.memoryBase, location.root.root)
      )
      const note = yield* InterruptNote
      const calls = yield* makeModelCalls
      const lockBefore = yield* (yield* DreamLock).inspect(location.memoryDir)
      const outcome = yield* Dream.runDream({
        memoryDir: location.memoryDir,
        transcriptsDir: NodePath.resolve(transcriptsDir),
        currentSessionId: Option.getOrUndefined(Option.orElse(args.sessionId, () => env.sessionId)),
        projectRoot: location.root.root,
        force: args.force,
        dryRun: args.dryRun,
        variant: Option.getOrUndefined(args.variant),
        maxTurns: Option.getOrUndefined(args.maxTurns),
        commit: !args.noCommit
      }).pipe(
        withModelProgress("dream", calls),
        // runs after the dream's own finalizers (its lock rolled back)
        Effect.onInterrupt(() =>
          Effect.flatMap(interruptedDream(location.memoryDir, lockBefore, calls), (kept) =>
            Ref.set(note, Option.some(kept)))
        )
      )
      if (args.json) {
        return yield* printJson({
          ran: outcome._tag === "Completed",
          dryRun: outcome._tag === "DryRun",
          stoppedBy: outcome.gates.stoppedBy ?? null,
          transcriptsDir,
          gates: outcome.gates,
          ...(outcome._tag === "DryRun" ? { preview: outcome.preview } : {}),
          ...(outcome._tag === "Completed" ? { report: outcome.report } : {})
        })
      }
      switch (outcome._tag) {
        case "Stopped": {
          const check = outcome.gates.checks.find((c) =>
            c.gate === outcome.gates.stoppedBy
          )
          yield* Console.log(`dream: not now — stopped by the ${outcome.gates.stoppedBy} gate: ${check?.detail ?? ""}`)
          return yield* printGates(outcome.gates, transcriptsDir)
        }
        case "DryRun": {
          const p = outcome.preview
          yield* Console.log(`dream: dry run — the gates are open${outcome.gates.forced ? " (forced)" : ""}`)
          yield* printGates(outcome.gates, transcriptsDir)
          yield* Console.log(
            `\nwould send to ${p.model} (role ${p.role}, at most ${p.maxTurns} calls × ${p.maxTokens} output tokens), ` +
              `tools: ${p.tools.map((t) => t.name).join(", ")}\n`
          )
          yield* Console.log(`--- system ---\n${p.system}\n\n--- first message ---\n${p.firstMessage}`)
          return
        }
        case "Completed":
          return yield* printReport(outcome.report)
      }
    })
  )
).pipe(
  Command.withDescription(
    "Consolidate memory (merge duplicates, resolve contradictions, date relative dates, prune the index) when due"
  )
)
