/**
 * The last commit time of every file of a git tree, from ONE `git log` (docs/team-memory.md#ages-after-a-sync):
 * git checks files out with the current time, so memdir reads when each file last changed from the history instead
 * of asking git once per file.
 */

/**
 * `git log` arguments: newest first, each commit as `\x01<committer time>` and the files it changed, NUL-separated,
 * names unquoted. `relative`: paths relative to the current directory, and only commits that touched it.
 */
export const commitTimesArgs = (relative: boolean): ReadonlyArray<string> => [
  "-c",
  "core.quotepath=false",
  "log",
  "-z",
  "--name-only",
  "--no-renames",
  "--format=%x01%ct",
  ...(relative ? ["--relative"] : []),
  "HEAD",
  "--",
  ...(relative ? ["."] : [])
]

/**
 * Parses the output of `commitTimesArgs`: path (relative to the work tree, `/`-separated) → epoch ms of the newest
 * commit that changed it. A commit lists its files after its time; the first time seen for a path is its last change.
 */
export const parseCommitTimes = (stdout: string): Map<string, number> => {
  const times = new Map<string, number>()
  let current: number | undefined
  for (const raw of stdout.split("\0")) {
    const token = raw.replace(/^\n+/, "")
    if (token.length === 0) continue
    if (token.startsWith("\x01")) {
      const seconds = Number(token.slice(1).trim())
      current = Number.isFinite(seconds) ? seconds * 1000 : undefined
      continue
    }
    if (current !== undefined && !times.has(token)) times.set(token, current)
  }
  return times
}
