import { assert, describe, it } from "@effect/vitest"
import { INDEX_ENTRY_MAX_CHARS } from "@memdir/core/Memory"
import { type LoadedIndex, truncateIndex } from "@memdir/core/MemoryIndex"
import { fitMemoryPrompt, fitSessionContext } from "../src/hooks/HookHandlers.js"
import { CONTEXT_MAX_CHARS } from "../src/hooks/HookInput.js"
import { cutNote, fitIndex, type IndexLineFacts, NO_FACTS } from "../src/hooks/IndexBudget.js"

const MEMORY_DIR = "/home/maya/.memdir/projects/-home-maya-code-ledgerly/memory/"

const loaded = (text: string, path = `${MEMORY_DIR}MEMORY.md`): LoadedIndex => {
  const t = truncateIndex(text)
  return {
    path,
    exists: true,
    content: t.content,
    lines: t.lines,
    bytes: t.bytes,
    truncatedByLines: t.truncatedByLines,
    truncatedByBytes: t.truncatedByBytes,
    warning: t.warning,
    entries: []
  }
}

const TYPES = ["user", "feedback", "project", "reference"] as const

/** A realistic index line of exactly `width` characters: `- [Title](type_topic_i.md) — hook…`. */
const line = (i: number, width = INDEX_ENTRY_MAX_CHARS, fill = "a") => {
  const long = `- [Topic ${i} decision](${fileOf(i)}) — why topic ${i} matters, how to apply it: `
  const head = long.length <= width ? long : `- [T${i}](${fileOf(i)}) — `
  return head + fill.repeat(Math.max(0, width - head.length))
}
const fileOf = (i: number) => `${TYPES[i % 4]}_topic_${i}.md`
const indexOf = (n: number, width?: number, fill?: string) =>
  Array.from({ length: n }, (_, i) => line(i, width, fill)).join("\n") + "\n"

/** Written times in a shuffled order (memory i written at `order[i]`), some pinned. */
const facts = (written: (i: number) => number, pinned: ReadonlyArray<number> = []): IndexLineFacts => ({
  writtenAt: (file) => {
    const i = Number(/_topic_(\d+)\.md$/.exec(file)?.[1])
    return Number.isNaN(i) ? undefined : written(i)
  },
  pinned: (file) => pinned.some((i) => fileOf(i) === file)
})

const shownLines = (text: string) => [...text.matchAll(/_topic_(\d+)\.md/g)].map((m) => Number(m[1]))

