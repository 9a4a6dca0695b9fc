/// <reference lib="dom" />
/**
 * The views over what memdir did (history, activity, health): routes of their own in the page's navigation.
 */
import type { App } from "./app.js"

export interface InsightView {
  readonly route: string
  readonly label: string
  readonly render: (app: App) => Promise<HTMLElement>
}

export const insightViews: ReadonlyArray<InsightView> = []
