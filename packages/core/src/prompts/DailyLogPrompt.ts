/**
 * The daily-log section of a long session's system prompt, as data, rendered by `DailyLog.renderLogsPrompt`.
 *
 * Slots: `{{memoryDir}}` and `{{logsPattern}}` (the path of a day's log as a pattern, never today's date: the prompt
 * stays cacheable across midnight).
 */
import { makeSection, paragraphs } from "./PromptSection.js"

const logsBody = (why: boolean) =>
  paragraphs(
    "## Daily log",
    "This session may run for days. Besides memory files, keep a daily log: append short, timestamped bullets to " +
      "`{{memoryDir}}{{logsPattern}}`, one file per day (dates and times in UTC; the current date is given to you " +
      "separately and changes at midnight UTC). One line per entry, for example:",
    "```\n- 14:03:07 Decided with Dana to ship the migration behind a flag; rollout on 2026-03-09\n```",
    "Log what happened and what was decided, as it happens; run `memdir log \"TEXT\"` or append the line yourself. " +
      "Durable knowledge still goes into memory files as usual." + (why
        ? " Append only: never rewrite, reorder or delete earlier bullets or earlier days — their order is the " +
          "timeline the nightly consolidation reads."
        : "")
  )

export const logsSection = makeSection({
  id: "logs",
  title: "The daily log: append short timestamped bullets, never rewrite them",
  program: "daily-log",
  variants: {
    default: logsBody(true),
    // Eval baseline: without the append-only rule and its reason.
    "without-append-only": logsBody(false)
  },
  default: "default",
  slots: ["memoryDir", "logsPattern"]
})
