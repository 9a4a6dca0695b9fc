/**
 * The health view of `memdir ui` (docs/ui.md): `memdir doctor`'s findings (its own checks, `Doctor.diagnose`), the
 * hooks' background runs as doctor reports them, records memdir keeps that cannot be read, and the state of team
 * sync (what is not yet shared, what came in at the last sync, conflicts waiting for a person).
 *
 * `applyFix` runs only what `memdir doctor --fix` runs (`Doctor.fix`, which edits only MEMORY.md and backs it up
 * under `.doctor/` first): one finding's repair, or all of them (`ALL_SAFE_FIXES`). git runs only through the `Git`
 * service, and never over the network: the view reads what the last sync left.
 */
import * as BackgroundRuns from "@memdir/core/BackgroundRuns"
import * as Doctor from "@memdir/core/Doctor"
import * as Git from "@memdir/core/Git"
import { MemoryFs } from "@memdir/core/MemoryFs"
import type { MemoryRoot } from "@memdir/core/MemoryStore"
import { INCOMING_REF, TEAM_GIT_DIR } from "@memdir/core/TeamSync"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as NodePath from "node:path"
import { type BackgroundRunsReport, backgroundRunsReport } from "../../BackgroundRunsReport.js"
import { recentActivity } from "./activity.js"
import { lastDreams } from "./history.js"

/** The fix id that applies every safe repair at once (what `memdir doctor --fix` does). */
export const ALL_SAFE_FIXES = "doctor:all"
/** Paths listed per team list at most (pending changes, conflicts). */
const TEAM_LIST_MAX = 200
/** Session records and extraction reports looked at for one that cannot be read. */
const ACTIVITY_CHECKED = 100
/** Dreams looked at for an unreadable report. */
const DREAMS_CHECKED = 20
/** A background-run log is read up to this size (`BackgroundRuns` keeps it under 64 KiB). */
const RUN_LOG_MAX_BYTES = 4 * BackgroundRuns.MAX_LOG_BYTES

// ---------------------------------------------------------------------------------------------------------------
// Shapes
// ---------------------------------------------------------------------------------------------------------------

export const Fix = Schema.Struct({
  /** What `applyFix` takes. */
  id: Schema.String,
  /** What the fix does (for a finding doctor cannot repair: what a person should do). */
  description: Schema.String,
  /** `applyFix` runs it (one of `memdir doctor --fix`'s repairs); false: advice only. */
  safe: Schema.Boolean
})
export type Fix = typeof Fix.Type

export const Finding = Schema.Struct({
  /** Stable while the directory does not change: `doctor:<code>:<line>:<path>`, `runs:…`, `record:…`. */
  id: Schema.String,
  severity: Schema.Literals(["error", "warning", "info"]),
  /** Doctor's code (`dead-link`…), or `background-runs`, `record-unreadable`. */
  code: Schema.String,
  /** Where, as a person looks for it (`MEMORY.md:4`, `feedback_x.md:3`), when it has a place. */
  where: Schema.optionalKey(Schema.String),
  /** The memory concerned (relative to the memory directory), when there is one. */
  path: Schema.optionalKey(Schema.String),
  message: Schema.String,
  fix: Schema.optionalKey(Fix)
})
export type Finding = typeof Finding.Type

export const TeamState = Schema.Struct({
  enabled: Schema.Boolean,
  /** False: team memory was never synced here (no clone yet). */
  synced: Schema.Boolean,
  /** Commits here the remote did not have when last seen (a sync whose push failed leaves them here). */
  ahead: Schema.Int,
  /** Commits the remote had when last fetched that are not here (a sync that refused them leaves them out). */
  behind: Schema.Int,
  /** Team memories changed here since the last sync (`memdir team sync` shares them). */
  pending: Schema.Array(Schema.String),
  /** Teammates' versions kept beside ours (`x.conflict-<sha>.md`) until someone merges them. */
  conflicts: Schema.Array(Schema.String),
  /** When a sync last ran here (every sync rewrites the clone's configuration first), ISO 8601. */
  lastSync: Schema.optionalKey(Schema.String),
  /** The commit team memory is at here. */
  head: Schema.optionalKey(Schema.String)
})
export type TeamState = typeof TeamState.Type

export const Health = Schema.Struct({
  /** Errors first, then warnings, then the rest; doctor's in its order within each. */
  findings: Schema.Array(Finding),
  summary: Schema.Struct({ errors: Schema.Int, warnings: Schema.Int, infos: Schema.Int, fixable: Schema.Int }),
  team: Schema.optionalKey(TeamState)
})
export type Health = typeof Health.Type

