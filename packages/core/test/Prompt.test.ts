import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { exitCodes } from "../src/Errors.js"
import type { LoadedIndex } from "../src/MemoryIndex.js"
import { truncateIndex } from "../src/MemoryIndex.js"
import { buildMemoryPrompt, COMPACT_VARIANTS, promptSections, renderMemoryPrompt, sectionIds } from "../src/Prompt.js"
import type { SectionId } from "../src/Prompt.js"

const MEMORY_DIR = "/home/maya/.memdir/projects/-home-maya-code-ledgerly/memory/"

const loaded = (text: string, exists = true): LoadedIndex => {
  const t = truncateIndex(text)
  return {
    path: `${MEMORY_DIR}MEMORY.md`,
    exists,
    content: t.content,
    lines: t.lines,
    bytes: t.bytes,
    truncatedByLines: t.truncatedByLines,
    truncatedByBytes: t.truncatedByBytes,
    warning: t.warning,
    entries: []
  }
}

const INDEX = "- [Testing policy](feedback_testing.md) — integration tests hit a real DB\n"

const render = (variants?: Partial<Record<SectionId, string>>, index: LoadedIndex = loaded(INDEX)) =>
  Result.getOrThrow(renderMemoryPrompt({ memoryDir: MEMORY_DIR, index, variants }))

const HEADINGS = [
  "# Memory",
  "## Types of memory",
  "## What not to save",
  "## How to save a memory",
  "## Before recommending from memory",
  "## MEMORY.md"
]

