/**
 * Doctor: what is wrong with a memory directory, and the safe repairs (docs/file-format.md). `diagnose` only reads.
 * `fix` only edits MEMORY.md (under the index lock, atomically): it drops dead links and duplicate lines, shortens
 * over-long entries and adds lines for memories missing from the index while the caps allow. It never deletes or
 * rewrites a memory file, and before it rewrites MEMORY.md it copies the old text to
 * `<memdir>/.doctor/<stamp>/MEMORY.md` (0600), so no repair loses a line for good.
 *
 * It also explains directories not in memdir's shape: an index of prose with no memory files beside it, a file
 * whose name prefix (`feedback_…`) says another type than its frontmatter, and index links that lead out of the
 * memory directory (memdir never reads those).
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Path from "effect/Path"
import { stampOf } from "./dream/snapshot.js"
import { ioErrorOf, isMissingFile, type LockTimeoutError, type MemoryIoError } from "./Errors.js"
import { isInside } from "./internal/containment/inside.js"
import { conflictOriginal } from "./internal/team/conflict.js"
import { unreadScriptOf } from "./internal/text/language.js"
import {
  formatIndexEntry,
  INDEX_ENTRY_MAX_CHARS,
  type MemoryHeader,
  parseIndexLine,
  type ScanProblem
} from "./Memory.js"
import { sortNewestWrittenFirst, splitWrittenWarning } from "./MemoryAge.js"
import { MemoryFs } from "./MemoryFs.js"
import {
  countLines,
  fitsIndexCaps,
  INDEX_FILE,
  INDEX_MAX_BYTES,
  INDEX_MAX_LINES,
  indexKeyOf,
  MemoryIndex,
  normalizeIndexLink,
  truncateIndex,
  typePrefix,
  upsertIndexText,
  utf8ByteLength
} from "./MemoryIndex.js"
import { type LinkResolver, linkResolver, resolveLinks } from "./MemoryLinks.js"
import { MEMORY_READ_MAX_BYTES } from "./MemoryStore.js"
import { MAX_PINNED, pinnedOf } from "./Pins.js"
import { Scanner } from "./Scanner.js"

export type DoctorCode =
  | "index-over-lines"
  | "index-over-bytes"
  | "dead-link"
  | "missing-from-index"
  | "invalid-frontmatter"
  | "duplicate-name"
  | "entry-too-long"
  | "duplicate-entry"
  | "team-conflict"
  | "prose-index"
  | "type-prefix-mismatch"
  | "link-outside"
  | "dead-memory-link"
  | "too-many-pins"
  | "modified-ignored"
  | "unread-language"
  | "unreadable"

export interface DoctorFinding {
  readonly code: DoctorCode
  readonly severity: "error" | "warning"
  /** The memory file concerned (relative to the memory directory), or MEMORY.md for index-wide findings. */
  readonly path?: string | undefined
  /** 1-based line (of MEMORY.md for index findings, of the memory file for frontmatter findings). */
  readonly line?: number | undefined
  /** What is wrong, without where (`path`, `line`; `locationOf` renders them). */
  readonly message: string
  /** What to do about it. */
  readonly fix: string
  /** `fix` repairs it. */
  readonly fixable: boolean
}

export interface DoctorReport {
  readonly memoryDir: string
  readonly findings: ReadonlyArray<DoctorFinding>
}

export interface DoctorChange {
  readonly code: DoctorCode
  readonly action: "removed-line" | "added-line" | "shortened-line"
  readonly path: string
  /** Line of MEMORY.md before the fix (for removed/shortened lines). */
  readonly line?: number | undefined
  /** The line removed, or the line written. */
  readonly text: string
}

export interface DoctorFixResult {
  readonly changes: ReadonlyArray<DoctorChange>
  /** Memories that stay missing from the index because a line would break the caps. */
  readonly notAdded: ReadonlyArray<{ readonly path: string; readonly reason: string }>
  /** The findings after the fix. */
  readonly remaining: ReadonlyArray<DoctorFinding>
  /**
   * Where the previous MEMORY.md was copied before the fix rewrote it (relative to the memory directory, e.g.
   * `.doctor/2026-03-05T12-00-00Z/MEMORY.md`); absent when nothing was rewritten.
   */
  readonly backup?: string | undefined
}

