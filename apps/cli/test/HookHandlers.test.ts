import { assert, describe, it } from "@effect/vitest"
import type { LoadedIndex } from "@memdir/core/MemoryIndex"
import type { RecalledMemory } from "@memdir/core/Recall"
import { fitMemoryPrompt, fitRecall } from "../src/hooks/HookHandlers.js"
import { CONTEXT_MAX_CHARS } from "../src/hooks/HookInput.js"

const index = (path: string, lines: number, width = 90): LoadedIndex => {
  const content = Array.from({ length: lines }, (_, i) => `- [Topic ${i}](t_${i}.md) — ${"w".repeat(width)}`).join("\n")
  return {
    path,
    exists: true,
    content: lines === 0 ? "" : content + "\n",
    lines,
    bytes: content.length,
    truncatedByLines: false,
    truncatedByBytes: false,
    entries: []
  }
}

const memory = (i: number, bodyChars: number): RecalledMemory => ({
  path: `feedback_${i}.md`,
  absolutePath: `/m/feedback_${i}.md`,
  scope: "private",
  name: `Memory ${i}`,
  type: "feedback",
  description: `what memory ${i} is about`,
  mtime: 0,
  writtenAt: 0,
  ageDays: 0,
  age: "today",
  caveat: null,
  content: "b".repeat(bodyChars),
  truncated: false
})

describe("fitMemoryPrompt", () => {
  it("a small index is the whole prompt, untouched", () => {
    const text = fitMemoryPrompt({ memoryDir: "/m/", index: index("/m/MEMORY.md", 3) })
    assert.include(text, "- [Topic 2](t_2.md)")
    assert.notInclude(text, "left out")
  })

  it("a large index is cut from the end, with the count and how to read it, under the cap", () => {
    const text = fitMemoryPrompt({ memoryDir: "/m/", index: index("/m/MEMORY.md", 200) })
    assert.isAtMost(text.length, CONTEXT_MAX_CHARS)
    const left = /\[memdir: (\d+) of 200 lines of MEMORY\.md are left out/.exec(text)
    assert.isNotNull(left)
    const shown = 200 - Number(left![1])
    assert.include(text, `- [Topic ${shown - 1}](t_${shown - 1}.md)`)
    assert.notInclude(text, `- [Topic ${shown}](t_${shown}.md)`)
    assert.include(text, "`memdir show MEMORY.md` or your file tool: /m/MEMORY.md")
    // as many lines as fit: one more would not
    assert.isAbove(text.length, CONTEXT_MAX_CHARS - 200)
  })

  it("with team memory, the team index is cut too once the private one is gone", () => {
    const text = fitMemoryPrompt({
      memoryDir: "/m/",
      index: index("/m/MEMORY.md", 100),
      team: { teamDir: "/m/team/", index: index("/m/team/MEMORY.md", 100) }
    })
    assert.isAtMost(text.length, CONTEXT_MAX_CHARS)
    assert.include(text, "100 of 100 lines of MEMORY.md are left out")
    assert.match(text, /\d+ of 100 lines of team\/MEMORY\.md are left out .*`memdir show team\/MEMORY\.md`/)
  })

  it("a cap below the prompt's own text cuts it, naming memdir prompt", () => {
    const text = fitMemoryPrompt({ memoryDir: "/m/", index: index("/m/MEMORY.md", 10) }, 2_000)
    assert.isAtMost(text.length, 2_000)
    assert.include(text, "`memdir prompt`")
  })
})

describe("fitRecall", () => {
  it("shows what fits and names the rest with their files", () => {
    const memories = [0, 1, 2, 3, 4].map((i) => memory(i, 4_000))
    const { shown, text } = fitRecall(memories)
    assert.isAtMost(text.length, CONTEXT_MAX_CHARS)
    assert.deepStrictEqual(shown.map((m) => m.path), ["feedback_0.md", "feedback_1.md"])
    assert.include(text, "Memory feedback_0.md (feedback, saved today): Memory 0")
    for (const i of [2, 3, 4]) {
      assert.include(text, `- feedback_${i}.md (feedback): what memory ${i} is about — /m/feedback_${i}.md`)
    }
  })

  it("small memories are all shown", () => {
    const { shown, text } = fitRecall([memory(0, 100), memory(1, 100)])
    assert.strictEqual(shown.length, 2)
    assert.notInclude(text, "Also relevant")
  })
})