export const FixResult = Schema.Struct({
  applied: Schema.Boolean,
  message: Schema.String,
  /** What changed in MEMORY.md, one line each. */
  changes: Schema.Array(Schema.String),
  /** Where the previous MEMORY.md was kept (relative to the memory directory), when it was rewritten. */
  backup: Schema.optionalKey(Schema.String)
})
export type FixResult = typeof FixResult.Type

// ---------------------------------------------------------------------------------------------------------------
// Findings
// ---------------------------------------------------------------------------------------------------------------

/** A doctor finding's id: its code, its line and its path (last: a path may hold any character). */
export const findingId = (f: Pick<Doctor.DoctorFinding, "code" | "line" | "path">): string =>
  `doctor:${f.code}:${f.line ?? ""}:${f.path ?? ""}`

/** Whether the change `Doctor.fix` would make is the repair of finding `f`. */
const repairs = (f: Doctor.DoctorFinding) => (change: Pick<Doctor.DoctorChange, "code" | "path" | "line">) =>
  change.code === f.code && change.path === f.path && (f.line === undefined || change.line === f.line)

const doctorFinding = (f: Doctor.DoctorFinding): Finding => {
  const where = Doctor.locationOf(f)
  const id = findingId(f)
  return {
    id,
    severity: f.severity,
    code: f.code,
    ...(where === undefined ? {} : { where }),
    ...(f.path === undefined ? {} : { path: f.path }),
    message: f.message,
    fix: { id, description: f.fixable ? `${f.fix} (memdir doctor --fix)` : f.fix, safe: f.fixable }
  }
}

/** The hooks' background runs as `memdir doctor` reports them: a failing last run, or a trace it cannot read. */
const backgroundFindings = (memoryDir: string) =>
  Effect.map(backgroundRunsReport(memoryDir), (report: BackgroundRunsReport | undefined): Array<Finding> => {
    if (report === undefined) return []
    if (report.unreadable !== undefined) {
      return [{
        id: "record:background-runs",
        severity: "warning",
        code: "record-unreadable",
        where: `${BackgroundRuns.RUNS_DIR}/${BackgroundRuns.RUNS_FILE}`,
        message: `the hooks' background-run log cannot be read: ${report.unreadable}`,
        fix: {
          id: "record:background-runs",
          description:
            `Check ${BackgroundRuns.RUNS_DIR}/ (a regular file memdir may read), or remove it: the next run ` +
            "starts it again",
          safe: false
        }
      }]
    }
    if (report.warning === undefined) return []
    const last = report.runs[0]
    const failure = last?.failure ?? last?.extraction?.failure
    return [{
      id: `runs:${last?.run ?? "last"}`,
      severity: "warning",
      code: "background-runs",
      where: `${BackgroundRuns.RUNS_DIR}/${BackgroundRuns.RUNS_FILE}`,
      message: `${report.warning}${failure === undefined ? "" : `: ${failure.tag}: ${failure.message}`}` +
        (report.stderrTail === undefined ? "" : ` (its stderr: ${report.stderrTail.split("\n").slice(-1)[0]})`),
      fix: {
        id: `runs:${last?.run ?? "last"}`,
        description: report.fix ?? "See `memdir doctor`'s background runs; the next session's run retries",
        safe: false
      }
    }]
  })

/** Lines of the background-run log memdir cannot read (it skips them: their runs are missing from every view). */
const corruptRunLines = (memoryDir: string) =>
  Effect.gen(function*() {
    const fs = yield* MemoryFs
    const root = yield* fs.realPathOfDeepestExisting(NodePath.resolve(memoryDir))
    const file = `${BackgroundRuns.RUNS_DIR}/${BackgroundRuns.RUNS_FILE}`
    const read = yield* fs.readFile(NodePath.join(root, ...file.split("/")), {
      maxBytes: RUN_LOG_MAX_BYTES,
      within: root
    })
    const decode = Schema.decodeUnknownOption(Schema.fromJsonString(BackgroundRuns.RunLine))
    const bad = read.text.split("\n").filter((line) => line !== "" && Option.isNone(decode(line))).length
    return bad === 0 ? [] : [
      {
        id: "record:background-runs-lines",
        severity: "info",
        code: "record-unreadable",
        where: file,
        message: `${bad} line${bad === 1 ? "" : "s"} of the background-run log cannot be read (corrupt or from ` +
          "another version): those runs are left out of the activity view",
        fix: {
          id: "record:background-runs-lines",
          description: "Nothing to do: memdir rewrites the log without them once it is full",
          safe: false
        }
      } satisfies Finding
    ]
  }).pipe(Effect.orElseSucceed((): Array<Finding> => []))

