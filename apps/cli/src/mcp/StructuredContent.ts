/**
 * Which clients of `memdir mcp` get output schemas and `structuredContent` (docs/mcp.md#what-the-model-reads).
 * Imported by the command too (its flag), so nothing here loads the MCP SDK.
 *
 * The text of every result is what memdir wants the model to read: the memory with its age and, past a day, the
 * staleness caveat, in the words the hook injects. Claude Code and Codex hand their model a result's
 * `structuredContent`, serialized as JSON, in place of that text whenever a result carries one, so for them the
 * caveat would be a field beside the body; they get the text alone. Every other client gets both.
 */

/** `--structured-content`: `auto` (the clients below get the text only), `always`, `never`. */
export const structuredContentChoices = ["auto", "always", "never"] as const
export type StructuredContentChoice = typeof structuredContentChoices[number]

/**
 * Clients, by the name they give in `initialize`, that hand the model a result's `structuredContent` as JSON in
 * place of its text: Claude Code (`claude-code`; 2.1.332 does so whenever a result has one) and Codex
 * (`codex-mcp-client`; codex-rs serializes `structured_content` when it is present).
 */
export const CLIENTS_READING_STRUCTURED_CONTENT: ReadonlyArray<string> = ["claude-code", "codex-mcp-client"]

/** Whether a client of this name gets output schemas and `structuredContent` under the choice. */
export const givesStructuredContent = (choice: StructuredContentChoice, clientName: string | undefined): boolean =>
  choice === "always" ||
  (choice === "auto" && (clientName === undefined || !CLIENTS_READING_STRUCTURED_CONTENT.includes(clientName)))
