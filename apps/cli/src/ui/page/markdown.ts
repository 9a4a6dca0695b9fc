/// <reference lib="dom" />
/**
 * Markdown to DOM for memory bodies, which are untrusted: every piece of text becomes a Text node (`dom.ts`), raw
 * HTML in the source is shown as the text it is, and a link is made only to the page's own routes, relative URLs,
 * http and https (`safeHref`). The subset memories use: headings, paragraphs, lists, quotes, fenced code, rules,
 * `code`, **strong**, *emphasis*, [links](…) and [[memory links]].
 *
 * Linear in the text: a delimiter that has no closing one is remembered as such, so a hostile line (a 200 KB line of
 * unmatched backticks) is never scanned again for each of its characters.
 */
import { type Child, h, memoryHref, raw, safeHref } from "./dom.js"

/** How a `[[link]]` or a relative `.md` link finds its memory (undefined: names none). */
export type ResolveMemory = (target: string) => string | undefined

const FENCE = /^(`{3,}|~{3,})/
const HEADING = /^(#{1,6})\s+(.*?)\s*#*\s*$/
const LIST_ITEM = /^\s*([-*+]|\d{1,9}[.)])\s+(.*)$/
const RULE = /^\s*([-*_])(\s*\1){2,}\s*$/

/** Inline Markdown of one block's text, as nodes. */
export const inline = (text: string, resolve: ResolveMemory): Array<Child> => {
  const out: Array<Child> = []
  const absent = new Set<string>()
  let plain = ""
  const flush = () => {
    if (plain !== "") out.push(plain)
    plain = ""
  }
  /** The next `needle` at or after `from`, -1 when there is none (and never looked for again). */
  const find = (needle: string, from: number): number => {
    if (absent.has(needle)) return -1
    const at = text.indexOf(needle, from)
    if (at < 0) absent.add(needle)
    return at
  }
  let i = 0
  while (i < text.length) {
    const c = text[i]!
    if (c === "`") {
      let n = 1
      while (text[i + n] === "`") n++
      const fence = "`".repeat(n)
      let close = find(fence, i + n)
      // a longer run is not this span's end
      while (close >= 0 && text[close + n] === "`") {
        let skip = close
        while (text[skip] === "`") skip++
        close = find(fence, skip)
      }
      if (close < 0) {
        plain += fence
        i += n
        continue
      }
      flush()
      out.push(h("code", {}, text.slice(i + n, close)))
      i = close + n
      continue
    }
    if ((c === "*" || c === "_") && text[i + 1] === c) {
      const close = find(c + c, i + 2)
      if (close > i + 2) {
        flush()
        out.push(h("strong", {}, inline(text.slice(i + 2, close), resolve)))
        i = close + 2
        continue
      }
    } else if (c === "*" || (c === "_" && (i === 0 || /\W/.test(text[i - 1]!)))) {
      const close = find(c, i + 1)
      if (close > i + 1 && text[i + 1] !== " ") {
        flush()
        out.push(h("em", {}, inline(text.slice(i + 1, close), resolve)))
        i = close + 1
        continue
      }
    }
    if (c === "[" && text[i + 1] === "[") {
      const close = find("]]", i + 2)
      if (close > i + 2 && !text.slice(i + 2, close).includes("\n")) {
        const inner = text.slice(i + 2, close)
        const target = inner.split(/[|#]/)[0]!.trim()
        const label = inner.includes("|") ? inner.slice(inner.indexOf("|") + 1) : inner
        const path = resolve(target)
        flush()
        out.push(
          path === undefined ?
            h("span", { class: "wikilink dead", title: "names no memory" }, `[[${label}]]`) :
            h("a", { class: "wikilink", href: memoryHref(path), title: path }, label)
        )
        i = close + 2
        continue
      }
    }
    if (c === "[") {
      const close = find("](", i + 1)
      const end = close < 0 ? -1 : find(")", close + 2)
      if (close > i && end > close && !text.slice(i, end).includes("\n")) {
        const label = text.slice(i + 1, close)
        const target = text.slice(close + 2, end).trim().replace(/\s+"[^"]*"$/, "")
        flush()
        out.push(link(label, target, resolve))
        i = end + 1
        continue
      }
    }
    plain += c
    i++
  }
  flush()
  return out
}

