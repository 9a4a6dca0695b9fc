/**
 * The scanner's simple header reader (`internal/scanSimple.ts`, over bytes, its text through the scan's text
 * arena) against the general one (`readBlock`: the flat fast path, else YAML with repairs): on every block the
 * simple reader accepts, both give the same header, on generated blocks and on every header of the test fixtures;
 * and it does accept ordinary memory headers.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as fc from "effect/FastCheck"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { makeTextArena } from "../src/internal/scanArena.js"
import { type ParsedFrontmatter, readBlock } from "../src/internal/scanFrontmatter.js"
import { locateHead, parseLocatedHead } from "../src/internal/scanHead.js"
import { buildSimpleHeader, findSimpleHeader } from "../src/internal/scanSimple.js"

const fixtures = NodePath.join(NodePath.dirname(fileURLToPath(import.meta.url)), "fixtures")

/** Every Markdown file under the test fixtures. */
const fixtureFiles = (): Array<string> => {
  const files: Array<string> = []
  const visit = (dir: string) => {
    for (const entry of NodeFs.readdirSync(dir, { withFileTypes: true })) {
      const path = NodePath.join(dir, entry.name)
      if (entry.isDirectory()) visit(path)
      else if (entry.name.endsWith(".md")) files.push(path)
    }
  }
  visit(fixtures)
  return files
}

/** Each fixture whose head is a block between clean fences: its bytes and where the block is. */
const fixtureBlocks = () =>
  fixtureFiles().flatMap((file) => {
    const bytes = NodeFs.readFileSync(file)
    const location = locateHead(bytes, bytes.length, true)
    return location._tag === "Block" ? [{ file, bytes, location }] : []
  })

/** What the scanner's simple reader makes of the block `bytes[start, end)`, its text through a text arena. */
const readSimple = (
  bytes: Buffer,
  endLine: number,
  start = 0,
  end = bytes.length
): ParsedFrontmatter | undefined => {
  const parts: Array<number> = []
  if (!findSimpleHeader(bytes, start, end, parts)) return undefined
  const arena = makeTextArena()
  // Put elsewhere than at 0 in the arena, as the scanner's batches do.
  arena.add(Buffer.from("ü-padding"), 0, 10)
  const at = arena.add(bytes, 0, bytes.length)
  arena.seal()
  return buildSimpleHeader(parts, 0, (s, e) => arena.text(at + s, at + e), endLine)
}

/** The same header from both readers, when the simple one accepts `block`; whether it did. */
const agrees = (block: string | Buffer, endLine = 5, start?: number, end?: number): boolean => {
  const bytes = typeof block === "string" ? Buffer.from(block, "utf8") : block
  const simple = readSimple(bytes, endLine, start, end)
  if (simple === undefined) return false
  const text = bytes.toString("utf8", start, end)
  const general = readBlock(text, endLine, "memory.md")
  if (Either.isLeft(general)) {
    assert.fail(`the general reader rejected ${JSON.stringify(text)}: ${general.left.message}`)
  }
  assert.deepStrictEqual(simple, general.right, JSON.stringify(text))
  return true
}

/** Pieces of values: plain words, and everything YAML (or `trim`) could read differently. */
const pieces = [
  "word",
  "Ünï",
  "日本",
  "😀",
  "a,b",
  "(x)",
  "it's",
  "C#",
  "x:y",
  "1.2.3",
  "a-b",
  "http://x.y/z",
  " ",
  "  ",
  ": ",
  ":",
  " #",
  "#",
  "-",
  "- ",
  "?",
  "'",
  "\"",
  "[",
  "{",
  "}",
  "&a",
  "*a",
  "!tag",
  "|",
  ">",
  "%",
  "@",
  "`",
  "~",
  "+1",
  ".5",
  "0x1F",
  "2026-03-05",
  "12:30",
  "1e3",
  ".inf",
  "null",
  "Null",
  "TRUE",
  "false",
  "yes",
  "\t",
  "\r",
  "\u0085",
  "\u00A0",
  "\u2028",
  "\u3000",
  "\uFEFF",
  "\uFFFE",
  "\uD800",
  "\uDC00",
  "\u0007",
  "\u007F",
  "\\",
  "=",
  "<<",
  "---",
  "..."
]
const value = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.array(fc.constantFrom("word", "Ünï", "日本", "a-b", "x:y", "it's"), { minLength: 1, maxLength: 5 })
      .map((w) => w.join(" "))
  },
  { weight: 3, arbitrary: fc.array(fc.constantFrom(...pieces), { minLength: 0, maxLength: 6 }).map((p) => p.join("")) },
  { weight: 1, arbitrary: fc.string({ maxLength: 8 }) }
)
const key = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom("name", "description", "type") },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      "originSessionId",
      "modified",
      "metadata",
      "tags",
      "__proto__",
      "constructor",
      "true",
      "Null",
      "a b",
      "x-y",
      "_",
      "Type",
      "NAME"
    )
  },
  { weight: 1, arbitrary: fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_-]{0,8}$/) }
)
const typeValue = fc.constantFrom("user", "feedback", "project", "reference", "User", "FEEDBACK", "other", "user ")
const line = fc.oneof(
  { weight: 8, arbitrary: fc.tuple(key, fc.constantFrom(": ", ":  ", ":", ": "), value).map(([k, c, v]) => k + c + v) },
  { weight: 3, arbitrary: typeValue.map((t) => `type: ${t}`) },
  { weight: 1, arbitrary: fc.constantFrom("", " ", "  nested: x", "- item", "# comment", "key: \"quoted\"") }
)
/** Mostly the three keys a header needs (in any order, each value plain or tricky), then other lines. */
const block = fc.tuple(
  fc.oneof(
    {
      weight: 3,
      arbitrary: fc.tuple(value, value, typeValue).map(([n, d, t]) => [`name: ${n}`, `description: ${d}`, `type: ${t}`])
    },
    { weight: 1, arbitrary: fc.constant([]) }
  ),
  fc.array(line, { minLength: 0, maxLength: 4 })
).chain(([needed, others]) => fc.shuffledSubarray([...needed, ...others], { minLength: needed.length + others.length }))
  .map((lines) => lines.join("\n"))
