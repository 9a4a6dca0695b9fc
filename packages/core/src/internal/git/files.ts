/**
 * The small files git writes to point from one place to another, parsed once for every reader of git's files
 * (`GitRoot`, `GitAges`, `Settings`), none of which runs `git`: the `.git` file of a linked worktree, a submodule or a
 * `--separate-git-dir` checkout (`gitdir: <path>`), and in a worktree's git dir `commondir` (the shared git dir) and
 * `gitdir` (the back link to the worktree's `.git` file). Paths come back as written: relative ones are resolved by
 * the caller against the directory holding the file.
 */

const GITDIR_LINE = /^gitdir:[ \t]*(.*?)[ \t]*$/m

/** Largest git file read to find a repository (a pointer file, `HEAD`, a `config`): git's own are far smaller. */
export const GIT_FILE_MAX_BYTES = 1024 * 1024

/** The git dir a `.git` file names (its `gitdir:` line), as written; `undefined` when it names none. */
export const parseDotGitFile = (text: string): string | undefined => {
  const target = GITDIR_LINE.exec(text)?.[1]
  return target === undefined || target === "" ? undefined : target
}

/** The path a `commondir` or a worktree's `gitdir` file holds (one line); `undefined` when it is blank. */
export const parsePointerFile = (text: string): string | undefined => {
  const target = text.trim()
  return target === "" ? undefined : target
}
