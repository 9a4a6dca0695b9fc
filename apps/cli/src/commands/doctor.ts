import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Doctor from "@memdir/core/Doctor"
import { INDEX_FILE } from "@memdir/core/MemoryIndex"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { common, jsonOption, locate } from "../Common.js"
import { DOCTOR_FINDINGS_EXIT_CODE, printJson } from "../Output.js"
import { memdirHandler } from "../Services.js"
import { terminalLine } from "../Terminal.js"
import { refusedWarning } from "./path.js"

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

export const doctorCommand = Command.make(
  "doctor",
  {
    ...common,
    json: jsonOption,
    fix: Options.boolean("fix").pipe(
      Options.withDescription("Repair what is safe (never deletes a memory; backs up MEMORY.md under .doctor/ first)")
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
      const errors = report.findings.filter((f) => f.severity === "error").length
      if (json) {
        yield* printJson({ memoryDir: location.memoryDir, findings: report.findings, ...(fixed ? { fixed } : {}) })
      } else {
        if (fixed !== undefined) {
          for (const change of fixed.changes) yield* Console.log(`fixed: ${terminalLine(describeChange(change))}`)
          for (const n of fixed.notAdded) yield* Console.log(`not added: ${terminalLine(n.path)}: ${n.reason}`)
          if (fixed.backup !== undefined) {
            yield* Console.log(
              `backup: the previous ${INDEX_FILE} is at ${`${location.memoryDir}${fixed.backup}`}`
            )
          } else if (fixed.changes.length === 0) {
            yield* Console.log("fixed: nothing to repair")
          }
        }
        if (report.findings.length === 0) yield* Console.log(`ok: ${location.memoryDir} is healthy`)
        for (const f of report.findings) {
          const where = f.path === undefined ? "" : ` ${f.path}${f.line === undefined ? "" : `:${f.line}`}`
          yield* Console.log(terminalLine(`${f.severity} ${f.code}${where}: ${f.message}`))
          yield* Console.log(`  fix: ${terminalLine(f.fix)}${f.fixable ? " (memdir doctor --fix)" : ""}`)
        }
      }
      if (errors > 0) process.exitCode = DOCTOR_FINDINGS_EXIT_CODE
    })
  )
).pipe(
  Command.withDescription(
    "Check the memory directory: index caps, dead links, bad frontmatter, duplicates, prose indexes, links out"
  )
)
