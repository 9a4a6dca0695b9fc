/**
 * MemoryLinks: `[[name]]` links between memories, as the reference agent writes them (docs/file-format.md#links).
 *
 * A link names a memory by its `name` (`[[testing-policy]]`) or its file stem (`[[feedback_testing]]`), case
 * insensitive; `[[name|label]]` and `[[name#part]]` name the same memory. Links inside code (fenced blocks, inline
 * code) are not links: `[[ -f x ]]` is shell. Pure: callers give the text and the memories to resolve against.
 */
import { fileStem } from "./Frontmatter.js"
import type { MemoryHeader } from "./Memory.js"

const FENCED = /^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm
const INLINE_CODE = /`[^`\n]*`/g
/** A target starts and ends with a non-blank character and holds no bracket or line break. */
const WIKILINK = /\[\[([^\s[\]|#][^[\]|#\n]*?(?<!\s))(?:[|#][^[\]\n]*)?\]\]/g

/** The link targets of a text, each once, in order of first use (code left out). */
export const linksIn = (text: string): Array<string> => {
  const prose = text.replace(FENCED, "").replace(INLINE_CODE, "")
  const seen = new Set<string>()
  for (const match of prose.matchAll(WIKILINK)) seen.add(match[1]!)
  return [...seen]
}

/** Resolves a link target to a memory's path (relative to the memory directory). */
export type LinkResolver = (target: string) => string | undefined

const keyOf = (text: string): string => text.trim().toLowerCase().replace(/\.md$/, "")

/** By name first, then by file stem (then by the path without `.md`), over these memories. */
export const linkResolver = (memories: ReadonlyArray<Pick<MemoryHeader, "path" | "name">>): LinkResolver => {
  const byName = new Map<string, string>()
  const byStem = new Map<string, string>()
  for (const memory of memories) {
    const name = keyOf(memory.name)
    if (!byName.has(name)) byName.set(name, memory.path)
    const stem = keyOf(fileStem(memory.path))
    if (!byStem.has(stem)) byStem.set(stem, memory.path)
    const path = keyOf(memory.path)
    if (!byStem.has(path)) byStem.set(path, memory.path)
  }
  return (target) => {
    const key = keyOf(target)
    return byName.get(key) ?? byStem.get(key)
  }
}

export interface ResolvedLinks {
  /** Paths of the linked memories, each once, the text's own path left out. */
  readonly linked: ReadonlyArray<string>
  /** Targets that name no memory. */
  readonly dead: ReadonlyArray<string>
}

/** The links of `text` (the memory at `self`, if it is one), resolved. */
export const resolveLinks = (text: string, resolve: LinkResolver, self?: string | undefined): ResolvedLinks => {
  const linked: Array<string> = []
  const dead: Array<string> = []
  for (const target of linksIn(text)) {
    const path = resolve(target)
    if (path === undefined) dead.push(target)
    else if (path !== self && !linked.includes(path)) linked.push(path)
  }
  return { linked, dead }
}
