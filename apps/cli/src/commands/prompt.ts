import { MemoryIndex } from "@memdir/core/MemoryIndex"
import { loadPinned } from "@memdir/core/Pins"
import { buildMemoryPrompt } from "@memdir/core/Prompt"
import { teamPromptInput } from "@memdir/core/TeamMemory"
import * as Command from "effect/cli/Command"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { common } from "../Common.js"
import { ensureMemoryDir } from "../MemoryDir.js"
import { toIoError } from "../Output.js"
import { memdirHandler } from "../Services.js"
import { locateTeam } from "./teamMemory.js"

export const promptCommand = Command.make(
  "prompt",
  common,
  memdirHandler(({ cwd }) =>
    Effect.gen(function*() {
      const team = yield* locateTeam(cwd)
      const location = team.memory
      if (!location.enabled) {
        // Disabled memory means no memory section at all (docs/configuration.md): print nothing, say why on stderr.
        return yield* Console.error(`memdir: auto memory is disabled (${location.enabledBy}); no prompt section`)
      }
      // The directory exists before the prompt says so (docs/configuration.md).
      yield* ensureMemoryDir(location.memoryDir).pipe(Effect.mapError(toIoError("init", location.memoryDir)))
      const index = yield* (yield* MemoryIndex).load(location.memoryDir)
      // Team memory on: the team section (scope guidance, cross-check, team/MEMORY.md); off: no trace of it.
      const teamInput = yield* teamPromptInput(team)
      // Pinned memories are loaded in full beside the index (docs/file-format.md#pinned-memories).
      const { pinned } = yield* loadPinned(location.memoryDir)
      const prompt = yield* buildMemoryPrompt({ memoryDir: location.memoryDir, index, pinned, team: teamInput })
      yield* Console.log(prompt)
    })
  )
).pipe(Command.withDescription("Print the memory section of the system prompt, index included"))
