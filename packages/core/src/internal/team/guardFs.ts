/**
 * TeamGuard layer 3 and the guarded reads and writes: policy on top of `Containment` and `MemoryFs`. Containment
 * checks the key (layers 1 and 2) and the real path of the target (layer 3); the file system opens without
 * following links or blocking, and writes atomically, verifying the parent again right before the rename. What
 * the guard adds: a team file is a regular, singly linked file of at most `MEMORY_MAX_BYTES`, and every
 * failure is a typed `PathTraversalError` (or `MemoryNotFoundError` / `MemoryIoError`) naming what was refused.
 */
import * as Effect from "effect/Effect"
import * as NodePath from "node:path"
import { type ContainedReal, Containment } from "../../Containment.js"
import { fromMemoryFsError, MemoryIoError, type MemoryNotFoundError, type PathTraversalError } from "../../Errors.js"
import { MEMORY_MAX_BYTES } from "../../Memory.js"
import { MemoryFs, type WriteHooks } from "../../MemoryFs.js"

export type ResolvedTeamPath = ContainedReal

/** The services the guard's operations run on (the guard provides the ones it was built with). */
export type TeamGuardParts = MemoryFs | Containment

/** All three layers: key sanitisation, string containment, then symlink containment on disk. */
export const resolveTeamPath = (
  teamDir: string,
  key: string
): Effect.Effect<ResolvedTeamPath, PathTraversalError, Containment> =>
  Effect.flatMap(Containment, (containment) => containment.resolve(teamDir, key))

/** A file-system failure of a guarded read or write, as what the caller can act on. */
export const guardError = (key: string, path: string) => fromMemoryFsError(key, { notFoundPath: path })

/** Test seam for the check-then-use race of a read or a write (never set in production code). */
export interface ReadHooks {
  /** After all three layers accepted the key, before the file is opened (or any directory is created). */
  readonly afterResolve?: ((target: string) => void) | undefined
}

/** A guarded write's test seams: `afterResolve`, then `MemoryFs`'s own (before the temp file, before the rename). */
export type TeamWriteHooks = ReadHooks & WriteHooks

/**
 * Reads a team file: opened without following a link and without blocking, a regular singly linked file of at
 * most the size limit; after opening, its real path must still be inside the team directory and name the very
 * file held open (no parent swapped between the check and the open).
 */
export const readTeamFile = (
  teamDir: string,
  key: string,
  hooks: ReadHooks = {}
): Effect.Effect<string, PathTraversalError | MemoryNotFoundError | MemoryIoError, TeamGuardParts> =>
  Effect.gen(function*() {
    const resolved = yield* resolveTeamPath(teamDir, key)
    hooks.afterResolve?.(resolved.path)
    return yield* readRegularFileNoFollow(key, resolved.path, MEMORY_MAX_BYTES, resolved.realRoot)
  })

/** The careful read shared with the audit. */
export const readRegularFileNoFollow = (
  key: string,
  path: string,
  maxBytes: number,
  realTeam: string
): Effect.Effect<string, PathTraversalError | MemoryNotFoundError | MemoryIoError, MemoryFs> =>
  Effect.flatMap(MemoryFs, (fs) =>
    fs.readFile(path, { maxBytes, singleLink: true, within: realTeam }).pipe(
      Effect.map((file) => file.text),
      Effect.mapError(guardError(key, path))
    ))

/**
 * Atomic write of a team file: missing directories created one level at a time, each verified inside the team
 * directory; the temp file created exclusively without following a link (0600), written and fsynced; the
 * parent's real path verified again right before `rename`, which replaces a link planted at the target instead
 * of following it. On any failure our temp file is removed.
 */
export const writeTeamFile = (
  teamDir: string,
  key: string,
  content: string | Uint8Array,
  hooks: TeamWriteHooks = {}
): Effect.Effect<string, PathTraversalError | MemoryIoError, TeamGuardParts> =>
  Effect.gen(function*() {
    const fs = yield* MemoryFs
    const resolved = yield* resolveTeamPath(teamDir, key)
    hooks.afterResolve?.(resolved.path)
    yield* fs.makeDirectory(NodePath.resolve(teamDir)).pipe(
      Effect.mapError((error) => new MemoryIoError({ op: error.op, path: error.path, detail: error.message }))
    )
    yield* fs.writeFileAtomic(resolved.path, content, {
      within: resolved.realRoot,
      hooks
    }).pipe(
      Effect.mapError((error) => {
        const mapped = guardError(key, resolved.path)(error)
        return mapped._tag === "MemoryNotFoundError" ?
          new MemoryIoError({ op: error.op, path: error.path, detail: `${error.detail}: ${error.reason}` }) :
          mapped
      })
    )
    return resolved.path
  })
