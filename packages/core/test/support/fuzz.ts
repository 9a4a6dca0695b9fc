/**
 * What the fuzz properties of the doors share (MemoryToolBackend.fuzz.test.ts, MemoryStore.fuzz.test.ts): hostile
 * and benign keys (the traversal corpora of `fixtures/` and generated ones), memory texts, a snapshot of a tree
 * that names every change outside the memory directory, and the check that a memory directory is sound: every
 * memory file parses, and each has exactly its one index line (`MEMORY.md`, or `team/MEMORY.md` for `team/…`),
 * rendered from its own frontmatter and linking its key, with no line for a file that is not there.
 */
import * as Result from "effect/Result"
import * as FastCheck from "fast-check"
import * as fs from "node:fs"
import * as path from "node:path"
import { parseMemoryFile } from "../../src/Frontmatter.js"
import { formatIndexEntry, memoryTypes, parseIndexLine } from "../../src/Memory.js"
import { indexKeyOf, normalizeIndexLink } from "../../src/MemoryIndex.js"

const fixture = (name: string): string =>
  fs.readFileSync(path.join(import.meta.dirname, "..", "fixtures", name), "utf8")

/** The TeamGuard attack list's keys (`<reason> TAB <JSON key>`), every reason and the `ok` ones. */
export const traversalKeys: ReadonlyArray<string> = fixture("traversal-keys.txt").split("\n")
  .filter((line) => line !== "" && !line.startsWith("#"))
  .map((line) => JSON.parse(line.slice(line.indexOf("\t") + 1)) as string)

/** The public traversal payloads (PayloadsAllTheThings, fuzzdb, markdown-sanitizers), one JSON string a line. */
export const traversalPayloads: ReadonlyArray<string> = fixture("traversal-payloads.txt").split("\n")
  .filter((line) => line !== "" && !line.startsWith("#"))
  .map((line) => JSON.parse(line) as string)

/** Segments a hostile key is built from: traversal in every spelling, look-alikes, NUL, reserved names, odd names. */
const HOSTILE_SEGMENTS = [
  "..",
  ".",
  "",
  "...",
  "%2e%2e",
  "%2E%2E%2F",
  "..%2f",
  "%252e%252e",
  "%00",
  "\u2024\u2024", // one-dot leaders
  "\uff0e\uff0e", // fullwidth full stops
  "..\u2215", // division slash
  "..\uff0f", // fullwidth solidus
  "\u2044", // fraction slash
  "..\u200b", // zero-width space
  "\u202e", // right-to-left override
  "\u0000",
  "a\u0000.md",
  "a\\b.md",
  "\\..",
  "..\\x.md",
  "team",
  "Team",
  "logs",
  "tmp",
  "etc",
  "~",
  "C:",
  "MEMORY.md",
  "memory.md",
  ".hidden.md",
  ".memory-index.lock",
  "a.md ",
  " a.md",
  "a b.md",
  "a) - b.md",
  "x".repeat(300) + ".md",
  "notes",
  "feedback_x.md",
  "Δelta.md"
]

/** A benign key: a `.md` name, perhaps one or two directories down, perhaps under `team/`. */
export const benignKey: FastCheck.Arbitrary<string> = FastCheck.tuple(
  FastCheck.array(FastCheck.constantFrom("notes", "sub", "deep", "team"), { maxLength: 2 }),
  FastCheck.constantFrom("user", "feedback", "project", "reference", "misc"),
  FastCheck.stringMatching(/^[a-z0-9]{1,8}$/)
).map(([dirs, prefix, stem]) => [...dirs, `${prefix}_${stem}.md`].join("/"))

/** A few keys every sequence draws from often, so later commands find the files earlier ones wrote. */
export const POOL: ReadonlyArray<string> = [
  "feedback_a.md",
  "notes/project_b.md",
  "user_c.md",
  "team/reference_d.md",
  "team/sub/project_e.md"
]
export const poolKey: FastCheck.Arbitrary<string> = FastCheck.constantFrom(...POOL)

