import * as Command from "@effect/cli/Command"
import { Scanner } from "@memdir/core/Scanner"
import { Staleness } from "@memdir/core/Staleness"
import { scopeOf, TEAM_DIR } from "@memdir/core/TeamMemory"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { common, jsonOption, memdirHandler } from "../Common.js"
import { printJson } from "../Output.js"
import { terminalLine } from "../Terminal.js"
import { locateTeam } from "./teamMemory.js"

export const lsCommand = Command.make(
  "ls",
  { ...common, json: jsonOption },
  memdirHandler(({ cwd, json }) =>
    Effect.gen(function*() {
      const team = yield* locateTeam(cwd)
      const location = team.memory
      const scanner = yield* Scanner
      const staleness = yield* Staleness
      // team/ is listed only while team memory is on (SPEC §8).
      const scan = yield* scanner.scan(location.memoryDir, { skipDirs: team.enabled ? [] : [TEAM_DIR] })
      const ages = yield* staleness.ages(scan.memories.map((m) => m.mtime))
      const memories = scan.memories.map((m, i) => {
        const age = ages[i]!
        return ({
          path: m.path,
          scope: scopeOf(m.path),
          name: m.name,
          description: m.description,
          type: m.type,
          mtime: new Date(m.mtime).toISOString(),
          ageDays: age.ageDays,
          age: age.age,
          ...(m.warning === undefined ? {} : { warning: m.warning })
        })
      })
      const problems = scan.problems.map((p) => ({
        path: p.path,
        code: p.code,
        message: p.message,
        ...(p.line === undefined ? {} : { line: p.line })
      }))
      if (json) return yield* printJson({ memoryDir: location.memoryDir, memories, problems })
      if (memories.length === 0 && problems.length === 0) {
        return yield* Console.log(`no memories in ${location.memoryDir}`)
      }
      // one write for the whole listing: thousands of memories are common
      if (memories.length > 0) {
        yield* Console.log(
          memories.map((m) => terminalLine(`${m.path}  [${m.type}] ${m.name} (${m.age}) — ${m.description}`)).join("\n")
        )
      }
      for (const p of problems) yield* Console.error(`problem: ${terminalLine(p.path)}: ${terminalLine(p.message)}`)
    })
  )
).pipe(Command.withDescription("List memories (newest first) and files that could not be read"))
