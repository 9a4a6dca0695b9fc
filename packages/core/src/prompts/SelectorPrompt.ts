/**
 * The model selector's system prompt, as data, rendered by `ModelSelector.selectorPrompt`. It has no slots: the
 * query, the manifest and the recent tools go in the user message, so the system prompt stays cacheable.
 */
import { lines, makeSection } from "./PromptSection.js"

/** The tool the selector answers with (named in the prompt). */
export const SELECT_TOOL_NAME = "select_memories"

const common = {
  task: "You are selecting memories that will be useful to an AI coding agent as it works on a user's query. You " +
    "get the query, a manifest of the available memory files (one line each: [type] path (last modified): " +
    "description) and the tools the agent used recently.",
  tools: "If tools are listed as recently used, do not select memories that are usage references or API docs for " +
    "those tools: the agent is already using them successfully. DO still select memories that hold warnings, " +
    "gotchas or known bugs about those tools: that is exactly when they matter.",
  answer: `Answer only by calling the ${SELECT_TOOL_NAME} tool with the paths exactly as they appear in the ` +
    "manifest. Never invent a path."
}

/**
 * The system prompt, as named variants (data: the evals swap them by name and score the outcome).
 * - `conservative` (default): the reference's rules: only memories that will clearly help, at most 5, an empty
 *   list is fine, when unsure skip.
 * - `strict`: prefers zero to two, for measuring precision against recall of the default.
 * - `generous`: an eval baseline that includes anything plausibly relevant (expected to cost precision).
 */
const selectorPromptVariants: Readonly<Record<string, string>> = {
  conservative: lines(
    common.task,
    "",
    "Return the paths of the memories that will clearly be useful for this query, at most 5. Select a memory only " +
      "when you are confident from its description that it helps with this query. If you are unsure whether a " +
      "memory is relevant, leave it out. An empty list is a good answer when nothing clearly helps.",
    "",
    common.tools,
    "",
    common.answer
  ),
  strict: lines(
    common.task,
    "",
    "Return only the memories without which the agent would likely get this query wrong: usually none, one or " +
      "two, and at most 5. A memory on the same general topic is not enough; it must bear on what the user " +
      "asked right now. When in doubt, return an empty list.",
    "",
    common.tools,
    "",
    common.answer
  ),
  generous: lines(
    common.task,
    "",
    "Return the paths of every memory that is plausibly relevant to this query, at most 5, most relevant first.",
    "",
    common.tools,
    "",
    common.answer
  )
}

export const DEFAULT_SELECTOR_VARIANT = "conservative"

export const selectorSection = makeSection({
  id: "selector",
  title: "The recall selector: which memories clearly help with this query",
  program: "selector",
  variants: selectorPromptVariants,
  default: DEFAULT_SELECTOR_VARIANT,
  slots: []
})
