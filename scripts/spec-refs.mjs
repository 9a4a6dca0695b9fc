#!/usr/bin/env node
// Source comments used to cite "SPEC §N", a design document that is not in this repository, and README
// sections that have since moved into docs/. This rewrites those mentions, in comments of the repository's .ts
// files only (never in strings or code), into the docs page that states the rule.
//
//   node scripts/spec-refs.mjs            rewrite in place, print what changed
//   node scripts/spec-refs.mjs --check    change nothing; exit 1 if any "SPEC §" (or a moved README section)
//                                         is still cited in a comment, listing each as file:line
//   node scripts/spec-refs.mjs --dry-run  print what would change, write nothing
//
// Files: `git ls-files "*.ts"` (so never node_modules, dist/ or build/); pass paths to limit it.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")

/** SPEC section → the docs page (and anchor) that states it. Sections are the headings of the former SPEC. */
export const SPEC_SECTIONS = {
  "0": "README.md", // principles: plain files, observations, retrieval is the smart part
  "1": "docs/configuration.md", // where memory lives (MemoryPaths, GitRoot, Settings), trust, the enable chain
  "2": "docs/file-format.md", // a memory file
  "3": "docs/file-format.md", // the four-type taxonomy
  "4": "docs/file-format.md", // the write path: file + index line, atomic, no lost lines
  "5": "docs/file-format.md", // MEMORY.md and its caps
  "6": "docs/architecture.md#how-a-recall-flows", // the recall path
  "6.1": "docs/architecture.md#how-a-recall-flows", // scan: first 30 lines, newest first, 200 candidates
  "6.2": "docs/architecture.md#how-a-recall-flows", // the manifest
  "6.3": "docs/architecture.md#how-a-recall-flows", // select (offline BM25F or the model)
  "6.4": "docs/architecture.md#how-a-recall-flows", // dedupe, per-file and per-session caps
  "6.5": "docs/library.md", // async prefetch
  "6.6": "docs/architecture.md#how-a-recall-flows", // telemetry
  "7": "docs/file-format.md#age-and-staleness", // staleness
  "8": "docs/team-memory.md", // team memory and TeamGuard
  "9": "docs/dream-and-logs.md#daily-logs", // daily logs
  "10": "docs/dream-and-logs.md", // consolidation (dream)
  "11": "docs/extraction.md", // background extraction
  "12": "docs/evals.md", // evals
  "13": "README.md" // known user demands on the reference
}

/** README sections that moved into docs/, as comments cited them: `README "Exit codes"`. */
export const README_SECTIONS = {
  "exit codes": "docs/cli.md#exit-codes",
  "the command line": "docs/cli.md",
  "configuration": "docs/configuration.md",
  "configuration and trust": "docs/configuration.md",
  "models: what needs a key": "docs/configuration.md#models-what-needs-a-key",
  "team memory": "docs/team-memory.md",
  "threat model": "docs/team-memory.md#threat-model",
  "evals": "docs/evals.md",
  "background extraction": "docs/extraction.md",
  "the file format": "docs/file-format.md",
  "benchmarks": "docs/benchmarks.md",
  "library quick start": "docs/library.md",
  "test layers": "docs/library.md#test-layers"
}

const SECTION = String.raw`§\s?(\d+(?:\.\d+)?)(?:\s+step\s+(\d+))?`
/** `SPEC §3, §4 and §12`, `SPEC §6 step 3`, `SPEC §10: …` — one citation, possibly of several sections. */
const SPEC_CITATION = new RegExp(String.raw`(\bof\s+)?SPEC\s+${SECTION}((?:\s*(?:,|and|&)\s*${SECTION})*)`, "g")
const SECTION_ONE = new RegExp(SECTION, "g")
const README_CITATION = /(\bof\s+)?README\s+(?:"([^"\n]+)"|“([^”\n]+)”)/g

/**
 * The comment ranges of TypeScript source: `//…` and `/* … *\/`, skipping strings, template literals (with
 * nested `${}`) and regular expression literals, so a `//` inside "https://…" is not a comment.
 */
