import { InvalidMemoryInputError, type MemoryIoError } from "@memdir/core/Errors"
import { MemoryFs } from "@memdir/core/MemoryFs"
import { type MemoryRoot, MemoryStore } from "@memdir/core/MemoryStore"
import * as Operations from "@memdir/core/Operations"
import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { common, jsonOption } from "../Common.js"
import { printJson } from "../Output.js"
import { memdirHandler } from "../Services.js"
import { terminalLine, terminalText } from "../Terminal.js"
import { locateTeam } from "./teamMemory.js"

/** `show DIR`: say it is a directory (and how to list the memories), not an I/O failure. */
const refuseDirectory = (root: MemoryRoot, file: string, error: MemoryIoError) =>
  Effect.gen(function*() {
    const located = yield* (yield* MemoryStore).locate(root, file).pipe(Effect.option)
    const kind = Option.isNone(located) ? undefined : yield* (yield* MemoryFs).lstat(located.value.contained.path).pipe(
      Effect.map((info) => info.kind),
      Effect.orElseSucceed(() => undefined)
    )
    if (kind !== "Directory") return yield* error
    return yield* new InvalidMemoryInputError({
      field: "FILE",
      value: file,
      reason: "is a directory, not a memory file",
      rule: "directory"
    })
  })

export const showCommand = Command.make(
  "show",
  {
    ...common,
    json: jsonOption,
    file: Argument.String("FILE").pipe(Argument.withDescription("Memory file, relative to the memory directory"))
  },
  memdirHandler(({ cwd, file, json }) =>
    Effect.gen(function*() {
      const team = yield* locateTeam(cwd)
      // The one door: containment (also through links), team files through the guard, no FIFO or device opened.
      const root = { memoryDir: team.memory.memoryDir, teamEnabled: team.memory.enabled && team.enabled }
      // The one read every door makes (Operations.read): its age counts from the same time as ls and recall.
      const read = yield* Operations.read(root, { path: file }).pipe(
        Effect.catchTag("MemoryIoError", (error) => refuseDirectory(root, file, error))
      )
      const header = read.frontmatter ?? undefined
      if (json) {
        return yield* printJson({
          path: read.path,
          name: header?.name ?? null,
          type: header?.type ?? null,
          description: header?.description ?? null,
          mtime: read.mtime,
          written: read.written,
          writtenFrom: read.writtenFrom,
          ageDays: read.ageDays,
          age: read.age,
          caveat: read.caveat,
          ...(read.warning === undefined ? {} : { warning: read.warning }),
          content: read.content
        })
      }
      // an ignored `modified:` says why the age is not the one it gives, as ls --json and doctor do
      if (read.warning !== undefined) yield* Console.error(`warning: ${terminalLine(read.warning)}`)
      const title = header === undefined ? read.path : `${header.name} [${header.type}]`
      yield* Console.log(terminalLine(`# ${title} — ${read.path}, saved ${read.age}`))
      if (read.caveat !== null) yield* Console.log(`> ${read.caveat}`)
      yield* Console.log("")
      yield* Console.log(terminalText(read.content.replace(/\n$/, "")))
    })
  )
).pipe(
  Command.withDescription("Print one memory with its age and, when it is old, the staleness caveat")
)
