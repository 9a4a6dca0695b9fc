/**
 * The dream's system prompt, in the catalog. Its text still lives in `Dream.ts` (`dreamPromptVariants`) and
 * `Dream.renderDreamSystemPrompt` still looks it up itself; moving the text here and rendering it with
 * `renderSection(dreamSection, …)` is the step left for when the dream module is split.
 *
 * Slots: `{{memoryDir}}`, `{{indexFile}}`, `{{maxIndexLines}}`, `{{maxIndexKb}}`, `{{indexEntryMaxChars}}`,
 * `{{today}}`.
 */
import { dreamPromptVariants } from "../Dream.js"
import { makeSection } from "./PromptSection.js"

export const dreamSection = makeSection({
  id: "dream",
  title: "The dream: orient, gather, consolidate and prune the memory directory",
  program: "dream",
  variants: dreamPromptVariants,
  default: "default",
  slots: ["memoryDir", "indexFile", "maxIndexLines", "maxIndexKb", "indexEntryMaxChars", "today"]
})
