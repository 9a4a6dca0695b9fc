import { Command } from "@effect/cli"
import { MemoryIndex } from "@memdir/core/MemoryIndex"
import { buildMemoryPrompt } from "@memdir/core/Prompt"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { common, ensureMemoryDir, locate, memdirHandler } from "../Common.js"
import { toIoError } from "../Output.js"

export const promptCommand = Command.make(
  "prompt",
  common,
  memdirHandler(({ cwd }) =>
    Effect.gen(function*() {
      const location = yield* locate(cwd)
      if (!location.enabled) {
        // Disabled memory means no memory section at all (SPEC §1): print nothing, say why on stderr.
        return yield* Console.error(`memdir: auto memory is disabled (${location.enabledBy}); no prompt section`)
      }
      // The directory exists before the prompt says so (SPEC §1).
      yield* ensureMemoryDir(location.memoryDir).pipe(Effect.mapError(toIoError("init", location.memoryDir)))
      const index = yield* (yield* MemoryIndex).load(location.memoryDir)
      const prompt = yield* buildMemoryPrompt({ memoryDir: location.memoryDir, index })
      yield* Console.log(prompt)
    })
  )
).pipe(Command.withDescription("Print the memory section of the system prompt, index included"))
