/// <reference lib="dom" />
/**
 * Two texts side by side, line against line (jsdiff's `diffLines`): removed lines on the left, added on the right,
 * unchanged ones on both sides. Used for a conflict (the disk's text beside yours) and a memory's history.
 */
import { diffLines } from "diff"
import { h, raw } from "./dom.js"

interface Row {
  readonly left: string | undefined
  readonly right: string | undefined
  readonly kind: "same" | "changed" | "removed" | "added"
}

const linesOf = (value: string): Array<string> => {
  const lines = value.split("\n")
  if (lines[lines.length - 1] === "") lines.pop()
  return lines
}

/** The rows of a side-by-side diff of `before` and `after`. */
export const diffRows = (before: string, after: string): ReadonlyArray<Row> => {
  const rows: Array<Row> = []
  const parts = diffLines(before, after)
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!
    if (!part.added && !part.removed) {
      for (const line of linesOf(part.value)) rows.push({ left: line, right: line, kind: "same" })
      continue
    }
    if (part.removed && parts[i + 1]?.added === true) {
      const left = linesOf(part.value)
      const right = linesOf(parts[i + 1]!.value)
      for (let n = 0; n < Math.max(left.length, right.length); n++) {
        rows.push({
          left: left[n],
          right: right[n],
          kind: left[n] === undefined ? "added" : right[n] === undefined ? "removed" : "changed"
        })
      }
      i++
      continue
    }
    for (const line of linesOf(part.value)) {
      rows.push(
        part.removed ? { left: line, right: undefined, kind: "removed" } : {
          left: undefined,
          right: line,
          kind: "added"
        }
      )
    }
  }
  return rows
}

/** A side-by-side diff table with column titles. */
export const sideBySide = (before: string, after: string, titles: readonly [string, string]): HTMLElement => {
  const body = h("tbody")
  for (const row of diffRows(before, after)) {
    body.appendChild(
      h(
        "tr",
        { class: `diff-${row.kind}` },
        h("td", { class: row.left === undefined ? "diff-empty" : "diff-left" }, raw(row.left ?? "")),
        h("td", { class: row.right === undefined ? "diff-empty" : "diff-right" }, raw(row.right ?? ""))
      )
    )
  }
  return h(
    "table",
    { class: "diff", "data-testid": "diff" },
    h("thead", {}, h("tr", {}, h("th", {}, titles[0]), h("th", {}, titles[1]))),
    body
  )
}
