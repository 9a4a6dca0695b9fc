/// <reference lib="dom" />
/**
 * The views over what memdir did (apps/cli/src/ui/data): **Dreams** (what each of the last dreams merged, rewrote,
 * pruned and created, and memdir's repair of the index), **Activity** (what the hooks and the MCP server gave
 * which session for which prompt, what extraction saved, the background runs that failed) and **Health**
 * (`memdir doctor`'s findings with its safe repairs one click away, and team sync's state).
 */
import { get, post } from "./api.js"
import { type App, errorBox } from "./app.js"
import { type Child, h, memoryHref } from "./dom.js"
import type { Activity, DreamSummary, Finding, Health } from "./types.js"

export interface InsightView {
  readonly route: string
  readonly label: string
  readonly render: (app: App) => Promise<HTMLElement>
}

const when = (iso: string): string => {
  const date = new Date(iso)
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString()
}

const pathLinks = (paths: ReadonlyArray<string>): Child =>
  paths.length === 0 ?
    h("span", { class: "muted" }, "none") :
    paths.map((p, i) => [i > 0 ? ", " : null, h("a", { href: memoryHref(p) }, p)])

const list = (title: string, items: ReadonlyArray<string>, linked = true): Child =>
  items.length === 0 ? null : h(
    "div",
    {},
    h("strong", {}, `${title} (${items.length}): `),
    linked ? pathLinks(items) : items.join(", ")
  )

const dreamCard = (dream: DreamSummary): HTMLElement =>
  h(
    "section",
    { class: "panel", "data-testid": "dream" },
    h(
      "h3",
      {},
      when(dream.at),
      " ",
      h("span", { class: dream.ok ? "badge ok" : "badge warn" }, dream.ok ? "completed" : "failed")
    ),
    dream.error === undefined ? null : h("p", { class: "error" }, dream.error),
    list("merged", dream.merged, false),
    list("rewrote", dream.fixed),
    list("pruned", dream.pruned),
    list("created", dream.created),
    dream.indexRemoved.length === 0 ? null : h(
      "details",
      {},
      h("summary", {}, `${dream.indexRemoved.length} index line(s) removed to fit the caps`),
      h("ul", {}, dream.indexRemoved.map((r) => h("li", {}, h("code", {}, r.line), ` — ${r.reason}`)))
    ),
    dream.summary === "" ? null : h("p", { class: "muted" }, dream.summary),
    h(
      "p",
      { class: "muted" },
      `backups: ${dream.backupDir}`,
      dream.commit === undefined ? "" : `; ${dream.commit}`,
      dream.model === undefined ? "" : `; model ${dream.model}`
    )
  )

const dreamsView: InsightView = {
  route: "dreams",
  label: "Dreams",
  render: async () => {
    const dreams = await get<ReadonlyArray<DreamSummary>>("/api/dreams")
    return h(
      "div",
      { "data-testid": "dreams" },
      h(
        "p",
        { class: "muted" },
        "What the last dreams (`memdir dream`) did. A memory's own page shows its history, with every version a " +
          "dream replaced."
      ),
      dreams.length === 0 ? h("p", { class: "empty" }, "No dream has run yet.") : dreams.map(dreamCard)
    )
  }
}

