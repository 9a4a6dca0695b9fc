import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as DailyLog from "../src/DailyLog.js"
import * as Dream from "../src/Dream.js"
import type { UnknownPromptVariantError } from "../src/Errors.js"
import * as Extract from "../src/Extract.js"
import type { LoadedIndex } from "../src/MemoryIndex.js"
import { truncateIndex } from "../src/MemoryIndex.js"
import * as ModelSelector from "../src/ModelSelector.js"
import * as Prompt from "../src/Prompt.js"
import {
  dreamSection,
  extractionSection,
  findSection,
  logsSection,
  lookup,
  lookupVariant,
  mcpInstructionsSection,
  memoryPromptSections,
  promptCatalog,
  type PromptProgram,
  type PromptSection,
  render,
  renderMcpInstructions,
  renderSection,
  selectorSection,
  templateSlots,
  variantNames
} from "../src/prompts/index.js"

const loaded = (text: string): LoadedIndex => {
  const t = truncateIndex(text)
  return {
    path: "/m/memory/MEMORY.md",
    exists: text.length > 0,
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
const NOW = Date.UTC(2026, 11, 3, 9, 30)

/**
 * Each program's own entry point, rendering one variant of one of its sections (or failing as the program does).
 * Typed by program: a section with a new program does not compile until its renderer is added here.
 */
const renderers: Record<
  PromptProgram,
  (section: PromptSection, variant: string) => Result.Result<string, UnknownPromptVariantError>
> = {
  "memory-prompt": (section, variant) => {
    // The empty-index notes are what the index slots say when the indexes are blank.
    const empty = section.id === "index-empty" || section.id === "team-index-empty"
    const index = loaded(empty ? "" : INDEX)
    // The pinned section is what the prompt adds when memories are pinned (it has one wording).
    const pinned = section.id === "pinned"
    return Prompt.renderMemoryPrompt({
      memoryDir: "/m/memory",
      index,
      team: { teamDir: "/m/memory/team", index },
      variants: empty || pinned ? {} : { [section.id]: variant },
      ...(pinned ?
        {
          pinned: [{
            path: "user_role.md",
            name: "Role",
            type: "user" as const,
            description: "d",
            ageDays: 0,
            age: "today",
            caveat: null,
            content: "Staff engineer.\n",
            truncated: false
          }]
        } :
        {})
    })
  },
  extraction: (_section, variant) =>
    Extract.renderExtractionPrompt(variant, { memoryDir: "/m/memory/", projectRoot: "/p", maxTurns: 4 }),
  selector: (_section, variant) => ModelSelector.selectorPrompt(variant),
  "daily-log": (_section, variant) => DailyLog.renderLogsPrompt({ memoryDir: "/m/memory", variant }),
  dream: (_section, variant) => Dream.renderDreamSystemPrompt({ memoryDir: "/m/memory", now: NOW, variant }),
  mcp: (_section, variant) => renderMcpInstructions(variant)
}

/** What a program renders for a section and variant, thrown on failure (the variants here all exist). */
const rendered = (section: PromptSection, variant: string): string =>
  Result.getOrThrow(renderers[section.program](section, variant))

describe("the prompt catalog", () => {
  it("has one entry per section id, each with its default among its variants", () => {
    const ids = promptCatalog.map((s) => s.id)
    assert.deepStrictEqual([...new Set(ids)], ids)
    for (const section of promptCatalog) {
      assert.isTrue(Object.hasOwn(section.variants, section.default), `${section.id}: default ${section.default}`)
      assert.strictEqual(variantNames(section)[0], section.default)
      assert.isAbove(section.title.length, 0)
    }
    // every program's sections are in it
    for (const id of [...Prompt.sectionIds, "extraction", "selector", "logs", "dream", "mcp-instructions"]) {
      assert.isDefined(findSection(id), id)
    }
  })

  it("declares exactly the slots its templates use", () => {
    for (const section of promptCatalog) {
      const used = new Set(Object.values(section.variants).flatMap(templateSlots))
      assert.deepStrictEqual([...used].sort(), [...section.slots].sort(), section.id)
    }
  })

  it("every variant of every section is rendered by its program with every slot filled", () => {
    for (const section of promptCatalog) {
      for (const variant of variantNames(section)) {
        const text = rendered(section, variant)
        assert.notMatch(text, /\{\{\w+\}\}/, `${section.id}/${variant}`)
        // the variant's fixed text is there: the program rendered this section, not another
        const template = section.variants[variant]!
        const longestFixed = template.split(/\{\{\w+\}\}/).sort((a, b) => b.length - a.length)[0]!
        assert.include(text, longestFixed, `${section.id}/${variant}`)
      }
    }
  })

  it("an unknown variant is UnknownPromptVariantError with the known list, from the catalog and each program", () => {
    for (const section of promptCatalog) {
      const fromCatalog = Result.getFailure(lookupVariant(section.id, "nope")).pipe((o) => o._tag === "Some" && o.value)
      assert.isTrue(fromCatalog !== false, section.id)
      if (fromCatalog === false) continue
      assert.strictEqual(fromCatalog._tag, "UnknownPromptVariantError")
      assert.strictEqual(fromCatalog.section, section.id)
      assert.strictEqual(fromCatalog.variant, "nope")
      assert.deepStrictEqual(fromCatalog.known, variantNames(section))
      assert.include(fromCatalog.message, `Known variants: ${variantNames(section).join(", ")}`)
      if (section.id === "index-empty" || section.id === "team-index-empty" || section.id === "pinned") continue
      // the program fails the same way, with the same list
      const fromProgram = renderers[section.program](section, "nope")
      assert.isTrue(Result.isFailure(fromProgram), section.id)
      if (Result.isFailure(fromProgram)) {
        assert.deepStrictEqual(
          {
            section: fromProgram.failure.section,
            variant: fromProgram.failure.variant,
            known: fromProgram.failure.known
          },
          { section: section.id, variant: "nope", known: [...variantNames(section)] }
        )
      }
    }
    const noSection = Result.getFailure(lookupVariant("no-such-section", "x"))
    assert.deepStrictEqual(noSection._tag === "Some" && [...noSection.value.known], [])
  })

  it.effect("the memory prompt's typed error for an unknown variant lists the section's variants", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        Prompt.buildMemoryPrompt({ memoryDir: "/m/", index: loaded(INDEX), variants: { exclusions: "nope" } })
      )
      assert.strictEqual(error._tag, "UnknownPromptVariantError")
      assert.deepStrictEqual(error.known, ["default", "without-push-back", "compact"])
    }))

  it("programs read their texts from the catalog's sections (one lookup, no copies)", () => {
    assert.deepStrictEqual(Prompt.promptSections, [...memoryPromptSections])
    assert.strictEqual(Extract.extractionPrompts, extractionSection.variants)
    assert.strictEqual(ModelSelector.selectorPromptVariants, selectorSection.variants)
    assert.strictEqual(DailyLog.logsPromptVariants, logsSection.variants)
    assert.strictEqual(dreamSection.variants, Dream.dreamPromptVariants)
    for (const section of promptCatalog) {
      for (const variant of variantNames(section)) {
        assert.strictEqual(Result.getOrThrow(lookupVariant(section.id, variant)), section.variants[variant])
        assert.strictEqual(Result.getOrThrow(lookup(section)), section.variants[section.default])
      }
    }
    // the selector's system prompt is the catalog's text itself (it has no slots)
    for (const variant of variantNames(selectorSection)) {
      assert.strictEqual(Result.getOrThrow(ModelSelector.selectorPrompt(variant)), selectorSection.variants[variant])
    }
    // the MCP server's instructions are the catalog's text itself (no slots)
    assert.strictEqual(Result.getOrThrow(renderMcpInstructions()), mcpInstructionsSection.variants.default)
    // the daily-log section is the catalog's render of its template, with the program's slot values
    assert.strictEqual(
      Result.getOrThrow(DailyLog.renderLogsPrompt({ memoryDir: "/m/memory" })),
      Result.getOrThrow(renderSection(logsSection, undefined, {
        memoryDir: "/m/memory/",
        logsPattern: DailyLog.LOG_PATH_PATTERN
      })) + "\n"
    )
  })
})

describe("render", () => {
  it("fills every slot in one pass: a value holding {{slot}} is inserted as it is", () => {
    assert.strictEqual(render("{{a}} and {{b}}", { a: "{{b}}", b: "B" }), "{{b}} and B")
  })

  it("leaves an unfilled or unknown slot visible, so the catalog test sees it", () => {
    assert.strictEqual(render("{{a}} {{missing}} {{toString}}", { a: "A" }), "A {{missing}} {{toString}}")
    assert.deepStrictEqual(templateSlots("{{a}} {{b}} {{a}}"), ["a", "b"])
  })

  it("the user's index text is never treated as a template", () => {
    const prompt = Result.getOrThrow(Prompt.renderMemoryPrompt({
      memoryDir: "/m/",
      index: loaded("- [X](x.md) — mentions {{memoryDir}} literally\n")
    }))
    assert.include(prompt, "mentions {{memoryDir}} literally")
  })
})
