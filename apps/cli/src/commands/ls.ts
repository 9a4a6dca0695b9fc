import { isoTime, sortNewestWrittenFirst, writtenAtOf } from "@memdir/core/MemoryAge"
import { Scanner } from "@memdir/core/Scanner"
import { Staleness } from "@memdir/core/Staleness"
import { scopeOf, TEAM_DIR } from "@memdir/core/TeamMemory"
import * as Command from "effect/cli/Command"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { common, jsonOption } from "../Common.js"
import { memdirHandler } from "../Services.js"
import { terminalLine } from "../Terminal.js"
import { locateTeam } from "./teamMemory.js"

/** The fields of a scanned memory header that a listing shows. */
export interface Shown {
  readonly path: string
  readonly name: string
  readonly description: string
  readonly type: string
  readonly mtime: number
  readonly writtenAt?: number | undefined
  readonly writtenFrom?: string | undefined
  readonly warning?: string | undefined
}

export interface ShownAge {
  readonly ageDays: number
  readonly age: string
}

/** What `JSON.stringify` escapes in a string: quote, backslash, control characters and (lone) surrogates. */
const NEEDS_ESCAPE = new RegExp("[\"\\\\\\u0000-\\u001f\\ud800-\\udfff]")

/**
 * `JSON.stringify(value)`; a string with nothing to escape (nearly every name, path and description) is quoted
 * directly, at a fraction of the cost: a listing of 20k memories quotes 160k of them.
 */
const json = (value: string | number): string =>
  typeof value === "string" && !NEEDS_ESCAPE.test(value) ? `"${value}"` : JSON.stringify(value)

/** Indentation of a memory's keys inside the document's `memories` array (`JSON.stringify(…, null, 2)`). */
const KEY = "\n      "

/**
 * One memory of `ls --json` as `JSON.stringify(entry, null, 2)` prints it at nesting depth 2 (inside the document's
 * array), written directly: keys path, scope, name, description, type, mtime, written, writtenFrom, ageDays, age and,
 * when there is one, warning. No object per memory, no pretty printer pass over it.
 */
export const memoryJson = (m: Shown, age: ShownAge): string => {
  const mtime = isoTime(m.mtime)
  const written = m.writtenAt === undefined || m.writtenAt === m.mtime ? mtime : isoTime(m.writtenAt)
  return `{${KEY}"path": ${json(m.path)},${KEY}"scope": ${json(scopeOf(m.path))},${KEY}"name": ${json(m.name)},` +
    `${KEY}"description": ${json(m.description)},${KEY}"type": ${json(m.type)},${KEY}"mtime": "${mtime}",` +
    `${KEY}"written": "${written}",${KEY}"writtenFrom": ${json(m.writtenFrom ?? "mtime")},` +
    `${KEY}"ageDays": ${json(age.ageDays)},${KEY}"age": ${json(age.age)}` +
    (m.warning === undefined ? "" : `,${KEY}"warning": ${json(m.warning)}`) + "\n    }"
}

/** `value` as `JSON.stringify(value, null, 2)` prints it at nesting depth 2 (inside the document's arrays). */
const nested = (value: unknown): string => JSON.stringify(value, null, 2).replace(/\n/g, "\n    ")

/** Memories per chunk of `listingJson`: one write of about 64 KiB each. */
const MEMORIES_PER_CHUNK = 200

/**
 * `JSON.stringify({ memoryDir, memories, problems }, null, 2)` in chunks of whole lines (the document is the chunks
 * joined by newlines), each memory rendered (`memoryJson`) only when its chunk is: a listing of 50k memories is
 * never one 17 MB string, and each chunk is one join of its entries rather than a string grown piece by piece. A
 * problem is printed here. JSON escapes newlines inside strings, so indenting after each newline is exactly what
 * the pretty printer does.
 */
export function* listingJson(
  memoryDir: string,
  memories: { readonly count: number; readonly render: (index: number) => string },
  problems: ReadonlyArray<unknown>
): Generator<string> {
  const head = `{\n  "memoryDir": ${JSON.stringify(memoryDir)},\n  "memories": `
  if (memories.count === 0) {
    yield head + "[],"
  } else {
    yield head + "["
    for (let start = 0; start < memories.count; start += MEMORIES_PER_CHUNK) {
      const end = Math.min(memories.count, start + MEMORIES_PER_CHUNK)
      const entries = new Array<string>(end - start)
      for (let i = start; i < end; i++) entries[i - start] = memories.render(i)
      // each memory but the last is followed by a comma: within a chunk by the join, at its end here
      yield "    " + entries.join(",\n    ") + (end < memories.count ? "," : "")
    }
    yield "  ],"
  }
  yield problems.length === 0
    ? `  "problems": []\n}`
    : `  "problems": [\n    ${problems.map(nested).join(",\n    ")}\n  ]\n}`
}

export const lsCommand = Command.make(
  "ls",
  { ...common, json: jsonOption },
  memdirHandler(({ cwd, json }) =>
    Effect.gen(function*() {
      const team = yield* locateTeam(cwd)
      const location = team.memory
      const scanner = yield* Scanner
      const staleness = yield* Staleness
      // team/ is listed only while team memory is on (docs/team-memory.md).
      const scan = yield* scanner.scan(location.memoryDir, { skipDirs: team.enabled ? [] : [TEAM_DIR] })
      // newest first by the written time each line shows (docs/file-format.md#age-and-staleness), not by mtime
      const memories = sortNewestWrittenFirst(scan.memories)
      const ages = yield* staleness.ages(memories.map(writtenAtOf))
      const problems = scan.problems.map((p) => ({
        path: p.path,
        code: p.code,
        message: p.message,
        ...(p.line === undefined ? {} : { line: p.line })
      }))
      if (json) {
        // Streamed: a chunk of memories is built and written at a time, never the whole document at once.
        const listed = { count: memories.length, render: (i: number) => memoryJson(memories[i]!, ages[i]!) }
        for (const chunk of listingJson(location.memoryDir, listed, problems)) yield* Console.log(chunk)
        return
      }
      if (memories.length === 0 && problems.length === 0) {
        return yield* Console.log(`no memories in ${location.memoryDir}`)
      }
      // one write for the whole listing: thousands of memories are common
      if (memories.length > 0) {
        yield* Console.log(
          memories.map((m, i) => terminalLine(`${m.path}  [${m.type}] ${m.name} (${ages[i]!.age}) — ${m.description}`))
            .join("\n")
        )
      }
      // a scan problem's message names its file (and line) first: the path once, not "broken.md: broken.md:3: …"
      for (const p of problems) {
        const located = p.message.startsWith(p.path) ? p.message : `${p.path}: ${p.message}`
        yield* Console.error(`problem: ${terminalLine(located)}`)
      }
    })
  )
).pipe(Command.withDescription("List memories (newest written first) and files that could not be read"))
