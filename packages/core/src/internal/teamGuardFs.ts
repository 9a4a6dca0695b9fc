/**
 * TeamGuard layer 3 and the guarded reads and writes (SPEC §8), on `node:fs` directly: `@effect/platform`'s
 * FileSystem has no `lstat`, no `O_NOFOLLOW`/`O_NONBLOCK` and hides errno codes (`ELOOP` vs `ENOENT`), which
 * are exactly what these checks are made of. Every failure is mapped to a typed error here; nothing throws.
 *
 * Residual race (documented in the README): Node has no `openat`/`renameat`, so between re-verifying a parent
 * directory's real path and the `rename` into it, a LOCAL process with write access to `team/` could still
 * swap that directory for a symlink. A teammate's commit cannot do that; the final component is never followed.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { constants } from "node:fs"
import * as fsp from "node:fs/promises"
import * as NodePath from "node:path"
import { MemoryIoError, MemoryNotFoundError, PathTraversalError } from "../Errors.js"
import { DIR_MODE, FILE_MODE, tempFileName, uniqueToken } from "./atomicFile.js"
import { withTrailingSeparator } from "./paths.js"
import { checkKeyWith } from "./teamGuardKey.js"

/** Team files larger than this are refused on read and reported by the audit. */
export const TEAM_FILE_MAX_BYTES = 250_000

/** A failed system call, with its errno code (`ENOENT`, `ELOOP`, …). Internal: mapped before it leaves. */
export class Errno extends Data.TaggedError("Errno")<{ readonly code: string; readonly detail: string }> {}

export const sys = <A>(operation: () => Promise<A>): Effect.Effect<A, Errno> =>
  Effect.tryPromise({
    try: operation,
    catch: (u) =>
      new Errno({
        code: (u as NodeJS.ErrnoException | undefined)?.code ?? "UNKNOWN",
        detail: u instanceof Error ? u.message : String(u)
      })
  })

const refuse = (key: string, reason: PathTraversalError["reason"], detail: string) =>
  Effect.fail(new PathTraversalError({ key, reason, detail }))

const isInside = (realRoot: string, candidate: string): boolean =>
  candidate.startsWith(withTrailingSeparator(NodePath, realRoot))

const isInsideOrEqual = (realRoot: string, candidate: string): boolean =>
  candidate === realRoot || isInside(realRoot, candidate)

/**
 * The real path of `absolute`: realpath of the deepest ancestor that exists, with the missing tail re-joined.
 * A dangling symlink, a loop or any other failure to verify refuses (reported against `key`).
 */
export const realPathOfDeepestExisting = (key: string, absolute: string): Effect.Effect<string, PathTraversalError> =>
  Effect.gen(function*() {
    const missingTail: Array<string> = []
    let current = absolute
    while (true) {
      const real = yield* Effect.either(sys(() => fsp.realpath(current)))
      if (Either.isRight(real)) return NodePath.join(real.right, ...[...missingTail].reverse())
      const code = real.left.code
      if (code === "ELOOP") return yield* refuse(key, "symlink-loop", `${current}: too many levels of symbolic links`)
      if (code !== "ENOENT") return yield* refuse(key, "unverifiable", `${current}: ${code}`)
      // ENOENT: either `current` does not exist (walk up), or it is a link whose target does not
      const entry = yield* Effect.either(sys(() => fsp.lstat(current)))
      if (Either.isRight(entry)) {
        if (!entry.right.isSymbolicLink()) return yield* refuse(key, "unverifiable", `${current} changed while checked`)
        const target = yield* Effect.orElseSucceed(sys(() => fsp.readlink(current)), () => "?")
        return yield* refuse(key, "dangling-symlink", `${current} -> ${target} (missing)`)
      }
      if (entry.left.code !== "ENOENT") return yield* refuse(key, "unverifiable", `${current}: ${entry.left.code}`)
      const parent = NodePath.dirname(current)
      if (parent === current) return yield* refuse(key, "unverifiable", `no ancestor of ${absolute} exists`)
      missingTail.push(NodePath.basename(current))
      current = parent
    }
  })

