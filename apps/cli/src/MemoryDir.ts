/**
 * Creating a project's memory directory (0700) with an empty `MEMORY.md` (0600): what `init`, `prompt`, the
 * memory-tool backend and the session-start hook do before they use it.
 */
import { DIR_MODE, FILE_MODE } from "@memdir/core/MemoryFs"
import { INDEX_FILE } from "@memdir/core/MemoryIndex"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Path from "effect/Path"

export const ensureMemoryDir = (memoryDir: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    yield* fs.makeDirectory(memoryDir, { recursive: true, mode: DIR_MODE }).pipe(
      // Node's recursive mkdir answers ENOENT where the last directory cannot be made (EROFS, EACCES, …): one
      // plain mkdir of it names the real cause (still ENOENT when a parent is missing)
      Effect.catchIf(
        (error) => error.reason._tag === "NotFound",
        () => fs.makeDirectory(memoryDir, { mode: DIR_MODE })
      )
    )
    const index = path.join(memoryDir, INDEX_FILE)
    if (!(yield* fs.exists(index))) {
      yield* fs.writeFileString(index, "", { mode: FILE_MODE, flag: "wx" }).pipe(
        // another memdir of the project (a hook, `prompt` beside `write`) made it since: there is an index, as wanted
        Effect.catchIf((error) => error.reason._tag === "AlreadyExists", () => Effect.void)
      )
    }
  })