/** A key as a hostile caller would write it: from the corpora, composed of hostile segments, or random bytes. */
export const hostileKey: FastCheck.Arbitrary<string> = FastCheck.oneof(
  { arbitrary: FastCheck.constantFrom(...traversalKeys), weight: 3 },
  { arbitrary: FastCheck.constantFrom(...traversalPayloads), weight: 3 },
  {
    arbitrary: FastCheck.tuple(
      FastCheck.constantFrom("", "/", "./", "//"),
      FastCheck.array(FastCheck.oneof(FastCheck.constantFrom(...HOSTILE_SEGMENTS), benignKey), {
        minLength: 1,
        maxLength: 5
      }),
      FastCheck.constantFrom("", ".md", "/x.md")
    ).map(([lead, segments, tail]) => lead + segments.join("/") + tail),
    weight: 4
  },
  { arbitrary: FastCheck.string({ unit: "binary", maxLength: 24 }), weight: 1 }
)

/** A key of either kind, benign ones as often as hostile ones (so writes land and later commands find files). */
export const anyKey: FastCheck.Arbitrary<string> = FastCheck.oneof(poolKey, benignKey, hostileKey)

/** A valid memory (its name and description from hostile characters too), or text that is none. */
export const memoryContent: FastCheck.Arbitrary<string> = FastCheck.oneof(
  {
    arbitrary: FastCheck.tuple(
      FastCheck.oneof(
        { arbitrary: FastCheck.stringMatching(/^[A-Za-z][A-Za-z0-9 ]{0,20}$/), weight: 4 },
        { arbitrary: FastCheck.string({ maxLength: 20 }), weight: 1 }
      ),
      FastCheck.oneof(
        { arbitrary: FastCheck.stringMatching(/^[A-Za-z][A-Za-z0-9 ,.]{0,40}$/), weight: 4 },
        { arbitrary: FastCheck.string({ maxLength: 40 }), weight: 1 }
      ),
      FastCheck.constantFrom(...memoryTypes),
      FastCheck.string({ maxLength: 60 })
    ).map(([name, description, type, body]) =>
      `---\nname: ${name}\ndescription: ${description}\ntype: ${type}\n---\n${body}\n`
    ),
    weight: 5
  },
  { arbitrary: FastCheck.string({ unit: "binary", maxLength: 80 }), weight: 1 },
  // a likely secret: refused in team/, kept in private memory
  {
    arbitrary: FastCheck.constant("---\nname: CI\ndescription: CI key\ntype: reference\n---\nAKIA2Z3Y4X5W6V7UTSRQ\n"),
    weight: 1
  }
)

export interface Entry {
  readonly kind: "file" | "directory" | "link" | "other"
  readonly content: string
}

/** Every entry under `dir` (relative, `/`-separated), never following a link: a file with its bytes (base64). */
export const snapshot = (dir: string): Map<string, Entry> => {
  const out = new Map<string, Entry>()
  const walk = (relative: string) => {
    for (const entry of fs.readdirSync(path.join(dir, relative), { withFileTypes: true })) {
      const key = relative === "" ? entry.name : `${relative}/${entry.name}`
      const full = path.join(dir, key)
      if (entry.isDirectory()) {
        out.set(key, { kind: "directory", content: "" })
        walk(key)
      } else if (entry.isFile()) out.set(key, { kind: "file", content: fs.readFileSync(full).toString("base64") })
      else if (entry.isSymbolicLink()) out.set(key, { kind: "link", content: fs.readlinkSync(full) })
      else out.set(key, { kind: "other", content: "" })
    }
  }
  walk("")
  return out
}

