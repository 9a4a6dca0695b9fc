/**
 * How a team sync keeps both versions of a memory two people edited at once: ours stays at its path, theirs is
 * saved beside it as `<stem>.conflict-<sha>.md` (both complete, valid memories). Doctor reports every such pair
 * as `team-conflict` until someone merges them and deletes the copy. Shared by TeamSync and Doctor.
 */

/** `feedback_x.conflict-1a2b3c4d.md`: group 1 is the original's stem, group 2 the short sha of their version. */
export const CONFLICT_COPY = /^(.+)\.conflict-([0-9a-f]{7,40})\.md$/

/** The name theirs is saved under: `dir/feedback_x.md` + `1a2b3c4d…` → `dir/feedback_x.conflict-1a2b3c4d.md`. */
export const conflictCopyPath = (path: string, theirsSha: string): string => {
  const stem = path.replace(/\.md$/i, "")
  return `${stem}.conflict-${theirsSha.slice(0, 8)}.md`
}

/** For a conflict copy, the path of the memory it conflicts with; `undefined` for any other path. */
export const conflictOriginal = (path: string): string | undefined => {
  const slash = path.lastIndexOf("/")
  const match = CONFLICT_COPY.exec(path.slice(slash + 1))
  return match === null ? undefined : `${path.slice(0, slash + 1)}${match[1]}.md`
}
