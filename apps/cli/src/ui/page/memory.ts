/// <reference lib="dom" />
/**
 * One memory: its body rendered (markdown.ts: escaped, safe links), its frontmatter as fields, its age and links;
 * edit (fields and body, saved with the version the page loaded: a change made meanwhile is shown beside yours,
 * never overwritten), rename, and delete with undo (the server keeps a backup).
 */
import { ApiError, get, post } from "./api.js"
import { type App, errorBox, load } from "./app.js"
import { sideBySide } from "./diff.js"
import { h, memoryHref, mount } from "./dom.js"
import { renderMarkdown } from "./markdown.js"
import type { HistoryEntry, MemoryHistory, MemoryRead } from "./types.js"

const TYPES = ["user", "feedback", "project", "reference"] as const

/** `[[links]]` and relative links of the body, resolved against the listing by name, file stem or path. */
const resolverFor = async (app: App) => {
  const listing = await app.listing()
  const byKey = new Map<string, string>()
  const key = (text: string) => text.trim().toLowerCase().replace(/\.md$/, "")
  for (const m of listing.memories) {
    for (const k of [m.name, m.path, m.path.split("/").pop() ?? m.path]) {
      if (!byKey.has(key(k))) byKey.set(key(k), m.path)
    }
  }
  return (target: string) => byKey.get(key(target.replace(/^\.\//, "")))
}

const field = (label: string, value: string) => h("div", { class: "field" }, h("dt", {}, label), h("dd", {}, value))

/** What the page sends to save: the fields and the body the person edited. */
interface Draft {
  name: string
  description: string
  type: string
  body: string
}

const FRONTMATTER = /^---\r?\n([\s\S]*?)\r?\n---\r?\n(?:\r?\n)?/

/**
 * The text on disk and the draft, in one shape for the side-by-side diff: the header's fields one per line (the
 * draft's name, description and type in place of the disk's; `modified:`, which every write stamps, left out) and
 * then the body.
 */
const comparable = (disk: string, draft: Draft): readonly [string, string] => {
  const match = FRONTMATTER.exec(disk)
  const head = (match?.[1] ?? "").split(/\r?\n/).filter((line) => line !== "" && !line.startsWith("modified:"))
  const others = head.filter((line) => !/^(name|description|type):/.test(line))
  const mine = [`name: ${draft.name}`, `description: ${draft.description}`, `type: ${draft.type}`, ...others]
  return [
    `${head.join("\n")}\n\n${match === null ? disk : disk.slice(match[0].length)}`,
    `${mine.join("\n")}\n\n${draft.body}`
  ]
}

const conflictView = (app: App, memory: MemoryRead, draft: Draft, error: ApiError, target: HTMLElement) => {
  const disk = typeof error.fields.content === "string" ? error.fields.content : null
  mount(
    target,
    h(
      "div",
      { class: "conflict", role: "alert", "data-testid": "conflict" },
      h("h3", {}, "This memory changed on disk since you opened it"),
      h(
        "p",
        {},
        disk === null ?
          "It is gone now: your text was not saved. Copy it from the right before you leave." :
          "Your text was not saved, and the text on disk was not overwritten. Compare them, then edit the current " +
          "version (your text stays here to copy from)."
      ),
      sideBySide(...comparable(disk ?? "", draft), ["on disk now", "yours (not saved)"]),
      h("h4", {}, "Your text"),
      h("textarea", { class: "mine", rows: 8, "data-testid": "mine", spellcheck: false, value: draft.body }),
      h(
        "div",
        { class: "actions" },
        h("button", {
          type: "button",
          "data-testid": "edit-current",
          onclick: () => {
            app.invalidate()
            void memoryView(app, target, memory.path, true)
          }
        }, "Edit the current version")
      )
    )
  )
}

const editor = (app: App, memory: MemoryRead, target: HTMLElement) => {
  const fm = memory.frontmatter ?? { name: "", description: "", type: "project" }
  const name = h("input", { name: "name", value: fm.name, "data-testid": "edit-name" })
  const description = h("input", { name: "description", value: fm.description, "data-testid": "edit-description" })
  const type = h(
    "select",
    { name: "type", "data-testid": "edit-type" },
    TYPES.map((t) => h("option", { value: t, selected: fm.type === t }, t))
  )
  const body = h("textarea", {
    name: "body",
    rows: 18,
    spellcheck: false,
    value: memory.body,
    "data-testid": "edit-body"
  })
  const status = h("div", { class: "status" })
  const save = async (event: SubmitEvent) => {
    event.preventDefault()
    const draft: Draft = { name: name.value, description: description.value, type: type.value, body: body.value }
    status.replaceChildren(h("span", { class: "muted" }, "Saving…"))
    try {
      const saved = await post<{ path: string; changed: boolean }>("/api/save", {
        path: memory.path,
        ifVersion: memory.version,
        ...draft
      })
      app.invalidate()
      app.toast(saved.changed ? `Saved ${saved.path}` : "Nothing changed")
      await memoryView(app, target, saved.path, false)
    } catch (error) {
      if (error instanceof ApiError && error.tag === "VersionConflictError") {
        conflictView(app, memory, draft, error, target)
      } else {
        status.replaceChildren(errorBox(error))
      }
    }
  }
  return h(
    "form",
    { class: "editor", onsubmit: (event) => void save(event), "data-testid": "editor" },
    h("label", {}, "Name", name),
    h("label", {}, "Description", description),
    h("label", {}, "Type", type),
    h("label", {}, "Body (Markdown)", body),
    status,
    h(
      "div",
      { class: "actions" },
      h("button", { type: "submit", "data-testid": "save" }, "Save"),
      h("button", {
        type: "button",
        class: "quiet",
        onclick: () => void memoryView(app, target, memory.path, false)
      }, "Cancel")
    )
  )
}

const renameForm = (app: App, memory: MemoryRead, slot: HTMLElement) => {
  const input = h("input", { value: memory.path, name: "newPath", "data-testid": "rename-path" })
  const status = h("div")
  mount(
    slot,
    h(
      "form",
      {
        class: "inline-form",
        onsubmit: (event) => {
          event.preventDefault()
          void (async () => {
            try {
              const renamed = await post<{ path: string }>("/api/rename", {
                path: memory.path,
                newPath: input.value,
                ifVersion: memory.version
              })
              app.invalidate()
              app.toast(`Renamed to ${renamed.path}`)
              app.go(memoryHref(renamed.path))
            } catch (error) {
              status.replaceChildren(errorBox(error))
            }
          })()
        }
      },
      h("label", {}, "New path ", input),
      h("button", { type: "submit", "data-testid": "rename-confirm" }, "Rename"),
      status
    )
  )
  input.focus()
}

const deleteConfirm = (app: App, memory: MemoryRead, slot: HTMLElement) => {
  const status = h("div")
  mount(
    slot,
    h(
      "div",
      { class: "inline-form danger" },
      h("span", {}, `Delete ${memory.path}? A copy is kept so you can undo it.`),
      h("button", {
        type: "button",
        class: "danger",
        "data-testid": "delete-confirm",
        onclick: () =>
          void (async () => {
            try {
              const removed = await post<{ path: string; undoId?: string }>("/api/delete", {
                path: memory.path,
                ifVersion: memory.version
              })
              app.invalidate()
              const undoId = removed.undoId
              app.toast(
                `Deleted ${removed.path}`,
                undoId === undefined ? undefined : {
                  label: "Undo",
                  run: () =>
                    void post<{ path: string }>("/api/history/restore", { path: removed.path, id: undoId }).then(
                      (restored) => {
                        app.invalidate()
                        app.toast(`Restored ${restored.path}`)
                        app.go(memoryHref(restored.path))
                      },
                      (error: unknown) =>
                        app.toast(`Could not undo: ${error instanceof Error ? error.message : String(error)}`)
                    )
                }
              )
              app.go("#/browse")
            } catch (error) {
              status.replaceChildren(errorBox(error))
            }
          })()
      }, "Delete"),
      h("button", { type: "button", class: "quiet", onclick: () => slot.replaceChildren() }, "Keep it"),
      status
    )
  )
}

const SOURCES: Readonly<Record<string, string>> = {
  "git": "commit",
  "working-tree": "not yet committed",
  "dream-backup": "dream",
  "extract-backup": "extraction",
  "doctor-backup": "doctor --fix",
  "delete-backup": "delete",
  "restore-backup": "restore"
}

const historyEntry = (app: App, memory: MemoryRead, entry: HistoryEntry, target: HTMLElement): HTMLElement => {
  const status = h("div")
  return h(
    "details",
    { class: "history-entry", "data-testid": "history-entry" },
    h(
      "summary",
      {},
      h("span", { class: "muted" }, new Date(entry.at).toLocaleString()),
      ` ${SOURCES[entry.source] ?? entry.source}: `,
      entry.summary,
      entry.author === undefined ? null : h("span", { class: "muted" }, ` (${entry.author})`)
    ),
    entry.truncated ? h("p", { class: "muted" }, "Long texts are cut here.") : null,
    sideBySide(entry.before ?? "", entry.after ?? "", [
      entry.before === undefined ? "(did not exist)" : "before",
      entry.after === undefined ? "(removed)" : entry.afterIs === "exact" ? "after" : "after (the next version known)"
    ]),
    entry.restorable && !app.state.readOnly ?
      h("button", {
        type: "button",
        "data-testid": "history-restore",
        onclick: () =>
          void post<{ path: string; restored: boolean }>("/api/history/restore", {
            path: memory.path,
            id: entry.id,
            ifVersion: memory.version
          }).then(
            (restored) => {
              app.invalidate()
              app.toast(restored.restored ? `Restored that version of ${restored.path}` : "It already is that version")
              void memoryView(app, target, restored.path, false)
            },
            (error: unknown) => status.replaceChildren(errorBox(error))
          )
      }, `Put back the version ${entry.restores === "after" ? "after" : "before"} this change`) :
      null,
    status
  )
}

const historySection = (app: App, memory: MemoryRead, target: HTMLElement): HTMLElement => {
  const list = h("div", { class: "history" })
  const section = h(
    "section",
    { class: "panel", "data-testid": "history" },
    h(
      "h3",
      {},
      "History ",
      h("button", {
        type: "button",
        "data-testid": "show-history",
        onclick: () =>
          void load(list, async () => {
            const history = await get<MemoryHistory>("/api/history", { path: memory.path })
            return history.entries.length === 0 ?
              h("p", { class: "muted" }, "No earlier version is known (no commit, no backup).") :
              [
                history.entries.map((entry) => historyEntry(app, memory, entry, target)),
                history.more ? h("p", { class: "muted" }, "Older entries are not shown.") : null
              ]
          })
      }, "Show")
    ),
    list
  )
  return section
}

/** A memory's page into `target`; `editing` opens the editor on the current version. */
export const memoryView = (app: App, target: HTMLElement, path: string, editing: boolean): Promise<void> =>
  load(target, async () => {
    const [memory, resolve] = await Promise.all([get<MemoryRead>("/api/memory", { path }), resolverFor(app)])
    const slot = h("div", { class: "slot" })
    const fm = memory.frontmatter
    const readOnly = app.state.readOnly
    const header = h(
      "header",
      { class: "memory-header" },
      h("h2", { "data-testid": "memory-title" }, fm?.name ?? memory.path),
      h("div", { class: "muted" }, fm?.description ?? "no valid frontmatter"),
      readOnly || editing ? null : h(
        "div",
        { class: "actions", "data-testid": "memory-actions" },
        h("button", {
          type: "button",
          "data-testid": "edit",
          onclick: () => void memoryView(app, target, path, true)
        }, "Edit"),
        h(
          "button",
          { type: "button", "data-testid": "rename", onclick: () => renameForm(app, memory, slot) },
          "Rename"
        ),
        h("button", {
          type: "button",
          class: "danger",
          "data-testid": "delete",
          onclick: () => deleteConfirm(app, memory, slot)
        }, "Delete")
      ),
      slot
    )
    const facts = h(
      "dl",
      { class: "facts" },
      field("path", memory.path),
      field("type", fm?.type ?? "—"),
      field("scope", memory.scope),
      field("written", `${memory.age} (${memory.written}, from its ${memory.writtenFrom})`),
      Object.entries(memory.extra).map(([key, value]) =>
        field(key, typeof value === "string" ? value : JSON.stringify(value))
      ),
      field("version", memory.version)
    )
    const links = memory.links.length + memory.deadLinks.length === 0 ? null : h(
      "section",
      { class: "links" },
      h("h3", {}, "Links"),
      h(
        "ul",
        {},
        memory.links.map((p) => h("li", {}, h("a", { href: memoryHref(p) }, p))),
        memory.deadLinks.map((d) => h("li", { class: "dead" }, `[[${d}]] names no memory`))
      )
    )
    return h(
      "article",
      { class: "memory", "data-testid": "memory" },
      header,
      memory.caveat === null ? null : h("p", { class: "caveat" }, memory.caveat),
      memory.warning === undefined ? null : h("p", { class: "caveat" }, memory.warning),
      editing && !readOnly ? editor(app, memory, target) : h(
        "div",
        { class: "columns" },
        h("div", { class: "body", "data-testid": "memory-body" }, renderMarkdown(memory.body, resolve)),
        h("aside", {}, facts, links)
      ),
      editing ? null : historySection(app, memory, target)
    )
  })