export const commentRanges = (source) => {
  const ranges = []
  const templateDepth = [] // brace depth at which each open template literal's `${` started
  let braces = 0
  let lastSignificant = "" // the last non-blank character of code, to tell a regex from a division
  let i = 0
  const regexCanStart = () => lastSignificant === "" || "(,=:[!&|?{};+-*%<>~^".includes(lastSignificant)
  while (i < source.length) {
    const c = source[i]
    const next = source[i + 1]
    if (c === "/" && next === "/") {
      const end = source.indexOf("\n", i)
      ranges.push([i, end === -1 ? source.length : end])
      i = end === -1 ? source.length : end
      continue
    }
    if (c === "/" && next === "*") {
      const end = source.indexOf("*/", i + 2)
      const stop = end === -1 ? source.length : end + 2
      ranges.push([i, stop])
      i = stop
      continue
    }
    if (c === "\"" || c === "'") {
      i++
      while (i < source.length && source[i] !== c && source[i] !== "\n") i += source[i] === "\\" ? 2 : 1
      i++
      lastSignificant = c
      continue
    }
    if (c === "`" || (c === "}" && templateDepth.length > 0 && templateDepth.at(-1) === braces)) {
      if (c === "}") templateDepth.pop()
      i++
      while (i < source.length && source[i] !== "`") {
        if (source[i] === "\\") {
          i += 2
          continue
        }
        if (source[i] === "$" && source[i + 1] === "{") {
          templateDepth.push(braces)
          i += 2
          break
        }
        i++
      }
      if (source[i] === "`") i++
      lastSignificant = "`"
      continue
    }
    if (c === "/" && regexCanStart()) {
      i++
      let inClass = false
      while (i < source.length && source[i] !== "\n") {
        if (source[i] === "\\") {
          i += 2
          continue
        }
        if (source[i] === "[") inClass = true
        else if (source[i] === "]") inClass = false
        else if (source[i] === "/" && !inClass) break
        i++
      }
      i++
      while (/[a-z]/i.test(source[i] ?? "")) i++
      lastSignificant = "/"
      continue
    }
    if (c === "{") braces++
    if (c === "}") braces--
    if (!/\s/.test(c)) {
      // keywords after which a regex may start (`return /x/`) end in a letter: treat them as operators
      const word = /[A-Za-z_$][\w$]*$/.exec(source.slice(Math.max(0, i - 10), i + 1))?.[0]
      lastSignificant = word !== undefined && ["return", "typeof", "case", "do", "else", "in", "of"].includes(word) &&
          !/[\w$]/.test(source[i + 1] ?? "")
        ? "("
        : c
    }
    i++
  }
  return ranges
}

const lineOf = (source, index) => source.slice(0, index).split("\n").length

/** The docs targets of one SPEC citation, deduplicated, in order; `undefined` for an unknown section. */
const targetsOf = (citation) => {
  const targets = []
  for (const match of citation.matchAll(SECTION_ONE)) {
    const section = match[2] === undefined ? match[1] : `${match[1]}.${match[2]}`
    const target = SPEC_SECTIONS[section] ?? SPEC_SECTIONS[section.split(".")[0]]
    if (target === undefined) return undefined
    if (!targets.includes(target)) targets.push(target)
  }
  return targets
}

/** Rewrites the citations inside one comment; returns the new text and what it could not map. */
export const rewriteComment = (comment) => {
  const unknown = []
  const rewritten = comment
    .replace(SPEC_CITATION, (citation, of) => {
      const targets = targetsOf(citation)
      if (targets === undefined) {
        unknown.push(citation)
        return citation
      }
      return `${of === undefined ? "" : "in "}${targets.join(", ")}`
    })
    .replace(README_CITATION, (citation, of, straight, curly) => {
      const target = README_SECTIONS[(straight ?? curly).trim().toLowerCase()]
      if (target === undefined) {
        unknown.push(citation)
        return citation
      }
      return `${of === undefined ? "" : "in "}${target}`
    })
  return { rewritten, unknown }
}

/** Every citation left in a file's comments, with its line; and the file rewritten. */
export const processSource = (source) => {
  const changes = []
  const remaining = []
  let out = ""
  let at = 0
  for (const [start, end] of commentRanges(source)) {
    const comment = source.slice(start, end)
    const { rewritten, unknown } = rewriteComment(comment)
    out += source.slice(at, start) + rewritten
    at = end
    if (rewritten !== comment) changes.push({ line: lineOf(source, start), before: comment, after: rewritten })
    for (const citation of unknown) remaining.push({ line: lineOf(source, start), citation, reason: "unmapped" })
    for (const match of comment.matchAll(/SPEC\s+§[^\s,;:)]*|README\s+"[^"\n]+"/g)) {
      remaining.push({ line: lineOf(source, start + match.index), citation: match[0], reason: "cited" })
    }
  }
  out += source.slice(at)
  return { output: changes.length === 0 ? out : wrapLongLines(source, out), changes, remaining }
}

