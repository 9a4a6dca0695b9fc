/**
 * Crash-safe writes (docs/file-format.md): a reader sees the old content or the new content, never half a file.
 * Write a temp file in the target's directory, fsync it, rename it over the target, fsync the directory.
 */
import { FileSystem, Path } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Random from "effect/Random"
import * as NodePath from "node:path"
import { errnoCodeOf, MemoryIoError } from "../Errors.js"
import { DIR_MODE, FILE_MODE, MemoryFs } from "./memoryFsCore.js"

/** The file modes are `MemoryFs`'s (one set for every file memdir makes). */
export { DIR_MODE, FILE_MODE }

const encoder = new TextEncoder()

/** Wrap a platform failure into the typed error a caller can act on. */
export const toMemoryIoError = (op: string, path: string) => (error: PlatformError): MemoryIoError =>
  new MemoryIoError({ op, path, detail: error.message, code: errnoCodeOf(error) })

/** True when the failure is "no such file or directory". */
export const isNotFound = (error: PlatformError): boolean => error._tag === "SystemError" && error.reason === "NotFound"

/** A name no other process or fiber will pick: pid plus 48 random bits. */
export const uniqueToken: Effect.Effect<string> = Effect.map(
  Effect.all([Random.nextIntBetween(0, 0x1000000), Random.nextIntBetween(0, 0x1000000)]),
  ([high, low]) => `${currentPid()}.${high.toString(16).padStart(6, "0")}${low.toString(16).padStart(6, "0")}`
)

export const currentPid = (): number => globalThis.process?.pid ?? 0

/** The temp-file name used for `target`: hidden, in the same directory (so rename is atomic), unique. */
export const tempFileName = (basename: string, token: string): string => `.${basename}.${token}.tmp`

/** Matches the temp files `writeFileAtomic` creates; group 1 is the writer's pid. */
export const TEMP_FILE_PATTERN = /^\..+\.(\d+)\.[0-9a-f]{12}\.tmp$/

/** True when a process with this pid exists on this host (EPERM: it exists but belongs to someone else). */
export const isProcessAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/**
 * Remove what killed processes left in `directory`: entries whose name `pidOf` attributes to a pid that is dead
 * on this host AND that were last modified more than `olderThanMs` ago (the age guard keeps a writer on another
 * host of a shared file system, whose pid means nothing here, safe). Best effort: cleanup never fails a caller.
 */
export const sweepAbandoned = (
  directory: string,
  pidOf: (name: string) => number | undefined,
  olderThanMs: number
) =>
  Effect.gen(function*() {
    const fs = yield* MemoryFs
    const now = yield* Clock.currentTimeMillis
    for (const { name } of yield* fs.readDirectory(directory)) {
      const pid = pidOf(name)
      if (pid === undefined || pid === currentPid() || isProcessAlive(pid)) continue
      const entry = NodePath.join(directory, name)
      if (now - (yield* fs.lstat(entry)).mtimeMs > olderThanMs) yield* fs.remove(entry, { recursive: true })
    }
  }).pipe(Effect.ignore)

/** The pid in the name of a temp file of `writeFileAtomic`, if it is one. */
export const tempFileOwner = (name: string): number | undefined => {
  const match = TEMP_FILE_PATTERN.exec(name)
  return match === null ? undefined : Number(match[1])
}

/** Create `path` and its missing parents with mode 0700. An existing directory is left as it is. */
export const ensureDir = Effect.fn("ensureDir")(function*(path: string) {
  const fs = yield* FileSystem.FileSystem
  yield* fs.makeDirectory(path, { recursive: true, mode: DIR_MODE }).pipe(
    Effect.mapError(toMemoryIoError("create directory", path))
  )
})

/**
 * Replace `target` with `data` atomically (temp file + fsync + rename + directory fsync). On any failure or
 * interruption the temp file is removed and the target keeps its previous content.
 */
export const writeFileAtomic = Effect.fn("writeFileAtomic")(function*(
  target: string,
  data: string | Uint8Array,
  options?: { readonly mode?: number | undefined }
) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const directory = path.dirname(target)
  const temp = path.join(directory, tempFileName(path.basename(target), yield* uniqueToken))
  const bytes = typeof data === "string" ? encoder.encode(data) : data

  const writeTempDurably = Effect.scoped(Effect.gen(function*() {
    const file = yield* fs.open(temp, { flag: "wx", mode: options?.mode ?? FILE_MODE })
    // writeAll fails on an empty buffer (a 0-byte write reads as "WriteZero"): an empty file needs no write.
    if (bytes.length > 0) yield* file.writeAll(bytes)
    yield* file.sync
  }))

  yield* writeTempDurably.pipe(
    Effect.zipRight(fs.rename(temp, target)),
    // The temp file is ours alone; failing to remove it must not hide the error that matters.
    Effect.onError(() => Effect.ignore(fs.remove(temp, { force: true }))),
    Effect.mapError(toMemoryIoError("write", target))
  )
  yield* syncDirectory(directory)
})

/**
 * Make the rename itself durable. Best effort by design: some platforms (Windows, some FUSE mounts) cannot
 * open or fsync a directory, and the new content is already complete on disk at this point.
 */
const syncDirectory = (directory: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    yield* Effect.scoped(Effect.flatMap(fs.open(directory, { flag: "r" }), (handle) => handle.sync))
  }).pipe(Effect.ignore)
