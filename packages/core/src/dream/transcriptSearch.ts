/** `transcript_search`: the dream's narrow, read-only search of the sessions touched since the last dream. */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Agent from "../Agent.js"
import { MemoryFs } from "../MemoryFs.js"
import type { TouchedSession } from "./gates.js"

export const TRANSCRIPT_SEARCH_MAX_MATCHES = 40
/**
 * Larger transcripts are skipped (named in the answer), by their size before the read; one that grows past it
 * while read fails the read with a typed `TooLarge` and is searched as empty, never hung on.
 */
export const TRANSCRIPT_MAX_BYTES = 32 * 1024 * 1024
/** Bytes of transcripts one search reads in all, at most: later sessions are left out (and the answer says so). */
export const TRANSCRIPT_SEARCH_MAX_TOTAL_BYTES = 128 * 1024 * 1024
/** Characters of a query at most. */
export const TRANSCRIPT_QUERY_MAX_CHARS = 200

/** The conversational text of one JSONL line (ours or the reference agent's); tool inputs as JSON. */
export const transcriptLineText = (line: string): string => {
  let value: any
  try {
    value = JSON.parse(line)
  } catch {
    return ""
  }
  const content = value?.message?.content ?? value?.content
  const parts: Array<string> = []
  const collect = (c: unknown): void => {
    if (typeof c === "string") parts.push(c)
    else if (Array.isArray(c)) {
      for (const block of c) {
        if (block?.type === "text" && typeof block.text === "string") parts.push(block.text)
        else if (block?.type === "tool_use") parts.push(`${block.name}(${JSON.stringify(block.input)})`)
        else if (block?.type === "tool_result") collect(block.content)
      }
    }
  }
  collect(content)
  return parts.join(" ").replace(/\s+/g, " ").trim()
}

/** The tool over `sessions`: case-insensitive literal search, answers `session:line: …snippet…`. */
export const transcriptSearchTool = (sessions: ReadonlyArray<TouchedSession>) =>
  Effect.gen(function*() {
    const fs = yield* MemoryFs
    return Agent.defineTool({
      name: "transcript_search",
      description: "Search the transcripts of the sessions since the last consolidation for a word or phrase " +
        "(case-insensitive, literal). Answers session:line: snippet. Use a specific term; read-only.",
      input: Schema.Struct({
        query: Schema.String.check(
          // JSON Schema counts code points, this check UTF-16 units (so v4 would advertise ⌈3/2⌉): the model is
          // told the 3 the check asks for
          Schema.isMinLength(3, { toJsonSchema: () => ({ minLength: 3 }) }),
          Schema.isMaxLength(TRANSCRIPT_QUERY_MAX_CHARS)
        ),
        session: Schema.optionalKey(Schema.String.annotate({ description: "limit the search to this session id" }))
      }),
      run: ({ query, session }) =>
        Effect.gen(function*() {
          const needle = query.toLowerCase()
          const matches: Array<string> = []
          let more = 0
          let read = 0
          const skipped: Array<string> = []
          const left: Array<string> = []
          const chosen = sessions.filter((s) => session === undefined || s.id === session)
          if (chosen.length === 0) {
            return yield* new Agent.ToolFailure({ message: `no session ${JSON.stringify(session)} in the list` })
          }
          for (const s of chosen) {
            // A link to a transcript is followed (a user who keeps sessions elsewhere): resolved first, then what
            // it names is looked at and read like any file (a regular file only, never blocking, bounded).
            const file = yield* fs.realPath(s.path).pipe(Effect.option)
            if (Option.isNone(file)) continue
            const info = yield* fs.lstat(file.value).pipe(Effect.option)
            if (Option.isNone(info)) continue
            const size = info.value.size
            if (size > TRANSCRIPT_MAX_BYTES) {
              skipped.push(s.id)
              continue
            }
            if (read + size > TRANSCRIPT_SEARCH_MAX_TOTAL_BYTES) {
              left.push(s.id)
              continue
            }
            read += size
            const text = yield* fs.readFile(file.value, { maxBytes: TRANSCRIPT_MAX_BYTES }).pipe(
              Effect.map((read) => read.text),
              Effect.orElseSucceed(() => "")
            )
            const rows = text.split("\n")
            for (let i = 0; i < rows.length; i++) {
              if (!rows[i]!.toLowerCase().includes(needle)) continue
              const said = transcriptLineText(rows[i]!)
              const at = said.toLowerCase().indexOf(needle)
              if (at < 0) continue
              if (matches.length >= TRANSCRIPT_SEARCH_MAX_MATCHES) {
                more++
                continue
              }
              const start = Math.max(0, at - 140)
              const snippet = said.slice(start, at + needle.length + 140)
              matches.push(`${s.id}:${i + 1}: ${start > 0 ? "…" : ""}${snippet}${at + 140 < said.length ? "…" : ""}`)
            }
            yield* Effect.yieldNow
          }
          const notes = [
            ...(more > 0 ? [`[… ${more} more matches: use a more specific term]`] : []),
            ...(skipped.length > 0 ? [`[skipped, over ${TRANSCRIPT_MAX_BYTES} bytes: ${skipped.join(", ")}]`] : []),
            ...(left.length > 0 ?
              [
                `[not searched, over this search's ${TRANSCRIPT_SEARCH_MAX_TOTAL_BYTES} bytes: ${left.join(", ")}; ` +
                `search them one at a time with session]`
              ] :
              [])
          ]
          return [matches.length === 0 ? "(no matches)" : matches.join("\n"), ...notes].join("\n")
        })
    })
  })
