/**
 * A regular expression a model chose, matched in time linear in the input: RE2's automata (the `re2js` port), never
 * a backtracking engine, so `^(a+)+$` over `a`×40 + `!` answers at once instead of blocking the event loop. Bounded
 * on every side: the pattern's length and compiled size, the characters of one line that are looked at, the
 * characters of one search in all, and the matches kept.
 *
 * RE2 has no backreferences and no lookaround (they are what makes matching exponential). A pattern that uses them
 * is refused with an `UnsafePatternError` whose message tells the model what to write instead; JavaScript syntax
 * RE2 also knows (`(?<name>…)`, `\d`, `\b`, `\p{L}`, `\uXXXX`) is translated.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { RE2JS, RE2JSException } from "re2js"

/** Characters of a pattern at most. */
export const SAFE_REGEX_MAX_PATTERN_CHARS = 1_000
/** Compiled program size at most (RE2's measure of a pattern's cost; `[a-z]{1,1000}` is about 3,000). */
export const SAFE_REGEX_MAX_PROGRAM_SIZE = 10_000
/** Characters of one line matched at most: a longer line is matched on its head. */
export const SAFE_REGEX_MAX_LINE_CHARS = 4_000
/** Characters one search looks at in all, at most (about 50 ms of matching per megabyte). */
export const SAFE_REGEX_MAX_SCANNED_CHARS = 64 * 1024 * 1024
/** Matching lines one search keeps at most. */
export const SAFE_REGEX_MAX_MATCHES = 200
/** Characters of a matching line shown at most. */
export const SAFE_REGEX_MAX_SHOWN_CHARS = 300

export type UnsafePatternReason = "backreference" | "lookaround" | "too-long" | "too-complex" | "syntax"

/** A pattern the linear-time matcher cannot or will not run; the message says what to use instead. */
export class UnsafePatternError extends Schema.TaggedError<UnsafePatternError>()("UnsafePatternError", {
  pattern: Schema.String,
  reason: Schema.Literals(["backreference", "lookaround", "too-long", "too-complex", "syntax"]),
  detail: Schema.String
}) {
  override get message(): string {
    const shown = JSON.stringify(this.pattern.length > 80 ? `${this.pattern.slice(0, 80)}…` : this.pattern)
    switch (this.reason) {
      case "backreference":
        return `pattern ${shown} uses a backreference (${this.detail}), which the linear-time matcher does not ` +
          `support: match the repeated text literally (e.g. "(foo|bar) \\1" → "foo foo|bar bar") or search for ` +
          `one part and read the lines it finds.`
      case "lookaround":
        return `pattern ${shown} uses lookaround (${this.detail}), which the linear-time matcher does not support: ` +
          `match the surrounding text as part of the pattern (e.g. "foo(?=bar)" → "foobar"), or search for the ` +
          `wider pattern and read the lines it finds.`
      case "too-long":
        return `pattern ${shown} is ${this.pattern.length} characters long, more than the ` +
          `${SAFE_REGEX_MAX_PATTERN_CHARS} allowed: search for a shorter, distinctive part of it.`
      case "too-complex":
        return `pattern ${shown} compiles to a program too large to run (${this.detail}): use smaller repeat ` +
          `counts ({n,m}) and fewer alternatives.`
      case "syntax":
        return `pattern ${shown} is not a valid RE2 regular expression (${this.detail}): use RE2/JavaScript syntax ` +
          `without backreferences, lookaround, atomic or possessive groups.`
    }
  }
}

/** What RE2 cannot run, found before compiling (`re2js` would otherwise read `\k<n>` as the literal `k<n>`). */
const unsupportedConstruct = (
  pattern: string
): { readonly reason: "backreference" | "lookaround"; readonly detail: string } | undefined => {
  let inClass = false
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i]!
    if (char === "\\") {
      const next = pattern[i + 1] ?? ""
      if (!inClass && /[1-9]/.test(next)) return { reason: "backreference", detail: `\\${next}` }
      if (!inClass && next === "k" && pattern[i + 2] === "<") return { reason: "backreference", detail: "\\k<…>" }
      i++
      continue
    }
    if (inClass) {
      if (char === "]") inClass = false
      continue
    }
    if (char === "[") {
      inClass = true
      // A `]` right after `[` or `[^` is a literal member of the class.
      if (pattern[i + 1] === "^") i++
      if (pattern[i + 1] === "]") i++
      continue
    }
    if (char === "(" && pattern[i + 1] === "?") {
      const head = pattern.slice(i, i + 4)
      for (const construct of ["(?<=", "(?<!", "(?=", "(?!"]) {
        if (head.startsWith(construct)) return { reason: "lookaround", detail: `${construct}…)` }
      }
    }
  }
  return undefined
}

/** A compiled pattern: `test` runs in time linear in the (bounded) line. */
export interface SafeRegex {
  readonly pattern: string
  readonly ignoreCase: boolean
  /** Whether the pattern matches somewhere in the line's first `SAFE_REGEX_MAX_LINE_CHARS` characters. */
  readonly test: (line: string) => boolean
}

