/**
 * The index under a character budget, for the SessionStart hook (docs/hooks.md#the-10000-character-cap): the whole
 * index when it fits; else the lines that matter most — the pinned memories' lines, then the newest memories' by the
 * time their age counts from (`MemoryAge.writtenAtOf`) — in the index's own order, under the headings they sit in,
 * and one line saying what was cut and how to see the rest. Whole lines only, never a line cut in the middle.
 *
 * Lengths are JavaScript string lengths (UTF-16 code units), as Claude Code (a Node program) measures the context it
 * keeps: "é" is 1, "🙂" is 2, never the UTF-8 byte count.
 */
import type { ListedLine } from "@memdir/core/internal/scan/listHeads"
import { parseIndexLine } from "@memdir/core/Memory"
import { type LoadedIndex, normalizeIndexLink } from "@memdir/core/MemoryIndex"
import { isPinned } from "@memdir/core/Pins"
import { thousands } from "../Output.js"

/** What the budget knows of the memories an index points at: by normalised file (`normalizeIndexLink`). */
export interface IndexLineFacts {
  /** When the memory was written, epoch ms; undefined when the file is not a memory the scan found. */
  readonly writtenAt: (file: string) => number | undefined
  readonly pinned: (file: string) => boolean
}

export const NO_FACTS: IndexLineFacts = { writtenAt: () => undefined, pinned: () => false }

/**
 * The facts of the files an index links to, read from their heads (`describeFiles`): `lines[i]` describes `keys[i]`,
 * a key relative to the index's directory. Only memories (a valid header) have a written time.
 */
export const factsOfLines = (
  keys: ReadonlyArray<string>,
  lines: ReadonlyArray<ListedLine | undefined>
): IndexLineFacts => {
  const written = new Map<string, number>()
  const pinned = new Set<string>()
  keys.forEach((key, i) => {
    const line = lines[i]
    if (line?._tag !== "Memory") return
    written.set(key, line.writtenAt)
    if (isPinned(line.extra)) pinned.add(key)
  })
  return { writtenAt: (file) => written.get(file), pinned: (file) => pinned.has(file) }
}

export interface FittedIndex {
  /** The index text to put in context (ends with a newline unless empty). */
  readonly content: string
  /** Lines other than blank ones: of the index, and shown. Equal when nothing was cut. */
  readonly total: number
  readonly shown: number
  /** False when even the cut line does not fit the budget (the caller must cut elsewhere). */
  readonly fits: boolean
}

interface Line {
  readonly text: string
  readonly kind: "blank" | "heading" | "entry" | "other"
  readonly level: number
  /** The headings this line sits under (indices), outermost first. */
  readonly headings: ReadonlyArray<number>
  readonly file: string | undefined
}

const HEADING = /^(#{1,6})\s/

const classify = (texts: ReadonlyArray<string>): Array<Line> => {
  const stack: Array<{ readonly index: number; readonly level: number }> = []
  return texts.map((text, index) => {
    const heading = HEADING.exec(text)
    if (heading !== null) {
      const level = heading[1]!.length
      while (stack.length > 0 && stack[stack.length - 1]!.level >= level) stack.pop()
      const line: Line = { text, kind: "heading", level, headings: stack.map((h) => h.index), file: undefined }
      stack.push({ index, level })
      return line
    }
    const headings = stack.map((h) => h.index)
    if (text.trim().length === 0) return { text, kind: "blank", level: 0, headings, file: undefined }
    const entry = parseIndexLine(text)
    const file = entry === undefined ? undefined : normalizeIndexLink(entry.file)
    return { text, kind: file === undefined ? "other" : "entry", level: 0, headings, file }
  })
}

/**
 * The order lines are kept in: pinned memories' lines (newest first), then every other memory's line newest first
 * (lines whose file the scan does not know after those, in index order), then lines of other text in index order.
 */
const ranking = (lines: ReadonlyArray<Line>, facts: IndexLineFacts): Array<number> => {
  const entries = lines.flatMap((line, index) => line.kind === "entry" ? [index] : [])
  const key = (index: number) => {
    const file = lines[index]!.file!
    return { pinned: facts.pinned(file), at: facts.writtenAt(file) ?? Number.NEGATIVE_INFINITY }
  }
  const keyed = entries.map((index) => ({ index, ...key(index) }))
  keyed.sort((a, b) =>
    Number(b.pinned) - Number(a.pinned) || (b.at === a.at ? 0 : b.at > a.at ? 1 : -1) || a.index - b.index
  )
  const others = lines.flatMap((line, index) => line.kind === "other" ? [index] : [])
  return [...keyed.map((k) => k.index), ...others]
}

/** The cut line: how many lines are shown, which, and how to see the rest. */
export const cutNote = (shown: number, total: number, file: string, path: string, max: number): string =>
  `[memdir: ${file} cut to fit this ${thousands(max)}-character context: ${shown} of ${total} lines ` +
  `shown (pinned, then the newest memories), in the index's order. \`memdir ls\` lists every memory; read the ` +
  `whole index with \`memdir show ${file}\` or your file tool: ${path}]`

/**
 * Pure: `index` (its loaded content) in at most `budget` characters. `file` names it in the cut line
 * (`MEMORY.md`, `team/MEMORY.md`); `max` is the whole context's limit, for the same line.
 */
export const fitIndex = (
  index: LoadedIndex,
  budget: number,
  facts: IndexLineFacts,
  file: string,
  max: number
): FittedIndex => {
  const content = index.content.replace(/\n+$/, "")
  const all = content.length === 0 ? [] : content.split("\n")
  // The caps' warning (the index is over 200 lines or 25 KB) is memdir's own line: kept, not counted.
  const warningLine = index.warning === undefined ? undefined : `> ${index.warning}`
  const texts = warningLine !== undefined && all[all.length - 1] === warningLine ? all.slice(0, -1) : all
  const lines = classify(texts)
  const total = lines.filter((l) => l.kind !== "blank").length
  if (content.length + 1 <= budget || content.length === 0) {
    return { content: index.content, total, shown: total, fits: content.length + 1 <= budget }
  }
  const render = (kept: ReadonlySet<number>) => {
    const shownHeadings = new Set<number>()
    for (const index of kept) for (const h of lines[index]!.headings) shownHeadings.add(h)
    const out: Array<string> = []
    lines.forEach((line, index) => {
      if (line.kind === "heading" && shownHeadings.has(index)) {
        if (out.length > 0) out.push("")
        out.push(line.text)
      } else if (kept.has(index)) {
        out.push(line.text)
      }
    })
    const shown = kept.size + shownHeadings.size
    const tail = [cutNote(shown, total, file, index.path, max), ...(warningLine === undefined ? [] : [warningLine])]
    return { text: [...out, ...(out.length > 0 ? [""] : []), ...tail].join("\n") + "\n", shown }
  }
  const kept = new Set<number>()
  let best = render(kept)
  if (best.text.length > budget) return { content: best.text, total, shown: 0, fits: false }
  for (const index of ranking(lines, facts)) {
    kept.add(index)
    const next = render(kept)
    if (next.text.length > budget) {
      kept.delete(index)
      break
    }
    best = next
  }
  return { content: best.text, total, shown: best.shown, fits: true }
}