/** Copies of every file `doctor --fix` rewrote: `<memdir>/.doctor/<stamp>/`. */
export const DOCTOR_BACKUP_DIR = ".doctor"

/** Sub-directories with their own index (team) or no memories (logs): not checked against MEMORY.md. */
const SKIP_DIRS: ReadonlyArray<string> = ["team", "logs"]

const lineLength = (raw: string): number => [...raw.replace(/\r$/, "")].length

const shortened = (raw: string): string | undefined => {
  const entry = parseIndexLine(raw)
  if (entry === undefined) return undefined
  const line = formatIndexEntry(entry)
  return lineLength(line) <= INDEX_ENTRY_MAX_CHARS && lineLength(line) < lineLength(raw) ? line : undefined
}

const kb = (bytes: number): string => `${(bytes / 1000).toFixed(1).replace(/\.0$/, "")} KB`

interface Inspection {
  readonly text: string
  readonly memories: ReadonlyArray<MemoryHeader>
  readonly problems: ReadonlyArray<ScanProblem>
  /** Normalised local links of the index whose target does not exist. */
  readonly dead: ReadonlySet<string>
  /** Index links (as written) that lead out of the memory directory: absolute, `../`, or through a symlink. */
  readonly outside: ReadonlySet<string>
  /** `[[name]]` links (in the index and in memories) that name no memory. */
  readonly deadMemoryLinks?: ReadonlyArray<DeadMemoryLink> | undefined
}

interface DeadMemoryLink {
  /** The file holding the link (MEMORY.md or a memory), relative. */
  readonly path: string
  readonly line: number
  readonly target: string
}

/** The dead `[[links]]` of one file's text, with the line of each first use. */
const deadLinksOf = (path: string, text: string, resolve: LinkResolver): Array<DeadMemoryLink> =>
  resolveLinks(text, resolve, path).dead.map((target) => ({
    path,
    target,
    line: text.slice(0, Math.max(0, text.indexOf(`[[${target}`))).split("\n").length
  }))

/** Links that name no memory, and more pins than the prompt loads. */
const linkAndPinFindings = (
  memories: ReadonlyArray<MemoryHeader>,
  deadMemoryLinks: ReadonlyArray<DeadMemoryLink>
): Array<DoctorFinding> => {
  const findings: Array<DoctorFinding> = deadMemoryLinks.map((link) => ({
    code: "dead-memory-link",
    severity: "warning",
    path: link.path,
    line: link.line,
    message: `[[${link.target}]] names no memory (no memory has that name or file stem)`,
    fix: `Link a memory by its name or file stem, e.g. [[${
      memories[0]?.name ?? "testing-policy"
    }]], or remove the link`,
    fixable: false
  }))
  const pinned = pinnedOf(memories)
  if (pinned.length > MAX_PINNED) {
    findings.push({
      code: "too-many-pins",
      severity: "warning",
      path: INDEX_FILE,
      message: `${pinned.length} memories are pinned (limit: ${MAX_PINNED}); the prompt loads only the ${MAX_PINNED} ` +
        `newest in full: ${pinned.slice(MAX_PINNED).map((m) => m.path).join(", ")} ${
          pinned.length - MAX_PINNED === 1 ? "is" : "are"
        } left out`,
      fix: `Unpin the memories that need not be in every session (remove \`pinned: true\`), keep at most ${MAX_PINNED}`,
      fixable: false
    })
  }
  return findings
}