/** Dreams whose report.json cannot be read: what they changed is then known only from their backups. */
const unreadableDreams = (root: MemoryRoot) =>
  Effect.map(
    lastDreams(root, { limit: DREAMS_CHECKED }),
    (dreams) =>
      dreams.filter((d) => d.error !== undefined && d.error.startsWith("report.json")).map((d): Finding => ({
        id: `record:${d.backupDir}`,
        severity: "warning",
        code: "record-unreadable",
        where: `${d.backupDir}/report.json`,
        message: `the report of the dream of ${d.at} cannot be read (${d.error}): what it merged and deleted is ` +
          `known only from its backups in ${d.backupDir}/`,
        fix: {
          id: `record:${d.backupDir}`,
          description: `Look at the files in ${d.backupDir}/ (the versions the dream replaced); remove the directory ` +
            "once you no longer need them",
          safe: false
        }
      }))
  ).pipe(Effect.orElseSucceed((): Array<Finding> => []))

/**
 * Session records and extraction reports that cannot be read (`recentActivity` names them): the activity view
 * misses what they held. The background-run log is `backgroundFindings`' and `corruptRunLines`'.
 */
const unreadableRecords = (root: MemoryRoot) =>
  Effect.map(
    recentActivity(root, { limit: ACTIVITY_CHECKED }),
    (activity) =>
      activity.unreadable.filter((what) => !what.startsWith(`${BackgroundRuns.RUNS_DIR}/`)).map((what): Finding => ({
        id: `record:${what}`,
        severity: "info",
        code: "record-unreadable",
        where: what,
        message: `${what} cannot be read (corrupt, or not memdir's): the activity view leaves out what it held`,
        fix: {
          id: `record:${what}`,
          description: "Nothing to do: memdir starts a session's record again, and an extraction's report is " +
            "only for the view; remove the file to silence this",
          safe: false
        }
      }))
  ).pipe(Effect.orElseSucceed((): Array<Finding> => []))

// ---------------------------------------------------------------------------------------------------------------
// Team sync
// ---------------------------------------------------------------------------------------------------------------

/** Pure: `git status --porcelain -z` → the paths changed (a rename's source dropped). */
export const parseStatus = (stdout: string): Array<string> => {
  const records = stdout.split("\u0000")
  const paths: Array<string> = []
  for (let i = 0; i < records.length; i++) {
    const record = records[i]!
    if (record.length < 4) continue
    paths.push(record.slice(3))
    if (record[0] === "R" || record[0] === "C") i++ // the source of a rename or copy follows
  }
  return paths
}

/** Team memory never synced (or its state unknown): nothing ahead or behind, the conflicts doctor found. */
const neverSynced = (conflicts: ReadonlyArray<string>): TeamState => ({
  enabled: true,
  synced: false,
  ahead: 0,
  behind: 0,
  pending: [],
  conflicts: [...conflicts]
})

const teamState = (root: MemoryRoot, conflicts: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const fs = yield* MemoryFs
    const git = yield* Git.Git
    const memoryDir = NodePath.resolve(root.memoryDir)
    const gitDir = NodePath.join(memoryDir, TEAM_GIT_DIR)
    const teamDir = NodePath.join(memoryDir, "team")
    const config = yield* fs.lstat(NodePath.join(gitDir, "config")).pipe(Effect.option)
    if (Option.isNone(config)) return neverSynced(conflicts)
    const options = { gitDir, workTree: teamDir, cwd: teamDir }
    const head = yield* git.run(["rev-parse", "--verify", "-q", "HEAD^{commit}"], options)
    const headSha = head.exitCode === 0 ? head.stdout.trim() : undefined
    const incoming = yield* git.run(["rev-parse", "--verify", "-q", `${INCOMING_REF}^{commit}`], options)
    const counts = headSha === undefined ?
      [0, 0] :
      incoming.exitCode === 0 ?
      (yield* git.run(["rev-list", "--left-right", "--count", `HEAD...${INCOMING_REF}`], options)).stdout
        .trim().split(/\s+/).map(Number) :
      [Number((yield* git.run(["rev-list", "--count", "HEAD"], options)).stdout.trim()), 0]
    const status = yield* git.run(["status", "--porcelain", "-z", "--untracked-files=all"], options)
    const pending = status.exitCode === 0 ? parseStatus(status.stdout).map((p) => `team/${p}`) : []
    const state: TeamState = {
      enabled: true,
      synced: headSha !== undefined,
      ahead: Number.isFinite(counts[0]) ? counts[0]! : 0,
      behind: Number.isFinite(counts[1]) ? counts[1]! : 0,
      pending: pending.slice(0, TEAM_LIST_MAX),
      conflicts: conflicts.slice(0, TEAM_LIST_MAX),
      lastSync: new Date(config.value.mtimeMs).toISOString(),
      ...(headSha === undefined ? {} : { head: headSha })
    }
    return state
  }).pipe(
    // git missing or too slow: the state is unknown, said as never synced with the conflicts doctor found
    Effect.catchTags({
      GitError: () => Effect.succeed(neverSynced(conflicts)),
      GitTimeoutError: () => Effect.succeed(neverSynced(conflicts))
    }),
    Effect.provide(Git.layer)
  )

