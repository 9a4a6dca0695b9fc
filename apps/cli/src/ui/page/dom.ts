/// <reference lib="dom" />
/**
 * Building the page's DOM without HTML strings: every text goes in as `textContent` (a Text node), so memory text,
 * which is untrusted (a teammate's memory, an agent's), can never become markup or script. No `innerHTML` anywhere.
 */

import { terminalText } from "../../Terminal.js"

export type Child = Node | string | number | null | undefined | false | ReadonlyArray<Child>

export interface Attributes {
  readonly class?: string | undefined
  readonly title?: string | undefined
  readonly href?: string | undefined
  readonly type?: string | undefined
  readonly value?: string | undefined
  readonly placeholder?: string | undefined
  readonly name?: string | undefined
  readonly id?: string | undefined
  readonly for?: string | undefined
  readonly disabled?: boolean | undefined
  readonly checked?: boolean | undefined
  readonly selected?: boolean | undefined
  readonly hidden?: boolean | undefined
  readonly open?: boolean | undefined
  readonly rows?: number | undefined
  readonly colspan?: number | undefined
  readonly role?: string | undefined
  readonly rel?: string | undefined
  readonly spellcheck?: boolean | undefined
  readonly "aria-label"?: string | undefined
  readonly "data-testid"?: string | undefined
  readonly "data-path"?: string | undefined
  readonly "data-route"?: string | undefined
  readonly onclick?: ((event: MouseEvent) => void) | undefined
  readonly oninput?: ((event: Event) => void) | undefined
  readonly onchange?: ((event: Event) => void) | undefined
  readonly onsubmit?: ((event: SubmitEvent) => void) | undefined
  readonly onkeydown?: ((event: KeyboardEvent) => void) | undefined
}

/**
 * Text as it is shown: control characters and bidi controls, which would hide or reorder what a person reads, made
 * visible as the CLI shows them on a terminal (`␛`, `\u{202e}`; line feeds and tabs kept): one rule for both.
 */
export const visible = (text: string): string => terminalText(text)

const append = (parent: Node, child: Child): void => {
  if (child === null || child === undefined || child === false) return
  if (Array.isArray(child)) {
    for (const c of child as ReadonlyArray<Child>) append(parent, c)
    return
  }
  parent.appendChild(
    typeof child === "string" || typeof child === "number" ?
      document.createTextNode(visible(String(child))) :
      child as Node
  )
}

/** An element with attributes (set as properties or plain attributes, never as HTML) and children. */
export const h = <K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: ReadonlyArray<Child>
): HTMLElementTagNameMap[K] => {
  const element = document.createElement(tag)
  for (const [key, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue
    if (key.startsWith("on") && typeof value === "function") {
      element.addEventListener(key.slice(2), value as EventListener)
    } else if (key === "value" && "value" in element) {
      ;(element as HTMLInputElement).value = String(value)
    } else if (key === "checked" || key === "selected" || key === "disabled" || key === "hidden" || key === "open") {
      ;(element as unknown as Record<string, boolean>)[key] = value === true
    } else if (key === "href") {
      const safe = safeHref(String(value))
      if (safe !== undefined) element.setAttribute("href", safe)
    } else {
      element.setAttribute(key, value === true ? "" : String(value))
    }
  }
  for (const child of children) append(element, child)
  return element
}

/** Text for `<pre>` (a memory's source, an index, a diff): its lines as they are, its controls made visible. */
export const raw = (text: string): Text => document.createTextNode(visible(text))

/**
 * A link target the page may follow: its own routes (`#/…`), relative URLs, http and https. Anything else
 * (`javascript:`, `data:`, `vbscript:`, `file:`…) is not a link.
 */
export const safeHref = (href: string): string | undefined => {
  const trimmed = href.trim()
  if (trimmed.startsWith("#")) return trimmed
  try {
    const url = new URL(trimmed, window.location.href)
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : undefined
  } catch {
    return undefined
  }
}

/** Replaces the children of `parent`. */
export const mount = (parent: Element, ...children: ReadonlyArray<Child>): void => {
  parent.replaceChildren()
  for (const child of children) append(parent, child)
}

/** The route of a memory's page. */
export const memoryHref = (path: string): string => `#/memory/${encodeURIComponent(path)}`

/** `12.3 KB` */
export const formatBytes = (bytes: number): string =>
  bytes < 1000 ? `${bytes} B` : bytes < 1_000_000 ? `${(bytes / 1000).toFixed(1)} KB` : `${(bytes / 1e6).toFixed(1)} MB`