export interface ResolvedTeamPath {
  /** Absolute, under the team directory as given (`..` collapsed); what callers show and pass on. */
  readonly path: string
  /** Real path of the team directory (or of its deepest existing ancestor, with the tail re-joined). */
  readonly realTeam: string
  /** Real path of `path`, verified strictly inside `realTeam`. */
  readonly real: string
}

/** All three layers: key sanitisation, string containment, then symlink containment on disk. */
export const resolveTeamPath = (teamDir: string, key: string): Effect.Effect<ResolvedTeamPath, PathTraversalError> =>
  Effect.gen(function*() {
    const path = yield* checkKeyWith(NodePath, teamDir, key)
    const realTeam = yield* realPathOfDeepestExisting(key, NodePath.resolve(teamDir))
    const real = yield* realPathOfDeepestExisting(key, path)
    if (!isInside(realTeam, real)) {
      return yield* refuse(key, "symlink-escape", `resolves to ${real}, outside ${realTeam}`)
    }
    return { path, realTeam, real }
  })

const ioError = (op: string, path: string) => (error: Errno) =>
  new MemoryIoError({ op, path, detail: `${error.code}: ${error.detail}` })

const describeKind = (
  stats: {
    isDirectory(): boolean
    isFIFO(): boolean
    isSocket(): boolean
    isCharacterDevice(): boolean
    isBlockDevice(): boolean
    isSymbolicLink(): boolean
  }
): string =>
  stats.isDirectory() ?
    "a directory" :
    stats.isFIFO() ?
    "a FIFO" :
    stats.isSocket() ?
    "a socket" :
    stats.isCharacterDevice() ?
    "a character device" :
    stats.isBlockDevice() ?
    "a block device" :
    stats.isSymbolicLink() ?
    "a symbolic link" :
    "not a regular file"

export { describeKind }

/**
 * Opens a team file for reading without following a symlink in its last component and without blocking on a
 * FIFO (`O_NOFOLLOW | O_NONBLOCK`), then insists on a regular, singly linked file of at most the size limit.
 * After opening, the file's real path is checked again and must be the very inode we hold (no swapped parent).
 */
export const readTeamFile = (
  teamDir: string,
  key: string,
  hooks: ReadHooks = {}
): Effect.Effect<string, PathTraversalError | MemoryNotFoundError | MemoryIoError> =>
  Effect.gen(function*() {
    const resolved = yield* resolveTeamPath(teamDir, key)
    hooks.afterResolve?.(resolved.path)
    const bytes = yield* readRegularFileNoFollow(key, resolved.path, TEAM_FILE_MAX_BYTES, resolved.realTeam)
    return new TextDecoder("utf-8").decode(bytes)
  })