const wordsValue = fc.array(fc.constantFrom("word", "Ünï", "日本", "a-b", "x:y", "it's", "(x)", "C#"), {
  minLength: 1,
  maxLength: 6
}).map((w) => w.join(" "))

describe("the simple header reader", () => {
  it.prop("gives what the general reader gives, on any block it accepts", { block }, ({ block }) => {
    agrees(block)
  }, { fastCheck: { numRuns: Number(process.env.MEMDIR_PROPERTY_RUNS ?? 5000) } })

  it("accepts a fair share of the generated blocks, so the property above is not vacuous", () => {
    const accepted = fc.sample(block, { numRuns: 5000, seed: 7 }).filter((b) => agrees(b)).length
    assert.isAbove(accepted, 100)
  })

  it.prop(
    "accepts ordinary memory headers",
    {
      name: wordsValue,
      description: wordsValue,
      type: typeValue.filter((t) => t.trim() === t && t !== "other"),
      session: fc.boolean()
    },
    ({ description, name, session, type }) => {
      const block = `name: ${name}\ndescription: ${description}\ntype: ${type}` +
        (session ? "\noriginSessionId: 6a6ab3b9-90e0-4c1d" : "")
      assert.isTrue(agrees(block), JSON.stringify(block))
    },
    { fastCheck: { numRuns: 500 } }
  )

  it("gives what the general reader gives on every header of the fixtures", () => {
    let blocks = 0
    let accepted = 0
    for (const { bytes, location } of fixtureBlocks()) {
      blocks++
      if (agrees(bytes, location.endLine, location.start, location.end)) accepted++
    }
    // Measured: 200 headers between clean fences, most of them simple (the reference agent's nested `metadata:`
    // and quoted descriptions are not).
    assert.isAbove(blocks, 150)
    assert.isAbove(accepted, 50)
  })

  it("parseLocatedHead (the listings' reader) gives the general reader's header or error on every fixture head", () => {
    let blocks = 0
    for (const { bytes, file, location } of fixtureBlocks()) {
      blocks++
      const general = readBlock(bytes.toString("utf8", location.start, location.end), location.endLine, file)
      assert.deepStrictEqual(parseLocatedHead(bytes, location, file), general, file)
    }
    assert.isAbove(blocks, 150)
  })

  it("leaves what it does not handle to the general reader", () => {
    const rejected = [
      "name: a\ndescription: b",
      "name: a\ndescription: b\ntype: other",
      "name: a\ndescription: b\ntype: user\ntype: user",
      "name: a\ndescription: \"quoted\"\ntype: user",
      "name: a\ndescription: b: c\ntype: user",
      "name: a\ndescription: b #c\ntype: user",
      "name: a\ndescription: b\ntype: user\nmodified: 2026-03-05",
      "name: a\ndescription: b\ntype: user\n",
      "name: a\n\ndescription: b\ntype: user",
      "name: a\ndescription: b\ntype: user\nmetadata:\n  type: user",
      "name: a\ndescription: b\ntype: user\n__proto__: x",
      "name: true\ndescription: b\ntype: user",
      "name: a \ndescription: b\ntype: user",
      "name: a\tb\ndescription: b\ntype: user"
    ]
    for (const block of rejected) assert.isUndefined(readSimple(Buffer.from(block), 5), JSON.stringify(block))
    assert.deepStrictEqual(readSimple(Buffer.from("name: a\ndescription: b c\ntype: User\ntags: x"), 6), {
      name: "a",
      description: "b c",
      type: "user",
      extra: { tags: "x" },
      warning: undefined,
      endLine: 6
    })
  })
})
