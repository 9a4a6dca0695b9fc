/// <reference lib="dom" />
/**
 * Search and recall: type a request, see the memories that match it (ranked headers) beside what recall would give
 * the agent and why (the offline selector's scores, matched terms and fields, the floor and the relative cut). The
 * model selector's choice is asked for only when a key is configured and the person clicks for it (a paid call).
 */
import { get } from "./api.js"
import { type App, errorBox, load } from "./app.js"
import { type Child, h, memoryHref, mount } from "./dom.js"
import type { RecallView, SearchHit } from "./types.js"

const recallPanel = (result: RecallView, title: string): HTMLElement => {
  const summary = result.explainSummary
  return h(
    "section",
    { class: "panel", "data-testid": `recall-${result.selector}` },
    h("h3", {}, title),
    h(
      "p",
      { class: "muted" },
      result.skipped !== null ?
        `Memory is not consulted for this request: ${result.skipped}.` :
        `${result.selected.length} of ${result.candidates} memories selected by the ${result.selector} selector.`
    ),
    result.degraded === null ? null : h("p", { class: "caveat" }, `The model selector failed: ${result.degraded}`),
    h(
      "ol",
      { class: "recalled" },
      result.selected.map((m) =>
        h(
          "li",
          { "data-testid": "recalled" },
          h("a", { href: memoryHref(m.path) }, m.name),
          ` [${m.type}${m.scope === "team" ? ", team" : ""}] `,
          h("span", { class: "muted" }, `${m.age} — ${m.description}`)
        )
      )
    ),
    summary === null ? null : h(
      "details",
      { class: "explain", open: true },
      h("summary", {}, "Why (offline selector)"),
      h(
        "p",
        { class: "muted" },
        `Request terms: ${summary.queryTerms.length === 0 ? "(none)" : summary.queryTerms.join(", ")}. ` +
          `Evidence floor ${summary.minEvidence.toFixed(2)}, relative cut ${summary.relativeCut.toFixed(2)} ` +
          `(top score ${summary.top.toFixed(2)}), at most ${summary.max}.` +
          (summary.questionForm === undefined ? "" : ` Phrased as a general question ("${summary.questionForm}"): ` +
            `every memory needs ${summary.generalQuestionBar.toFixed(2)}.`) +
          (summary.unknownWords.length === 0 ? "" : ` Words no memory contains: ${summary.unknownWords.join(", ")} (` +
            (summary.unanalysed > 0
              ? `no bar yet: ${summary.unanalysed} memories' bodies are not analysed yet).`
              : `every memory needs ${summary.unknownWordsBar.toFixed(2)}).`))
      ),
      h(
        "table",
        { class: "explain-table", "data-testid": "explain" },
        h(
          "thead",
          {},
          h("tr", {}, ["#", "score", "verdict", "memory", "matched terms (fields)"].map((t) => h("th", {}, t)))
        ),
        h(
          "tbody",
          {},
          result.explain.map((c) =>
            h(
              "tr",
              { class: c.verdict === "kept" ? "kept" : "cut" },
              h("td", {}, String(c.rank)),
              h(
                "td",
                {
                  class: "num",
                  title: c.proximity > 0
                    ? `evidence ${c.score.toFixed(2)}, and ${c.proximity.toFixed(2)} for the request's words found ` +
                      `together in one passage of its body (ranking and the relative cut only)`
                    : `evidence ${c.score.toFixed(2)}`
                },
                c.proximity > 0 ? `${c.score.toFixed(2)}+${c.proximity.toFixed(2)}` : c.score.toFixed(2)
              ),
              h("td", { title: c.reason }, c.verdict === "kept" ? "kept" : `cut: ${c.verdict}`),
              h("td", {}, h("a", { href: memoryHref(c.path) }, c.path)),
              h(
                "td",
                {},
                c.matched.map((m) =>
                  `${m.term}${m.translatedAs === undefined ? "" : ` as ${m.translatedAs.join("/")}`} (${
                    m.fields.join(", ") || "?"
                  })`
                ).join(", ") + (c.proximity > 0 ? `; together in one passage: ${c.together.join(", ")}` : "")
              )
            )
          )
        )
      ),
      h(
        "p",
        { class: "muted" },
        summary.summary,
        summary.unmatched > 0 ? ` ${summary.unmatched} more share no term with the request.` : ""
      )
    )
  )
}

const searchPanel = (hits: ReadonlyArray<SearchHit>): HTMLElement =>
  h(
    "section",
    { class: "panel", "data-testid": "search-results" },
    h("h3", {}, "Matching memories"),
    hits.length === 0 ? h("p", { class: "muted" }, "No memory matches.") : h(
      "ol",
      {},
      hits.map((hit) =>
        h(
          "li",
          { "data-testid": "search-hit" },
          h("a", { href: memoryHref(hit.path) }, hit.name),
          ` [${hit.type}] `,
          h("span", { class: "muted" }, `score ${hit.score.toFixed(2)}${hit.relevant ? ", recall would pick it" : ""}`),
          h("div", { class: "muted description" }, hit.description)
        )
      )
    )
  )

/** The search view into `target`, with the request from the route (`#/search?q=…`). */
export const searchView = (app: App, target: HTMLElement, query: string): void => {
  const input = h("input", {
    type: "search",
    name: "q",
    value: query,
    placeholder: "What would you ask the agent? e.g. how do we run the tests",
    "aria-label": "Request",
    "data-testid": "query"
  })
  const results = h("div", { class: "results" })
  const modelSlot = h("div", { class: "model-slot" })
  mount(
    target,
    h(
      "form",
      {
        class: "toolbar",
        onsubmit: (event) => {
          event.preventDefault()
          app.go(`#/search?q=${encodeURIComponent(input.value)}`)
        }
      },
      input,
      h("button", { type: "submit", "data-testid": "run-search" }, "Search and recall")
    ),
    results
  )
  if (query.trim() === "") {
    mount(
      results,
      h("p", { class: "muted" }, "Type a request: the memories that match it, and what recall would give.")
    )
    return
  }
  void load(results, async () => {
    const [hits, recalled] = await Promise.all([
      get<{ results: ReadonlyArray<SearchHit> }>("/api/search", { query }),
      get<RecallView>("/api/recall", { query })
    ])
    const askModel: Child = !app.state.modelAvailable ? null : h("button", {
      type: "button",
      "data-testid": "ask-model",
      title: "Calls the model once (uses your key)",
      onclick: () =>
        void load(modelSlot, async () => {
          try {
            return recallPanel(await get<RecallView>("/api/recall", { query, selector: "model" }), "Model selector")
          } catch (error) {
            return errorBox(error)
          }
        })
    }, "Ask the model selector too")
    return h(
      "div",
      { class: askModel === null ? "columns halves" : "columns three" },
      searchPanel(hits.results),
      recallPanel(recalled, "What recall gives the agent"),
      askModel === null ? null : h("div", {}, askModel, modelSlot)
    )
  })
}
