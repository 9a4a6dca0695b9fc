/**
 * A line diff of two texts (longest common subsequence), for showing a variant's prompt against the default
 * section: the reader sees the changed heading or the appended paragraph, not two near-identical walls of text.
 */

export interface DiffLine {
  readonly op: "same" | "added" | "removed"
  readonly text: string
}

/** Pure: the lines of `after` against `before`, in order; removed lines come before the added ones they replace. */
export const diffLines = (before: string, after: string): ReadonlyArray<DiffLine> => {
  const a = before.split("\n")
  const b = after.split("\n")
  // lcs[i][j]: length of the longest common subsequence of a[i..] and b[j..]
  const lcs: Array<Array<number>> = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0))
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!)
    }
  }
  const out: Array<DiffLine> = []
  let i = 0, j = 0
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      out.push({ op: "same", text: a[i]! })
      i++
      j++
    } else if (lcs[i + 1]![j]! >= lcs[i]![j + 1]!) out.push({ op: "removed", text: a[i++]! })
    else out.push({ op: "added", text: b[j++]! })
  }
  while (i < a.length) out.push({ op: "removed", text: a[i++]! })
  while (j < b.length) out.push({ op: "added", text: b[j++]! })
  return out
}

/** Pure: whether a diff changes anything. */
export const hasChanges = (diff: ReadonlyArray<DiffLine>): boolean => diff.some((line) => line.op !== "same")
