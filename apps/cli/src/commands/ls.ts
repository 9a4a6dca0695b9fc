import * as Command from "@effect/cli/Command"
import { writtenAtOf } from "@memdir/core/MemoryAge"
import { Scanner } from "@memdir/core/Scanner"
import { Staleness } from "@memdir/core/Staleness"
import { scopeOf, TEAM_DIR } from "@memdir/core/TeamMemory"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { common, jsonOption } from "../Common.js"
import { memdirHandler } from "../Services.js"
import { terminalLine } from "../Terminal.js"
import { locateTeam } from "./teamMemory.js"

interface Listed {
  readonly path: string
  readonly scope: string
  readonly name: string
  readonly description: string
  readonly type: string
  readonly mtime: string
  /** When the memory was written (its `modified:`, last commit or mtime): the age counts from it. */
  readonly written: string
  readonly writtenFrom: string
  readonly ageDays: number
  readonly age: string
  readonly warning?: string
}

/** The fields of a scanned memory header that a listing shows. */
interface Shown {
  readonly path: string
  readonly name: string
  readonly description: string
  readonly type: string
  readonly mtime: number
  readonly writtenAt?: number | undefined
  readonly writtenFrom?: string | undefined
  readonly warning?: string | undefined
}

const listed = (m: Shown, age: { readonly ageDays: number; readonly age: string }): Listed => ({
  path: m.path,
  scope: scopeOf(m.path),
  name: m.name,
  description: m.description,
  type: m.type,
  mtime: new Date(m.mtime).toISOString(),
  written: new Date(m.writtenAt ?? m.mtime).toISOString(),
  writtenFrom: m.writtenFrom ?? "mtime",
  ageDays: age.ageDays,
  age: age.age,
  ...(m.warning === undefined ? {} : { warning: m.warning })
})

/** `value` as `JSON.stringify(value, null, 2)` prints it at nesting depth 2 (inside the document's arrays). */
const nested = (value: unknown): string => JSON.stringify(value, null, 2).replace(/\n/g, "\n    ")

/**
 * The pieces of `JSON.stringify({ memoryDir, memories, problems }, null, 2)`, one array element at a time, so a
 * listing of 50k memories is never one 17 MB string. JSON escapes newlines inside strings, so indenting after
 * each newline is exactly what the pretty printer does.
 */
export function* listingJson(
  memoryDir: string,
  memories: Iterable<unknown>,
  problems: Iterable<unknown>
): Generator<string> {
  const array = function*(items: Iterable<unknown>): Generator<string> {
    let first = true
    for (const item of items) {
      yield (first ? "[\n    " : ",\n    ") + nested(item)
      first = false
    }
    yield first ? "[]" : "\n  ]"
  }
  yield `{\n  "memoryDir": ${JSON.stringify(memoryDir)},\n  "memories": `
  yield* array(memories)
  yield `,\n  "problems": `
  yield* array(problems)
  yield "\n}"
}

/** Bytes written to stdout per write: a few syscalls for a big listing, little memory held. */
const WRITE_CHUNK_CHARS = 64 * 1024

/** Writes the pieces in chunks of whole lines, with the final newline `Console.log` adds: same bytes as one log. */
const streamLines = (pieces: Iterable<string>): Effect.Effect<void> =>
  Effect.gen(function*() {
    let pending = ""
    for (const piece of pieces) {
      pending += piece
      if (pending.length < WRITE_CHUNK_CHARS) continue
      const cut = pending.lastIndexOf("\n")
      if (cut === -1) continue
      yield* Console.log(pending.slice(0, cut))
      pending = pending.slice(cut + 1)
    }
    yield* Console.log(pending)
  })

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
      const ages = yield* staleness.ages(scan.memories.map(writtenAtOf))
      const problems = scan.problems.map((p) => ({
        path: p.path,
        code: p.code,
        message: p.message,
        ...(p.line === undefined ? {} : { line: p.line })
      }))
      if (json) {
        // Streamed: each memory's entry is built and written in turn, never the whole document at once.
        const entries = function*() {
          for (let i = 0; i < scan.memories.length; i++) yield listed(scan.memories[i]!, ages[i]!)
        }
        return yield* streamLines(listingJson(location.memoryDir, entries(), problems))
      }
      if (scan.memories.length === 0 && problems.length === 0) {
        return yield* Console.log(`no memories in ${location.memoryDir}`)
      }
      // one write for the whole listing: thousands of memories are common
      if (scan.memories.length > 0) {
        yield* Console.log(
          scan.memories.map((header, i) => {
            const m = listed(header, ages[i]!)
            return terminalLine(`${m.path}  [${m.type}] ${m.name} (${m.age}) — ${m.description}`)
          }).join("\n")
        )
      }
      for (const p of problems) yield* Console.error(`problem: ${terminalLine(p.path)}: ${terminalLine(p.message)}`)
    })
  )
).pipe(Command.withDescription("List memories (newest first) and files that could not be read"))
