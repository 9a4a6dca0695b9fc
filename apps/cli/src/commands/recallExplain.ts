/**
 * `memdir recall --explain` (docs/cli.md#recall---explain): the offline selector's decision as a table a person can
 * read, candidate by candidate (score, the request's terms it matched and in which fields, and why it was kept or
 * cut), and as JSON for `--json`.
 */
import { type CandidateExplanation, matchedTermText, type SelectionExplanation } from "@memdir/core/Selector"
import { terminalLine } from "../Terminal.js"

/** Rows shown in the table; the rest are counted. */
export const EXPLAIN_ROWS = 15

/** The verdict in a few words, for the table's "why" column (the full sentence is in `reason`). */
const shortWhy = (c: CandidateExplanation, explanation: SelectionExplanation): string => {
  switch (c.verdict) {
    case "kept":
      return "kept"
    case "below-evidence-floor":
      return `cut: below the floor ${explanation.minEvidence.toFixed(2)}`
    case "below-relative-cut":
      return `cut: below the relative cut ${explanation.relativeCut.toFixed(2)}`
    case "body-only":
      return `cut: body only, below ${explanation.bodyOnlyEvidence.toFixed(2)}`
    case "unknown-words":
      return `cut: below ${explanation.unknownWordsBar.toFixed(2)} for unknown words`
    case "general-question":
      return "cut: a general question, too little evidence"
    case "near-duplicate":
      return `cut: near-duplicate of ${c.duplicateOf ?? "a kept memory"}`
    case "over-limit":
      return `cut: over the ${explanation.max}-slot limit`
    case "tool-doc":
      return "cut: usage doc of a tool in use"
    case "no-match":
      return "cut: no term matched"
  }
}

const matchedText = (c: CandidateExplanation): string =>
  c.matched.map(matchedTermText).join(", ") +
  (c.proximity > 0 ? `; together in one passage: ${c.together.join(", ")}` : "")

/** Its evidence, and what proximity adds to rank it: "2.07", "2.07+0.40". */
const scoreText = (c: CandidateExplanation): string =>
  c.proximity > 0 ? `${c.score.toFixed(2)}+${c.proximity.toFixed(2)}` : c.score.toFixed(2)

const pad = (text: string, width: number): string => text + " ".repeat(Math.max(0, width - [...text].length))

/** The explanation as lines of text: the request's terms and the bars, a table of the best candidates, a summary. */
export const explanationLines = (
  explanation: SelectionExplanation,
  options: { readonly selector: string; readonly rows?: number | undefined }
): ReadonlyArray<string> => {
  const rows = explanation.considered.slice(0, options.rows ?? EXPLAIN_ROWS)
  const lines: Array<string> = []
  lines.push(
    `explain (offline selector${options.selector === "offline" ? "" : `; the ${options.selector} selector chose`}):` +
      ` request terms: ${explanation.queryTerms.length === 0 ? "(none)" : explanation.queryTerms.join(", ")}`
  )
  lines.push(
    `  evidence floor ${explanation.minEvidence.toFixed(2)}, relative cut ${explanation.relativeCut.toFixed(2)} ` +
      `(top score ${explanation.top.toFixed(2)}), at most ${explanation.max}`
  )
  if (explanation.questionForm !== undefined) {
    lines.push(
      `  phrased as a general question ("${explanation.questionForm}"): every candidate needs ${
        explanation.generalQuestionBar.toFixed(2)
      }`
    )
  }
  if (explanation.unknownWords.length > 0) {
    lines.push(
      `  words no memory contains: ${explanation.unknownWords.join(", ")} (` +
        (explanation.unanalysed > 0
          ? `no bar yet: ${explanation.unanalysed} memories' bodies are not analysed yet`
          : `every candidate needs ${explanation.unknownWordsBar.toFixed(2)}`) +
        ")"
    )
  }
  if (rows.length > 0) {
    const cells = rows.map((
      c
    ) => [String(c.rank), scoreText(c), shortWhy(c, explanation), c.path, matchedText(c)])
    const header = ["#", "score", "why", "path", "matched terms (fields)"]
    const widths = header.map((h, i) => Math.max([...h].length, ...cells.map((row) => [...row[i]!].length)))
    const render = (row: ReadonlyArray<string>) =>
      "  " + row.map((cell, i) => (i === row.length - 1 ? cell : pad(cell, widths[i]!))).join("  ")
    lines.push(render(header))
    for (const row of cells) lines.push(render(row))
  }
  const more = explanation.considered.length - rows.length
  const rest = [
    ...(more > 0 ? [`${more} more with evidence not shown (--json lists them all)`] : []),
    ...(explanation.unmatched === 1 ? ["1 candidate shares no term with the request"] : []),
    ...(explanation.unmatched > 1 ? [`${explanation.unmatched} candidates share no term with the request`] : [])
  ]
  if (rest.length > 0) lines.push(`  ${rest.join("; ")}`)
  lines.push(`  ${explanation.summary}`)
  return lines.map(terminalLine)
}
