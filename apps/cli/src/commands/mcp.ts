/**
 * `memdir mcp`: the MCP server over stdio (docs/mcp.md). The server and the SDK are loaded only when this command
 * runs (a chunk of their own), so no other command, nor help, evaluates them.
 */
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import { common } from "../Common.js"
import { structuredContentChoices } from "../mcp/StructuredContent.js"
import { memdirHandler } from "../Services.js"

export const mcpCommand = Command.make(
  "mcp",
  {
    ...common,
    structuredContent: Flag.Literals("structured-content", structuredContentChoices).pipe(
      Flag.withDescription(
        "Which clients get output schemas and structuredContent beside the text: auto (all but Claude Code and " +
          "Codex, whose model would read the JSON in place of the text), always or never"
      ),
      Flag.withDefault("auto")
    )
  },
  memdirHandler(
    ({ cwd, structuredContent }) =>
      Effect.flatMap(
        Effect.promise(() => import("../mcp/McpServer.js")),
        (mcp) => mcp.serve({ cwd, structuredContent })
      ),
    // recall picks with the model only when a key is configured AND the user turned automatic model calls on
    // (`automaticModelCalls`, checked per call by memory_recall): a key inherited from the client is not consent
    () => ({ selector: "auto-if-allowed" })
  )
).pipe(
  Command.withDescription(
    "Serve memory to an MCP client (Claude Desktop, Claude Code, Cursor) over stdio: recall, search, list, read, " +
      "write, edit, delete and rename, and the index as a resource"
  )
)
