/**
 * `memdir mcp`: the MCP server over stdio (docs/mcp.md). The server and the SDK are loaded only when this command
 * runs (a chunk of their own), so no other command, nor help, evaluates them.
 */
import * as Command from "@effect/cli/Command"
import * as Effect from "effect/Effect"
import { common } from "../Common.js"
import { memdirHandler } from "../Services.js"

export const mcpCommand = Command.make(
  "mcp",
  common,
  memdirHandler(
    ({ cwd }) => Effect.flatMap(Effect.promise(() => import("../mcp/McpServer.js")), (mcp) => mcp.serve({ cwd })),
    // recall picks with the model when a key is configured, as `memdir recall` does
    () => ({ selector: "auto" })
  )
).pipe(
  Command.withDescription(
    "Serve memory to an MCP client (Claude Desktop, Claude Code, Cursor) over stdio: recall, search, list, read, " +
      "write, edit, delete and rename, and the index as a resource"
  )
)
