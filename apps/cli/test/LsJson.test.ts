/**
 * `memdir ls --json` writes each memory's JSON by hand (no object, no pretty printer per memory): the document must
 * be byte for byte what `JSON.stringify(document, null, 2)` prints, for hostile strings too.
 */
import { assert, describe, it } from "@effect/vitest"
import { listingJson, memoryJson, type Shown, type ShownAge } from "../src/commands/ls.js"

/** The entry `ls` documented before it wrote the JSON itself (docs/cli.md). */
const entryObject = (m: Shown, age: ShownAge) => ({
  path: m.path,
  scope: m.path === "team" || m.path.startsWith("team/") ? "team" : "private",
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

const hostile = [
  "plain",
  "quote \" backslash \\ slash /",
  "new\nline\r\ttab",
  "\u0000\u001f\u007f control",
  "\u2028\u2029 separators",
  "lone \ud800 surrogate \udfff",
  "emoji 🧠 and accents é",
  "<script>&amp;</script>",
  ""
]

const memories: ReadonlyArray<readonly [Shown, ShownAge]> = hostile.flatMap((text, i) => [
  [{ path: `feedback_${i}.md`, name: text, description: text, type: "feedback", mtime: 1_700_000_000_000 + i }, {
    ageDays: i,
    age: `${i} days ago`
  }],
  [{
    path: `team/${text}.md`,
    name: "n",
    description: "d",
    type: "untyped",
    mtime: 1_600_000_000_123,
    writtenAt: 1_500_000_000_456,
    writtenFrom: "modified",
    warning: text
  }, { ageDays: 0, age: "today" }],
  [{
    path: `p${i}.md`,
    name: "n",
    description: text,
    type: "user",
    mtime: 1_600_000_000_000,
    writtenAt: 1_600_000_000_000,
    writtenFrom: "commit"
  }, { ageDays: 12_345, age: "12345 days ago" }]
])

describe("ls --json", () => {
  it("each memory is what the pretty printer writes at depth 2", () => {
    for (const [m, age] of memories) {
      assert.strictEqual(memoryJson(m, age), JSON.stringify(entryObject(m, age), null, 2).replace(/\n/g, "\n    "))
    }
  })

  it("the whole document is JSON.stringify(document, null, 2), empty arrays too", () => {
    const problems = [{ path: "broken\n.md", code: "missing-frontmatter", message: "no \"---\"", line: 1 }]
    const document = {
      memoryDir: "/tmp/a \"dir\"\n",
      memories: memories.map(([m, age]) => entryObject(m, age)),
      problems
    }
    const rendered = memories.map(([m, age]) => memoryJson(m, age))
    const written = [
      ...listingJson(document.memoryDir, { count: rendered.length, render: (i) => rendered[i]! }, problems)
    ]
    assert.strictEqual(written.join("\n"), JSON.stringify(document, null, 2))
    const empty = [...listingJson("/m", { count: 0, render: () => "" }, [])].join("\n")
    assert.strictEqual(empty, JSON.stringify({ memoryDir: "/m", memories: [], problems: [] }, null, 2))
  })

  it("a listing over several chunks (a memory at each chunk's edge), and several problems, is still that document", () => {
    for (const count of [199, 200, 201, 450]) {
      const many = Array.from({ length: count }, (_, i) => memories[i % memories.length]!)
      const problems = [
        { path: "a.md", code: "missing-frontmatter", message: "no frontmatter", line: 1 },
        { path: "b\u2028.md", code: "invalid-yaml", message: "bad \"yaml\"" }
      ]
      const document = { memoryDir: "/m", memories: many.map(([m, age]) => entryObject(m, age)), problems }
      const rendered = many.map(([m, age]) => memoryJson(m, age))
      const chunks = [...listingJson("/m", { count, render: (i) => rendered[i]! }, problems)]
      assert.strictEqual(chunks.join("\n"), JSON.stringify(document, null, 2), String(count))
      // the memories come a chunk at a time, never all in one string
      assert.isAbove(chunks.length, 3 + Math.floor((count - 1) / 200), String(count))
    }
  })
})
