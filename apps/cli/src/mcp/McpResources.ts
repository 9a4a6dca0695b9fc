/**
 * The resources of `memdir mcp` (docs/mcp.md): `memdir://index`, the index as the memory prompt loads it (MEMORY.md
 * under its 200-line / 25 KB caps with the cap warning, and team/MEMORY.md while team memory is on), and one
 * `memdir://memory/{path}` per memory file. The memories are listed and read by the operations every door uses
 * (`Operations.list`, `Operations.read`); only the index, which is not a memory, is read here.
 */
import { MemoryDisabledError } from "@memdir/core/Errors"
import { INDEX_FILE, MemoryIndex } from "@memdir/core/MemoryIndex"
import * as Operations from "@memdir/core/Operations"
import { teamPromptInput } from "@memdir/core/TeamMemory"
import * as Effect from "effect/Effect"
import { locateTeam } from "../commands/teamMemory.js"
import type { ToolContext } from "./McpTools.js"

export const INDEX_URI = "memdir://index"
export const MEMORY_URI_PREFIX = "memdir://memory/"
export const MEMORY_URI_TEMPLATE = `${MEMORY_URI_PREFIX}{path}`

export interface ResourceText {
  readonly uri: string
  readonly mimeType: string
  readonly text: string
}

/** A memory's URI: its path as one URI component (`team/x.md` → `team%2Fx.md`), so `{path}` matches it whole. */
export const memoryUri = (path: string): string => `${MEMORY_URI_PREFIX}${encodeURIComponent(path)}`

/** A memory path from its URI; `/` may be written as it is or encoded. */
export const pathOfUri = (uri: string): string | undefined => {
  if (!uri.startsWith(MEMORY_URI_PREFIX)) return undefined
  try {
    return decodeURIComponent(uri.slice(MEMORY_URI_PREFIX.length))
  } catch {
    return undefined
  }
}

const enabledTeam = (context: ToolContext) =>
  Effect.gen(function*() {
    const team = yield* locateTeam(context.cwd)
    if (!team.memory.enabled) return yield* new MemoryDisabledError({ source: team.memory.enabledBy })
    return team
  })

const EMPTY_INDEX = `${INDEX_FILE} is empty: no memories are saved yet.`

/** The text of `memdir://index`. */
export const readIndex = (context: ToolContext) =>
  Effect.gen(function*() {
    const team = yield* enabledTeam(context)
    const loaded = yield* (yield* MemoryIndex).load(team.memory.memoryDir)
    const own = loaded.content.trim() === "" ? EMPTY_INDEX : loaded.content
    const teamInput = yield* teamPromptInput(team)
    const teamText = teamInput === undefined ?
      "" :
      `\n\n# team/${INDEX_FILE}\n\n${
        teamInput.index.content.trim() === "" ? `team/${EMPTY_INDEX}` : teamInput.index.content
      }`
    const resource: ResourceText = { uri: INDEX_URI, mimeType: "text/markdown", text: own + teamText }
    return resource
  })

/** The text of one `memdir://memory/{path}`. */
export const readMemory = (context: ToolContext, path: string) =>
  Effect.gen(function*() {
    const team = yield* enabledTeam(context)
    const read = yield* Operations.read({ memoryDir: team.memory.memoryDir, teamEnabled: team.enabled }, { path })
    const resource: ResourceText = { uri: memoryUri(read.path), mimeType: "text/markdown", text: read.content }
    return resource
  })

/** Every resource: the index, then each memory (newest written first, as `memory_list`). */
export const listResources = (context: ToolContext) =>
  Effect.gen(function*() {
    const team = yield* enabledTeam(context)
    const { memories } = yield* Operations.list({ memoryDir: team.memory.memoryDir, teamEnabled: team.enabled }, {})
    return [
      { uri: INDEX_URI, name: INDEX_FILE, title: "Memory index", mimeType: "text/markdown" },
      ...memories.map((m) => ({
        uri: memoryUri(m.path),
        name: m.path,
        title: m.name,
        description: `[${m.type}${m.scope === "team" ? ", team" : ""}] ${m.description}`,
        mimeType: "text/markdown"
      }))
    ]
  })