export const MAX_COLUMNS = 120

/** A comment line's prefix: `  * `, `  // `, or the continuation prefix of a line that opens `/** text`. */
const commentPrefix = (line) => {
  const star = /^(\s*)\* /.exec(line)
  if (star !== null) return { first: star[0], rest: star[0] }
  const slashes = /^(\s*)\/\/ /.exec(line)
  if (slashes !== null) return { first: slashes[0], rest: slashes[0] }
  const opener = /^(\s*)\/\*\* (?!.*\*\/\s*$)/.exec(line)
  if (opener !== null) return { first: opener[0], rest: `${opener[1]} * ` }
  return undefined
}

/** Lines the rewrite pushed past 120 columns: the overflow moves into the rest of the comment's paragraph. */
const wrapLongLines = (before, after) => {
  const original = before.split("\n")
  const lines = after.split("\n")
  // the rewrite keeps line breaks, so line i of both is the same line; only changed lines are wrapped
  const dirty = lines.map((line, i) => line !== original[i])
  const insert = (at, ...added) => {
    lines.splice(at, 0, ...added)
    dirty.splice(at, 0, ...added.map(() => true))
  }
  for (let i = 0; i < lines.length; i++) {
    if (!dirty[i] || lines[i].length <= MAX_COLUMNS) continue
    const single = /^(\s*)\/\*\* (.*) \*\/$/.exec(lines[i])
    if (single !== null) {
      // `/** long text */` becomes a block whose text line is wrapped next
      lines[i] = `${single[1]}/**`
      insert(i + 1, `${single[1]} * ${single[2]}`, `${single[1]} */`)
      continue
    }
    const prefix = commentPrefix(lines[i])
    if (prefix === undefined) continue
    const cut = lines[i].lastIndexOf(" ", MAX_COLUMNS)
    if (cut <= prefix.first.length) continue
    const tail = lines[i].slice(cut + 1)
    lines[i] = lines[i].slice(0, cut)
    const next = lines[i + 1]
    const nextContent = next !== undefined && next.startsWith(prefix.rest) ? next.slice(prefix.rest.length) : ""
    if (nextContent !== "" && !/^(?:[-*@`>|#]|\d+\.\s|\*\/)/.test(nextContent.trimStart())) {
      // the overflow joins the next line of the same paragraph (which is wrapped in turn if now too long)
      lines[i + 1] = `${prefix.rest}${tail} ${nextContent}`
      dirty[i + 1] = true
    } else {
      insert(i + 1, `${prefix.rest}${tail}`)
    }
  }
  return lines.join("\n")
}

const main = () => {
  const args = process.argv.slice(2)
  const check = args.includes("--check")
  const dryRun = args.includes("--dry-run")
  const only = args.filter((a) => !a.startsWith("--"))
  const files = only.length > 0 ? only : execFileSync("git", ["ls-files", "-z", "--", "*.ts"], {
    cwd: repoRoot,
    encoding: "utf8"
  }).split("\0").filter((f) => f !== "" && fs.existsSync(path.join(repoRoot, f)))

  let cited = 0
  let rewritten = 0
  let unmapped = 0
  for (const file of files) {
    const absolute = path.resolve(repoRoot, file)
    const source = fs.readFileSync(absolute, "utf8")
    const { output, changes, remaining } = processSource(source)
    if (check) {
      for (const r of remaining.filter((r) => r.reason === "cited")) console.log(`${file}:${r.line}: ${r.citation}`)
      cited += remaining.filter((r) => r.reason === "cited").length
      continue
    }
    for (const r of remaining.filter((r) => r.reason === "unmapped")) {
      console.error(`${file}:${r.line}: no docs page for ${JSON.stringify(r.citation)}: add it to the table`)
      unmapped++
    }
    for (const c of changes) {
      console.log(`${file}:${c.line}: ${c.before.trim().split("\n").length} comment line(s) rewritten`)
      rewritten++
    }
    if (!dryRun && output !== source) fs.writeFileSync(absolute, output)
  }
  if (check) {
    if (cited > 0) {
      console.error(`${cited} citation(s) of SPEC or of moved README sections left: run node scripts/spec-refs.mjs`)
      process.exit(1)
    }
    console.log(`no SPEC citation left in ${files.length} files`)
    return
  }
  console.log(`${rewritten} comment(s) ${dryRun ? "would be " : ""}rewritten in ${files.length} files`)
  if (unmapped > 0) process.exit(1)
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main()
