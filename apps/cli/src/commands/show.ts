import { Args, Command } from "@effect/cli"
import { FileSystem, Path } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import { type MemoryIoError, MemoryNotFoundError, PathTraversalError } from "@memdir/core/Errors"
import { parseFrontmatter } from "@memdir/core/Frontmatter"
import { isMemoryPath } from "@memdir/core/MemoryPaths"
import { Staleness } from "@memdir/core/Staleness"
import { TEAM_DIR, TeamGuard } from "@memdir/core/TeamGuard"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { common, jsonOption, locate, memdirHandler } from "../Common.js"
import { printJson, toIoError } from "../Output.js"
import { terminalLine, terminalText } from "../Terminal.js"

/** Resolve FILE (relative to the memory dir, or absolute inside it) and refuse anything outside it. */
export const memoryFile = (memoryDir: string, file: string) =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    if (file.includes("\0")) return yield* new PathTraversalError({ key: file, reason: "null-byte" })
    const absolute = path.resolve(memoryDir, file)
    if (!isMemoryPath(memoryDir, absolute) || absolute === path.resolve(memoryDir)) {
      return yield* new PathTraversalError({ key: file, reason: path.isAbsolute(file) ? "absolute" : "escapes-root" })
    }
    return absolute
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
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const location = yield* locate(cwd)
      const absolute = yield* memoryFile(location.memoryDir, file)
      const relative = path.relative(location.memoryDir, absolute).split(path.sep).join("/")
      const notFoundOrIo = (e: PlatformError): Effect.Effect<never, MemoryNotFoundError | MemoryIoError> =>
        e._tag === "SystemError" && e.reason === "NotFound" ?
          Effect.fail(new MemoryNotFoundError({ path: relative })) :
          Effect.fail(toIoError("read", absolute)(e))
      // Team files come from other people: read them only through the guard (no links, FIFOs, oversized files).
      const text = relative.startsWith(`${TEAM_DIR}/`)
        ? yield* (yield* TeamGuard).read(path.join(location.memoryDir, TEAM_DIR), relative.slice(TEAM_DIR.length + 1))
        : yield* fs.readFileString(absolute).pipe(Effect.catchAll(notFoundOrIo))
      const info = yield* fs.stat(absolute).pipe(Effect.catchAll(notFoundOrIo))
      const mtime = Option.getOrElse(info.mtime, () => new Date(0)).getTime()
      const age = yield* (yield* Staleness).age(mtime)
      const parsed = parseFrontmatter(text, relative)
      const header = parsed._tag === "Right" ? parsed.right : undefined
      if (json) {
        return yield* printJson({
          path: relative,
          name: header?.name ?? null,
          type: header?.type ?? null,
          description: header?.description ?? null,
          mtime: new Date(mtime).toISOString(),
          ageDays: age.ageDays,
          age: age.age,
          caveat: age.caveat,
          content: text
        })
      }
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
