/**
 * The memory model: the four types, the frontmatter, what a scan yields for one file, the index
 * entry (one line of MEMORY.md) and the manifest line the selector reads.
 */
import * as Schema from "effect/Schema"
import { createHash } from "node:crypto"
import { InvalidMemoryInputError } from "./Errors.js"

/** The four types of the taxonomy (docs/file-format.md). */
export const MemoryType = Schema.Literals(["user", "feedback", "project", "reference"])
export type MemoryType = typeof MemoryType.Type
export const memoryTypes: ReadonlyArray<MemoryType> = MemoryType.literals

/** A file whose `type` is missing or unknown is kept as "untyped", never dropped. */
export const MemoryKind = Schema.Literals([...MemoryType.literals, "untyped"])
export type MemoryKind = typeof MemoryKind.Type

export const isMemoryType = Schema.is(MemoryType)

/** The shared directory of team memory, inside the memory directory. */
export const TEAM_DIR = "team"

/**
 * Largest memory memdir writes, private or team, and largest team file it reads, syncs or lets pass an audit: one
 * limit for every memory (a file over it is one topic too many).
 */
export const MEMORY_MAX_BYTES = 250_000

/** Where a memory lives: the user's own directory, or the shared `team/`. */
export const MemoryScope = Schema.Literals(["private", "team"])
export type MemoryScope = typeof MemoryScope.Type

/** `team/x.md` → "team"; anything else → "private". Keys are relative to the memory directory, `/`-separated. */
export const scopeOf = (key: string): MemoryScope =>
  key === TEAM_DIR || key.startsWith(`${TEAM_DIR}/`) ? "team" : "private"

/**
 * A memory's version: the first 16 hex digits of the SHA-256 of its text (stable across runtimes). A write given
 * one (`ifVersion`) happens only while the memory still has that text.
 */
export const memoryVersion = (text: string): string =>
  createHash("sha256").update(text, "utf8").digest("hex").slice(0, 16)

/** Control characters (newline, ESC…) and invisible format characters (bidi overrides, zero-width…). */
const UNPRINTABLE = /[\p{Cc}\p{Cf}]/u

/** The first control or invisible character of `text`, as `U+XXXX`, if any: such text forges lines and terminals. */
export const unprintableIn = (text: string): string | undefined => {
  const found = UNPRINTABLE.exec(text)
  return found === null ? undefined : `U+${found[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`
}

/** The three required frontmatter fields, as memdir writes them. Extra keys are kept when read. */
export const Frontmatter = Schema.Struct({
  name: Schema.Trim.pipe(
    Schema.check(
      Schema.isMinLength(1, { message: "name must not be empty" }),
      Schema.makeFilter((s: string) => unprintableIn(s.replace(/\t/g, " ")) === undefined, {
        message: "name must not contain control or invisible characters"
      })
    )
  ),
  description: Schema.Trim.pipe(
    Schema.check(
      Schema.isMinLength(1, { message: "description must not be empty" }),
      Schema.makeFilter((s: string) => !/[\r\n]/.test(s), { message: "description must be a single line" }),
      Schema.makeFilter((s: string) => unprintableIn(s.replace(/\t/g, " ")) === undefined, {
        message: "description must not contain control or invisible characters"
      })
    )
  ),
  type: MemoryType
})
export type Frontmatter = typeof Frontmatter.Type

/**
 * Longest name, in characters (code points, after trimming): the name is the title of the memory's `MEMORY.md`
 * line, which the index keeps under ~150 characters with its link and description hook.
 */
export const NAME_MAX_LENGTH = 100

/** What a write of a memory holds to the limits: its name and body (the frontmatter's other fields aside). */
export interface WrittenMemory {
  readonly name: string
  readonly body: string
}

/**
 * The limits every door's write of a memory keeps (docs/cli.md, `memdir write`), as the error naming the limit
 * broken, or `undefined`: a name of at most `NAME_MAX_LENGTH` characters (the title of its index line) and a body
 * that is not blank (a memory is its body). `before`, the memory a write replaces: a limit it already broke does
 * not stop an edit that leaves that part as it was, so a hand-written memory can still be edited (and fixed).
 */
export const writeLimitsError = (
  memory: WrittenMemory,
  before?: WrittenMemory | undefined
): InvalidMemoryInputError | undefined => {
  const name = [...memory.name.trim()]
  if (name.length > NAME_MAX_LENGTH && memory.name.trim() !== before?.name.trim()) {
    return new InvalidMemoryInputError({
      field: "name",
      // the start is enough to recognise it; the whole name would flood the one line of the error
      value: `${name.slice(0, 40).join("")}…`,
      reason: `name is ${name.length} characters, at most ${NAME_MAX_LENGTH} (it is the title of the memory's ` +
        "MEMORY.md line): keep it a short title and put the detail in the description or the body",
      rule: "name-too-long"
    })
  }
  if (memory.body.trim() === "" && (before === undefined || before.body.trim() !== "")) {
    return new InvalidMemoryInputError({
      field: "body",
      value: memory.body,
      reason: "the body is empty: a memory is its body, the rule or fact it keeps (for feedback and project, " +
        "then Why: and How to apply:)",
      rule: "empty-body"
    })
  }
  return undefined
}