const activityView: InsightView = {
  route: "activity",
  label: "Activity",
  render: async () => {
    const activity = await get<Activity>("/api/activity")
    return h(
      "div",
      { "data-testid": "activity" },
      activity.unreadable.length === 0 ? null : h(
        "p",
        { class: "caveat" },
        `Records that could not be read (their entries are missing): ${activity.unreadable.join("; ")}`
      ),
      h(
        "section",
        { class: "panel" },
        h("h3", {}, "Memory given to sessions"),
        activity.injections.length === 0 ?
          h("p", { class: "muted" }, "Nothing recorded yet: the hooks and the MCP server record what they give.") :
          h(
            "table",
            { "data-testid": "injections" },
            h("thead", {}, h("tr", {}, ["when", "session", "by", "prompt", "memories"].map((t) => h("th", {}, t)))),
            h(
              "tbody",
              {},
              activity.injections.map((i) =>
                h(
                  "tr",
                  {},
                  h("td", {}, when(i.at)),
                  h("td", { class: "path" }, i.session),
                  h("td", {}, i.event),
                  h("td", {}, i.prompt ?? h("span", { class: "muted" }, "not recorded")),
                  h("td", {}, pathLinks(i.memories))
                )
              )
            )
          )
      ),
      h(
        "section",
        { class: "panel" },
        h("h3", {}, "Extractions"),
        activity.extractions.length === 0 ? h("p", { class: "muted" }, "No extraction has run yet.") : h(
          "ul",
          {},
          activity.extractions.map((e) =>
            h(
              "li",
              {},
              when(e.at),
              " ",
              h("span", { class: e.ok ? "badge ok" : "badge warn" }, e.ok ? "ok" : "failed"),
              " saved: ",
              pathLinks(e.saved),
              e.deleted.length === 0 ? null : [" deleted: ", e.deleted.join(", ")],
              e.note === undefined ? null : h("span", { class: "muted" }, ` — ${e.note}`),
              e.error === undefined ? null : h("div", { class: "error" }, e.error)
            )
          )
        )
      ),
      h(
        "section",
        { class: "panel" },
        h("h3", {}, "Background runs that failed"),
        activity.backgroundFailures.length === 0 ? h("p", { class: "muted" }, "None.") : h(
          "ul",
          {},
          activity.backgroundFailures.map((f) =>
            h(
              "li",
              {},
              `${when(f.at)} ${f.kind} ${f.state}: `,
              h("span", { class: "error-text" }, f.error),
              f.fix === undefined ? null : h("div", { class: "muted" }, `Fix: ${f.fix}`)
            )
          )
        )
      )
    )
  }
}

const findingRow = (app: App, finding: Finding, refresh: () => void): HTMLElement => {
  const status = h("span")
  return h(
    "li",
    { class: `finding sev-${finding.severity}`, "data-testid": "finding" },
    h("strong", {}, finding.severity),
    " ",
    h("code", {}, finding.code),
    finding.where === undefined ? null : [" ", h("span", { class: "path" }, finding.where)],
    " ",
    finding.path === undefined ? null : h("a", { href: memoryHref(finding.path) }, "open"),
    h("div", {}, finding.message),
    finding.fix === undefined ? null : h(
      "div",
      { class: "muted" },
      finding.fix.safe ? "Safe fix: " : "To do: ",
      finding.fix.description,
      finding.fix.safe && !app.state.readOnly ?
        [
          " ",
          h("button", {
            type: "button",
            "data-testid": "apply-fix",
            onclick: () =>
              void post<{ applied: boolean; message: string }>("/api/health/fix", { id: finding.fix!.id }).then(
                (result) => {
                  app.invalidate()
                  app.toast(result.message)
                  refresh()
                },
                (error: unknown) => status.replaceChildren(errorBox(error))
              )
          }, "Fix")
        ] :
        null
    ),
    status
  )
}

const healthView: InsightView = {
  route: "health",
  label: "Health",
  render: async (app) => {
    const health = await get<Health>("/api/health")
    const refresh = () => app.go("#/health")
    const team = health.team
    return h(
      "div",
      { "data-testid": "health" },
      h(
        "p",
        { "data-testid": "health-summary" },
        `${health.summary.errors} error(s), ${health.summary.warnings} warning(s), ${health.summary.infos} note(s); ` +
          `${health.summary.fixable} with a safe fix (memdir doctor --fix).`,
        health.summary.fixable > 0 && !app.state.readOnly ?
          [
            " ",
            h("button", {
              type: "button",
              "data-testid": "fix-all",
              onclick: () =>
                void post<{ message: string }>("/api/health/fix", { id: "doctor:all" }).then((result) => {
                  app.invalidate()
                  app.toast(result.message)
                  refresh()
                }, (error: unknown) => app.toast(error instanceof Error ? error.message : String(error)))
            }, "Apply every safe fix")
          ] :
          null
      ),
      health.findings.length === 0 ?
        h("p", { class: "empty" }, "memdir doctor finds nothing wrong.") :
        h("ul", { class: "findings" }, health.findings.map((f) => findingRow(app, f, refresh))),
      team === undefined ? null : h(
        "section",
        { class: "panel", "data-testid": "team-state" },
        h("h3", {}, "Team sync"),
        !team.synced ? h("p", { class: "muted" }, "Team memory has not been synced here yet (memdir team sync).") : [
          h(
            "p",
            {},
            `${team.ahead} commit(s) not yet pushed, ${team.behind} on the remote not merged here`,
            team.lastSync === undefined ? "" : `; last sync ${when(team.lastSync)}`
          ),
          list("changed here since the last sync", team.pending),
          list("conflicts waiting for a person", team.conflicts)
        ]
      )
    )
  }
}

export const insightViews: ReadonlyArray<InsightView> = [dreamsView, activityView, healthView]