/** The shared careful read: also used by the audit (which has done its own lstat already). */
export const readRegularFileNoFollow = (
  key: string,
  path: string,
  maxBytes: number,
  realTeam: string
): Effect.Effect<Uint8Array, PathTraversalError | MemoryNotFoundError | MemoryIoError> =>
  Effect.acquireUseRelease(
    sys(() => fsp.open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)).pipe(
      Effect.catchAll((error): Effect.Effect<never, PathTraversalError | MemoryNotFoundError | MemoryIoError> => {
        switch (error.code) {
          case "ENOENT":
            return Effect.fail(new MemoryNotFoundError({ path }))
          // Linux and macOS answer ELOOP, FreeBSD EMLINK, when O_NOFOLLOW meets a symlink
          case "ELOOP":
          case "EMLINK":
            return refuse(key, "not-regular-file", "a symbolic link")
          // opening a socket, or a device without a driver
          case "ENXIO":
          case "ENODEV":
            return refuse(key, "not-regular-file", "a socket or device")
          default:
            return Effect.fail(ioError("open", path)(error))
        }
      })
    ),
    (handle) =>
      Effect.gen(function*() {
        const stats = yield* sys(() => handle.stat()).pipe(Effect.mapError(ioError("stat", path)))
        if (!stats.isFile()) return yield* refuse(key, "not-regular-file", describeKind(stats))
        if (stats.nlink > 1) {
          return yield* refuse(key, "not-regular-file", `has ${stats.nlink} hard links (may alias a file elsewhere)`)
        }
        if (stats.size > maxBytes) return yield* refuse(key, "too-large", `${stats.size} bytes (limit ${maxBytes})`)
        // The open path may have gone through a parent swapped after the check: the inode must be the one that
        // the verified real path names now.
        const real = yield* realPathOfDeepestExisting(key, path)
        if (!isInside(realTeam, real)) return yield* refuse(key, "symlink-escape", `resolves to ${real}`)
        const named = yield* sys(() => fsp.lstat(real)).pipe(
          Effect.mapError(() => new PathTraversalError({ key, reason: "unverifiable", detail: `${real} vanished` }))
        )
        if (named.ino !== stats.ino || named.dev !== stats.dev) {
          return yield* refuse(key, "unverifiable", `${path} changed while it was opened`)
        }
        // the file may grow between fstat and read: read one byte past the limit to notice
        const buffer = new Uint8Array(maxBytes + 1)
        let filled = 0
        while (filled < buffer.length) {
          const { bytesRead } = yield* sys(() => handle.read(buffer, filled, buffer.length - filled, filled)).pipe(
            Effect.mapError(ioError("read", path))
          )
          if (bytesRead === 0) break
          filled += bytesRead
        }
        if (filled > maxBytes) return yield* refuse(key, "too-large", `grew past ${maxBytes} bytes while read`)
        return buffer.subarray(0, filled)
      }),
    (handle) => Effect.promise(() => handle.close().catch(() => undefined))
  )

/** Test seam for the check-then-use race of a read (never set in production code). */
export interface ReadHooks {
  /** After all three layers accepted the key, before the file is opened. */
  readonly afterResolve?: (target: string) => void
}

/** Test seams for the check-then-use races (never set in production code). */
export interface WriteHooks {
  /** After all three layers accepted the key, before any directory is created. */
  readonly afterResolve?: (target: string) => void
  /** Right before the temp file is created (exclusively, without following a link). */
  readonly beforeTempOpen?: (temp: string) => void
  /** After the temp file is written and synced, right before the parent is re-verified and the rename. */
  readonly beforeRename?: (target: string, temp: string) => void
}

/**
 * Creates the missing directories between the team directory and `directory`, one level at a time (mode 0700),
 * checking before each step that what exists so far still resolves inside the team directory. Returns the
 * verified real path of `directory`.
 */
const makeVerifiedDirectories = (key: string, teamDir: string, directory: string, realTeam: string) =>
  Effect.gen(function*() {
    const root = NodePath.resolve(teamDir)
    yield* sys(() => fsp.mkdir(root, { recursive: true, mode: DIR_MODE })).pipe(
      Effect.mapError(ioError("create directory", root))
    )
    const segments = NodePath.relative(root, directory).split(NodePath.sep).filter((s) => s !== "")
    let current = root
    for (const segment of segments) {
      const realCurrent = yield* realPathOfDeepestExisting(key, current)
      if (!isInsideOrEqual(realTeam, realCurrent)) {
        return yield* refuse(key, "symlink-escape", `${current} resolves to ${realCurrent}`)
      }
      current = NodePath.join(current, segment)
      // mkdir never follows a symlink in its last component: an existing link makes it fail with EEXIST
      yield* sys(() => fsp.mkdir(current, { mode: DIR_MODE })).pipe(
        Effect.catchAll((error) =>
          error.code === "EEXIST" ? Effect.void : Effect.fail(ioError("create directory", current)(error))
        )
      )
    }
    const realDirectory = yield* realPathOfDeepestExisting(key, directory)
    if (!isInsideOrEqual(realTeam, realDirectory)) {
      return yield* refuse(key, "symlink-escape", `${directory} resolves to ${realDirectory}`)
    }
    const stats = yield* sys(() => fsp.lstat(realDirectory)).pipe(Effect.mapError(ioError("stat", realDirectory)))
    if (!stats.isDirectory()) return yield* refuse(key, "unverifiable", `${directory} is not a directory`)
    return realDirectory
  })