/** What the scanner learns about one memory file without reading its body. */
export interface MemoryHeader {
  /** Path relative to the memory directory, with `/` separators. */
  readonly path: string
  /** Absolute path on disk. */
  readonly absolutePath: string
  readonly name: string
  readonly description: string
  readonly type: MemoryKind
  /** Modification time, epoch milliseconds. */
  readonly mtime: number
  /**
   * Bytes of the file when the scan looked (its `lstat`, with `mtime` from the same look), when the scan has it: a
   * reader keyed by size and mtime (`TermCache`) then needs no second `lstat`. Absent for a link's target.
   */
  readonly size?: number | undefined
  /**
   * When the memory was written, epoch ms: its `modified:` timestamp when sane, else its last commit (a file git
   * tracks), else `mtime` (`MemoryAge`, docs/file-format.md#age-and-staleness). Absent: `mtime`.
   */
  readonly writtenAt?: number | undefined
  /** Where `writtenAt` came from. */
  readonly writtenFrom?: "modified" | "commit" | "mtime" | undefined
  /** Frontmatter keys other than name/description/type. */
  readonly extra: Readonly<Record<string, unknown>>
  /** Set when the header was recovered leniently (e.g. YAML a strict parser rejects); says what was off. */
  readonly warning?: string | undefined
  /**
   * The start of the body, from the bytes the header scan read anyway (up to line 30, at most 1 KiB): what the
   * offline selector reads besides the header. Absent when the scanner did not keep it.
   */
  readonly bodyHead?: string | undefined
  /** Set for a file without a readable header, offered to recall by its file name and first lines. */
  readonly headerless?: true | undefined
}

/** A file the scanner could not turn into a memory: reported, then skipped. */
export interface ScanProblem {
  /** Path relative to the memory directory. */
  readonly path: string
  readonly code: string
  readonly message: string
  readonly line?: number | undefined
}

/** One line of MEMORY.md: `- [Title](file.md) — hook`. */
export const IndexEntry = Schema.Struct({
  title: Schema.String,
  file: Schema.String,
  hook: Schema.String
})
export type IndexEntry = typeof IndexEntry.Type

/** Soft cap on one index line, in characters (docs/file-format.md). */
export const INDEX_ENTRY_MAX_CHARS = 150

const INDEX_LINE = /^\s*[-*]\s+\[((?:[^[\]]|\[[^[\]]*\])*)\]\((<[^<>\n]*>|.+?)\)(?:\s*(?:—|–|-{1,2}|:)\s*(.*))?\s*$/

/**
 * A file name as a link destination that points at exactly that file (`MemoryIndex.normalizeIndexLink` reads it
 * back): `%`, `#`, `?`, `<` and `>` are percent-encoded (a link would decode `%`, cut at `#` or `?`, end at `>`); a
 * first segment holding `:` gets `./` (else it reads as a URL scheme); a name holding a parenthesis or beginning or
 * ending with white space goes in angle brackets (CommonMark's `<…>` form), so `(a) - b.md)` is not read as `a`
 * followed by a hook and ` a.md` keeps its space.
 */
export const indexLink = (file: string): string => {
  const encoded = file.replace(/[%#?<>]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
  const safe = (encoded.split("/")[0] ?? "").includes(":") ? `./${encoded}` : encoded
  return /[()]/.test(safe) || file.split("/").some((segment) => segment.trim() !== segment) ? `<${safe}>` : safe
}

/**
 * Render one index line, shortening the hook so the whole line fits in `maxChars`. A title over `NAME_MAX_LENGTH`
 * characters (a name written by hand: no write makes one) is cut there, so no memory's line is ever longer for it.
 */
export const formatIndexEntry = (entry: IndexEntry, maxChars: number = INDEX_ENTRY_MAX_CHARS): string => {
  const chars = [...oneLine(entry.title).replace(/[[\]]/g, "")]
  const title = chars.length <= NAME_MAX_LENGTH ?
    chars.join("") :
    `${chars.slice(0, NAME_MAX_LENGTH - 1).join("").trimEnd()}…`
  const head = `- [${title}](${indexLink(entry.file)})`
  const hook = oneLine(entry.hook)
  if (hook.length === 0) return head
  const room = maxChars - head.length - 3
  if (room <= 1) return head
  const shortHook = hook.length <= room ? hook : hook.slice(0, room - 1).trimEnd() + "…"
  return `${head} — ${shortHook}`
}

/** Parse one index line; `undefined` when the line is not a link entry (headings, prose, blanks). */
export const parseIndexLine = (line: string): IndexEntry | undefined => {
  const m = INDEX_LINE.exec(line)
  if (m === null) return undefined
  const destination = m[2]!.trim()
  const file = destination.startsWith("<") && destination.endsWith(">") ? destination.slice(1, -1) : destination
  return { title: m[1]!, file, hook: (m[3] ?? "").trim() }
}

/**
 * The manifest line the selector reads (docs/architecture.md#how-a-recall-flows): `- [type] path (ISO mtime):
 * description`.
 */
export const manifestLine = (
  m: Pick<MemoryHeader, "type" | "path" | "mtime" | "writtenAt" | "description">
): string => `- [${m.type}] ${m.path} (${new Date(m.writtenAt ?? m.mtime).toISOString()}): ${oneLine(m.description)}`

const oneLine = (s: string): string => s.replace(/\s+/g, " ").trim()
