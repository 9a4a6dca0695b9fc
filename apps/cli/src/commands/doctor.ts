import * as Doctor from "@memdir/core/Doctor"
import { INDEX_FILE } from "@memdir/core/MemoryIndex"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { backgroundRunsLines, backgroundRunsReport } from "../BackgroundRunsReport.js"
import { common, jsonOption, locate, switchFlag } from "../Common.js"
import { type HookFile, hookScriptTools, readHookFiles, withoutStopHook } from "../hooks/AgentFiles.js"
import { modelCallsLines, reportFor } from "../ModelCallsReport.js"
import { DOCTOR_FINDINGS_EXIT_CODE, printJson, thousands } from "../Output.js"
import { memdirHandler } from "../Services.js"
import { terminalLine } from "../Terminal.js"
import { refusedWarning } from "./path.js"

/** Findings (and repairs) listed per kind in the text report; `--json` lists every one. */
export const SHOWN_PER_KIND = 10

const count = (n: number, one: string, many = `${one}s`): string => `${thousands(n)} ${n === 1 ? one : many}`

/** "… and 1,990 more" after the first `SHOWN_PER_KIND` of a kind. */
const more = (total: number, what: string): string =>
  `  … and ${thousands(total - SHOWN_PER_KIND)} more ${what} ` +
  "(`memdir doctor --json` lists every one)"

/** One repair as a person reads it: where in MEMORY.md, what was done, why, and the line itself. */
export const describeChange = (change: Doctor.DoctorChange): string => {
  const where = change.line === undefined ? INDEX_FILE : `${INDEX_FILE}:${change.line}`
  const what = change.action === "removed-line"
    ? `removed ${where}`
    : change.action === "shortened-line"
    ? `shortened ${where} to`
    : `added to ${INDEX_FILE}`
  return `${what} (${change.code} ${change.path}): ${change.text}`
}

/** The counts first: how many errors and warnings, and how many of each kind. */
export const summaryLines = (memoryDir: string, findings: ReadonlyArray<Doctor.DoctorFinding>): Array<string> => {
  const summary = Doctor.summarize(findings)
  const width = Math.max(...summary.byCode.map((g) => g.code.length))
  return [
    `${terminalLine(memoryDir)}: ${count(summary.errors, "error")}, ${count(summary.warnings, "warning")}`,
    ...summary.byCode.map((g) => `  ${g.severity.padEnd(7)} ${g.code.padEnd(width)}  ${thousands(g.count)}`)
  ]
}

/**
 * The findings of each kind together, errors first: a heading with the count (and how many `--fix` repairs when it
 * repairs only some), each finding where it is and what is wrong (the first `SHOWN_PER_KIND`), and the advice —
 * once for the kind when every finding shares it, else under each finding, then the advice several of those not
 * shown share (1,800 memories the index has no room for are told so, not hidden behind "… and 1,990 more").
 */
export const findingLines = (findings: ReadonlyArray<Doctor.DoctorFinding>): Array<string> => {
  const lines: Array<string> = []
  const advice = (f: Doctor.DoctorFinding) => `fix: ${terminalLine(f.fix)}${f.fixable ? " (memdir doctor --fix)" : ""}`
  for (const group of Doctor.summarize(findings).byCode) {
    const members = findings.filter((f) => f.code === group.code && f.severity === group.severity)
    const shared = members.every((f) => f.fix === members[0]!.fix && f.fixable === members[0]!.fixable)
    const fixable = members.filter((f) => f.fixable).length
    const some = fixable > 0 && fixable < members.length ?
      `, ${thousands(fixable)} repaired by memdir doctor --fix` :
      ""
    lines.push("", `${group.severity} ${group.code} (${thousands(group.count)}${some})`)
    for (const f of members.slice(0, SHOWN_PER_KIND)) {
      const where = Doctor.locationOf(f)
      lines.push(`  ${where === undefined ? "" : `${terminalLine(where)}: `}${terminalLine(f.message)}`)
      if (!shared) lines.push(`    ${advice(f)}`)
    }
    if (members.length > SHOWN_PER_KIND) lines.push(more(members.length, "of them"))
    if (shared) {
      lines.push(`  ${advice(members[0]!)}`)
    } else {
      const hidden = new Map<string, number>()
      for (const f of members.slice(SHOWN_PER_KIND)) hidden.set(advice(f), (hidden.get(advice(f)) ?? 0) + 1)
      for (const [text, n] of hidden) if (n > 1) lines.push(`  ${thousands(n)} of those: ${text}`)
    }
  }
  return lines
}

