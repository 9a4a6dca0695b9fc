import * as Command from "effect/cli/Command"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { common, locate, locationHandler, requireEnabled } from "../Common.js"
import { ensureMemoryDir } from "../MemoryDir.js"
import { toIoError } from "../Output.js"

export const initCommand = Command.make(
  "init",
  common,
  locationHandler(({ cwd }) =>
    Effect.gen(function*() {
      const location = yield* locate(cwd)
      yield* requireEnabled(location)
      yield* ensureMemoryDir(location.memoryDir).pipe(Effect.mapError(toIoError("init", location.memoryDir)))
      yield* Console.log(location.memoryDir)
    })
  )
).pipe(Command.withDescription("Create the memory directory and an empty MEMORY.md"))