describe("fitIndex", () => {
  it("an index that fits is returned whole, nothing said", () => {
    const index = loaded(indexOf(10))
    const fitted = fitIndex(index, 10_000, NO_FACTS, "MEMORY.md", CONTEXT_MAX_CHARS)
    assert.strictEqual(fitted.content, index.content)
    assert.deepStrictEqual([fitted.shown, fitted.total, fitted.fits], [10, 10, true])
  })

  it("an oversized index keeps the pinned lines, then the newest, in the index's order, and states the cut", () => {
    // memory i written at (i * 37) % 100: newest are not at the top nor at the end
    const at = (i: number) => (i * 37) % 100
    const index = loaded(indexOf(100))
    const fitted = fitIndex(index, 3_000, facts(at, [5, 80]), "MEMORY.md", CONTEXT_MAX_CHARS)
    assert.isAtMost(fitted.content.length, 3_000)
    const shown = shownLines(fitted.content)
    assert.strictEqual(shown.length, fitted.shown)
    assert.isAbove(shown.length, 10)
    // in the index's order
    assert.deepStrictEqual(shown, [...shown].sort((a, b) => a - b))
    // the pinned ones (both old), then exactly the newest others
    assert.includeMembers(shown, [5, 80])
    const others = Array.from({ length: 100 }, (_, i) => i).filter((i) => i !== 5 && i !== 80)
    const newest = others.sort((a, b) => at(b) - at(a)).slice(0, shown.length - 2)
    assert.sameMembers(shown, [5, 80, ...newest])
    // one more line would not fit; never a line cut in the middle
    const lines = fitted.content.trimEnd().split("\n")
    for (const l of lines.slice(0, -2)) assert.include(index.content, l + "\n")
    assert.isAbove(fitted.content.length + INDEX_ENTRY_MAX_CHARS + 1, 3_000)
    assert.strictEqual(lines.at(-1), cutNote(fitted.shown, 100, "MEMORY.md", index.path, CONTEXT_MAX_CHARS))
    assert.match(lines.at(-1)!, /^\[memdir: MEMORY\.md cut to fit this 10,000-character context: \d+ of 100 lines/)
    assert.include(lines.at(-1)!, "`memdir ls` lists every memory")
  })

  it("keeps a kept line's headings, and the caps' warning after the cut line", () => {
    const text = "## Preferences\n\n" + indexOf(3) + "\n## Projects\n\n" +
      Array.from({ length: 250 }, (_, i) => line(i + 3)).join("\n") + "\n"
    const index = loaded(text)
    assert.isDefined(index.warning)
    const fitted = fitIndex(index, 2_000, facts((i) => i), "MEMORY.md", CONTEXT_MAX_CHARS)
    assert.isAtMost(fitted.content.length, 2_000)
    assert.notInclude(fitted.content, "## Preferences")
    assert.include(fitted.content, "## Projects\n")
    assert.isTrue(fitted.content.trimEnd().endsWith(`> ${index.warning}`))
    // only what the caps load is considered (here 25 KB): the newest of those lines are kept
    const loadedLines = shownLines(index.content)
    assert.isBelow(loadedLines.length, 200)
    assert.include(fitted.content, `_topic_${Math.max(...loadedLines)}.md`)
  })

  it("never goes over its budget, whatever the sizes", () => {
    for (const n of [1, 7, 50, 186, 200]) {
      for (const budget of [0, 160, 400, 1_000, 5_000, 9_999]) {
        const fitted = fitIndex(loaded(indexOf(n)), budget, facts((i) => -i), "MEMORY.md", CONTEXT_MAX_CHARS)
        if (fitted.fits) assert.isAtMost(fitted.content.length, budget, `${n} lines in ${budget}`)
      }
    }
  })
})

describe("fitSessionContext: the SessionStart context", () => {
  it("a 200-line index of short lines fits whole with the compact rules (with the whole rules it would not)", () => {
    // 200 lines of 39 characters: the longest that fit whole beside the compact rules (40 do not)
    const index = loaded(indexOf(200, 39))
    assert.include(fitSessionContext({ memoryDir: MEMORY_DIR, index: loaded(indexOf(200, 40)) }), "cut to fit")
    const text = fitSessionContext({ memoryDir: MEMORY_DIR, index })
    assert.isAtMost(text.length, CONTEXT_MAX_CHARS)
    assert.notInclude(text, "cut to fit")
    assert.strictEqual(shownLines(text).length, 200)
    assert.include(fitMemoryPrompt({ memoryDir: MEMORY_DIR, index }), "lines of MEMORY.md are left out")
  })

  it("a 200-line index of realistic 150-character lines: 49 newest lines fit, against 21 with the whole rules", () => {
    const index = loaded(indexOf(200))
    const text = fitSessionContext({ memoryDir: MEMORY_DIR, index }, { private: facts((i) => i) })
    assert.isAtMost(text.length, CONTEXT_MAX_CHARS)
    const shown = shownLines(text)
    assert.strictEqual(shown.length, 49)
    // the index is over its 25 KB cap (150 characters, 152 bytes a line): of the 163 lines loaded, the newest
    assert.deepStrictEqual(shown, Array.from({ length: 49 }, (_, i) => 163 - 49 + i))
    assert.include(text, "[memdir: MEMORY.md cut to fit this 10,000-character context: 49 of 163 lines shown")
    // before: the whole rules and lines from the top
    const before = fitMemoryPrompt({ memoryDir: MEMORY_DIR, index })
    assert.strictEqual(shownLines(before).length, 21)
  })

  it("stays under the limit with a team index, and the team index gets what the private one leaves", () => {
    for (const [own, team] of [[5, 200], [200, 5], [200, 200], [0, 200], [186, 0]] as const) {
      const text = fitSessionContext({
        memoryDir: MEMORY_DIR,
        index: loaded(indexOf(own)),
        team: { teamDir: `${MEMORY_DIR}team/`, index: loaded(indexOf(team), `${MEMORY_DIR}team/MEMORY.md`) }
      }, { private: facts((i) => i), team: facts((i) => i) })
      assert.isAtMost(text.length, CONTEXT_MAX_CHARS, `${own} + ${team}`)
      if (own === 5) assert.match(text, /team\/MEMORY\.md cut to fit this 10,000-character context: \d+ of \d+ lines/)
      if (own === 5) assert.strictEqual(shownLines(text.slice(0, text.indexOf("## Team memory"))).length, 5)
    }
  })

  it("counts characters as Claude Code does: UTF-16 code units (string length), not UTF-8 bytes", () => {
    // "é" is 1 code unit and 2 bytes; "🙂" is 2 code units and 4 bytes
    const accented = loaded(indexOf(60, 120, "é"))
    const whole = fitSessionContext({ memoryDir: MEMORY_DIR, index: accented })
    assert.notInclude(whole, "cut to fit")
    assert.isAbove(Buffer.byteLength(whole, "utf8"), CONTEXT_MAX_CHARS)
    assert.isAtMost(whole.length, CONTEXT_MAX_CHARS)
    const emoji = loaded(indexOf(120, 120, "🙂"))
    const cut = fitSessionContext({ memoryDir: MEMORY_DIR, index: emoji }, { private: facts((i) => i) })
    assert.include(cut, "cut to fit")
    assert.isAtMost(cut.length, CONTEXT_MAX_CHARS)
    // whole lines only: no surrogate half, every kept line is a line of the index
    assert.notMatch(cut, /[\uD800-\uDBFF](?![\uDC00-\uDFFF])/)
    for (const i of shownLines(cut)) assert.include(cut, line(i, 120, "🙂") + "\n")
  })

  it("an empty index says so, with the compact rules", () => {
    const text = fitSessionContext({ memoryDir: MEMORY_DIR, index: loaded("") })
    assert.include(text, "MEMORY.md is empty")
    assert.include(text, "`memdir prompt` prints them whole")
    assert.isBelow(text.length, 2_200)
  })
})
