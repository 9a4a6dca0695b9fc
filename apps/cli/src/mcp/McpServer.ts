/**
 * The MCP server of `memdir mcp` (docs/mcp.md), on the official SDK's low-level `Server` over stdio: the
 * instructions from the prompt catalog, the tools of `McpTools` and the resources of `McpResources`, each request
 * run as an Effect in the runtime of the command (one `RecallSession` per process, so one per MCP session).
 *
 * stdout carries the protocol only: nothing else is written there (logs go to stderr). The server runs until its
 * client closes stdin.
 */
import type { FileSystem, Path } from "@effect/platform"
import type { MemdirServices } from "@memdir/core/Memdir"
import { renderMcpInstructions } from "@memdir/core/prompts/McpPrompt"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema
} from "@modelcontextprotocol/sdk/types.js"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Runtime from "effect/Runtime"
import { version } from "../Version.js"
import {
  INDEX_URI,
  listResources,
  MEMORY_URI_PREFIX,
  MEMORY_URI_TEMPLATE,
  pathOfUri,
  readIndex,
  readMemory,
  type ResourceText
} from "./McpResources.js"
import { renderToolError, type ToolContext, type ToolResult, tools } from "./McpTools.js"

/** What the tools and resources need: the live memdir services and the platform (the command provides both). */
export type McpServices = MemdirServices | FileSystem.FileSystem | Path.Path

const byName = new Map(tools.map((tool) => [tool.name, tool]))

const unknownTool = (name: string): ToolResult => ({
  content: [{
    type: "text",
    text: `unknown tool ${JSON.stringify(name)}. memdir's tools: ${tools.map((t) => t.name).join(", ")}.`
  }],
  isError: true
})

/** A resource failure as a JSON-RPC error naming the problem (resources have no `isError`). */
const resourceError = (error: unknown): McpError =>
  error instanceof McpError ? error : new McpError(ErrorCode.InvalidParams, renderToolError(error))

const readResource = (uri: string, context: ToolContext): Effect.Effect<ResourceText, unknown, McpServices> => {
  if (uri === INDEX_URI) return readIndex(context)
  const path = pathOfUri(uri)
  if (path === undefined || path === "") {
    return Effect.fail(
      new McpError(
        ErrorCode.InvalidParams,
        `unknown resource ${JSON.stringify(uri)}: memdir serves ${INDEX_URI} and ${MEMORY_URI_TEMPLATE}`
      )
    )
  }
  return readMemory(context, path)
}

/** The SDK server with memdir's handlers; `run` executes an Effect in the command's runtime. */
export const makeServer = (
  context: ToolContext,
  run: <A>(effect: Effect.Effect<A, unknown, McpServices>) => Promise<A>
): Server => {
  const server = new Server(
    { name: "memdir", title: "memdir: file-based memory", version },
    {
      capabilities: { tools: {}, resources: {} },
      instructions: Either.getOrThrow(renderMcpInstructions())
    }
  )
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: tools.map((tool) => ({
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: tool.inputSchema as { type: "object" },
      outputSchema: tool.outputSchema as { type: "object" },
      annotations: tool.annotations
    }))
  }))
  server.setRequestHandler(CallToolRequestSchema, (request) => {
    const tool = byName.get(request.params.name)
    return tool === undefined ? unknownTool(request.params.name) : run(tool.call(request.params.arguments, context))
  })
  server.setRequestHandler(
    ListResourcesRequestSchema,
    () => run(Effect.mapError(Effect.map(listResources(context), (resources) => ({ resources })), resourceError))
  )
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: [{
      uriTemplate: MEMORY_URI_TEMPLATE,
      name: "memory",
      title: "A memory file",
      description: `One memory file by its path relative to the memory directory (${MEMORY_URI_PREFIX}` +
        "feedback_testing.md; team memories as team%2F…)",
      mimeType: "text/markdown"
    }]
  }))
  server.setRequestHandler(ReadResourceRequestSchema, (request) =>
    run(
      Effect.mapError(
        Effect.map(readResource(request.params.uri, context), (resource) => ({ contents: [resource] })),
        resourceError
      )
    ))
  return server
}

/** Waits until the client closes stdin (or the transport closes). */
const untilClosed = (server: Server) =>
  Effect.async<void>((resume) => {
    let done = false
    const finish = () => {
      if (done) return
      done = true
      resume(Effect.void)
    }
    server.onclose = finish
    process.stdin.once("end", finish)
    process.stdin.once("close", finish)
    return Effect.sync(() => {
      process.stdin.off("end", finish)
      process.stdin.off("close", finish)
    })
  })

/** Serves MCP on stdin/stdout until stdin closes. */
export const serve = (context: ToolContext) =>
  Effect.gen(function*() {
    const runtime = yield* Effect.runtime<McpServices>()
    const runPromise = Runtime.runPromise(runtime)
    const server = makeServer(context, (effect) => runPromise(effect))
    const transport = new StdioServerTransport()
    transport.onerror = (error) => process.stderr.write(`memdir mcp: ${String(error)}\n`)
    yield* Effect.promise(() => server.connect(transport))
    yield* Console.error(`memdir mcp ${version}: serving on stdio until stdin closes`)
    yield* untilClosed(server)
    yield* Effect.promise(() => server.close())
  })