/** A Markdown link: to a memory when it names one, else to a safe URL, else its text and target as text. */
const link = (label: string, target: string, resolve: ResolveMemory): Child => {
  const isUrl = /^[a-z][a-z0-9+.-]*:/i.test(target)
  const memory = isUrl ? undefined : resolve(decodeURIComponentSafe(target.replace(/^<|>$/g, "").replace(/#.*$/, "")))
  if (memory !== undefined) return h("a", { href: memoryHref(memory), title: memory }, label)
  const href = safeHref(target)
  if (href === undefined || target.startsWith("#")) return `${label} (${target})`
  return h("a", { href, rel: "noopener noreferrer", title: target }, label)
}

const decodeURIComponentSafe = (text: string): string => {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}

/** A memory's body as DOM. */
export const renderMarkdown = (source: string, resolve: ResolveMemory): HTMLElement => {
  const lines = source.replace(/\r\n?/g, "\n").split("\n")
  const root = h("div", { class: "markdown" })
  let paragraph: Array<string> = []
  let list: { readonly ordered: boolean; readonly element: HTMLElement } | undefined
  const endParagraph = () => {
    if (paragraph.length > 0) {
      const p = h("p")
      paragraph.forEach((line, n) => {
        if (n > 0) p.appendChild(h("br"))
        for (const node of inline(line, resolve)) appendChild(p, node)
      })
      root.appendChild(p)
    }
    paragraph = []
  }
  const endList = () => {
    list = undefined
  }
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    const fence = FENCE.exec(line)
    if (fence !== null) {
      endParagraph()
      endList()
      const body: Array<string> = []
      let j = i + 1
      while (j < lines.length && !lines[j]!.startsWith(fence[1]!)) body.push(lines[j++]!)
      root.appendChild(h("pre", {}, h("code", {}, raw(body.join("\n")))))
      i = j
      continue
    }
    if (line.trim() === "") {
      endParagraph()
      endList()
      continue
    }
    const heading = HEADING.exec(line)
    if (heading !== null) {
      endParagraph()
      endList()
      const level = Math.min(6, heading[1]!.length + 2) as 3 | 4 | 5 | 6
      root.appendChild(h(`h${level}`, {}, inline(heading[2]!, resolve)))
      continue
    }
    if (RULE.test(line)) {
      endParagraph()
      endList()
      root.appendChild(h("hr"))
      continue
    }
    if (line.startsWith(">")) {
      endParagraph()
      endList()
      const quoted: Array<string> = []
      let j = i
      while (j < lines.length && lines[j]!.startsWith(">")) quoted.push(lines[j++]!.replace(/^>\s?/, ""))
      const inner = renderMarkdown(quoted.join("\n"), resolve)
      root.appendChild(h("blockquote", {}, Array.from(inner.childNodes)))
      i = j - 1
      continue
    }
    const item = LIST_ITEM.exec(line)
    if (item !== null) {
      endParagraph()
      const ordered = /\d/.test(item[1]!)
      if (list === undefined || list.ordered !== ordered) {
        list = { ordered, element: h(ordered ? "ol" : "ul") }
        root.appendChild(list.element)
      }
      list.element.appendChild(h("li", {}, inline(item[2]!, resolve)))
      continue
    }
    if (list !== undefined && /^\s+\S/.test(line)) {
      const last = list.element.lastElementChild
      if (last !== null) {
        last.appendChild(document.createTextNode(" "))
        for (const node of inline(line.trim(), resolve)) appendChild(last, node)
        continue
      }
    }
    endList()
    paragraph.push(line)
  }
  endParagraph()
  return root
}

const appendChild = (parent: Element, child: Child): void => {
  if (child === null || child === undefined || child === false) return
  if (Array.isArray(child)) {
    for (const c of child as ReadonlyArray<Child>) appendChild(parent, c)
  } else if (typeof child === "string" || typeof child === "number") {
    parent.appendChild(h("span", {}, String(child)).firstChild!)
  } else {
    parent.appendChild(child as Node)
  }
}
