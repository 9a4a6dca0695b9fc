/// <reference lib="dom" />
/**
 * What every view of the page shares: the server's state, the memory listing (loaded once, refreshed when memory
 * changes on disk), messages to the person (a toast with an optional action, e.g. undo), and errors shown in place.
 */
import { get } from "./api.js"
import { type Child, h, mount } from "./dom.js"
import type { Listing, UiState } from "./types.js"

export interface App {
  readonly state: UiState
  /** The listing, loaded when first asked for and after every change. */
  readonly listing: () => Promise<Listing>
  /** Forget the listing (memory changed): the next `listing()` loads it again. */
  readonly invalidate: () => void
  readonly toast: (message: string, action?: { readonly label: string; readonly run: () => void }) => void
  readonly go: (hash: string) => void
}

export const makeApp = (state: UiState, toasts: HTMLElement, prefetched?: Promise<Listing>): App => {
  let listing: Promise<Listing> | undefined = prefetched
  return {
    state,
    listing: () => listing ??= get<Listing>("/api/memories"),
    invalidate: () => {
      listing = undefined
    },
    toast: (message, action) => {
      const toast = h(
        "div",
        { class: "toast", role: "status", "data-testid": "toast" },
        h("span", {}, message),
        action === undefined ? null : h("button", {
          type: "button",
          "data-testid": "toast-action",
          onclick: () => {
            toast.remove()
            action.run()
          }
        }, action.label),
        h("button", { type: "button", class: "quiet", "aria-label": "Dismiss", onclick: () => toast.remove() }, "×")
      )
      toasts.appendChild(toast)
      setTimeout(() => toast.remove(), action === undefined ? 6_000 : 30_000)
    },
    go: (hash) => {
      if (window.location.hash === hash) window.dispatchEvent(new HashChangeEvent("hashchange"))
      else window.location.hash = hash
    }
  }
}

/** An error where the view would be: what failed, in the server's words. */
export const errorBox = (error: unknown): HTMLElement =>
  h(
    "div",
    { class: "error", role: "alert", "data-testid": "error" },
    error instanceof Error ? error.message : String(error)
  )

/** Shows `loading` in `target` until `work` settles, then its nodes (or the error). */
export const load = async (target: HTMLElement, work: () => Promise<Child>): Promise<void> => {
  mount(target, h("p", { class: "loading" }, "Loading…"))
  try {
    mount(target, await work())
  } catch (error) {
    mount(target, errorBox(error))
  }
}