/** What differs between two snapshots, outside `inside` (relative to the snapshot's directory): `+`, `-`, `~`. */
export const changesOutside = (
  before: Map<string, Entry>,
  after: Map<string, Entry>,
  inside: string
): Array<string> => {
  const within = (key: string) => key === inside || key.startsWith(`${inside}/`)
  const changes: Array<string> = []
  for (const [key, entry] of after) {
    if (within(key)) continue
    const old = before.get(key)
    if (old === undefined) changes.push(`+ ${key}`)
    else if (old.kind !== entry.kind || old.content !== entry.content) changes.push(`~ ${key}`)
  }
  for (const key of before.keys()) if (!within(key) && !after.has(key)) changes.push(`- ${key}`)
  return changes
}

/** The regular files of a memory directory that are memories: not hidden, not an index, links left out. */
export const memoryFiles = (memoryDir: string): Array<string> =>
  [...snapshot(memoryDir)].filter(([key, entry]) =>
    entry.kind === "file" && !key.split("/").some((segment) => segment.startsWith(".")) &&
    key !== "MEMORY.md" && key !== "team/MEMORY.md"
  ).map(([key]) => key).sort()

/**
 * What is wrong with a memory directory (empty: nothing): a memory file that does not parse (torn or never
 * valid), a memory without exactly one index line, a line that is not the one its frontmatter renders, a line
 * for a file that is not there, or a file in team/ while team memory was never on. With `plain` (the memory-tool
 * backend, which stores any file the SDK's reference stores), a file need not be a memory: it still has exactly
 * one index line (what it says is not checked).
 */
export const unsoundness = (memoryDir: string, teamEnabled: boolean, plain = false): Array<string> => {
  const problems: Array<string> = []
  const files = memoryFiles(memoryDir)
  const readIndex = (key: string) => {
    const file = path.join(memoryDir, key)
    return fs.existsSync(file) ? fs.readFileSync(file, "utf8") : ""
  }
  const indexes = { private: readIndex("MEMORY.md"), team: readIndex("team/MEMORY.md") }
  const lines = {
    private: indexes.private.split("\n").filter((line) => parseIndexLine(line) !== undefined),
    team: indexes.team.split("\n").filter((line) => parseIndexLine(line) !== undefined)
  }
  const linked = { private: new Set<string>(), team: new Set<string>() }
  for (const key of files) {
    const scope = key.startsWith("team/") ? "team" : "private"
    if (scope === "team" && !teamEnabled) problems.push(`${key}: in team/ while team memory is off`)
    const link = scope === "team" ? key.slice("team/".length) : key
    linked[scope].add(link)
    const mine = lines[scope].filter((line) => normalizeIndexLink(parseIndexLine(line)!.file) === indexKeyOf(link))
    // a plain file's line is from its frontmatter when valid, else its name and first line: only counted here
    if (plain) {
      if (mine.length !== 1) problems.push(`${key}: ${mine.length} index lines ${JSON.stringify(mine)}`)
      continue
    }
    const parsed = parseMemoryFile(fs.readFileSync(path.join(memoryDir, key), "utf8"), key)
    if (Result.isFailure(parsed)) {
      problems.push(`${key}: does not parse (${parsed.failure.message})`)
      continue
    }
    const { description, name, type } = parsed.success.frontmatter
    if (!(memoryTypes as ReadonlyArray<unknown>).includes(type)) problems.push(`${key}: type ${String(type)}`)
    const expected = formatIndexEntry({ title: String(name), file: link, hook: String(description) })
    if (mine.length !== 1) problems.push(`${key}: ${mine.length} index lines ${JSON.stringify(mine)}`)
    else if (mine[0]!.replace(/\r$/, "") !== expected) {
      problems.push(`${key}: index line ${JSON.stringify(mine[0])}, expected ${JSON.stringify(expected)}`)
    }
  }
  for (const scope of ["private", "team"] as const) {
    for (const line of lines[scope]) {
      const file = normalizeIndexLink(parseIndexLine(line)!.file) ?? ""
      if (![...linked[scope]].some((link) => indexKeyOf(link) === file)) {
        problems.push(`${scope} index: a line for ${file}, which is not there: ${line}`)
      }
    }
  }
  return problems
}
