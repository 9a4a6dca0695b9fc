/**
 * Names of the short-lived entries memdir's writers leave beside what they write (a write's temp file, a lock's
 * staging directory), and the sweep that removes those of processes that died: `MemoryFs.writeFileAtomic` names its
 * temp files here, the lock and `MEMORY.md`'s writer sweep here.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Random from "effect/Random"
import * as NodePath from "node:path"
import { MemoryFs } from "./core.js"

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