/** What `--fix` did, each repair (the first `SHOWN_PER_KIND` of each kind) and the memories it could not add. */
export const repairLines = (memoryDir: string, fixed: Doctor.DoctorFixResult): Array<string> => {
  const lines: Array<string> = []
  const kinds = [...new Set(fixed.changes.map((c) => `${c.action} ${c.code}`))]
  for (const kind of kinds) {
    const changes = fixed.changes.filter((c) => `${c.action} ${c.code}` === kind)
    for (const change of changes.slice(0, SHOWN_PER_KIND)) lines.push(`fixed: ${terminalLine(describeChange(change))}`)
    if (changes.length > SHOWN_PER_KIND) lines.push(more(changes.length, "like these"))
  }
  for (const reason of [...new Set(fixed.notAdded.map((n) => n.reason))]) {
    const paths = fixed.notAdded.filter((n) => n.reason === reason).map((n) => terminalLine(n.path))
    const shown = paths.slice(0, SHOWN_PER_KIND).join(", ")
    lines.push(
      `not added: ${count(paths.length, "memory", "memories")}, ${reason}: ${shown}` +
        (paths.length > SHOWN_PER_KIND ? `, … and ${thousands(paths.length - SHOWN_PER_KIND)} more` : "")
    )
  }
  if (fixed.backup !== undefined) lines.push(`backup: the previous ${INDEX_FILE} is at ${memoryDir}${fixed.backup}`)
  return lines
}

/** The line `--fix` ends with: what it did, what it could not, and what is left for a person. */
export const fixedLine = (fixed: Doctor.DoctorFixResult, remaining: number): string => {
  const by = (action: Doctor.DoctorChange["action"]) => fixed.changes.filter((c) => c.action === action).length
  const done = [
    by("removed-line") > 0 ? `removed ${count(by("removed-line"), "line")}` : "",
    by("shortened-line") > 0 ? `shortened ${count(by("shortened-line"), "line")}` : "",
    by("added-line") > 0 ? `added ${count(by("added-line"), "line")}` : ""
  ].filter((part) => part !== "")
  const did = done.length === 0 ? "fixed: nothing to repair" : `fixed: ${INDEX_FILE}: ${done.join(", ")}`
  const notAdded = fixed.notAdded.length === 0 ?
    "" :
    `; ${count(fixed.notAdded.length, "memory", "memories")} not added (no room in ${INDEX_FILE})`
  const left = remaining === 0 ?
    "; nothing left to fix" :
    `; ${count(remaining, "finding")} above ${remaining === 1 ? "needs" : "need"} you`
  return `${did}${notAdded}${left}`
}

/**
 * What `memdir-hook` can do on this PATH (the agent's is usually the same): ask the hook daemon without starting Node
 * (curl, sha256sum) and start the daemon itself (setsid); else what each missing tool costs.
 */
export const hookScriptLine = ({ missing }: { readonly missing: ReadonlyArray<string> }): string => {
  if (missing.length === 0) {
    return "hooks: memdir-hook finds curl, sha256sum and setsid: the hook daemon answers without a Node start per hook"
  }
  const cost = missing.some((tool) => tool !== "setsid")
    ? "every hook starts Node, ~50 ms more each"
    : "a cold session's first hook starts Node before the hook daemon, ~35 ms more"
  return `hooks: memdir-hook finds no ${missing.join(", ")} on this PATH: ${cost}; install ${
    missing.length === 1 ? "it" : "them"
  } (docs/hooks.md#the-hook-daemon)`
}

