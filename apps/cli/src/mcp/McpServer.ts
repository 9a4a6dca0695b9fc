/**
 * The MCP server of `memdir mcp` (docs/mcp.md), on the official SDK's low-level `Server` over stdio: the
 * instructions from the prompt catalog, the tools of `McpTools` and the resources of `McpResources`, each request
 * run as an Effect with the services of the command (one `RecallSession` per process, and the agent session's record
 * shared with the hooks when the environment names the session: `McpSession`).
 *
 * What the model reads is the text (docs/mcp.md#what-the-model-reads): Claude Code and Codex hand their model a
 * result's `structuredContent`, serialized as JSON, in place of its text, so for them (by the name the client gives
 * in `initialize`) the tools have no output schema and their results no `structuredContent`; every other client
 * gets both. `--structured-content always | never` overrides the choice.
 *
 * stdout carries the protocol only: nothing else is written there (logs go to stderr). The server runs until its
 * client closes stdin. A line (message) over `MAX_MESSAGE_BYTES` is dropped with a line on stderr, like a line that
 * is not JSON: the SDK's transport would otherwise close on it, and the server would stop serving its client.
 */
import * as SessionRecord from "@memdir/core/HookSessionState"
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
  ReadResourceRequestSchema
} from "@modelcontextprotocol/sdk/types.js"
import * as Console from "effect/Console"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as FileSystem from "effect/FileSystem"
import type * as Option from "effect/Option"
import type * as Path from "effect/Path"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { Transform } from "node:stream"
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
import { sessionOfCall, sessionOfEnvironment } from "./McpSession.js"
import { renderToolError, type ToolContext, type ToolResult, tools } from "./McpTools.js"
import { givesStructuredContent, type StructuredContentChoice } from "./StructuredContent.js"

/** What the tools and resources need: the live memdir services, the platform and the session record. */
export type McpServices = MemdirServices | FileSystem.FileSystem | Path.Path | SessionRecord.HookSessionState

/** The result as the client gets it: without `structuredContent` for a client whose model would read it instead. */
const withoutStructured = ({ structuredContent: _, ...rest }: ToolResult): ToolResult => rest

const byName = new Map(tools.map((tool) => [tool.name, tool]))

const unknownTool = (name: string): ToolResult => ({
  content: [{
    type: "text",
    text: `unknown tool ${JSON.stringify(name)}. memdir's tools: ${tools.map((t) => t.name).join(", ")}.`
  }],
  isError: true
})

/**
 * A resource failure as the JSON-RPC error the SDK sends: its `code` and `message` as they are (resources have no
 * `isError`). Not an `McpError`, whose message already starts "MCP error -32602: ", which the client adds again.
 */
class ResourceRequestError extends Schema.TaggedError<ResourceRequestError>()("ResourceRequestError", {
  code: Schema.Number,
  message: Schema.String
}) {}

const resourceError = (error: unknown): ResourceRequestError =>
  error instanceof ResourceRequestError ?
    error :
    new ResourceRequestError({ code: ErrorCode.InvalidParams, message: renderToolError(error) })

const readResource = (uri: string, context: ToolContext): Effect.Effect<ResourceText, unknown, McpServices> => {
  if (uri === INDEX_URI) return readIndex(context)
  const path = pathOfUri(uri)
  if (path === undefined || path === "") {
    return Effect.fail(
      new ResourceRequestError({
        code: ErrorCode.InvalidParams,
        message: `unknown resource ${JSON.stringify(uri)}: memdir serves ${INDEX_URI} and ${MEMORY_URI_TEMPLATE}`
      })
    )
  }
  return readMemory(context, path)
}