/** Pure: the pattern compiled for the linear-time matcher, or why it cannot be. */
export const compileSafeRegexResult = (
  pattern: string,
  options: { readonly ignoreCase?: boolean | undefined } = {}
): Result.Result<SafeRegex, UnsafePatternError> => {
  const refuse = (reason: UnsafePatternReason, detail: string) =>
    Result.fail(new UnsafePatternError({ pattern, reason, detail }))
  if (pattern.length > SAFE_REGEX_MAX_PATTERN_CHARS) return refuse("too-long", `${pattern.length} characters`)
  const unsupported = unsupportedConstruct(pattern)
  if (unsupported !== undefined) return refuse(unsupported.reason, unsupported.detail)
  const ignoreCase = options.ignoreCase === true
  let compiled: RE2JS
  try {
    compiled = RE2JS.compile(RE2JS.translateRegExp(pattern), ignoreCase ? RE2JS.CASE_INSENSITIVE : 0)
  } catch (error) {
    // Only the library's own parse and compile failures are the pattern's fault; anything else is a defect.
    if (error instanceof RE2JSException) return refuse("syntax", error.message.replace(/^error parsing regexp: /, ""))
    throw error
  }
  const size = compiled.programSize()
  if (size > SAFE_REGEX_MAX_PROGRAM_SIZE) {
    return refuse("too-complex", `program size ${size}, at most ${SAFE_REGEX_MAX_PROGRAM_SIZE}`)
  }
  return Result.succeed({
    pattern,
    ignoreCase,
    test: (line) =>
      compiled.test(line.length > SAFE_REGEX_MAX_LINE_CHARS ? line.slice(0, SAFE_REGEX_MAX_LINE_CHARS) : line)
  })
}

/** The pattern compiled for the linear-time matcher; fails with `UnsafePatternError`. */
export const compileSafeRegex = Effect.fn("SafeRegex.compile")(function*(
  pattern: string,
  options: { readonly ignoreCase?: boolean | undefined } = {}
) {
  return yield* Effect.fromResult(compileSafeRegexResult(pattern, options))
})

/** One matching line: 1-based line number and its text, cut to `SAFE_REGEX_MAX_SHOWN_CHARS`. */
export interface LineMatch {
  readonly source: string
  readonly line: number
  readonly text: string
}

/**
 * A search over many texts under one budget: `scan` adds a text's matching lines until `SAFE_REGEX_MAX_MATCHES`
 * are kept (later ones are only counted) and answers false once `SAFE_REGEX_MAX_SCANNED_CHARS` have been looked at,
 * when the caller should stop and say that the search was cut.
 */
export interface LineSearch {
  readonly scan: (source: string, text: string) => boolean
  readonly matches: () => ReadonlyArray<LineMatch>
  /** Matching lines found after the cap on kept matches. */
  readonly more: () => number
  /** True when the character budget ran out before every text was looked at. */
  readonly exhausted: () => boolean
  /** The answer for a model: `source:line: text` lines, with notes when matches or text were left out. */
  readonly render: () => string
}

export const makeLineSearch = (
  regex: SafeRegex,
  bounds: {
    readonly maxMatches?: number | undefined
    readonly maxScannedChars?: number | undefined
  } = {}
): LineSearch => {
  const maxMatches = bounds.maxMatches ?? SAFE_REGEX_MAX_MATCHES
  const maxScanned = bounds.maxScannedChars ?? SAFE_REGEX_MAX_SCANNED_CHARS
  const matches: Array<LineMatch> = []
  let more = 0
  let scanned = 0
  let exhausted = false
  const scan = (source: string, text: string): boolean => {
    if (exhausted) return false
    const lines = text.split("\n")
    for (let i = 0; i < lines.length; i++) {
      const full = lines[i]!
      const line = full.length > SAFE_REGEX_MAX_LINE_CHARS ? full.slice(0, SAFE_REGEX_MAX_LINE_CHARS) : full
      if (scanned + line.length > maxScanned) {
        exhausted = true
        return false
      }
      scanned += line.length + 1
      if (!regex.test(line)) continue
      if (matches.length >= maxMatches) {
        more++
        continue
      }
      const shown = line.length > SAFE_REGEX_MAX_SHOWN_CHARS ? `${line.slice(0, SAFE_REGEX_MAX_SHOWN_CHARS)}…` : line
      matches.push({ source, line: i + 1, text: shown })
    }
    return true
  }
  const render = (): string => {
    const body = matches.map((m) => `${m.source}:${m.line}: ${m.text}`).join("\n")
    const notes = [
      ...(more > 0 ? [`[… ${more} more matches: narrow the pattern or path]`] : []),
      ...(exhausted ? [`[… search stopped after ${maxScanned} characters: narrow the path]`] : [])
    ]
    return [matches.length === 0 ? "(no matches)" : body, ...notes].join("\n")
  }
  return { scan, matches: () => matches, more: () => more, exhausted: () => exhausted, render }
}
