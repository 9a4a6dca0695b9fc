import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FileSystem from "effect/FileSystem"
import * as Path from "effect/Path"
import * as PlatformError from "effect/PlatformError"
import { ensureMemoryDir } from "../src/MemoryDir.js"

/** A file system where MEMORY.md is missing when looked for, then made by another process before this one writes. */
const racing = (reason: PlatformError.SystemErrorTag) =>
  FileSystem.layerNoop({
    makeDirectory: () => Effect.void,
    exists: () => Effect.succeed(false),
    writeFileString: (path) =>
      Effect.fail(
        PlatformError.systemError({
          _tag: reason,
          module: "FileSystem",
          method: "writeFileString",
          pathOrDescriptor: path
        })
      )
  })

describe("ensureMemoryDir", () => {
  it.effect("an index another process created meanwhile is the index: no failure", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(ensureMemoryDir("/m/memory"))
      assert.isTrue(Exit.isSuccess(exit), String(Exit.isFailure(exit) ? exit.cause : ""))
    }).pipe(Effect.provide(racing("AlreadyExists")), Effect.provide(Path.layer)))

  it.effect("any other failure to write it is still a failure", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(ensureMemoryDir("/m/memory"))
      assert.isTrue(Exit.isFailure(exit))
    }).pipe(Effect.provide(racing("PermissionDenied")), Effect.provide(Path.layer)))
})
