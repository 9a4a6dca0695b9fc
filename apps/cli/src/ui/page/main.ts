/// <reference lib="dom" />
/**
 * The page of `memdir ui` (docs/ui.md): plain TypeScript modules compiled into one script of the CLI bundle, no
 * framework. Routes are the URL's hash (`#/browse`, `#/memory/<path>`, `#/search?q=…`, `#/index`, …), so the
 * back button and links between memories work. An event stream from the server tells the page when memory changed
 * on disk (and tells the server the page is still open).
 */
import { get, lastChangeAt } from "./api.js"
import { errorBox, load, makeApp } from "./app.js"
import { browseView } from "./browse.js"
import { h, mount } from "./dom.js"
import { indexView } from "./indexView.js"
import { insightViews } from "./insights.js"
import { memoryView } from "./memory.js"
import { searchView } from "./search.js"
import type { Listing, UiState } from "./types.js"

const TABS: ReadonlyArray<readonly [route: string, label: string]> = [
  ["browse", "Browse"],
  ["search", "Search & recall"],
  ["index", "Index"],
  ...insightViews.map((view) => [view.route, view.label] as const)
]

const start = async (): Promise<void> => {
  const root = document.getElementById("app")!
  // the browse view (the first page) needs the listing: ask for it beside the state
  const opening = window.location.hash.replace(/^#\/?/, "")
  const listing = opening === "" || opening.startsWith("browse") ? get<Listing>("/api/memories") : undefined
  listing?.catch(() => undefined)
  let state: UiState
  try {
    state = await get<UiState>("/api/state")
  } catch (error) {
    mount(root, errorBox(error))
    return
  }
  const toasts = h("div", { class: "toasts" })
  const app = makeApp(state, toasts, listing)
  const nav = h("nav", {}, TABS.map(([route, label]) => h("a", { href: `#/${route}`, "data-route": route }, label)))
  const notice = h("div", { class: "notice" })
  const main = h("main", { id: "view" })
  mount(
    root,
    h(
      "header",
      { class: "top" },
      h("h1", {}, "memdir"),
      h("span", { class: "muted dir", title: state.memoryDir }, state.memoryDir),
      state.readOnly ? h("span", { class: "badge", "data-testid": "read-only" }, "read-only") : null,
      state.teamEnabled ? h("span", { class: "badge" }, "team memory on") : null,
      nav
    ),
    notice,
    main,
    toasts
  )

  let current = ""
  const route = () => {
    const hash = window.location.hash.replace(/^#\/?/, "") || "browse"
    current = hash
    const [name = "browse", ...rest] = hash.split("/")
    const [routeName = name, query = ""] = name.split("?")
    for (const link of Array.from(nav.querySelectorAll("a"))) {
      link.classList.toggle("active", link.getAttribute("data-route") === routeName)
    }
    notice.replaceChildren()
    window.scrollTo(0, 0)
    switch (routeName) {
      case "memory": {
        const path = decodeURIComponent(rest.join("/"))
        return void memoryView(app, main, path, false)
      }
      case "search":
        return searchView(app, main, new URLSearchParams(query).get("q") ?? "")
      case "index":
        return void load(main, () => indexView(app))
      default: {
        const insight = insightViews.find((view) => view.route === routeName)
        if (insight !== undefined) return void load(main, () => insight.render(app))
        return void load(main, async () => {
          const target = h("div")
          await browseView(app, target)
          return target
        })
      }
    }
  }
  window.addEventListener("hashchange", route)
  route()

  // memory changed on disk: the listing is stale; a list view refreshes, a memory being read or edited says so
  const events = new EventSource("/api/events")
  // the server stopped (Ctrl-C, or the page was away too long): say so, rather than fail request by request
  const lost = h(
    "div",
    { class: "caveat", role: "alert", "data-testid": "connection-lost" },
    "memdir ui is not answering (it stops on Ctrl-C, or when no page was open for a while): run memdir ui again."
  )
  events.addEventListener("error", () => {
    if (!lost.isConnected) root.insertBefore(lost, main)
  })
  events.addEventListener("open", () => lost.remove())
  let pending: ReturnType<typeof setTimeout> | undefined
  events.addEventListener("changed", () => {
    app.invalidate()
    if (pending !== undefined) clearTimeout(pending)
    pending = setTimeout(() => {
      if (current === "" || current.startsWith("browse") || current.startsWith("index")) route()
      // the page's own save, rename or delete is not news
      else if (current.startsWith("memory/") && Date.now() - lastChangeAt() > 2_000) {
        notice.replaceChildren(
          h(
            "div",
            { class: "caveat", "data-testid": "changed-notice" },
            "Memory changed on disk. ",
            h("button", { type: "button", onclick: () => route() }, "Reload")
          )
        )
      }
    }, 300)
  })
}

void start()
