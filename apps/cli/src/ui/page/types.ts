/**
 * The shapes the page reads from its server (apps/cli/src/ui/UiApi.ts answers them).
 */
import type { BrowsedMemory } from "../UiApi.js"

export interface UiState {
  readonly memoryDir: string
  readonly enabled: boolean
  readonly teamEnabled: boolean
  readonly readOnly: boolean
  readonly modelAvailable: boolean
}

/** One memory of the browse listing: the server's type (a type-only import, nothing of the server is bundled). */
export type { BrowsedMemory }

export interface Listing {
  readonly memoryDir: string
  readonly teamEnabled: boolean
  readonly memories: ReadonlyArray<BrowsedMemory>
  readonly problems: ReadonlyArray<{ readonly path: string; readonly code: string; readonly message: string }>
}

export interface MemoryRead {
  readonly path: string
  readonly scope: "private" | "team"
  readonly content: string
  readonly frontmatter: { readonly name: string; readonly description: string; readonly type: string } | null
  readonly body: string
  readonly written: string
  readonly writtenFrom: string
  readonly warning?: string
  readonly ageDays: number
  readonly age: string
  readonly caveat: string | null
  readonly version: string
  readonly extra: Readonly<Record<string, unknown>>
  readonly links: ReadonlyArray<string>
  readonly deadLinks: ReadonlyArray<string>
}

export interface IndexSection {
  readonly exists: boolean
  readonly lines: number
  readonly bytes: number
  readonly keptLines: number
  readonly keptBytes: number
  readonly truncatedByLines: boolean
  readonly truncatedByBytes: boolean
  readonly warning: string | null
  readonly kept: string
  readonly cut: string
}

export interface IndexView {
  readonly prompt: string
  readonly private: IndexSection
  readonly team: IndexSection | null
  readonly pinned: ReadonlyArray<string>
  readonly pinnedLeftOut: ReadonlyArray<string>
}

export interface SearchHit {
  readonly path: string
  readonly scope: string
  readonly name: string
  readonly type: string
  readonly description: string
  readonly age: string
  readonly score: number
  readonly relevant: boolean
}

export interface CandidateExplanation {
  readonly rank: number
  readonly path: string
  readonly score: number
  /** What the request's words found together in one passage of its body add to `score` to rank it. */
  readonly proximity: number
  readonly together: ReadonlyArray<string>
  readonly verdict: string
  readonly reason: string
  readonly duplicateOf?: string
  readonly matched: ReadonlyArray<
    { readonly term: string; readonly fields: ReadonlyArray<string>; readonly translatedAs?: ReadonlyArray<string> }
  >
}

export interface RecallView {
  readonly selected: ReadonlyArray<{
    readonly path: string
    readonly scope: string
    readonly name: string
    readonly type: string
    readonly description: string
    readonly age: string
    readonly caveat: string | null
    readonly content: string
  }>
  readonly candidates: number
  readonly selector: string
  readonly degraded: string | null
  readonly skipped: string | null
  readonly explain: ReadonlyArray<CandidateExplanation>
  readonly explainSummary: {
    readonly queryTerms: ReadonlyArray<string>
    readonly top: number
    readonly minEvidence: number
    readonly relativeCut: number
    readonly unknownWords: ReadonlyArray<string>
    readonly unknownWordsBar: number
    readonly unanalysed: number
    readonly questionForm?: string | undefined
    readonly generalQuestionBar: number
    readonly max: number
    readonly unmatched: number
    readonly summary: string
  } | null
}

export interface HistoryEntry {
  readonly id: string
  readonly at: string
  readonly source: string
  readonly summary: string
  readonly before?: string
  readonly after?: string
  readonly afterIs: "exact" | "next-known"
  readonly truncated: boolean
  readonly restorable: boolean
  readonly restores?: "before" | "after"
  readonly author?: string
  readonly backup?: string
}

export interface MemoryHistory {
  readonly path: string
  readonly entries: ReadonlyArray<HistoryEntry>
  readonly more: boolean
}

export interface DreamSummary {
  readonly at: string
  readonly finishedAt?: string
  readonly ok: boolean
  readonly merged: ReadonlyArray<string>
  readonly fixed: ReadonlyArray<string>
  readonly pruned: ReadonlyArray<string>
  readonly created: ReadonlyArray<string>
  readonly indexRemoved: ReadonlyArray<{ readonly line: string; readonly reason: string }>
  readonly summary: string
  readonly model?: string
  readonly backupDir: string
  readonly commit?: string
  readonly error?: string
}

export interface Activity {
  readonly injections: ReadonlyArray<{
    readonly at: string
    readonly session: string
    readonly event: string
    readonly prompt?: string
    readonly memories: ReadonlyArray<string>
  }>
  readonly extractions: ReadonlyArray<{
    readonly at: string
    readonly ok: boolean
    readonly saved: ReadonlyArray<string>
    readonly deleted: ReadonlyArray<string>
    readonly session?: string
    readonly messagesRead?: number
    readonly refused?: number
    readonly from: string
    readonly note?: string
    readonly error?: string
  }>
  readonly backgroundFailures: ReadonlyArray<{
    readonly at: string
    readonly kind: string
    readonly state: string
    readonly session: string
    readonly error: string
    readonly fix?: string
  }>
  readonly unreadable: ReadonlyArray<string>
}

export interface Finding {
  readonly id: string
  readonly severity: "error" | "warning" | "info"
  readonly code: string
  readonly where?: string
  readonly path?: string
  readonly message: string
  readonly fix?: { readonly id: string; readonly description: string; readonly safe: boolean }
}

export interface Health {
  readonly findings: ReadonlyArray<Finding>
  readonly summary: {
    readonly errors: number
    readonly warnings: number
    readonly infos: number
    readonly fixable: number
  }
  readonly team?: {
    readonly enabled: boolean
    readonly synced: boolean
    readonly ahead: number
    readonly behind: number
    readonly pending: ReadonlyArray<string>
    readonly conflicts: ReadonlyArray<string>
    readonly lastSync?: string
    readonly head?: string
  }
}