/**
 * Atomic write of a team file: temp file created with `O_CREAT | O_EXCL | O_NOFOLLOW` (0600) in the verified real
 * parent directory, written and fsynced; the parent's real path is verified again right before `rename`, which
 * replaces a symlink planted at the target instead of following it. On any failure our temp file is removed.
 */
export const writeTeamFile = (
  teamDir: string,
  key: string,
  content: string | Uint8Array,
  hooks: WriteHooks = {}
): Effect.Effect<string, PathTraversalError | MemoryIoError> =>
  Effect.gen(function*() {
    const resolved = yield* resolveTeamPath(teamDir, key)
    hooks.afterResolve?.(resolved.path)
    const realParent = yield* makeVerifiedDirectories(
      key,
      teamDir,
      NodePath.dirname(resolved.path),
      resolved.realTeam
    )
    const name = NodePath.basename(resolved.path)
    const temp = NodePath.join(realParent, tempFileName(name, yield* uniqueToken))
    const finalTarget = NodePath.join(realParent, name)
    const bytes = typeof content === "string" ? new TextEncoder().encode(content) : content

    hooks.beforeTempOpen?.(temp)
    // The temp file stays open until after the rename: while we hold it, its inode cannot be freed and handed
    // to a file planted under the same name, so comparing inode numbers below is sound.
    yield* Effect.acquireUseRelease(
      sys(() =>
        fsp.open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, FILE_MODE)
      ).pipe(Effect.mapError(ioError("create", temp))),
      (handle) =>
        Effect.gen(function*() {
          if (bytes.length > 0) yield* sys(() => handle.writeFile(bytes)).pipe(Effect.mapError(ioError("write", temp)))
          yield* sys(() => handle.sync()).pipe(Effect.mapError(ioError("sync", temp)))
          const ours = yield* sys(() => handle.stat()).pipe(Effect.mapError(ioError("stat", temp)))
          const isOurs = (now: { readonly ino: number; readonly dev: number; isFile(): boolean }) =>
            now.isFile() && now.ino === ours.ino && now.dev === ours.dev

          const verifyAndRename = Effect.gen(function*() {
            hooks.beforeRename?.(resolved.path, temp)
            const parentNow = yield* realPathOfDeepestExisting(key, NodePath.dirname(resolved.path))
            if (parentNow !== realParent) {
              return yield* refuse(
                key,
                "symlink-escape",
                `${NodePath.dirname(resolved.path)} now resolves to ${parentNow}`
              )
            }
            const tempNow = yield* sys(() => fsp.lstat(temp)).pipe(
              Effect.mapError(() => new PathTraversalError({ key, reason: "unverifiable", detail: `${temp} vanished` }))
            )
            if (!isOurs(tempNow)) return yield* refuse(key, "unverifiable", `${temp} was replaced`)
            yield* sys(() => fsp.rename(temp, finalTarget)).pipe(Effect.mapError(ioError("rename", finalTarget)))
          })

          // Remove the temp file only if the name still holds the inode we wrote (never someone else's file).
          const removeOurTemp = sys(() => fsp.lstat(temp)).pipe(
            Effect.flatMap((now) => isOurs(now) ? sys(() => fsp.unlink(temp)) : Effect.void),
            Effect.ignore
          )
          yield* verifyAndRename.pipe(Effect.onError(() => removeOurTemp))
        }),
      (handle) => Effect.promise(() => handle.close().catch(() => undefined))
    )
    yield* syncDirectory(realParent)
    return resolved.path
  })

/** Best effort, like `atomicFile`: some file systems cannot fsync a directory; the data is already durable. */
const syncDirectory = (directory: string) =>
  Effect.acquireUseRelease(
    sys(() => fsp.open(directory, constants.O_RDONLY | constants.O_DIRECTORY)),
    (handle) => sys(() => handle.sync()),
    (handle) => Effect.promise(() => handle.close().catch(() => undefined))
  ).pipe(Effect.ignore)
