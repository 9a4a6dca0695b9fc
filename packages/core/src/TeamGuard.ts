/**
 * TeamGuard: every path that touches `<memdir>/team/` goes through here (SPEC §8). Files there come from
 * other people, so all checks fail closed with a `PathTraversalError` naming the check that refused.
 * CONTRACT (owned by the team-guard helper; implementation to be filled in).
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { MemoryIoError, MemoryNotFoundError, PathTraversalError } from "./Errors.js"

export const TEAM_DIR = "team"
/** Team files larger than this are refused on read and reported by the audit. */
export const TEAM_FILE_MAX_BYTES = 250_000

export interface AuditViolation {
  /** Relative to the team directory, `/` separators. */
  readonly path: string
  /** A PathTraversalError reason, or "symlink", "special-file", "oversized", "secret", … */
  readonly reason: string
  readonly detail: string
}

export class TeamGuard extends Context.Tag("@memdir/core/TeamGuard")<TeamGuard, {
  /** All three layers (key sanitisation, string containment, symlink containment); returns the absolute path. */
  readonly resolve: (teamDir: string, key: string) => Effect.Effect<string, PathTraversalError>
  /** Reads a regular file under team/ without following a symlink in the last component; never hangs on a FIFO. */
  readonly read: (
    teamDir: string,
    key: string
  ) => Effect.Effect<string, PathTraversalError | MemoryNotFoundError | MemoryIoError>
  /** Atomic write under team/ that never follows a symlink planted between check and use. */
  readonly write: (
    teamDir: string,
    key: string,
    content: string
  ) => Effect.Effect<string, PathTraversalError | MemoryIoError>
  /** Walks team/ as it is on disk and reports every violation. */
  readonly audit: (teamDir: string) => Effect.Effect<ReadonlyArray<AuditViolation>, MemoryIoError>
}>() {}
