/**
 * TeamGuard: every path that touches `<memdir>/team/` goes through here (docs/team-memory.md). Files there come from
 * other people, so all checks fail closed with a `PathTraversalError` naming the check that refused:
 *
 * 1. key sanitisation (`Containment.sanitizeKey`): null bytes, absolute/home/drive/UNC paths, backslashes, Unicode
 *    look-alikes of `/`, `\` and `..`, and anything that becomes one of those once percent-decoded
 *    (double encoding, overlong UTF-8, `%uXXXX`);
 * 2. string containment (`checkKey`): `..` collapsed, then the team directory plus a trailing separator must
 *    prefix the result (`team-evil/` is not `team/`);
 * 3. symlink containment (`resolve`): the real path of the deepest existing ancestor, with the missing tail
 *    re-joined, must lie inside the team directory's real path; a dangling link, a loop, or anything that
 *    prevents the check refuses.
 *
 * Reads refuse symlinks, FIFOs, devices, hard-linked and oversized files without ever blocking; writes are
 * atomic and never follow a symlink planted between check and use.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Result from "effect/Result"
import * as NodePath from "node:path"
import * as Containment from "./Containment.js"
import { type MemoryIoError, type MemoryNotFoundError, type PathTraversalError } from "./Errors.js"
import { auditTeamDir, type AuditViolation } from "./internal/team/guardAudit.js"
import { readTeamFile, resolveTeamPath, writeTeamFile } from "./internal/team/guardFs.js"
import { checkKeyWith } from "./internal/team/guardKey.js"
import { TEAM_DIR } from "./Memory.js"
import { layer as MemoryFsLayer, layerMemory as MemoryFsLayerMemory, type MemoryFs } from "./MemoryFs.js"

export { type AuditViolation }

/** The key sanitizer is `Containment`'s (one for every key); re-exported for the team's callers. */
export { percentDecodeFully, sanitizeKey } from "./Containment.js"

export { TEAM_DIR }

/** The CLI exit code of `memdir team audit` when it found at least one violation (docs/cli.md#exit-codes). */
export const AUDIT_VIOLATIONS_EXIT_CODE = 21

/** Layers 1 and 2 (no disk access): the absolute path `key` names inside `teamDir`, or why it is refused. */
export const checkKey = (teamDir: string, key: string): Result.Result<string, PathTraversalError> =>
  checkKeyWith(NodePath, teamDir, key)

export class TeamGuard extends Context.Service<TeamGuard, {
  /**
   * All three layers (key sanitisation, string containment, symlink containment). Returns the absolute path under
   * `teamDir` as given (`..` collapsed); its real path has been verified inside the team directory's real path.
   */
  readonly resolve: (teamDir: string, key: string) => Effect.Effect<string, PathTraversalError>
  /** Reads a regular file under team/ without following a symlink in the last component; never hangs on a FIFO. */
  readonly read: (
    teamDir: string,
    key: string
  ) => Effect.Effect<string, PathTraversalError | MemoryNotFoundError | MemoryIoError>
  /** Atomic write under team/ that never follows a symlink planted between check and use. Returns the path. */
  readonly write: (
    teamDir: string,
    key: string,
    content: string
  ) => Effect.Effect<string, PathTraversalError | MemoryIoError>
  /** Walks team/ as it is on disk (lstat, never following) and reports every violation, sorted by path. */
  readonly audit: (teamDir: string) => Effect.Effect<ReadonlyArray<AuditViolation>, MemoryIoError>
}>()("@memdir/core/TeamGuard") {}

/** The guard over the given file system and containment (policy: keys, sizes, file kinds). */
export const make: Effect.Effect<TeamGuard["Service"], never, MemoryFs | Containment.Containment> = Effect
  .gen(
    function*() {
      const parts = yield* Effect.context<MemoryFs | Containment.Containment>()
      return {
        resolve: Effect.fn("TeamGuard.resolve")(function*(teamDir: string, key: string) {
          return (yield* resolveTeamPath(teamDir, key).pipe(Effect.provide(parts))).path
        }),
        read: Effect.fn("TeamGuard.read")(function*(teamDir: string, key: string) {
          return yield* readTeamFile(teamDir, key).pipe(Effect.provide(parts))
        }),
        write: Effect.fn("TeamGuard.write")(function*(teamDir: string, key: string, content: string) {
          return yield* writeTeamFile(teamDir, key, content).pipe(Effect.provide(parts))
        }),
        audit: Effect.fn("TeamGuard.audit")(function*(teamDir: string) {
          return yield* auditTeamDir(teamDir).pipe(Effect.provide(parts))
        })
      }
    }
  )

/** The guard over a given `MemoryFs` (and its `Containment`): the in-memory world builds it this way. */
export const layerOver: Layer.Layer<TeamGuard, never, MemoryFs> = Layer.effect(TeamGuard, make).pipe(
  Layer.provide(Containment.layer)
)

/** The real guard on the real file system: the live `MemoryFs` built in. */
export const layer: Layer.Layer<TeamGuard> = layerOver.pipe(Layer.provide(MemoryFsLayer))

/**
 * In memory, deterministic: the live guard over an in-memory `MemoryFs` of its own, seeded with `files` (absolute
 * path → content; seeded names are not checked, so a test can plant what a hostile sync would). To share one
 * in-memory world with other services, provide `layerOver` with their `MemoryFs.layerMemory()` instead.
 */
export const layerTest = (files: Readonly<Record<string, string>> = {}): Layer.Layer<TeamGuard> =>
  layerOver.pipe(Layer.provide(MemoryFsLayerMemory(files)))
