/// <reference lib="dom" />
/**
 * The index as the model sees it: the memory section of the system prompt exactly as `memdir prompt` builds it, and
 * for each MEMORY.md what its caps (200 lines, 25 KB) keep and what they cut, with the memories the model cannot see.
 */
import { get } from "./api.js"
import type { App } from "./app.js"
import { formatBytes, h, memoryHref, raw } from "./dom.js"
import type { IndexSection, IndexView } from "./types.js"

const section = (title: string, index: IndexSection): HTMLElement =>
  h(
    "section",
    { class: "panel", "data-testid": "index-section" },
    h("h3", {}, title),
    h(
      "p",
      { class: "muted" },
      !index.exists ?
        "There is no index file yet." :
        `${index.lines} lines, ${formatBytes(index.bytes)}; the model gets ${index.keptLines} lines, ` +
        `${formatBytes(index.keptBytes)} (caps: 200 lines, 25 KB).`
    ),
    index.warning === null ? null : h("p", { class: "caveat", "data-testid": "index-warning" }, index.warning),
    h("pre", { class: "index kept" }, raw(index.kept)),
    index.cut === "" ? null : h(
      "div",
      {},
      h("h4", { class: "cut-title" }, "Cut by the caps: the model never sees these lines"),
      h("pre", { class: "index cut", "data-testid": "index-cut" }, raw(index.cut))
    )
  )

export const indexView = async (app: App): Promise<HTMLElement> => {
  const [view, listing] = await Promise.all([get<IndexView>("/api/index"), app.listing()])
  const unseen = listing.memories.filter((m) => m.index !== "loaded")
  return h(
    "div",
    { class: "index-view" },
    section("MEMORY.md", view.private),
    view.team === null ? null : section("team/MEMORY.md", view.team),
    h(
      "section",
      { class: "panel" },
      h("h3", {}, `Memories the index does not show the model (${unseen.length})`),
      unseen.length === 0 ? h("p", { class: "muted" }, "Every memory has a loaded index line.") : h(
        "ul",
        {},
        unseen.map((m) =>
          h(
            "li",
            {},
            h("a", { href: memoryHref(m.path) }, m.path),
            m.index === "cut" ? " — its line is cut" : " — no line"
          )
        )
      ),
      view.pinnedLeftOut.length === 0
        ? null
        : h("p", { class: "caveat" }, `Pinned but left out: ${view.pinnedLeftOut.join(", ")}`)
    ),
    h(
      "details",
      { class: "panel" },
      h("summary", {}, "The whole memory section of the system prompt (memdir prompt)"),
      h("pre", { class: "prompt", "data-testid": "prompt" }, raw(view.prompt))
    )
  )
}
