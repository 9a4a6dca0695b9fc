/**
 * The one answer to "is this path inside that directory?", re-exported by `Containment` (docs/architecture.md).
 * Pure string logic on paths the caller has already resolved (no `..`, no `.`): a prefix with a trailing separator,
 * so `memory-evil/x` is not inside `memory/`. Links are the caller's business (`Containment.resolve` compares real
 * paths with it).
 */
import * as NodePath from "node:path"

export interface InsideOptions {
  /** The directory itself counts as inside it. Default false: only what lies below it. */
  readonly allowRoot?: boolean | undefined
  /** The separator of both paths. Default: the platform's (`/` for the in-memory file system). */
  readonly sep?: string | undefined
  /** Compare without case, as Windows names files (what `path.win32.relative` does). Default false. */
  readonly ignoreCase?: boolean | undefined
}

/** `dir` ending with one separator (a file-system root already does). */
export const withSeparator = (dir: string, sep: string = NodePath.sep): string => dir.endsWith(sep) ? dir : dir + sep

/** `candidate` lies below `root` (or is `root`, with `allowRoot`), both resolved. */
export const isInside = (root: string, candidate: string, options: InsideOptions = {}): boolean => {
  const fold = (text: string) => options.ignoreCase === true ? text.toLowerCase() : text
  const dir = fold(root)
  const path = fold(candidate)
  return (options.allowRoot === true && path === dir) || path.startsWith(withSeparator(dir, options.sep))
}
