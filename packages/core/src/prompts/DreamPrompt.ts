/**
 * The dream's system prompt, as data, rendered by `Dream.renderDreamSystemPrompt`.
 *
 * Slots: `{{memoryDir}}`, `{{indexFile}}`, `{{maxIndexLines}}`, `{{maxIndexKb}}`, `{{indexEntryMaxChars}}`,
 * `{{today}}`.
 */
import { lines, makeSection, paragraphs } from "./PromptSection.js"

const dreamIntro = paragraphs(
  "# Dream: consolidate the memory directory",
  "You are consolidating a file-based memory at `{{memoryDir}}`, in the background: nobody is waiting for you and " +
    "nobody will answer questions. Each memory is a Markdown file with frontmatter (name, description, type: user | " +
    "feedback | project | reference) and has one line in {{indexFile}}. Every future conversation loads " +
    "{{indexFile}} whole (only its first {{maxIndexLines}} lines / {{maxIndexKb}} KB) and recalls memories by their " +
    "description, so the directory must stay small, current and free of duplicates and contradictions.",
  "Today is {{today}} (UTC). Work in four phases."
)

const orient = lines(
  "## 1. Orient",
  "The first message gives you the index, a manifest of every memory (type, path, last change, description), the " +
    "recent daily logs and the sessions since the last consolidation. Read the memories that look related to each " +
    "other or to the logs (`memory_read`); do not read everything."
)

const gather = lines(
  "## 2. Gather",
  "Look for what is new and what has drifted: older daily logs under `logs/` (`memory_read`); memories that name " +
    "files, functions or flags, checked against the project (`read_file`, `grep`, when offered); the transcripts of " +
    "the sessions listed (`transcript_search`), narrowly — a specific word or name, to settle a specific question."
)

const consolidateRules = (mergeFirst: boolean) =>
  lines(
    "## 3. Consolidate",
    ...(mergeFirst ?
      [
        "- Merge rather than duplicate: when two memories cover one topic, write the merged content into the " +
        "better-named file (`memory_write`) and delete the other (`memory_delete`). Never create a new file for " +
        "a topic that already has one: a directory that only grows is the failure this phase exists to prevent."
      ] :
      []),
    "- When memories contradict each other, keep what the newest evidence supports (the logs, the code, the later " +
      "memory) and fix or delete the other.",
    "- Turn relative dates into absolute ones (\"Thursday\", \"next week\", \"yesterday\" → YYYY-MM-DD), counted from " +
      "the day the memory or log entry was written.",
    "- Save what the logs and sessions taught that future conversations need and the code does not show, as memories " +
      "of the right type. Same exclusions as always: no code patterns, architecture, git history or task details.",
    "- Do not invent facts. Do not edit daily logs (they are append-only) or anything outside the memory directory."
  )

const prune = lines(
  "## 4. Prune",
  "- Keep {{indexFile}} under {{maxIndexLines}} lines and ~{{maxIndexKb}} KB: one line per memory, under " +
    "{{indexEntryMaxChars}} characters. The memory tools keep index lines for you: writing a memory updates its " +
    "line, deleting it removes the line.",
  "- Delete memories that are wrong, contradicted or merged; do not delete a memory only because it is old.",
  "- When you are done, answer with a short summary of what you changed and why. memdir writes its own report " +
    "from the files, so the summary is for the reader, not the record."
)

/**
 * The dream's system prompt by variant. Slots: memoryDir, indexFile, maxIndexLines, maxIndexKb, indexEntryMaxChars,
 * today.
 */
const dreamPromptVariants: Readonly<Record<string, string>> = {
  default: paragraphs(dreamIntro, orient, gather, consolidateRules(true), prune),
  // Eval baseline: the same phases without the merge-first rule (the reference found directories grow linearly).
  "without-merge-first": paragraphs(dreamIntro, orient, gather, consolidateRules(false), prune)
}

export const dreamSection = makeSection({
  id: "dream",
  title: "The dream: orient, gather, consolidate and prune the memory directory",
  program: "dream",
  variants: dreamPromptVariants,
  default: "default",
  slots: ["memoryDir", "indexFile", "maxIndexLines", "maxIndexKb", "indexEntryMaxChars", "today"]
})
