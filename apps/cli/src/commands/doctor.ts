import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Doctor from "@memdir/core/Doctor"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { common, jsonOption, locate, memdirHandler } from "../Common.js"
import { DOCTOR_FINDINGS_EXIT_CODE, printJson } from "../Output.js"

export const doctorCommand = Command.make(
  "doctor",
  {
    ...common,
    json: jsonOption,
    fix: Options.boolean("fix").pipe(Options.withDescription("Repair what is safe (never deletes a memory)"))
  },
  memdirHandler(({ cwd, fix, json }) =>
    Effect.gen(function*() {
      const location = yield* locate(cwd)
      const fixed = fix ? yield* Doctor.fix(location.memoryDir) : undefined
      const report = yield* Doctor.diagnose(location.memoryDir)
      const errors = report.findings.filter((f) => f.severity === "error").length
      if (json) {
        yield* printJson({ memoryDir: location.memoryDir, findings: report.findings, ...(fixed ? { fixed } : {}) })
      } else {
        if (fixed !== undefined) {
          for (const change of fixed.changes) yield* Console.log(`fixed: ${change}`)
        }
        if (report.findings.length === 0) yield* Console.log(`ok: ${location.memoryDir} is healthy`)
        for (const f of report.findings) {
          const where = f.path === undefined ? "" : ` ${f.path}${f.line === undefined ? "" : `:${f.line}`}`
          yield* Console.log(`${f.severity} ${f.code}${where}: ${f.message}`)
          yield* Console.log(`  fix: ${f.fix}${f.fixable ? " (memdir doctor --fix)" : ""}`)
        }
      }
      if (errors > 0) process.exitCode = DOCTOR_FINDINGS_EXIT_CODE
    })
  )
).pipe(Command.withDescription("Check the memory directory: index caps, dead links, bad frontmatter, duplicates"))