describe("buildMemoryPrompt", () => {
  it.effect("has every section by default, in order, with no unfilled slot", () =>
    Effect.gen(function*() {
      const prompt = yield* buildMemoryPrompt({ memoryDir: MEMORY_DIR, index: loaded(INDEX) })
      const positions = HEADINGS.map((h) => prompt.indexOf(`${h}\n`))
      for (const [i, h] of HEADINGS.entries()) assert.isAtLeast(positions[i]!, 0, h)
      assert.deepStrictEqual([...positions].sort((a, b) => a - b), positions)
      assert.notInclude(prompt, "{{")
      assert.strictEqual(prompt, render())
    }))

  it("names the memory directory, says it exists and not to ls/mkdir it, and names the index path", () => {
    const prompt = render()
    assert.include(prompt, `\`${MEMORY_DIR}\``)
    assert.include(prompt, "already exists")
    assert.include(prompt, "Do not `ls` it, `mkdir` it")
    assert.include(prompt, `\`${MEMORY_DIR}MEMORY.md\``)
    // A directory given without its trailing separator still yields a correct index path.
    const bare = Result.getOrThrow(renderMemoryPrompt({ memoryDir: "/m/memory", index: loaded(INDEX) }))
    assert.include(bare, "`/m/memory/MEMORY.md`")
  })

  it("teaches the four types with an example each, feedback as corrections and confirmations", () => {
    const types = sectionText(render(), "## Types of memory")
    for (const type of ["user", "feedback", "project", "reference"]) {
      assert.include(types, `- **${type}** —`)
      assert.include(types, `Example \`${type}_`)
    }
    assert.include(types, "**and** confirmations")
    assert.include(types, "**Why:**")
    assert.include(types, "**How to apply:**")
    assert.include(types, "absolute dates")
  })

  it("lists what not to save, the push-back rule, and remember / forget / ignore memory", () => {
    const exclusions = sectionText(render(), "## What not to save")
    for (const excluded of ["code patterns", "git history", "debugging", "CLAUDE.md", "work in progress"]) {
      assert.include(exclusions, excluded)
    }
    assert.include(exclusions, "even when the user asks")
    assert.include(exclusions, "\"remember this PR list\"")
    assert.include(exclusions, "Ask what was surprising or non-obvious")
    assert.include(exclusions, "\"remember …\": save it now")
    assert.include(exclusions, "\"forget …\": delete")
    assert.include(exclusions, "act as if MEMORY.md were empty")
  })

  it("gives the two-step protocol with the frontmatter, the ≤150-char index line, and update-not-duplicate", () => {
    const protocol = sectionText(render(), "## How to save a memory")
    assert.include(protocol, "two steps")
    assert.include(protocol, "1. Write the memory to its own file")
    assert.include(protocol, "---\n   name: Testing policy\n   description:")
    assert.include(protocol, "2. Add one line for it")
    assert.include(protocol, "under 150 characters")
    assert.include(protocol, "instead of creating a duplicate")
  })

  it("tells the model to verify file:line and function claims before recommending", () => {
    const trust = sectionText(render(), "## Before recommending from memory")
    assert.include(trust, "`file:line`")
    assert.include(trust, "check that the file exists")
    assert.include(trust, "search the code for the function or flag")
  })

  it("swaps a variant by name, changing only what that variant changes", () => {
    const base = render()
    const passive = render({ "recall-trust": "trusting-what-you-recall" })
    assert.notInclude(passive, "## Before recommending from memory")
    assert.include(passive, "## Trusting what you recall\n")
    // Same body: only the heading differs.
    assert.strictEqual(passive.replace("## Trusting what you recall", "## Before recommending from memory"), base)
    // Naming the default explicitly changes nothing.
    assert.strictEqual(render({ "recall-trust": "before-recommending", types: "default" }), base)

    const noPushBack = render({ exclusions: "without-push-back" })
    assert.notInclude(noPushBack, "Ask what was surprising")
    assert.strictEqual(sectionText(noPushBack, "## Types of memory"), sectionText(base, "## Types of memory"))
    assert.notInclude(render({ types: "corrections-only" }), "confirmations")
  })

  it("renders every variant of every section without an unfilled slot", () => {
    for (const section of promptSections) {
      assert.include(Object.keys(section.variants), section.default)
      for (const variant of Object.keys(section.variants)) {
        assert.notInclude(render({ [section.id]: variant }), "{{", `${section.id}/${variant}`)
      }
    }
    assert.deepStrictEqual(promptSections.map((s) => s.id), [...sectionIds])
  })

  it.effect("fails with UnknownPromptVariantError for an unknown variant or section", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        buildMemoryPrompt({ memoryDir: MEMORY_DIR, index: loaded(INDEX), variants: { "recall-trust": "nope" } })
      )
      assert.strictEqual(error._tag, "UnknownPromptVariantError")
      assert.strictEqual(error.section, "recall-trust")
      assert.strictEqual(error.variant, "nope")
      assert.deepStrictEqual(error.known, ["before-recommending", "trusting-what-you-recall", "compact"])
      assert.include(error.message, "trusting-what-you-recall")
      assert.strictEqual(exitCodes[error._tag], 12)

      const inherited = yield* Effect.flip(
        buildMemoryPrompt({ memoryDir: MEMORY_DIR, index: loaded(INDEX), variants: { types: "toString" } })
      )
      assert.strictEqual(inherited.variant, "toString")

      const unknownSection = yield* Effect.flip(buildMemoryPrompt({
        memoryDir: MEMORY_DIR,
        index: loaded(INDEX),
        variants: { typo: "default" } as Partial<Record<SectionId, string>>
      }))
      assert.strictEqual(unknownSection.section, "typo")
      assert.deepStrictEqual(unknownSection.known, [])
    }))

  it("puts the loaded index in verbatim, with its cap warning when truncated", () => {
    const long = Array.from({ length: 250 }, (_, i) => `- [M${i}](project_m${i}.md) — memory ${i}`).join("\n") + "\n"
    const index = sectionText(render(undefined, loaded(long)), "## MEMORY.md")
    assert.include(index, "- [M199](project_m199.md)")
    assert.notInclude(index, "- [M200](project_m200.md)")
    assert.include(index, "250 lines (limit: 200)")
    // User text is not a template: slots and replacement patterns in it stay as they are.
    const tricky = "- [A](a.md) — uses {{memoryDir}} and $& and $1\n"
    assert.include(render(undefined, loaded(tricky)), tricky)
  })

  it("says the index is empty when MEMORY.md is missing or blank", () => {
    for (const index of [loaded("", false), loaded("\n\n", true)]) {
      const section = sectionText(render(undefined, index), "## MEMORY.md")
      assert.include(section, "MEMORY.md is empty: no memories have been saved")
    }
  })
})

/** The text of one section: from its heading to the next heading of level 1 or 2. */
const sectionText = (prompt: string, heading: string): string => {
  const start = prompt.indexOf(`${heading}\n`)
  assert.isAtLeast(start, 0, heading)
  const rest = prompt.slice(start + heading.length)
  const end = rest.search(/\n#{1,2} /)
  return heading + (end < 0 ? rest : rest.slice(0, end))
}

describe("the compact rules (COMPACT_VARIANTS, for the SessionStart hook)", () => {
  it("say the essentials in under 2,000 characters, a third of the whole rules, and name `memdir prompt`", () => {
    // the rules alone: the index is one character
    const whole = render(undefined, loaded("X\n")).length - 1
    const compact = render(COMPACT_VARIANTS, loaded("X\n"))
    assert.isAbove(whole, 6_000)
    assert.isAtMost(compact.length - 1, 2_000)
    for (const type of ["**user**", "**feedback**", "**project**", "**reference**"]) assert.include(compact, type)
    for (
      const essential of ["## Before recommending from memory", "memory_write", "`memdir write`", "`memdir prompt`"]
    ) {
      assert.include(compact, essential)
    }
    assert.include(compact, `${MEMORY_DIR}MEMORY.md`)
    // the index is the same section, whole
    assert.include(render(COMPACT_VARIANTS), INDEX.trim())
  })
})
