/**
 * The memory section of the agent's system prompt: its sections (data, in `prompts/MemoryPrompt.ts`) rendered in
 * prompt order with one set of slot values.
 *
 * The evals app swaps a section's variant by name (`variants`) or gives a section's whole text (`templates`, for a
 * suite's own wording); both go through this one render, so an eval measures the prompt the agent gets. The team
 * section is rendered only when the input has `team` (team memory on).
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { UnknownPromptVariantError } from "./Errors.js"
import { INDEX_ENTRY_MAX_CHARS } from "./Memory.js"
import { INDEX_FILE, INDEX_MAX_LINES } from "./MemoryIndex.js"
import type { LoadedIndex } from "./MemoryIndex.js"
import { type PinnedMemory, renderPinned } from "./Pins.js"
import {
  emptyIndexSection,
  emptyTeamIndexSection,
  memoryPromptSections,
  pinnedSection
} from "./prompts/MemoryPrompt.js"
import { lookup, type PromptSection as CatalogSection, render, withTrailingSeparator } from "./prompts/PromptSection.js"

export const sectionIds = ["intro", "types", "exclusions", "protocol", "recall-trust", "index", "team"] as const
export type SectionId = typeof sectionIds[number]

/** A section of the memory prompt (the catalog's section type, with the memory prompt's ids). */
export type PromptSection = CatalogSection<SectionId>

/**
 * The memory prompt in short: each section's `compact` variant (the index itself stays whole). For a context with a
 * size limit, where every character the rules take is one the index does not get: the SessionStart hook (Claude
 * Code keeps 10,000 characters of it, docs/hooks.md). The compact intro names `memdir prompt` for the whole rules.
 */
export const COMPACT_VARIANTS: Readonly<Partial<Record<SectionId, string>>> = {
  intro: "compact",
  types: "compact",
  exclusions: "compact",
  protocol: "compact",
  "recall-trust": "compact",
  team: "compact"
}

/** The memory prompt's sections, in prompt order. */
export const promptSections: ReadonlyArray<PromptSection> = memoryPromptSections

/** What the index section says when MEMORY.md is absent or blank (a template: `{{indexFile}}`). */
export const EMPTY_INDEX_NOTE = emptyIndexSection.variants[emptyIndexSection.default]!
/** What the team index says when team/MEMORY.md is absent or blank (a template: `{{indexFile}}`). */
export const EMPTY_TEAM_INDEX_NOTE = emptyTeamIndexSection.variants[emptyTeamIndexSection.default]!

// ---------------------------------------------------------------------------------------------------------------
// Rendering
// ---------------------------------------------------------------------------------------------------------------

export interface MemoryPromptInput {
  /** The memory directory (created before the prompt is built: the prompt says it exists). */
  readonly memoryDir: string
  readonly index: LoadedIndex
  /** Section id → variant name; sections not named use their default. */
  readonly variants?: Partial<Record<SectionId, string>> | undefined
  /** Section id → a whole template used instead of a built-in variant (an eval suite's own wording). */
  readonly templates?: Partial<Record<SectionId, string>> | undefined
  /** Pinned memories (`Pins.loadPinned`), loaded in full after the index. Absent or empty: no pinned section. */
  readonly pinned?: ReadonlyArray<PinnedMemory> | undefined
  /** Team memory, when it is on: its directory and its loaded index. Absent: no team section. */
  readonly team?: { readonly teamDir: string; readonly index: LoadedIndex } | undefined
}

/** Fills `{{slot}}`s (the catalog's one render); a slot without a value is left visible, not blanked. */
export const renderTemplate: (template: string, slots: Readonly<Record<string, string>>) => string = render

/** The slot values for one prompt. */
export const promptSlots = (
  input: Pick<MemoryPromptInput, "memoryDir" | "index" | "team">
): Record<string, string> => {
  const separator = input.memoryDir.includes("\\") && !input.memoryDir.includes("/") ? "\\" : "/"
  const memoryDir = withTrailingSeparator(input.memoryDir, separator)
  const base = {
    memoryDir,
    indexFile: INDEX_FILE,
    indexPath: memoryDir + INDEX_FILE,
    maxIndexLines: String(INDEX_MAX_LINES),
    indexEntryMaxChars: String(INDEX_ENTRY_MAX_CHARS)
  }
  const loaded = input.index.content.trim()
  const team = input.team === undefined ? {} : teamSlots(input.team, separator, base)
  return { ...base, ...team, indexContent: loaded.length === 0 ? render(EMPTY_INDEX_NOTE, base) : loaded }
}

const teamSlots = (
  team: NonNullable<MemoryPromptInput["team"]>,
  separator: string,
  base: Record<string, string>
): Record<string, string> => {
  const teamDir = withTrailingSeparator(team.teamDir, separator)
  const loaded = team.index.content.trim()
  return {
    teamDir,
    teamIndexPath: teamDir + INDEX_FILE,
    teamIndexContent: loaded.length === 0 ? render(EMPTY_TEAM_INDEX_NOTE, base) : loaded
  }
}

const memorySection = (id: string): PromptSection | undefined => promptSections.find((s) => s.id === id)

/** The template of one section for a variant name (default when undefined). */
export const sectionTemplate = (
  id: SectionId,
  variant?: string | undefined
): Result.Result<string, UnknownPromptVariantError> => {
  const section = memorySection(id)
  return section === undefined ?
    Result.fail(new UnknownPromptVariantError({ section: id, variant: variant ?? "", known: [] })) :
    lookup(section, variant)
}

/** An id given for a section the memory prompt does not have: a typed error with no known variants. */
const unknownSection = (
  requested: Partial<Record<string, string>>
): UnknownPromptVariantError | undefined => {
  const id = Object.keys(requested).find((id) => memorySection(id) === undefined)
  return id === undefined ?
    undefined :
    new UnknownPromptVariantError({ section: id, variant: String(requested[id]), known: [] })
}

/**
 * Pure: the whole memory section of the system prompt. Slot values are inserted in one pass, so a "{{…}}" inside
 * an index (the user's or a teammate's text) is never filled.
 */
export const renderMemoryPrompt = (input: MemoryPromptInput): Result.Result<string, UnknownPromptVariantError> => {
  const requested = input.variants ?? {}
  const templates = input.templates ?? {}
  const unknown = unknownSection(requested) ?? unknownSection(templates)
  if (unknown !== undefined) return Result.fail(unknown)
  const slots = promptSlots(input)
  const rendered: Array<string> = []
  for (const section of promptSections) {
    const given = templates[section.id]
    const template = given === undefined ? lookup(section, requested[section.id]) : Result.succeed(given)
    if (Result.isFailure(template)) return Result.fail(template.failure)
    if (section.id === "team" && input.team === undefined) continue
    rendered.push(render(template.success, slots))
    if (section.id === "index" && input.pinned !== undefined && input.pinned.length > 0) {
      const pinnedTemplate = pinnedSection.variants[pinnedSection.default]!
      rendered.push(render(pinnedTemplate, { ...slots, pinnedContent: renderPinned(input.pinned) }))
    }
  }
  return Result.succeed(rendered.join("\n\n") + "\n")
}

/** The memory section of the system prompt; an unknown variant name is a typed error. */
export const buildMemoryPrompt: (input: MemoryPromptInput) => Effect.Effect<string, UnknownPromptVariantError> = Effect
  .fn("Prompt.buildMemoryPrompt")(function*(input: MemoryPromptInput) {
    return yield* Effect.fromResult(renderMemoryPrompt(input))
  })
