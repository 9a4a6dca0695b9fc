/**
 * Reading the repository's Markdown (README.md and docs/*.md) the way GitHub renders it: links outside code,
 * heading anchors, and the TypeScript blocks with the marker that says where their code lives.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { repoRoot } from "./cli.js"

/** README.md and every page under docs/, as paths relative to the repository root. */
export const markdownFiles = (): ReadonlyArray<string> => [
  "README.md",
  ...fs.readdirSync(path.join(repoRoot, "docs"), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".md"))
    .map((f) => path.posix.join("docs", f.split(path.sep).join("/")))
    .sort()
]

export const readRepoFile = (relative: string): string => fs.readFileSync(path.join(repoRoot, relative), "utf8")

/** The text with fenced code blocks blanked out (line numbers kept) and, unless kept, inline code spans removed. */
const proseOnly = (markdown: string, keepInlineCode = false): ReadonlyArray<string> => {
  let fence: string | undefined
  return markdown.split("\n").map((line) => {
    const opener = /^\s*(`{3,}|~{3,})/.exec(line)
    if (fence !== undefined) {
      if (opener !== null && opener[1]!.startsWith(fence)) fence = undefined
      return ""
    }
    if (opener !== null) {
      fence = opener[1]!
      return ""
    }
    return keepInlineCode ? line : line.replace(/(`+)[^`]*?\1/g, "")
  })
}

export interface MarkdownLink {
  readonly line: number
  readonly text: string
  readonly target: string
}

/** Every inline link `[text](target)` and image outside code, with its 1-based line. */
export const linksIn = (markdown: string): ReadonlyArray<MarkdownLink> => {
  const links: Array<MarkdownLink> = []
  proseOnly(markdown).forEach((line, i) => {
    for (const match of line.matchAll(/!?\[([^\]]*)\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)) {
      links.push({ line: i + 1, text: match[1]!, target: match[2]! })
    }
  })
  return links
}

/** GitHub's anchor for a heading text (github-slugger): lower case, punctuation dropped, spaces to hyphens. */
export const slugOf = (heading: string): string =>
  heading
    .replace(/`/g, "")
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-")

/** Every anchor a page offers: its headings' slugs, with `-1`, `-2` … for repeated ones. */
export const anchorsOf = (markdown: string): ReadonlySet<string> => {
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  for (const line of proseOnly(markdown.replace(/<!--[\s\S]*?-->/g, ""), true)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)
    if (heading === null) continue
    const base = slugOf(heading[1]!)
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    anchors.add(count === 0 ? base : `${base}-${count}`)
  }
  return anchors
}

export interface CodeBlock {
  readonly line: number
  readonly lang: string
  readonly code: string
  /** The HTML comment on the line before the fence, if any (`example: PATH` or `fragment: why`). */
  readonly marker: string | undefined
}

/** Every fenced code block with its language and the marker comment just above it. */
export const codeBlocksIn = (markdown: string): ReadonlyArray<CodeBlock> => {
  const lines = markdown.split("\n")
  const blocks: Array<CodeBlock> = []
  for (let i = 0; i < lines.length; i++) {
    const opener = /^(\s*)(`{3,})(\S*)\s*$/.exec(lines[i]!)
    if (opener === null) continue
    const [, indent, fence, lang] = opener
    const body: Array<string> = []
    let j = i + 1
    while (j < lines.length && !lines[j]!.trimStart().startsWith(fence!)) {
      body.push(lines[j]!.startsWith(indent!) ? lines[j]!.slice(indent!.length) : lines[j]!)
      j++
    }
    const previous = i > 0 ? /^\s*<!--\s*(.*?)\s*-->\s*$/.exec(lines[i - 1]!) : null
    blocks.push({ line: i + 1, lang: lang!, code: body.join("\n"), marker: previous?.[1] })
    i = j
  }
  return blocks
}

/** `example: packages/core/examples/x.ts` → the path; anything else → undefined. */
export const examplePath = (block: CodeBlock): string | undefined => /^example:\s*(\S+)$/.exec(block.marker ?? "")?.[1]

/** What a docs block must show for an example file: the file without its leading doc comment. */
export const exampleCode = (relative: string): string => {
  const source = readRepoFile(relative)
  const withoutDoc = source.startsWith("/**") ? source.slice(source.indexOf("*/\n") + 3) : source
  return withoutDoc.replace(/^\n+|\n+$/g, "")
}
