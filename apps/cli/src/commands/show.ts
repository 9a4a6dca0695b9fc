import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import { InvalidMemoryInputError, type MemoryIoError } from "@memdir/core/Errors"
import { parseFrontmatter } from "@memdir/core/Frontmatter"
import { writtenAtOfFile } from "@memdir/core/MemoryAge"
import { MemoryFs } from "@memdir/core/MemoryFs"
import { type MemoryRoot, MemoryStore } from "@memdir/core/MemoryStore"
import { Staleness } from "@memdir/core/Staleness"
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
    file: Args.text({ name: "FILE" }).pipe(Args.withDescription("Memory file, relative to the memory directory"))
  },
  memdirHandler(({ cwd, file, json }) =>
    Effect.gen(function*() {
      const team = yield* locateTeam(cwd)
      // The one door: containment (also through links), team files through the guard, no FIFO or device opened.
      const root = { memoryDir: team.memory.memoryDir, teamEnabled: team.memory.enabled && team.enabled }
      const stored = yield* (yield* MemoryStore).read(root, file).pipe(
        Effect.catchTag("MemoryIoError", (error) => refuseDirectory(root, file, error))
      )
      const relative = stored.key
      const text = stored.text
      const mtime = stored.mtimeMs
      const parsed = parseFrontmatter(text, relative)
      const header = parsed._tag === "Right" ? parsed.right : undefined
      // The same time ls and recall count from (MemoryAge).
      const written = yield* writtenAtOfFile(team.memory.memoryDir, relative, text, mtime)
      const age = yield* (yield* Staleness).age(written.at)
      if (json) {
        return yield* printJson({
          path: relative,
          name: header?.name ?? null,
          type: header?.type ?? null,
          description: header?.description ?? null,
          mtime: new Date(mtime).toISOString(),
          written: new Date(written.at).toISOString(),
          writtenFrom: written.from,
          ageDays: age.ageDays,
          age: age.age,
          caveat: age.caveat,
          ...(written.warning === undefined ? {} : { warning: written.warning }),
          content: text
        })
      }
      // an ignored `modified:` says why the age is not the one it gives, as ls --json and doctor do
      if (written.warning !== undefined) yield* Console.error(`warning: ${terminalLine(written.warning)}`)
      const title = header === undefined ? relative : `${header.name} [${header.type}]`
      yield* Console.log(terminalLine(`# ${title} — ${relative}, saved ${age.age}`))
      if (age.caveat !== null) yield* Console.log(`> ${age.caveat}`)
      yield* Console.log("")
      yield* Console.log(terminalText(text.replace(/\n$/, "")))
    })
  )
).pipe(
  Command.withDescription("Print one memory with its age and, when it is old, the staleness caveat")
)
