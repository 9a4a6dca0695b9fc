/**
 * The dream's prompt: its system prompt from the catalog (`prompts/DreamPrompt.ts`), and the first user message with the
 * orient material (index, manifest, recent daily logs, touched sessions) read by memdir, so the model does not
 * spend turns listing.
 */
import type * as Result from "effect/Result"
import type { RecentLog } from "../DailyLog.js"
import type { UnknownPromptVariantError } from "../Errors.js"
import { INDEX_ENTRY_MAX_CHARS } from "../Memory.js"
import { INDEX_FILE, INDEX_MAX_BYTES, INDEX_MAX_LINES } from "../MemoryIndex.js"
import { dreamSection } from "../prompts/DreamPrompt.js"
import { renderSection, withTrailingSeparator } from "../prompts/PromptSection.js"
import type { TouchedSession } from "./gates.js"

/** The dream's system prompt by variant (the catalog's dream section). */
export const dreamPromptVariants = dreamSection.variants

export const renderDreamSystemPrompt = (input: {
  readonly memoryDir: string
  readonly now: number
  readonly variant?: string | undefined
}): Result.Result<string, UnknownPromptVariantError> =>
  renderSection(dreamSection, input.variant, {
    memoryDir: withTrailingSeparator(input.memoryDir),
    indexFile: INDEX_FILE,
    maxIndexLines: String(INDEX_MAX_LINES),
    maxIndexKb: String(INDEX_MAX_BYTES / 1000),
    indexEntryMaxChars: String(INDEX_ENTRY_MAX_CHARS),
    today: new Date(input.now).toISOString().slice(0, 10)
  })

export interface OrientMaterial {
  readonly memoryDir: string
  readonly indexContent: string
  readonly manifest: ReadonlyArray<string>
  readonly problems: ReadonlyArray<string>
  readonly logs: ReadonlyArray<RecentLog>
  readonly sessions: ReadonlyArray<TouchedSession>
  readonly lastConsolidatedAt: number | undefined
}

/** Pure: the first user message, everything phase 1 needs. */
export const orientMessage = (m: OrientMaterial): string => {
  const section = (title: string, body: string) => `## ${title}\n\n${body.trim() === "" ? "(none)" : body.trim()}`
  return [
    `Memory directory: ${m.memoryDir}. Last consolidation: ${
      m.lastConsolidatedAt === undefined ? "never" : new Date(m.lastConsolidatedAt).toISOString()
    }.`,
    section(INDEX_FILE, m.indexContent),
    section(`Memories (${m.manifest.length})`, m.manifest.join("\n")),
    ...(m.problems.length === 0 ? [] : [section("Files with broken frontmatter", m.problems.join("\n"))]),
    section(
      `Daily logs, last days (${m.logs.length})`,
      m.logs.map((log) => `### ${log.file}${log.truncated ? " (last lines only)" : ""}\n\n${log.content.trim()}`)
        .join("\n\n")
    ),
    section(
      `Sessions since the last consolidation (${m.sessions.length})`,
      m.sessions.slice(0, 50).map((s) => `- ${s.id} (${new Date(s.mtime).toISOString()})`).join("\n") +
        (m.sessions.length > 50 ? `\n- … ${m.sessions.length - 50} older sessions` : "")
    ),
    "Begin with phase 1."
  ].join("\n\n")
}
