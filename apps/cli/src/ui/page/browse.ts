/// <reference lib="dom" />
/**
 * Browse: every memory with its type, scope, age (from its written time), staleness, pin, links, size and whether
 * the model sees its index line; filtered and sorted in the page (a listing of thousands is one request).
 */
import type { App } from "./app.js"
import { formatBytes, h, memoryHref, mount, visible } from "./dom.js"
import type { BrowsedMemory, Listing } from "./types.js"

/** Rows rendered before the first paint. */
const FIRST_ROWS = 60

type SortKey = "newest" | "oldest" | "name" | "size" | "type" | "links"

interface Filters {
  text: string
  type: string
  scope: string
  flag: string
  sort: SortKey
}

const filters: Filters = { text: "", type: "", scope: "", flag: "", sort: "newest" }

const compare: Readonly<Record<SortKey, (a: BrowsedMemory, b: BrowsedMemory) => number>> = {
  newest: (a, b) => b.written.localeCompare(a.written),
  oldest: (a, b) => a.written.localeCompare(b.written),
  name: (a, b) => a.name.localeCompare(b.name),
  size: (a, b) => b.size - a.size,
  type: (a, b) => a.type.localeCompare(b.type) || b.written.localeCompare(a.written),
  links: (a, b) => b.links.length - a.links.length
}

const matches = (m: BrowsedMemory, f: Filters): boolean => {
  if (f.type !== "" && m.type !== f.type) return false
  if (f.scope !== "" && m.scope !== f.scope) return false
  if (f.flag === "stale" && !m.stale) return false
  if (f.flag === "pinned" && !m.pinned) return false
  if (f.flag === "not-loaded" && m.index === "loaded") return false
  if (f.flag === "dead-links" && m.deadLinks.length === 0) return false
  if (f.text !== "") {
    const needle = f.text.toLowerCase()
    return m.name.toLowerCase().includes(needle) || m.path.toLowerCase().includes(needle) ||
      m.description.toLowerCase().includes(needle)
  }
  return true
}

const indexBadge = (m: BrowsedMemory): HTMLElement =>
  m.index === "loaded" ?
    h("span", { class: "badge ok", title: "its MEMORY.md line is in the model's context" }, "in index") :
    m.index === "cut" ?
    h("span", { class: "badge warn", title: "its MEMORY.md line is past the caps: the model does not see it" }, "cut") :
    h("span", { class: "badge warn", title: "no MEMORY.md line points at it (memdir doctor --fix adds it)" }, "no line")

/**
 * A row of the grid (a grid, not a table: rows off screen are skipped by the browser's layout), made by cloning one
 * prototype row and setting its texts: thousands of rows are built at the cost of native clones, not of building each
 * element.
 */
const prototypeRow = (): HTMLElement =>
  h(
    "div",
    { class: "row", role: "row", "data-testid": "memory-row" },
    h(
      "div",
      { class: "cell name-cell", role: "cell" },
      h("a", { class: "memory-name" }),
      h("div", { class: "muted description" }),
      h("div", { class: "path" })
    ),
    h("div", { class: "cell", role: "cell" }, h("span")),
    h("div", { class: "cell", role: "cell" }),
    h("div", { class: "cell", role: "cell" }, h("span")),
    h("div", { class: "cell", role: "cell" }),
    h("div", { class: "cell links-cell", role: "cell" }, h("span")),
    h("div", { class: "cell num", role: "cell" }),
    h("div", { class: "cell", role: "cell" })
  )

let prototype: HTMLElement | undefined

const row = (m: BrowsedMemory): HTMLElement => {
  const element = (prototype ??= prototypeRow()).cloneNode(true) as HTMLElement
  element.setAttribute("data-path", m.path)
  const [nameCell, typeCell, scopeCell, ageCell, pinCell, linksCell, sizeCell, indexCell] = Array.from(
    element.children
  ) as Array<HTMLElement>
  const [name, description, path] = Array.from(nameCell!.children) as Array<HTMLElement>
  name!.setAttribute("href", memoryHref(m.path))
  name!.textContent = visible(m.name)
  description!.textContent = visible(m.description)
  path!.textContent = visible(m.path)
  const type = typeCell!.firstElementChild!
  type.className = `type type-${m.type}`
  type.textContent = m.type
  scopeCell!.textContent = m.scope
  ageCell!.title = `written ${m.written} (from ${m.writtenFrom})`
  ageCell!.firstElementChild!.textContent = m.age
  if (m.stale) {
    ageCell!.appendChild(
      h("span", { class: "badge stale", title: `${m.ageDays} days old: recall adds a caveat` }, "stale")
    )
  }
  if (m.pinned) {
    pinCell!.appendChild(h("span", { class: "badge pin", title: "loaded in full at session start" }, "pinned"))
  }
  if (m.links.length + m.deadLinks.length > 0) {
    linksCell!.title = visible([...m.links, ...m.deadLinks.map((d) => `${d} (names no memory)`)].join("\n"))
  }
  linksCell!.firstElementChild!.textContent = String(m.links.length)
  if (m.deadLinks.length > 0) linksCell!.appendChild(h("span", { class: "badge warn" }, `${m.deadLinks.length} dead`))
  sizeCell!.textContent = formatBytes(m.size)
  indexCell!.appendChild(indexBadge(m))
  return element
}

