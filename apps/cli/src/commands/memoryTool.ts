/**
 * `memdir memory-tool`: the Anthropic memory tool (`memory_20250818`) for runtimes in any language
 * (docs/memory-tool.md). One tool input per line of JSON on stdin (`{"command": "view", "path": "/memories"}`),
 * one `{"content": string, "is_error": boolean}` per line on stdout, in order; a line that is not JSON gets an
 * error line too, never a crash. Exits 0 at the end of stdin. `/memories` is the project's memory directory,
 * `/memories/team` its team directory while team memory is on.
 */
import type { MemoryToolAnswer } from "@memdir/core/MemoryToolBackend"
import { MemoryToolBackend } from "@memdir/core/MemoryToolBackend"
import * as Command from "effect/cli/Command"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as readline from "node:readline"
import { common, requireEnabled } from "../Common.js"
import { ensureMemoryDir } from "../MemoryDir.js"
import { toIoError } from "../Output.js"
import { memdirHandler } from "../Services.js"
import { locateTeam } from "./teamMemory.js"

/** The lines of stdin, as they arrive (a runtime may wait for each answer before it sends the next input). */
const stdinLines: Stream.Stream<string> = Stream.suspend(() =>
  Stream.fromAsyncIterable(
    readline.createInterface({ input: process.stdin, crlfDelay: Infinity }),
    (error) => error
  ).pipe(Stream.orDie)
)

/** A line of stdin as a tool input; `undefined` for a blank line (skipped, as JSONL readers do). */
const parseLine = (line: string, lineNumber: number): { readonly input: unknown } | MemoryToolAnswer | undefined => {
  if (line.trim() === "") return undefined
  try {
    return { input: JSON.parse(line) as unknown }
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    return {
      content: `Error: line ${lineNumber} of stdin is not JSON (${reason}): give one tool input per line, ` +
        `e.g. {"command": "view", "path": "/memories"}`,
      is_error: true
    }
  }
}

/** Writes one answer line and waits until stdout took it (so a pipe's reader gets answers as they are made). */
const writeAnswer = (answer: MemoryToolAnswer) =>
  Effect.callback<void>((resume) => {
    process.stdout.write(`${JSON.stringify(answer)}\n`, () => resume(Effect.void))
  })

export const memoryToolCommand = Command.make(
  "memory-tool",
  common,
  memdirHandler(({ cwd }) =>
    Effect.gen(function*() {
      const team = yield* locateTeam(cwd)
      yield* requireEnabled(team.memory)
      const memoryDir = team.memory.memoryDir
      // like the reference backend's init: /memories exists before the first command
      yield* ensureMemoryDir(memoryDir).pipe(Effect.mapError(toIoError("memory-tool", memoryDir)))
      const backend = yield* MemoryToolBackend
      const root = { memoryDir, teamEnabled: team.memory.enabled && team.enabled }
      let lineNumber = 0
      yield* stdinLines.pipe(
        Stream.runForEach((line) => {
          lineNumber++
          const parsed = parseLine(line, lineNumber)
          if (parsed === undefined) return Effect.void
          const answer = "input" in parsed ? backend.answer(root, parsed.input) : Effect.succeed(parsed)
          return Effect.flatMap(answer, writeAnswer)
        })
      )
    })
  )
).pipe(
  Command.withDescription(
    "The Anthropic memory tool over stdin/stdout: one JSON tool input per line in, one " +
      "{\"content\", \"is_error\"} line out (docs/memory-tool.md)"
  )
)
