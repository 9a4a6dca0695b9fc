/**
 * Where a background agent's run (the extractor, dream) keeps what it replaced: `<memdir>/<stateDir>/<stamp>/`, the
 * previous version of each memory it overwrote or deleted at the memory's own key, beside the run's report
 * (docs/extraction.md#backups, docs/dream-and-logs.md#backups-and-the-report). One mechanism for both programs:
 *
 * - the name is chosen when the run starts (`<stamp>`, or `<stamp>-2`… when a run of the same second has it; each
 *   program chooses under its own lock), the directory is created only with its first file, so a run that replaced
 *   nothing, or was interrupted before it did, leaves no empty directory;
 * - every file is written through `MemoryFs` (atomically, 0600 in 0700 directories) inside the memory directory's
 *   real path: a state directory that is a symbolic link leading out is refused (`PathTraversalError`,
 *   `symlink-escape`), never followed.
 */
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Semaphore from "effect/Semaphore"
import * as NodePath from "node:path"
import { fromMemoryFsError, MemoryIoError, type PathTraversalError } from "../../Errors.js"
import { MemoryFs, type MemoryFsError } from "../../MemoryFs.js"

/** A link leading out is a refusal; anything else (a gone directory included) an I/O failure of the write. */
const refusalOrIo = (key: string) => (error: MemoryFsError): PathTraversalError | MemoryIoError => {
  const mapped = fromMemoryFsError(key)(error)
  return mapped._tag === "MemoryNotFoundError" ?
    new MemoryIoError({ op: error.op, path: error.path, detail: `${error.reason} (${error.detail})` }) :
    mapped
}

/** `2026-03-05T12-00-00Z`: a timestamp usable as a directory name everywhere. */
export const stampOf = (now: number): string => new Date(now).toISOString().replace(/\.\d+Z$/, "Z").replace(/:/g, "-")

export interface RunTrace {
  /** The run's directory relative to the memory directory (`/`-separated), e.g. `.dream/2026-03-05T12-00-00Z`. */
  readonly backupDir: string
  /** Its absolute path. */
  readonly absolute: string
  /**
   * Keep `text` as the previous version of the memory `file` (its key), unless this run already kept one for it:
   * the first version a run replaced is the one it keeps. Answers the backup's path relative to the memory directory.
   */
  readonly keepPrevious: (file: string, text: string) => Effect.Effect<string, PathTraversalError | MemoryIoError>
  /** Every memory this run kept a previous version of: its key → the backup's path relative to the memory dir. */
  readonly backups: Effect.Effect<ReadonlyMap<string, string>>
  /**
   * Write `relative` (the report) into the run's directory, creating it with its first file; answers the file's path
   * relative to the memory directory.
   */
  readonly write: (relative: string, content: string) => Effect.Effect<string, PathTraversalError | MemoryIoError>
}

/**
 * The run's directory under `<memoryDir>/<stateDir>/` (`stateDir` may be nested: `.extract/<session>`), its name
 * chosen now, nothing created yet. Call it under the program's lock, so no other run chooses the same name.
 */
export const makeRunTrace = (memoryDir: string, stateDir: string, startedAt: number) =>
  Effect.gen(function*() {
    const fs = yield* MemoryFs
    const root = NodePath.resolve(memoryDir)
    const exists = (relative: string) =>
      fs.exists(NodePath.join(root, ...relative.split("/"))).pipe(Effect.mapError(refusalOrIo(relative)))
    let backupDir = `${stateDir}/${stampOf(startedAt)}`
    for (let n = 2; yield* exists(backupDir); n++) backupDir = `${stateDir}/${stampOf(startedAt)}-${n}`
    const absolute = NodePath.join(root, ...backupDir.split("/"))
    const kept = yield* Ref.make<ReadonlyMap<string, string>>(new Map())
    // one backup at a time: two tools of one turn replacing the same memory keep its first version once
    const serial = yield* Semaphore.make(1)

    const write = (relative: string, content: string) =>
      Effect.gen(function*() {
        const key = `${backupDir}/${relative}`
        const refusal = refusalOrIo(key)
        const realRoot = yield* fs.realPathOfDeepestExisting(root).pipe(Effect.mapError(refusal))
        yield* fs.writeFileAtomic(NodePath.join(absolute, ...relative.split("/")), content, { within: realRoot })
          .pipe(Effect.mapError(refusal))
        return key
      })

    const keepPrevious = (file: string, text: string) =>
      serial.withPermits(1)(Effect.gen(function*() {
        const already = (yield* Ref.get(kept)).get(file)
        if (already !== undefined) return already
        const key = yield* write(file, text)
        yield* Ref.update(kept, (all) => new Map(all).set(file, key))
        return key
      }))

    const trace: RunTrace = { backupDir, absolute, keepPrevious, backups: Ref.get(kept), write }
    return trace
  })
