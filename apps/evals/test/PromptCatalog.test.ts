/**
 * The evals vary core's prompt catalog itself: every section a suite may name is the catalog's section object, a
 * built-in variant is found with the catalog's lookup, and a suite's own text is rendered by core with the slots the
 * program fills (an unknown slot is refused when the suite is loaded).
 */
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it, layer } from "@effect/vitest"
import { type LoadedIndex, truncateIndex } from "@memdir/core/MemoryIndex"
import { renderMemoryPrompt } from "@memdir/core/Prompt"
import { lookupVariant, promptCatalog, variantNames } from "@memdir/core/prompts/index"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Path from "effect/Path"
import * as Result from "effect/Result"
import { harnessCatalog } from "../src/Harness.js"
import { loadSuite } from "../src/Suite.js"
import { renderMemoryPromptWith, resolveVariant } from "../src/Variants.js"

const loaded = (text: string): LoadedIndex => {
  const t = truncateIndex(text)
  return {
    path: "/mem/MEMORY.md",
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

describe("the evals' sections are core's prompt catalog", () => {
  it("every harness section is the catalog's own section object; the team, empty-index and log ones have none", () => {
    for (const [id, source] of Object.entries(harnessCatalog)) {
      assert.strictEqual(source.section, promptCatalog.find((s) => s.id === id), id)
    }
    assert.deepStrictEqual(Object.keys(harnessCatalog).sort(), [
      "dream",
      "exclusions",
      "extraction",
      "index",
      "intro",
      "protocol",
      "recall-trust",
      "selector",
      "types"
    ])
    assert.strictEqual(harnessCatalog["dream"]!.builtinOnly, true)
    assert.strictEqual(harnessCatalog["extraction"]!.builtinOnly, true)
    assert.strictEqual(harnessCatalog["selector"]!.builtinOnly, false)
  })

  it("a built-in variant resolves to the catalog lookup's template; an unknown one lists the same known names", () => {
    for (const [id, source] of Object.entries(harnessCatalog)) {
      for (const name of variantNames(source.section)) {
        assert.strictEqual(
          Result.getOrThrow(resolveVariant(source, { builtin: name })),
          Result.getOrThrow(lookupVariant(id, name))
        )
      }
      const unknown = resolveVariant(source, { builtin: "nope" })
      const fromCatalog = Result.getFailure(lookupVariant(id, "nope"))
      assert.isTrue(Result.isFailure(unknown) && fromCatalog._tag === "Some", id)
      if (Result.isFailure(unknown) && fromCatalog._tag === "Some") {
        assert.include(unknown.failure[0]!.message, `(known: ${fromCatalog.value.known.join(", ")})`)
      }
    }
  })

  it("a suite's own text is rendered by core with the memory prompt's slots, in the section's place", () => {
    const index = loaded("- [Pool](project_pool.md) — pool size\n")
    const text = "## Check first\n\nLook in `{{memoryDir}}` and {{indexFile}} before answering."
    const ours = Result.getOrThrow(
      renderMemoryPromptWith({ memoryDir: "/mem", index, templates: { "recall-trust": text } })
    )
    const core = Result.getOrThrow(renderMemoryPrompt({ memoryDir: "/mem", index }))
    assert.include(ours, "## Check first\n\nLook in `/mem/` and MEMORY.md before answering.")
    assert.notInclude(ours, "## Before recommending from memory")
    // everything else is core's rendering, unchanged
    const [before] = core.split("## Before recommending from memory")
    assert.isTrue(ours.startsWith(before!))
    assert.isTrue(ours.endsWith(core.slice(core.indexOf("## MEMORY.md"))))
  })

  it("a suite's own text with a slot its program does not fill is refused, naming the slots it may use", () => {
    const recallTrust = harnessCatalog["recall-trust"]!
    const text = resolveVariant(recallTrust, { text: "## Check\n\nToday is {{today}}; see {{memoryDir}}." })
    assert.isTrue(Result.isFailure(text))
    if (Result.isFailure(text)) {
      assert.deepStrictEqual(text.failure[0]!.path, ["text"])
      assert.include(text.failure[0]!.message, "unknown slot {{today}}")
      assert.include(text.failure[0]!.message, "{{memoryDir}}")
    }
    const patch = resolveVariant(recallTrust, { patch: { append: "Also {{teamDir}} and {{nope}}." } })
    assert.isTrue(Result.isFailure(patch))
    if (Result.isFailure(patch)) assert.include(patch.failure[0]!.message, "unknown slots {{teamDir}}, {{nope}}")
    const selector = resolveVariant(harnessCatalog["selector"]!, { text: "Pick for {{query}}." })
    assert.isTrue(Result.isFailure(selector))
    if (Result.isFailure(selector)) assert.include(selector.failure[0]!.message, "fills: none")
    // the slots it does fill are fine
    assert.isTrue(Result.isSuccess(resolveVariant(recallTrust, { patch: { append: "See {{indexPath}}." } })))
  })
})

layer(NodeServices.layer)("loading a suite", (it) => {
  it.effect("an unknown slot in a variant's text is a suite problem at its field", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const root = yield* fs.makeTempDirectoryScoped()
      yield* fs.makeDirectory(path.join(root, "slots"))
      yield* fs.writeFileString(
        path.join(root, "slots", "suite.yaml"),
        [
          "name: slots",
          "kind: agent",
          "description: A variant text with a slot nobody fills",
          "section: recall-trust",
          "variants:",
          "  - name: before",
          "    builtin: before-recommending",
          "  - name: dated",
          "    text: \"## Check\\n\\nToday is {{today}}.\"",
          "scorers:",
          "  - type: answer-matches",
          "    pattern: pool",
          "scenarios:",
          "  - id: one",
          "    task: Should I raise the pool size?",
          ""
        ].join("\n")
      )
      const error = yield* Effect.flip(loadSuite(root, "slots", harnessCatalog))
      assert.strictEqual(error._tag, "InvalidSuiteError")
      if (error._tag === "InvalidSuiteError") {
        const problem = error.problems.find((p) => p.path === "variants[1].text")
        assert.isDefined(problem, JSON.stringify(error.problems))
        assert.include(problem!.message, "unknown slot {{today}}")
      }
    }))
})
