/**
 * A line diff of two texts (jsdiff), for showing a variant's prompt against the default section: the reader sees
 * the changed heading or the appended paragraph, not two near-identical walls of text.
 */
import { diffArrays } from "diff"

export interface DiffLine {
  readonly op: "same" | "added" | "removed"
  readonly text: string
}

/** Pure: the lines of `after` against `before`, in order; removed lines come before the added ones they replace. */
export const diffLines = (before: string, after: string): ReadonlyArray<DiffLine> =>
  diffArrays(before.split("\n"), after.split("\n")).flatMap((change) => {
    const op = change.removed ? "removed" : change.added ? "added" : "same"
    return change.value.map((text): DiffLine => ({ op, text }))
  })

/** Pure: whether a diff changes anything. */
export const hasChanges = (diff: ReadonlyArray<DiffLine>): boolean => diff.some((line) => line.op !== "same")