/** The link target as written, without `<…>`, anchor or query: what decides whether it leaves the directory. */
const linkTarget = (link: string): string => link.trim().replace(/^<(.*)>$/, "$1").replace(/[#?].*$/, "")

/** Non-blank lines of the index that are neither headings nor link entries. */
const proseLines = (text: string): number =>
  text.split("\n").filter((raw) => {
    const line = raw.trim()
    return line.length > 0 && !line.startsWith("#") && parseIndexLine(raw) === undefined
  }).length

/** The advice for a frontmatter the scan could not read, by why (`InvalidFrontmatterError.reason`). */
const FRONTMATTER_FIX = "Fix the frontmatter between the two '---' lines: name, description and type " +
  "(user | feedback | project | reference)"

const FRONTMATTER_FIXES: Readonly<Record<string, string>> = {
  "missing-frontmatter": "Start the file with a frontmatter: a '---' line, then name:, description: and type: " +
    "(user | feedback | project | reference), then a '---' line",
  "unclosed-frontmatter": "Close the frontmatter with a '---' line after its last key",
  "yaml-error": "Fix the YAML between the two '---' lines (quote a value that holds ': ' or ' #', or starts with " +
    "'[', '{', '*' or '&')",
  "binary": "Move it out of the memory directory: it is not a text file, and memories are Markdown"
}

/**
 * A scan problem's text as a finding's message: without the `path[:line]: ` it starts with (the finding has its
 * own `path` and `line`) and without the advice it ends with (the finding's `fix` gives it).
 */
const problemDetail = (problem: ScanProblem): string => {
  const located = problem.message.startsWith(`${problem.path}`) ?
    problem.message.slice(problem.path.length).replace(/^(?::\d+)?: /, "") :
    problem.message
  return located
    .replace(/\s*Fix the frontmatter between the two '---' lines:[\s\S]*$/, "")
    .replace(/\s*Check its permissions, or remove it\.$/, "")
}

/** Findings whose `line` is a line of MEMORY.md while `path` names the memory the line points at. */
const INDEX_LINE_CODES: ReadonlySet<DoctorCode> = new Set([
  "dead-link",
  "duplicate-entry",
  "entry-too-long",
  "link-outside"
])

/**
 * Where a finding is, as a person looks for it: `MEMORY.md:4` for a line of the index (even when `path` is the
 * memory that line points at), else `path` and its line (`broken.md:3`).
 */
export const locationOf = (finding: DoctorFinding): string | undefined => {
  if (finding.line !== undefined && INDEX_LINE_CODES.has(finding.code)) return `${INDEX_FILE}:${finding.line}`
  if (finding.path === undefined) return undefined
  return finding.line === undefined ? finding.path : `${finding.path}:${finding.line}`
}

/** The counts a report starts with: errors, warnings, and each code's findings (errors' codes first). */
export interface DoctorSummary {
  readonly errors: number
  readonly warnings: number
  readonly byCode: ReadonlyArray<
    { readonly code: DoctorCode; readonly severity: "error" | "warning"; readonly count: number }
  >
}

export const summarize = (findings: ReadonlyArray<DoctorFinding>): DoctorSummary => {
  const byCode = new Map<string, { code: DoctorCode; severity: "error" | "warning"; count: number }>()
  for (const f of findings) {
    const key = `${f.severity}\u0000${f.code}`
    const group = byCode.get(key)
    if (group === undefined) byCode.set(key, { code: f.code, severity: f.severity, count: 1 })
    else group.count++
  }
  const groups = [...byCode.values()]
  return {
    errors: findings.filter((f) => f.severity === "error").length,
    warnings: findings.filter((f) => f.severity === "warning").length,
    byCode: [...groups.filter((g) => g.severity === "error"), ...groups.filter((g) => g.severity === "warning")]
  }
}

/**
 * What `fix` does to the index's own lines, pure: a dead line or a second line for the same file dropped, an
 * over-long line shortened (a link out of the directory is the user's to move or drop: kept). `seen`: the files
 * the kept lines point at.
 */
const repairIndexLines = (
  text: string,
  dead: ReadonlySet<string>,
  outside: ReadonlySet<string>,
  selected: (change: DoctorChange) => boolean = () => true
) => {
  const changes: Array<DoctorChange> = []
  const seen = new Set<string>()
  const kept = text.split("\n").flatMap((raw, i): Array<string> => {
    const entry = parseIndexLine(raw)
    const file = entry === undefined ? undefined : normalizeIndexLink(entry.file)
    if (entry === undefined || file === undefined || outside.has(entry.file)) return [raw]
    const line = i + 1
    if (dead.has(file)) {
      const change: DoctorChange = { code: "dead-link", action: "removed-line", path: entry.file, line, text: raw }
      if (!selected(change)) return [raw]
      changes.push(change)
      return []
    }
    if (seen.has(file)) {
      const change: DoctorChange = {
        code: "duplicate-entry",
        action: "removed-line",
        path: entry.file,
        line,
        text: raw
      }
      if (selected(change)) {
        changes.push(change)
        return []
      }
    }
    seen.add(file)
    const shorter = lineLength(raw) > INDEX_ENTRY_MAX_CHARS ? shortened(raw) : undefined
    if (shorter === undefined) return [raw]
    const change: DoctorChange = {
      code: "entry-too-long",
      action: "shortened-line",
      path: entry.file,
      line,
      text: shorter
    }
    if (!selected(change)) return [raw]
    changes.push(change)
    return [raw.endsWith("\r") ? `${shorter}\r` : shorter]
  })
  return { text: kept.join("\n"), changes, seen }
}

/** Why `fix` leaves a memory out of the index. */
const NO_ROOM = `${INDEX_FILE} would exceed its caps (${INDEX_MAX_LINES} lines / ${kb(INDEX_MAX_BYTES)})`

/**
 * The lines `fix` adds to `text` (the index after `repairIndexLines`) for the memories it does not list, pure: newest
 * written first (when the index has room for only some, those a session most likely needs), each while the index
 * stays under its caps; the rest are not added. `diagnose` plans the same, so a `missing-from-index` finding is
 * fixable exactly when `fix` adds its line.
 */
const planMissingLines = (text: string, missing: ReadonlyArray<MemoryHeader>) => {
  let planned = text
  const added: Array<{ readonly memory: MemoryHeader; readonly line: string }> = []
  const notAdded: Array<MemoryHeader> = []
  let lines = countLines(planned)
  let bytes = utf8ByteLength(planned)
  for (const memory of sortNewestWrittenFirst(missing)) {
    const entry = { title: memory.name, file: memory.path, hook: memory.description }
    const line = formatIndexEntry(entry)
    // a line that cannot fit is not planned (thousands of memories may be missing): it adds a line and its bytes
    const next = lines >= INDEX_MAX_LINES || bytes + utf8ByteLength(line) + 1 > INDEX_MAX_BYTES ?
      undefined :
      upsertIndexText(planned, entry)
    if (next === undefined || !fitsIndexCaps(next.text)) {
      notAdded.push(memory)
      continue
    }
    planned = next.text
    lines = countLines(planned)
    bytes = utf8ByteLength(planned)
    added.push({ memory, line })
  }
  return { text: planned, added, notAdded }
}

/** The pure part of `diagnose`: findings from the index text, the scan, and which links are dead. */
export const findingsOf = (
  { dead, deadMemoryLinks, memories, outside, problems, text }: Inspection
): Array<DoctorFinding> => {
  const findings: Array<DoctorFinding> = linkAndPinFindings(memories, deadMemoryLinks ?? [])
  const lines = countLines(text)
  const bytes = utf8ByteLength(text)
  if (lines > INDEX_MAX_LINES) {
    findings.push({
      code: "index-over-lines",
      severity: "error",
      path: INDEX_FILE,
      line: INDEX_MAX_LINES + 1,
      message: `has ${lines} lines (limit: ${INDEX_MAX_LINES}); lines after ${INDEX_MAX_LINES} are never loaded`,
      fix: "Merge or drop entries: one line per memory, detail in the topic files (then run `memdir doctor --fix`)",
      fixable: false
    })
  }
  if (bytes > INDEX_MAX_BYTES) {
    const loadedLines = countLines(truncateIndex(text).kept)
    // Too long entries, or too many short ones: each has its own remedy.
    const long = text.split("\n").filter((raw) => lineLength(raw) > INDEX_ENTRY_MAX_CHARS).length
    findings.push({
      code: "index-over-bytes",
      severity: "error",
      path: INDEX_FILE,
      line: loadedLines + 1,
      message: `is ${kb(bytes)} (limit: ${kb(INDEX_MAX_BYTES)}) in ${lines} lines, ` +
        (long > 0 ?
          `${long} of them over ~${INDEX_ENTRY_MAX_CHARS} characters` :
          `every one under ~${INDEX_ENTRY_MAX_CHARS} characters: more entries than one index holds`) +
        `; everything after line ${loadedLines} is never loaded`,
      fix: long > 0 ?
        `Shorten the lines over ~${INDEX_ENTRY_MAX_CHARS} characters to a title and a short hook (\`memdir doctor ` +
        "--fix` shortens those it can); the detail belongs in the memory files" :
        "Fewer entries: merge memories that say the same thing and delete stale ones (`memdir dream` " +
        "consolidates them), one line per memory",
      fixable: false
    })
  }

  const firstLineOf = new Map<string, number>()
  text.split("\n").forEach((raw, i) => {
    const entry = parseIndexLine(raw)
    if (entry === undefined) return
    const line = i + 1
    if (outside.has(entry.file)) {
      findings.push({
        code: "link-outside",
        severity: "warning",
        path: entry.file,
        line,
        message: `links to ${entry.file}, outside the memory directory: memdir reads only files inside it, so ` +
          "recall, ls and the agents never see that file",
        fix: "Move the note into the memory directory as a memory file and link it by its relative name, or " +
          "drop the line",
        fixable: false
      })
      return
    }
    const file = normalizeIndexLink(entry.file)
    if (file !== undefined && dead.has(file)) {
      findings.push({
        code: "dead-link",
        severity: "warning",
        path: entry.file,
        line,
        message: `points at ${entry.file}, which does not exist`,
        fix: "Drop the line, or restore the file",
        fixable: true
      })
    } else if (file !== undefined && firstLineOf.has(file)) {
      findings.push({
        code: "duplicate-entry",
        severity: "warning",
        path: entry.file,
        line,
        message: `points at ${entry.file} again (first at line ${firstLineOf.get(file)})`,
        fix: "Keep one line per memory",
        fixable: true
      })
      return
    }
    if (file !== undefined && !firstLineOf.has(file)) firstLineOf.set(file, line)
    if (lineLength(raw) > INDEX_ENTRY_MAX_CHARS && !(file !== undefined && dead.has(file))) {
      findings.push({
        code: "entry-too-long",
        severity: "warning",
        path: entry.file,
        line,
        message: `the line of ${entry.file} is ${lineLength(raw)} characters (limit: ~${INDEX_ENTRY_MAX_CHARS})`,
        fix: "Shorten the hook: the index is a table of contents; the detail belongs in the memory file",
        fixable: shortened(raw) !== undefined
      })
    }
  })

  const prose = proseLines(text)
  if (memories.length === 0 && problems.length === 0 && firstLineOf.size === 0 && outside.size === 0 && prose > 0) {
    findings.push({
      code: "prose-index",
      severity: "warning",
      path: INDEX_FILE,
      message: `${lines} lines of notes without one index line, and no memory file is beside it: memdir ` +
        `expects ${INDEX_FILE} to be an index, one line per memory (\`- [Title](file.md) — hook\`), and each ` +
        `memory in its own file with a frontmatter (name, description, type), so \`memdir ls\` and recall find ` +
        `nothing here (only the prompt loads the prose, up to ${INDEX_MAX_LINES} lines)`,
      fix: "Split the prose into one memory file per topic (`memdir write --type project --name … --description " +
        "… --body …` writes the file and its index line), then keep in MEMORY.md only the index lines",
      fixable: false
    })
  }

  for (const memory of memories) {
    const prefix = typePrefix(memory.path)
    if (prefix !== undefined && memory.type !== "untyped" && prefix !== memory.type) {
      const base = memory.path.split("/").pop()!
      const renamed = `${memory.type}${base.slice(prefix.length)}`
      findings.push({
        code: "type-prefix-mismatch",
        severity: "warning",
        path: memory.path,
        message: `named as a ${prefix} memory but its frontmatter says type: ${memory.type}; ` +
          `recall and the index go by the frontmatter, a reader by the name`,
        fix: `Rename it to ${renamed} (and its ${INDEX_FILE} line), or set \`type: ${prefix}\` if the name is right`,
        fixable: false
      })
    }
  }

  // Missing lines in the order `fix` adds them, to the index as `fix` leaves it: those it adds first, then the rest.
  const repaired = repairIndexLines(text, dead, outside)
  const plan = planMissingLines(repaired.text, memories.filter((m) => !repaired.seen.has(indexKeyOf(m.path))))
  const missing = (memory: MemoryHeader, fix: string, fixable: boolean): DoctorFinding => ({
    code: "missing-from-index",
    severity: "warning",
    path: memory.path,
    message: `${memory.name} has no line in ${INDEX_FILE}, so sessions never see it`,
    fix,
    fixable
  })
  for (const { line, memory } of plan.added) findings.push(missing(memory, `Add \`${line}\``, true))
  for (const memory of plan.notAdded) {
    findings.push(missing(
      memory,
      `${INDEX_FILE} has no room for its line (${INDEX_MAX_LINES} lines / ${kb(INDEX_MAX_BYTES)}): merge or ` +
        "delete memories that say the same thing (`memdir dream` consolidates them), then add it",
      false
    ))
  }

  for (const problem of problems) {
    if (problem.code === "symlink-escape") {
      findings.push({
        code: "link-outside",
        severity: "error",
        path: problem.path,
        message: problemDetail(problem),
        fix: "Replace the symlink by the file itself: memdir never follows a link out of the memory directory",
        fixable: false
      })
      continue
    }
    if (problem.code === "unreadable") {
      findings.push({
        code: "unreadable",
        severity: "error",
        path: problem.path,
        message: problemDetail(problem),
        fix: "Make it readable by the user memdir runs as (its permissions), or remove it; until then recall " +
          "skips it",
        fixable: false
      })
      continue
    }
    findings.push({
      code: "invalid-frontmatter",
      severity: "error",
      path: problem.path,
      line: problem.line,
      message: problemDetail(problem),
      fix: `${FRONTMATTER_FIXES[problem.code] ?? FRONTMATTER_FIX}; until then recall skips this file`,
      fixable: false
    })
  }
  for (const memory of memories) {
    const warning = splitWrittenWarning(memory.warning)
    if (warning.header !== undefined) {
      findings.push({
        code: "invalid-frontmatter",
        severity: "warning",
        path: memory.path,
        message: warning.header,
        fix: "Give the memory a name, a one-line description and a type (user | feedback | project | reference)",
        fixable: false
      })
    }
    const script = unreadScriptOf(`${memory.name}\n${memory.description}\n${memory.bodyHead ?? ""}`)
    if (script !== undefined) {
      findings.push({
        code: "unread-language",
        severity: "warning",
        path: memory.path,
        message: `written in ${script}, which the offline selector has no word lists for: its common ` +
          "words count as rare ones, so recall finds it, or fails to, by chance matches",
        fix: "Give it a name and description in a language the offline selector reads (English, German, Spanish, " +
          "French, Portuguese, Italian, Dutch, Russian, Ukrainian, Polish, Turkish, Swedish, Indonesian, " +
          "Vietnamese, Chinese, Japanese, Korean), or use the model selector (it needs a key), which reads any",
        fixable: false
      })
    }
    if (warning.modified !== undefined) {
      findings.push({
        code: "modified-ignored",
        severity: "warning",
        path: memory.path,
        message: warning.modified,
        fix: "Set `modified:` to when the memory was written, an ISO 8601 time not in the future (e.g. " +
          "2026-03-05T12:00:00Z), or delete the line: the next `memdir write` of the memory stamps it",
        fixable: false
      })
    }
  }

  const byName = new Map<string, Array<MemoryHeader>>()
  for (const memory of memories) {
    const key = `${memory.type}\u0000${memory.name.trim().toLowerCase()}`
    byName.set(key, [...(byName.get(key) ?? []), memory])
  }
  for (const group of byName.values()) {
    if (group.length < 2) continue
    const paths = group.map((m) => m.path).sort()
    findings.push({
      code: "duplicate-name",
      severity: "warning",
      path: paths[0],
      message: `${group.length} ${group[0]!.type} memories are named "${group[0]!.name}": ${paths.join(", ")}`,
      fix: "Merge them into one file and delete the others (a new write updates the first one)",
      fixable: false
    })
  }
  return findings
}

/**
 * A memory's text, read as memdir reads a memory: a link is followed only to where it leads, and only a file inside
 * the memory directory's real path is opened, without following a link or waiting on a FIFO, and read up to
 * `MEMORY_READ_MAX_BYTES`. `None` when it cannot be read so: the scan reports such files (a link out, not a
 * regular file), and a file swapped since the scan is left alone.
 */
const readMemoryText = (memoryFs: MemoryFs["Service"], realMemoryDir: string, absolutePath: string) =>
  memoryFs.realPath(absolutePath).pipe(
    Effect.flatMap((real) => memoryFs.readFile(real, { maxBytes: MEMORY_READ_MAX_BYTES, within: realMemoryDir })),
    Effect.map((file) => file.text),
    Effect.option
  )

/**
 * The real path of what `path` leads to, every link followed, or `None` when nothing is there or a link leads
 * nowhere (what `access` calls missing).
 */
const realPathIfPresent = (memoryFs: MemoryFs["Service"], path: string) =>
  memoryFs.realPath(path).pipe(
    Effect.map(Option.some),
    Effect.catchIf(isMissingFile, () => Effect.succeedNone),
    Effect.mapError(ioErrorOf("realpath", path))
  )

const inspect = (memoryDir: string, text: string) =>
  Effect.gen(function*() {
    const scanner = yield* Scanner
    const memoryFs = yield* MemoryFs
    const path = yield* Path.Path
    const scan = yield* scanner.scan(memoryDir, { skipDirs: SKIP_DIRS })
    const outside = new Set<string>()
    /** Each normalised local link, with the forms the index writes it in. */
    const links = new Map<string, Array<string>>()
    for (const raw of text.split("\n")) {
      const entry = parseIndexLine(raw)
      const file = entry === undefined ? undefined : normalizeIndexLink(entry.file)
      if (entry === undefined || file === undefined || file.length === 0) continue
      const target = linkTarget(entry.file)
      // normalizeIndexLink drops a leading `/`; an absolute or home-relative link names a file elsewhere
      if (path.isAbsolute(target) || target.startsWith("~") || file === ".." || file.startsWith("../")) {
        outside.add(entry.file)
      } else {
        links.set(file, [...(links.get(file) ?? []), entry.file])
      }
    }
    const dead = new Set<string>()
    let realRoot: string | undefined
    for (const [file, forms] of links) {
      const absolute = path.resolve(memoryDir, file)
      const real = yield* realPathIfPresent(memoryFs, absolute)
      if (Option.isNone(real)) {
        dead.add(file)
        continue
      }
      // a link inside the directory to a symlink that leads out of it: memdir does not follow it either
      realRoot ??= yield* memoryFs.realPath(memoryDir).pipe(Effect.mapError(ioErrorOf("realpath", memoryDir)))
      if (!isInside(realRoot, real.value, { allowRoot: true, sep: path.sep })) {
        for (const form of forms) outside.add(form)
      }
    }
    // `[[links]]`: the index's and every memory's (read whole, as memdir reads a memory).
    const resolve = linkResolver(scan.memories)
    const deadMemoryLinks = deadLinksOf(INDEX_FILE, text, resolve)
    // a memory directory that cannot be resolved now has no memory that can be read inside it
    const realMemoryDir = scan.memories.length === 0 ? undefined : yield* Effect.option(memoryFs.realPath(memoryDir))
    if (realMemoryDir?._tag === "Some") {
      for (const memory of scan.memories) {
        const body = yield* readMemoryText(memoryFs, realMemoryDir.value, memory.absolutePath)
        if (body._tag === "Some") deadMemoryLinks.push(...deadLinksOf(memory.path, body.value, resolve))
      }
    }
    const inspection: Inspection = {
      text,
      memories: scan.memories,
      problems: scan.problems,
      dead,
      outside,
      deadMemoryLinks
    }
    return inspection
  })

/**
 * Team memories two people edited at once (docs/team-memory.md): team sync keeps theirs beside ours as
 * `x.conflict-<sha>.md` until someone merges the two.
 */
const teamConflicts = (memoryDir: string) =>
  Effect.gen(function*() {
    const scanner = yield* Scanner
    const path = yield* Path.Path
    const scan = yield* scanner.scan(path.join(memoryDir, "team"))
    const paths = [...scan.memories.map((m) => m.path), ...scan.problems.map((p) => p.path)].sort()
    return paths.flatMap((relative): Array<DoctorFinding> => {
      const original = conflictOriginal(relative)
      if (original === undefined) return []
      return [{
        code: "team-conflict",
        severity: "warning",
        path: `team/${relative}`,
        // where it is (`path`) is not repeated: "team/x.conflict-1a2b3c4d.md: a teammate's version of team/x.md"
        message: `a teammate's version of team/${original}: both were edited at once and team sync kept both`,
        fix: `Merge the two into team/${original}, delete team/${relative}, then run \`memdir team sync\``,
        fixable: false
      }]
    })
  })

/** Everything doctor finds in `memoryDir`. Reads only. */
export const diagnose = Effect.fn("Doctor.diagnose")(function*(memoryDir: string) {
  const index = yield* MemoryIndex
  const current = yield* index.read(memoryDir)
  const findings = [...findingsOf(yield* inspect(memoryDir, current.text)), ...(yield* teamConflicts(memoryDir))]
  const report: DoctorReport = { memoryDir, findings }
  return report
})

/**
 * Copy the MEMORY.md about to be rewritten to `.doctor/<stamp>/MEMORY.md` (0600, in a 0700 directory; a new
 * stamp when a fix of the same second has one). Runs under the index lock, before the rewrite.
 */
const backUp = (memoryDir: string, text: string) =>
  Effect.gen(function*() {
    const memoryFs = yield* MemoryFs
    const path = yield* Path.Path
    const now = yield* Clock.currentTimeMillis
    let stamp = stampOf(now)
    for (let n = 2;; n++) {
      const candidate = path.join(memoryDir, DOCTOR_BACKUP_DIR, stamp)
      const taken = yield* memoryFs.exists(candidate).pipe(Effect.mapError(ioErrorOf("stat", candidate)))
      if (!taken) break
      stamp = `${stampOf(now)}-${n}`
    }
    const relative = `${DOCTOR_BACKUP_DIR}/${stamp}/${INDEX_FILE}`
    const absolute = path.join(memoryDir, relative)
    yield* memoryFs.makeDirectory(path.dirname(absolute)).pipe(
      Effect.mapError(ioErrorOf("mkdir", path.dirname(absolute)))
    )
    // never over an existing file: the complete copy appears at once, or nothing does
    yield* memoryFs.writeFileAtomic(absolute, text, { exclusive: true }).pipe(
      Effect.mapError(ioErrorOf("write", absolute))
    )
    return relative
  })

export interface DoctorFixOptions {
  /**
   * Only the repairs of the findings this accepts (given as the change it would make: its code, path and line of
   * MEMORY.md), e.g. one finding a person chose; the others are left as they are. Default: every safe repair.
   */
  readonly only?: ((change: Pick<DoctorChange, "code" | "path" | "line">) => boolean) | undefined
}

/** Apply the safe repairs to MEMORY.md; returns what changed, what could not be added, and what remains. */
export const fix = Effect.fn("Doctor.fix")(function*(memoryDir: string, options: DoctorFixOptions = {}) {
  const only = options.only ?? (() => true)
  const index = yield* MemoryIndex
  const memoryFs = yield* MemoryFs
  // a memory directory behind a link is followed, as everywhere; one that leads nowhere has nothing to fix
  if (Option.isNone(yield* realPathIfPresent(memoryFs, memoryDir))) {
    const nothing: DoctorFixResult = { changes: [], notAdded: [], remaining: [] }
    return nothing
  }

  const repaired = yield* index.modify(memoryDir, (current) =>
    Effect.gen(function*() {
      const { dead, memories, outside } = yield* inspect(memoryDir, current.text)
      const repaired = repairIndexLines(current.text, dead, outside, only)
      const plan = planMissingLines(
        repaired.text,
        memories.filter((m) =>
          !repaired.seen.has(indexKeyOf(m.path)) && only({ code: "missing-from-index", path: m.path })
        )
      )
      const text = plan.text
      const changes: Array<DoctorChange> = [
        ...repaired.changes,
        ...plan.added.map(({ line, memory }): DoctorChange => ({
          code: "missing-from-index",
          action: "added-line",
          path: memory.path,
          text: line
        }))
      ]
      const notAdded = plan.notAdded.map((memory) => ({ path: memory.path, reason: NO_ROOM }))
      const backup = text !== current.text && current.exists ? yield* backUp(memoryDir, current.text) : undefined
      return { text, result: { changes, notAdded, ...(backup === undefined ? {} : { backup }) } }
    }))

  const after = yield* diagnose(memoryDir)
  const result: DoctorFixResult = { ...repaired, remaining: after.findings }
  return result
})

export type DoctorError = LockTimeoutError | MemoryIoError