// ---------------------------------------------------------------------------------------------------------------
// The view
// ---------------------------------------------------------------------------------------------------------------

const RANK = { error: 0, warning: 1, info: 2 } as const

/**
 * Everything wrong with the memory directory that memdir can tell, each finding with its fix (`safe`: `applyFix`
 * repairs it), and team sync's state when team memory is on. Fails only when the memory directory itself cannot be
 * read (doctor's typed errors); a record that cannot be read is a finding, never a failure.
 */
export const health = Effect.fn("ui.health")(function*(root: MemoryRoot) {
  const report = yield* Doctor.diagnose(root.memoryDir)
  const findings = [
    ...report.findings.map(doctorFinding),
    ...(yield* backgroundFindings(root.memoryDir)),
    ...(yield* unreadableDreams(root)),
    ...(yield* corruptRunLines(root.memoryDir)),
    ...(yield* unreadableRecords(root))
  ].map((f, order) => ({ f, order })).sort((a, b) => RANK[a.f.severity] - RANK[b.f.severity] || a.order - b.order)
    .map(({ f }) => f)
  const conflicts = report.findings.filter((f) => f.code === "team-conflict" && f.path !== undefined).map((f) =>
    f.path!
  )
  const team = root.teamEnabled === true ? yield* teamState(root, conflicts) : undefined
  const result: Health = {
    findings,
    summary: {
      errors: findings.filter((f) => f.severity === "error").length,
      warnings: findings.filter((f) => f.severity === "warning").length,
      infos: findings.filter((f) => f.severity === "info").length,
      fixable: findings.filter((f) => f.fix?.safe === true).length
    },
    ...(team === undefined ? {} : { team })
  }
  return result
})

/**
 * Runs a safe fix: the repair of the finding `fixId` names (`health`'s `fix.id`), or every safe repair
 * (`ALL_SAFE_FIXES`), through `Doctor.fix` — only MEMORY.md is edited, its previous text kept under `.doctor/`. A
 * finding that is gone, or that has no safe fix, is `applied: false` with why; nothing is written then.
 */
export const applyFix = Effect.fn("ui.applyFix")(function*(root: MemoryRoot, fixId: string) {
  const report = yield* Doctor.diagnose(root.memoryDir)
  const finding = fixId === ALL_SAFE_FIXES ? undefined : report.findings.find((f) => findingId(f) === fixId)
  const notApplied = (message: string): FixResult => ({ applied: false, message, changes: [] })
  if (fixId !== ALL_SAFE_FIXES && finding === undefined) {
    return notApplied(
      "That finding is no longer there (fixed already, or the memory directory changed): look at the findings again"
    )
  }
  if (finding !== undefined && !finding.fixable) {
    return notApplied(`memdir does not repair this on its own: ${finding.fix}`)
  }
  if (finding === undefined && !report.findings.some((f) => f.fixable)) {
    return notApplied("Nothing to repair: no finding has a safe fix")
  }
  const fixed = yield* Doctor.fix(root.memoryDir, finding === undefined ? {} : { only: repairs(finding) })
  const changes = fixed.changes.map((c) =>
    `${c.action === "removed-line" ? "removed" : c.action === "shortened-line" ? "shortened" : "added"} ` +
    `${c.line === undefined ? "" : `line ${c.line} `}(${c.code} ${c.path}): ${c.text}`
  )
  if (fixed.changes.length === 0) {
    const why = fixed.notAdded[0]?.reason
    return notApplied(
      why === undefined ?
        "Nothing was changed: MEMORY.md changed meanwhile; look at the findings again" :
        `Nothing was changed: ${why}`
    )
  }
  const result: FixResult = {
    applied: true,
    message: `Repaired MEMORY.md: ${changes.length} change${changes.length === 1 ? "" : "s"}` +
      (fixed.backup === undefined ? "" : `; the previous MEMORY.md is kept at ${fixed.backup}`),
    changes,
    ...(fixed.backup === undefined ? {} : { backup: fixed.backup })
  }
  return result
})