const select = (
  label: string,
  key: keyof Filters,
  options: ReadonlyArray<readonly [string, string]>,
  onChange: () => void
) =>
  h(
    "label",
    {},
    `${label} `,
    h(
      "select",
      {
        name: key,
        onchange: (event) => {
          ;(filters as unknown as Record<string, string>)[key] = (event.target as HTMLSelectElement).value
          onChange()
        }
      },
      options.map(([value, text]) => h("option", { value, selected: filters[key] === value }, text))
    )
  )

/** The browse view into `target`. */
export const browseView = async (app: App, target: HTMLElement): Promise<void> => {
  const listing: Listing = await app.listing()
  const rows = h("div", { class: "rows", role: "rowgroup" })
  const count = h("span", { class: "muted", "data-testid": "count" })
  let generation = 0
  const render = () => {
    const shown = listing.memories.filter((m) => matches(m, filters)).sort(compare[filters.sort])
    count.textContent = `${shown.length} of ${listing.memories.length} memories`
    // the first screenful now, the rest right after the first paint: the page is there before the last row is
    const first = document.createDocumentFragment()
    for (const m of shown.slice(0, FIRST_ROWS)) first.appendChild(row(m))
    rows.replaceChildren(first)
    // the page's own timings, for the benchmark (apps/cli/bench/ui.bench.ts): at the frame after the rows went in
    requestAnimationFrame(() => performance.mark("memdir:first-rows"))
    const current = ++generation
    if (shown.length > FIRST_ROWS) {
      setTimeout(() => {
        if (current !== generation) return
        const rest = document.createDocumentFragment()
        for (const m of shown.slice(FIRST_ROWS)) rest.appendChild(row(m))
        rows.appendChild(rest)
        requestAnimationFrame(() => performance.mark("memdir:all-rows"))
      }, 0)
    } else {
      requestAnimationFrame(() => performance.mark("memdir:all-rows"))
    }
  }
  const types = [...new Set(listing.memories.map((m) => m.type))].sort()
  const stale = listing.memories.filter((m) => m.stale).length
  const notLoaded = listing.memories.filter((m) => m.index !== "loaded").length
  mount(
    target,
    h(
      "div",
      { class: "toolbar" },
      h("input", {
        type: "search",
        placeholder: "Filter by name, path or description",
        value: filters.text,
        "aria-label": "Filter",
        "data-testid": "filter",
        oninput: (event) => {
          filters.text = (event.target as HTMLInputElement).value
          render()
        }
      }),
      select("type", "type", [["", "any"], ...types.map((t) => [t, t] as const)], render),
      listing.teamEnabled
        ? select("scope", "scope", [["", "any"], ["private", "private"], ["team", "team"]], render)
        : null,
      select("show", "flag", [
        ["", "all"],
        ["stale", `stale (${stale})`],
        ["pinned", "pinned"],
        ["not-loaded", `not in the model's index (${notLoaded})`],
        ["dead-links", "with dead links"]
      ], render),
      select("sort", "sort", [
        ["newest", "newest written"],
        ["oldest", "oldest written"],
        ["name", "name"],
        ["type", "type"],
        ["size", "largest"],
        ["links", "most links"]
      ], render),
      count
    ),
    listing.memories.length === 0 ?
      h("p", { class: "empty" }, "No memories yet. Agents save them as they work; `memdir write` saves one by hand.") :
      h(
        "div",
        { class: "memories", role: "table", "data-testid": "memories" },
        h(
          "div",
          { class: "row head", role: "row" },
          ["memory", "type", "scope", "age", "pin", "links", "size", "index"].map((title) =>
            h("div", { class: "cell", role: "columnheader" }, title)
          )
        ),
        rows
      ),
    listing.problems.length === 0 ? null : h(
      "section",
      { class: "problems" },
      h("h3", {}, `${listing.problems.length} file(s) could not be read`),
      h("ul", {}, listing.problems.map((p) => h("li", {}, h("code", {}, p.path), ` ${p.message}`)))
    )
  )
  render()
}
