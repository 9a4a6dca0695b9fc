/**
 * The instructions an MCP client gives its model about memdir's tools (`memdir mcp`, docs/mcp.md), as data: the
 * memory prompt's rules, condensed to when to recall and when to save, for a model that meets memory only through
 * tools. No slots: the server's tools say where things are.
 */
import type * as Result from "effect/Result"
import type { UnknownPromptVariantError } from "../Errors.js"
import { lines, makeSection, paragraphs, renderSection } from "./PromptSection.js"

const recall = lines(
  "Recall:",
  "- Call memory_recall with the user's request at the start of a task, and whenever earlier context (who the " +
    "user is, how they want you to work, decisions, deadlines, where things live) could change your answer. It " +
    "returns at most 5 memories and never the same one twice in a session.",
  "- Call memory_search or memory_list to browse; memory_read for one memory in full.",
  "- A memory is a point-in-time observation: check one older than a day against the current code before you " +
    "state it as fact. When the user says \"ignore memory\", do not use it."
)

const save = lines(
  "Save (memory_write), one topic per memory, as one of four types:",
  "- user: who the user is and how they like to work with you;",
  "- feedback: a correction or a confirmed approach — the rule, then **Why:** and **How to apply:**;",
  "- project: decisions, deadlines, incidents and their reasons, with absolute dates;",
  "- reference: where information lives outside the project (tracker, dashboards, runbooks).",
  "Save when the user says \"remember …\" or you learn something a future conversation needs. Update the memory " +
    "that covers the topic (same name and type) instead of adding a duplicate; \"forget …\" means memory_delete."
)

const notToSave = "Never save what the project already shows (code, structure, git history, instruction files), " +
  "fixes and debugging recipes, or the state of the task at hand. Team memory (scope \"team\") is shared with " +
  "everyone on the project: never put a secret, a credential or a private detail there."

const versions = "memory_read returns a version; pass it as if_version to memory_write to update without " +
  "overwriting a change you did not see. A version conflict returns the current text: merge it and retry."

export const mcpInstructionsSection = makeSection({
  id: "mcp-instructions",
  title: "MCP server instructions: when to recall and when to save",
  program: "mcp",
  variants: {
    default: paragraphs(
      "memdir is this project's persistent, file-based memory (Markdown files).",
      recall,
      save,
      notToSave,
      versions
    )
  },
  default: "default",
  slots: []
})

/** The server's `instructions`: the section's variant (its default unless another is named). */
export const renderMcpInstructions = (variant?: string | undefined): Result.Result<string, UnknownPromptVariantError> =>
  renderSection(mcpInstructionsSection, variant, {})
