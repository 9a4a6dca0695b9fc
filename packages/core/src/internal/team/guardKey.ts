/**
 * TeamGuard layers 1 and 2 (docs/team-memory.md), pure string logic: `Containment`'s key sanitisation, then the
 * resolved path strictly inside the team directory (`Containment.isInside`). Layer 3 (real paths on disk) lives in
 * `teamGuardFs.ts`.
 *
 * A key is what a teammate (or a sync) names a team file with: a path relative to `team/`, `/`-separated.
 */
import * as Result from "effect/Result"
import { PathTraversalError } from "../../Errors.js"
import { isInside } from "../containment/inside.js"
import { sanitizeKey } from "../containment/sanitizeKey.js"
import type { PathOps } from "../location/paths.js"

/**
 * Layer 2: the key resolved against the team directory (`..` and `.` collapsed) must lie strictly inside it,
 * compared with a trailing separator so that `team-evil/x` is not inside `team/`. Returns the absolute path.
 */
export const containKey = (
  path: PathOps,
  teamDir: string,
  key: string
): Result.Result<string, PathTraversalError> => {
  const root = path.resolve(teamDir)
  const target = path.resolve(root, key)
  if (isInside(root, target, { sep: path.sep })) return Result.succeed(target)
  const detail = target === root ? "names the team directory itself" : `resolves to ${target}`
  return Result.fail(new PathTraversalError({ key, reason: "escapes-root", detail }))
}

/** Layers 1 and 2 together: what can be decided without touching the disk. */
export const checkKeyWith = (
  path: PathOps,
  teamDir: string,
  key: string
): Result.Result<string, PathTraversalError> =>
  Result.flatMap(sanitizeKey(key), (sane) => containKey(path, teamDir, sane))