/** A hook file that runs memdir's hooks without Stop, while automatic model calls are on. */
const withoutStopLine = ({ agent, file, scope }: HookFile): string =>
  `  ${terminalLine(file)} runs memdir's hooks without Stop: extraction runs once per session, at its end; ` +
  `\`memdir hooks install --agent ${agent}${scope === "project" ? " --project" : ""}\` adds the per-turn Stop hook`

export const doctorCommand = Command.make(
  "doctor",
  {
    ...common,
    json: jsonOption,
    fix: switchFlag("fix").pipe(
      Flag.withDescription(
        "Repair what is safe, then say what is left for you; exit 0 once done (never deletes a memory; backs up " +
          "MEMORY.md under .doctor/ first)"
      )
    )
  },
  memdirHandler(({ cwd, fix, json }) =>
    Effect.gen(function*() {
      const location = yield* locate(cwd)
      yield* Effect.forEach(location.refusedSettings ?? [], (entry) => Console.error(refusedWarning(entry)))
      // Nothing fixable: no repair is attempted (it takes the index lock, which a read-only directory refuses).
      const found = yield* Doctor.diagnose(location.memoryDir)
      const repairs = fix && found.findings.some((f) => f.fixable)
      const nothing: Doctor.DoctorFixResult = { changes: [], notAdded: [], remaining: found.findings }
      const fixed = repairs ? yield* Doctor.fix(location.memoryDir) : fix ? nothing : undefined
      const report = repairs ? yield* Doctor.diagnose(location.memoryDir) : found
      // what hooks and the MCP server may spend on a model, and who decided (docs/configuration.md)
      const modelCalls = yield* reportFor(location)
      // on, but an agent runs memdir's hooks without Stop: extraction once per session only (docs/hooks.md#the-stop-hook)
      // the agents' hook files, read once for what follows
      const agentHooks = yield* readHookFiles(cwd)
      const withoutStop = modelCalls.enabled ? withoutStopHook(agentHooks) : []
      // the hooks' background runs: the last ones, and what to do when they fail (docs/hooks.md#background-runs)
      const background = yield* backgroundRunsReport(location.memoryDir)
      // the hooks' shell client: what it finds on PATH (docs/hooks.md#the-hook-daemon)
      const hookScript = hookScriptTools(agentHooks)
      if (json) {
        yield* printJson({
          memoryDir: location.memoryDir,
          summary: Doctor.summarize(report.findings),
          findings: report.findings,
          ...(fixed ? { fixed } : {}),
          ...(background === undefined ? {} : { backgroundRuns: background }),
          automaticModelCalls: modelCalls,
          hooksWithoutStop: withoutStop,
          ...(hookScript === undefined ? {} : { hookScript })
        })
      } else {
        const lines = [
          ...(fixed === undefined || (fixed.changes.length === 0 && fixed.notAdded.length === 0) ?
            [] :
            [...repairLines(location.memoryDir, fixed), ""]),
          ...(report.findings.length === 0 ?
            [`ok: ${location.memoryDir} is healthy`] :
            [...summaryLines(location.memoryDir, report.findings), ...findingLines(report.findings)]),
          "",
          ...modelCallsLines(modelCalls),
          ...withoutStop.map(withoutStopLine),
          ...(hookScript === undefined ? [] : [hookScriptLine(hookScript)]),
          ...backgroundRunsLines(background),
          ...(fixed === undefined ? [] : ["", fixedLine(fixed, report.findings.length)])
        ]
        // one write: a directory of thousands of memories can have thousands of findings
        yield* Console.log(lines.join("\n"))
      }
      // `--fix` did what it could: what remains is listed for a person, and is not a failure of the repair
      if (!fix && report.findings.some((f) => f.severity === "error")) process.exitCode = DOCTOR_FINDINGS_EXIT_CODE
    })
  )
).pipe(
  Command.withDescription(
    "Check the memory directory: index caps, dead links, bad frontmatter, duplicates, prose indexes, links out"
  )
)
