/**
 * The prompt catalog: every prompt section memdir renders, by id, with the one lookup over them. Programs render
 * their own sections (`renderSection`); the evals app reads its variable sections from here, so a variant a suite
 * names is the text the program sends.
 */
import * as Result from "effect/Result"
import { UnknownPromptVariantError } from "../Errors.js"
import { logsSection } from "./DailyLogPrompt.js"
import { dreamSection } from "./DreamPrompt.js"
import { extractionSection } from "./ExtractionPrompt.js"
import { mcpInstructionsSection } from "./McpPrompt.js"
import { emptyIndexSection, emptyTeamIndexSection, memoryPromptSections, pinnedSection } from "./MemoryPrompt.js"
import { lookup, type PromptSection } from "./PromptSection.js"
import { selectorSection } from "./SelectorPrompt.js"

/** Every section, the memory prompt's first and in prompt order. */
export const promptCatalog: ReadonlyArray<PromptSection> = [
  ...memoryPromptSections,
  emptyIndexSection,
  emptyTeamIndexSection,
  pinnedSection,
  extractionSection,
  selectorSection,
  logsSection,
  dreamSection,
  mcpInstructionsSection
]

/** The section with this id, if there is one. */
export const findSection = (id: string): PromptSection | undefined => promptCatalog.find((s) => s.id === id)

/**
 * The template of a section's variant (its default when `variant` is undefined). An unknown variant fails with the
 * section's known variants; an unknown section with an empty list.
 */
export const lookupVariant = (
  sectionId: string,
  variant?: string | undefined
): Result.Result<string, UnknownPromptVariantError> => {
  const section = findSection(sectionId)
  return section === undefined ?
    Result.fail(new UnknownPromptVariantError({ section: sectionId, variant: variant ?? "", known: [] })) :
    lookup(section, variant)
}