/** The SDK server with memdir's handlers; `run` executes an Effect with the command's services. */
export const makeServer = (
  context: ToolContext,
  run: <A>(effect: Effect.Effect<A, unknown, McpServices>) => Promise<A>,
  structuredContent: StructuredContentChoice = "auto"
): Server => {
  const server = new Server(
    { name: "memdir", title: "memdir: file-based memory", version },
    {
      capabilities: { tools: {}, resources: {} },
      instructions: Result.getOrThrow(renderMcpInstructions())
    }
  )
  // asked per request: the client's name is known once it initialized, before it lists or calls tools
  const structured = () => givesStructuredContent(structuredContent, server.getClientVersion()?.name)
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: tools.map((tool) => ({
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: tool.inputSchema as { type: "object" },
      ...(structured() ? { outputSchema: tool.outputSchema as { type: "object" } } : {}),
      annotations: tool.annotations
    }))
  }))
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = byName.get(request.params.name)
    if (tool === undefined) return unknownTool(request.params.name)
    // the session named by the environment, else by the call (Codex's `_meta`): `McpSession.sessionOfCall`
    const session = sessionOfCall(context.session, request.params._meta)
    const result = await run(tool.call(request.params.arguments, { ...context, session }))
    return structured() ? result : withoutStructured(result)
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

/** The longest message read (the SDK's own read limit, 10 MiB): a memory is at most 250,000 bytes. */
export const MAX_MESSAGE_BYTES = 10 * 1024 * 1024

const NEWLINE = 0x0a

/**
 * The bytes of a newline-delimited stream with every line over `maxLineBytes` dropped, its newline included.
 * What of such a line has already passed is ended with a newline of its own, so the reader sees one bad line (and
 * skips it) and the next message arrives whole. `onDrop` gets the dropped line's length.
 */
export const dropOversizedLines = (maxLineBytes: number, onDrop: (bytes: number) => void): Transform => {
  let lineBytes = 0
  let dropping = false
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const kept: Array<Buffer> = []
      for (let start = 0; start < chunk.length;) {
        const newline = chunk.indexOf(NEWLINE, start)
        const end = newline === -1 ? chunk.length : newline + 1
        const length = (newline === -1 ? end : newline) - start
        if (!dropping && lineBytes + length > maxLineBytes) {
          dropping = true
          if (lineBytes > 0) kept.push(Buffer.from([NEWLINE]))
        }
        lineBytes += length
        if (!dropping) kept.push(chunk.subarray(start, end))
        if (newline !== -1) {
          if (dropping) onDrop(lineBytes)
          dropping = false
          lineBytes = 0
        }
        start = end
      }
      done(null, Buffer.concat(kept))
    }
  })
}

/** Waits until the client closes stdin (or the transport closes). */
const untilClosed = (server: Server) =>
  Effect.callback<void>((resume) => {
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

export interface ServeOptions {
  readonly cwd: Option.Option<string>
  readonly structuredContent: StructuredContentChoice
}

/** Serves MCP on stdin/stdout until stdin closes. */
export const serve = (options: ServeOptions) =>
  Effect.gen(function*() {
    const session = yield* sessionOfEnvironment
    const context: ToolContext = { cwd: options.cwd, session }
    const record = yield* SessionRecord.make
    const services = Context.add(
      yield* Effect.context<Exclude<McpServices, SessionRecord.HookSessionState>>(),
      SessionRecord.HookSessionState,
      record
    )
    const runPromise = Effect.runPromiseWith(services)
    const server = makeServer(context, (effect) => runPromise(effect), options.structuredContent)
    const input = process.stdin.pipe(dropOversizedLines(MAX_MESSAGE_BYTES, (bytes) => {
      process.stderr.write(
        `memdir mcp: dropped a message of ${bytes} bytes (over ${MAX_MESSAGE_BYTES}): send smaller messages\n`
      )
    }))
    // the transport's buffer holds at most one partial line of MAX_MESSAGE_BYTES and one chunk of stdin
    const transport = new StdioServerTransport(input, process.stdout, { maxBufferSize: 2 * MAX_MESSAGE_BYTES })
    transport.onerror = (error) => process.stderr.write(`memdir mcp: ${String(error)}\n`)
    yield* Effect.promise(() => server.connect(transport))
    yield* Console.error(`memdir mcp ${version}: serving on stdio until stdin closes`)
    yield* untilClosed(server)
    yield* Effect.promise(() => server.close())
  })
