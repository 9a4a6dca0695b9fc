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

const DAY_MS = 86_400_000
/** The last millisecond `toISOString` writes with a four-digit year (9999-12-31T23:59:59.999Z). */
const LAST_FOUR_DIGIT_YEAR_MS = 253_402_300_799_999
/** Each day's `YYYY-MM-DDT`, by day number: a listing's memories fall on a few hundred days. */
const dayPrefixes = new Map<number, string>()
const pad2 = (n: number): string => (n < 10 ? "0" : "") + n
const pad3 = (n: number): string => (n < 10 ? "00" : n < 100 ? "0" : "") + n

/**
 * `new Date(ms).toISOString()`, without a `Date` per call (the cost of a listing's 20k times, in a process that has
 * just started): the day's prefix from a cache, the time of day by arithmetic. Times before 1970 or past year 9999
 * (and NaN) go to `toISOString` itself.
 */
export const isoTime = (ms: number): string => {
  if (!(ms >= 0 && ms < LAST_FOUR_DIGIT_YEAR_MS + 1)) return new Date(ms).toISOString()
  // a Date keeps whole milliseconds, truncated (stat's mtimeMs has a fraction)
  const time = Math.floor(ms)
  const day = Math.floor(time / DAY_MS)
  let prefix = dayPrefixes.get(day)
  if (prefix === undefined) {
    prefix = new Date(day * DAY_MS).toISOString().slice(0, 11)
    dayPrefixes.set(day, prefix)
  }
  let rest = time - day * DAY_MS
  const hours = Math.floor(rest / 3_600_000)
  rest -= hours * 3_600_000
  const minutes = Math.floor(rest / 60_000)
  rest -= minutes * 60_000
  const seconds = Math.floor(rest / 1000)
  return `${prefix}${pad2(hours)}:${pad2(minutes)}:${pad2(seconds)}.${pad3(rest - seconds * 1000)}Z`
}

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

/**
 * The pieces of `JSON.stringify({ memoryDir, memories, problems }, null, 2)`, one array element at a time, so a
 * listing of 50k memories is never one 17 MB string. `memories` are already rendered (`memoryJson`); a problem is
 * printed here. JSON escapes newlines inside strings, so indenting after each newline is exactly what the pretty
 * printer does.
 */
export function* listingJson(
  memoryDir: string,
  memories: Iterable<string>,
  problems: Iterable<unknown>
): Generator<string> {
  const array = function*(items: Iterable<string>): Generator<string> {
    let first = true
    for (const item of items) {
      yield (first ? "[\n    " : ",\n    ") + item
      first = false
    }
    yield first ? "[]" : "\n  ]"
  }
  const rendered = function*(items: Iterable<unknown>): Generator<string> {
    for (const item of items) yield nested(item)
  }
  yield `{\n  "memoryDir": ${JSON.stringify(memoryDir)},\n  "memories": `
  yield* array(memories)
  yield `,\n  "problems": `
  yield* array(rendered(problems))
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
          for (let i = 0; i < scan.memories.length; i++) yield memoryJson(scan.memories[i]!, ages[i]!)
        }
        return yield* streamLines(listingJson(location.memoryDir, entries(), problems))
      }
      if (scan.memories.length === 0 && problems.length === 0) {
        return yield* Console.log(`no memories in ${location.memoryDir}`)
      }
      // one write for the whole listing: thousands of memories are common
      if (scan.memories.length > 0) {
        yield* Console.log(
          scan.memories.map((m, i) =>
            terminalLine(`${m.path}  [${m.type}] ${m.name} (${ages[i]!.age}) — ${m.description}`)
          ).join("\n")
        )
      }
      for (const p of problems) yield* Console.error(`problem: ${terminalLine(p.path)}: ${terminalLine(p.message)}`)
    })
  )
).pipe(Command.withDescription("List memories (newest first) and files that could not be read"))
