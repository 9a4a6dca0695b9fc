/**
 * Pure path rules behind MemoryPaths and Settings (docs/configuration.md). Each rule takes the path operations it
 * needs, so the services run them on the `Path` service while the public pure helpers bind `node:path`
 * (and tests can run them on `node:path`'s win32 flavour).
 */
import type * as Path from "effect/Path"
import * as Result from "effect/Result"
import { createHash } from "node:crypto"
import { InvalidMemoryDirError } from "../../Errors.js"
import { isInside, withSeparator } from "../containment/inside.js"

/** The subset of `Path.Path` these rules use; `node:path` satisfies it too. */
export type PathOps = Pick<Path.Path, "sep" | "resolve" | "isAbsolute" | "parse" | "join" | "relative">

/** Longest sanitized root kept verbatim (the reference's limit; leaves room in a 255-byte name). */
export const MAX_SANITIZED_LENGTH = 200

/** Hex digits of SHA-256 appended to a sanitized root longer than `MAX_SANITIZED_LENGTH`. */
export const SANITIZED_HASH_LENGTH = 8

/**
 * Directory name for a project root (docs/configuration.md).
 *
 * - The root is NFC-normalised first, so the NFC and NFD spellings of one path (both occur on macOS)
 *   name the same directory.
 * - A "character" is a UTF-16 code unit, like the reference's `/[^a-zA-Z0-9]/g`: every code unit outside
 *   `[A-Za-z0-9]` becomes `-` (an astral character therefore becomes `--`). The output is ASCII, so no
 *   surrogate pair is ever split, and every root of up to 200 code units matches the reference's name.
 * - Longer than 200: the first 200 characters, `-`, then the first 8 hex digits of the SHA-256 of the
 *   full NFC root encoded as UTF-8. The reference uses a runtime-dependent hash there (Bun.hash vs djb2),
 *   so only its short names are reproducible; ours is the same on every runtime.
 */
export const sanitizeProjectName = (root: string): string => {
  const normalized = root.normalize("NFC")
  const sanitized = normalized.replace(/[^A-Za-z0-9]/g, "-")
  if (sanitized.length <= MAX_SANITIZED_LENGTH) {
    return sanitized
  }
  const hash = createHash("sha256").update(normalized, "utf8").digest("hex").slice(0, SANITIZED_HASH_LENGTH)
  return `${sanitized.slice(0, MAX_SANITIZED_LENGTH)}-${hash}`
}

/** Appends the separator unless the path already ends with one (a filesystem root does). */
export const withTrailingSeparator = (path: PathOps, dir: string): string => withSeparator(dir, path.sep)

/** `<base>/projects/<sanitized root>/memory/`, NFC-normalised, with a trailing separator. */
export const defaultMemoryDirWith = (path: PathOps, base: string, root: string): string =>
  withTrailingSeparator(path, path.resolve(base, "projects", sanitizeProjectName(root), "memory")).normalize("NFC")

/** Why an override of the memory directory is refused (the `reason` of `InvalidMemoryDirError`). */
export type InvalidMemoryDirReason =
  | "null-byte"
  | "too-short"
  | "bare-tilde"
  | "escapes-home"
  | "relative"
  | "filesystem-root"
  | "contains-home"

const isTildePath = (path: PathOps, value: string): boolean =>
  value.startsWith("~/") || (path.sep === "\\" && value.startsWith("~\\"))

/** Both resolved; on Windows without case, as `path.win32.relative` compares. */
const homeCheck = (path: PathOps) => ({ allowRoot: true, sep: path.sep, ignoreCase: path.sep === "\\" })

/**
 * Checks a memory-directory override (env, flag or trusted setting) and turns it into the directory:
 * absolute or `~/…` only; `~/` expands to `userHome`; the result is resolved (no `..`), NFC-normalised and
 * ends with the separator. Refused, checked in this order: null bytes, bare `~`, a filesystem root (`/`, `C:\`,
 * `\\server\share\`), fewer than 3 characters, `~/…` that leaves the home, relative paths (also `~user/…`),
 * and the home directory or any ancestor of it (auto-allowed writes would then cover the whole home).
 */
export const validateMemoryDirOverrideWith = (
  path: PathOps,
  value: string,
  source: string,
  userHome: string
): Result.Result<string, InvalidMemoryDirError> => {
  const refuse = (reason: InvalidMemoryDirReason) => Result.fail(new InvalidMemoryDirError({ source, value, reason }))
  const isRoot = (resolved: string) => path.parse(resolved).root === resolved
  if (value.includes("\0")) return refuse("null-byte")
  if (value === "~") return refuse("bare-tilde")
  // Before the length check, so that "/" is reported as the root it is.
  if (path.isAbsolute(value) && isRoot(path.resolve(value))) return refuse("filesystem-root")
  if (value.length < 3) return refuse("too-short")
  const home = path.resolve(userHome)
  let resolved: string
  if (isTildePath(path, value)) {
    // join, not resolve: "~//etc" means "~/etc", never "/etc"
    resolved = path.resolve(path.join(home, value.slice(2)))
    if (!isInside(home, resolved, homeCheck(path))) return refuse("escapes-home")
  } else if (path.isAbsolute(value)) {
    resolved = path.resolve(value)
  } else {
    return refuse("relative")
  }
  if (isInside(resolved, home, homeCheck(path))) return refuse("contains-home")
  return Result.succeed(withTrailingSeparator(path, resolved.normalize("NFC")))
}

/**
 * Whether `candidate` lies inside `memoryDir` (the directory itself counts). Both are resolved and
 * NFC-normalised, then compared as prefixes with a trailing separator, so `memory-evil/x` is not inside
 * `memory/`. Pure string logic: symlinks are not followed (TeamGuard does that for team files).
 */
export const isMemoryPathWith = (path: PathOps, memoryDir: string, candidate: string): boolean => {
  const dir = path.resolve(memoryDir.normalize("NFC"))
  const target = path.resolve(candidate.normalize("NFC"))
  return isInside(dir, target, { allowRoot: true, sep: path.sep })
}

/** Expands a leading `~` or `~/` to the user's home; anything else is returned unchanged. */
export const expandHome = (path: PathOps, value: string, userHome: string): string =>
  value === "~" ? userHome : isTildePath(path, value) ? path.join(userHome, value.slice(2)) : value

const truthyValues: ReadonlySet<string> = new Set(["1", "true", "yes", "on"])
const falsyValues: ReadonlySet<string> = new Set(["0", "false", "no", "off", ""])

/** An environment switch that is set to `1`, `true`, `yes` or `on` (any case, surrounding blanks ignored). */
export const isEnvTruthy = (value: string | undefined): boolean =>
  value !== undefined && truthyValues.has(value.trim().toLowerCase())

/** An environment switch that is set, but to `0`, `false`, `no`, `off` or the empty string. */
export const isEnvDefinedFalsy = (value: string | undefined): boolean =>
  value !== undefined && falsyValues.has(value.trim().toLowerCase())
