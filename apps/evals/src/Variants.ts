/**
 * Prompt variants as a suite states them (a built-in variant, a whole text, or a patch of the default) turned
 * into the text a run uses, and the memory prompt rendered with one section replaced.
 *
 * The sections a suite may vary are core's prompt catalog (`@memdir/core/prompts/index`), each tagged with the harness
 * that runs it: a built-in variant is looked up with the catalog's own lookup, so a suite's variant is the text the
 * program sends.
 */
import type { LoadedIndex } from "@memdir/core/MemoryIndex"
import { promptSections, renderMemoryPrompt, type SectionId } from "@memdir/core/Prompt"
import {
  lookup,
  promptCatalog,
  type PromptProgram,
  type PromptSection,
  templateSlots,
  variantNames
} from "@memdir/core/prompts/index"
import * as Result from "effect/Result"
import type { PromptPatch, PromptVariant } from "./Suite.js"

/** The kinds of suite that vary a prompt section. */
export type HarnessKind = "agent" | "extraction" | "dream" | "selector"

/** A prompt section a suite may vary: the catalog's section and which kind of suite uses it. */
export interface SectionSource {
  readonly kind: HarnessKind
  /** The catalog's section (its default, variants and slots). */
  readonly section: PromptSection
  /** The program takes a variant name, not a text: suites may name built-in variants only. */
  readonly builtinOnly: boolean
  /** The slots the program fills: what a suite's own text may use. */
  readonly slots: ReadonlyArray<string>
}

export type SectionCatalog = Readonly<Record<string, SectionSource>>

/**
 * The memory prompt's sections the agent suites vary. Not the team section: it is rendered only with team memory
 * on, and the agent harness runs without it.
 */
const agentSections: ReadonlyArray<PromptSection> = promptSections.filter((s) => s.id !== "team")

/** The memory prompt fills one set of slots for all its sections: a suite's text for one may use any of them. */
const agentSlots = [...new Set(agentSections.flatMap((s) => s.slots))]

const harnessKinds: Partial<Record<PromptProgram, HarnessKind>> = {
  extraction: "extraction",
  dream: "dream",
  selector: "selector"
}

/** Extraction and dream take a variant name (their programs look the text up themselves). */
const builtinOnlyKinds: ReadonlyArray<HarnessKind> = ["extraction", "dream"]

const sourceOf = (section: PromptSection): SectionSource | undefined => {
  if (section.program === "memory-prompt") {
    return agentSections.includes(section) ?
      { kind: "agent", section, builtinOnly: false, slots: agentSlots } :
      undefined
  }
  const kind = harnessKinds[section.program]
  return kind === undefined ? undefined : {
    kind,
    section,
    builtinOnly: builtinOnlyKinds.includes(kind),
    slots: section.slots
  }
}

/** Every prompt section a suite may vary, by section id: the catalog's sections that have a harness. */
export const harnessCatalog: SectionCatalog = Object.fromEntries(
  promptCatalog.flatMap((section) => {
    const source = sourceOf(section)
    return source === undefined ? [] : [[section.id, source]]
  })
)

/** The memory prompt sections of the catalog: the agent suites vary them. */
export const memoryPromptSections: SectionCatalog = Object.fromEntries(
  Object.entries(harnessCatalog).filter(([, source]) => source.kind === "agent")
)

/** Built-in variant names, the default first. */
export const builtinNames = (source: SectionSource): ReadonlyArray<string> => variantNames(source.section)

/** A problem with a variant, at a field path relative to the variant. */
export interface VariantProblem {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

const HEADING = /^(#{1,6})[ \t]+.*$/m

/** Pure: apply a patch to a text; each `find` must occur (a patch that silently does nothing measures nothing). */
export const applyPatch = (
  base: string,
  patch: Omit<PromptPatch, "base">
): Result.Result<string, ReadonlyArray<VariantProblem>> => {
  const problems: Array<VariantProblem> = []
  let text = base
  if (patch.heading !== undefined) {
    if (HEADING.test(text)) {
      text = text.replace(HEADING, (_line, hashes: string) => `${hashes} ${patch.heading}`)
    } else {
      problems.push({ path: ["patch", "heading"], message: "the section has no Markdown heading to replace" })
    }
  }
  ;(patch.replace ?? []).forEach((edit, i) => {
    if (!text.includes(edit.find)) {
      problems.push({
        path: ["patch", "replace", i, "find"],
        message: `text not found in the section: ${JSON.stringify(edit.find.slice(0, 80))}`
      })
    } else {
      text = text.split(edit.find).join(edit.with)
    }
  })
  if (patch.prepend !== undefined) text = `${patch.prepend.trimEnd()}\n\n${text}`
  if (patch.append !== undefined) text = `${text.trimEnd()}\n\n${patch.append.trimEnd()}`
  return problems.length > 0 ? Result.fail(problems) : Result.succeed(text)
}

/** Pure: the template a variant stands for. */
export const resolveVariant = (
  source: SectionSource,
  variant: Pick<PromptVariant, "builtin" | "text" | "patch">
): Result.Result<string, ReadonlyArray<VariantProblem>> => {
  const given = (["builtin", "text", "patch"] as const).filter((k) => variant[k] !== undefined)
  if (given.length !== 1) {
    return Result.fail([{
      path: [],
      message: given.length === 0 ?
        "give one of builtin (a variant name from the code), text (the whole section) or patch" :
        `give only one of builtin, text and patch (got ${given.join(", ")})`
    }])
  }
  const known = `known: ${builtinNames(source).join(", ")}`
  const builtin = (name: string, path: ReadonlyArray<PropertyKey>) =>
    Result.mapError(lookup(source.section, name), (error) => [{
      path,
      message: `no built-in variant ${JSON.stringify(name)} (known: ${error.known.join(", ")})`
    }])
  if (variant.builtin !== undefined) return builtin(variant.builtin, ["builtin"])
  if (source.builtinOnly === true) {
    return Result.fail([{
      path: [variant.text !== undefined ? "text" : "patch"],
      message: `this section's program takes a built-in variant name only (${known})`
    }])
  }
  if (variant.text !== undefined) return knownSlotsOnly(source, variant.text, ["text"])
  const patch = variant.patch!
  if (
    patch.heading === undefined && patch.replace === undefined && patch.prepend === undefined &&
    patch.append === undefined
  ) {
    return Result.fail([{ path: ["patch"], message: "a patch needs heading, replace, prepend or append" }])
  }
  return builtin(patch.base ?? source.section.default, ["patch", "base"]).pipe(
    Result.flatMap((base) => applyPatch(base, patch)),
    Result.flatMap((text) => knownSlotsOnly(source, text, ["patch"]))
  )
}

/** A suite's own text may use only the slots its program fills: another would reach the model as "{{x}}". */
const knownSlotsOnly = (
  source: SectionSource,
  text: string,
  path: ReadonlyArray<PropertyKey>
): Result.Result<string, ReadonlyArray<VariantProblem>> => {
  const unknown = templateSlots(text).filter((slot) => !source.slots.includes(slot))
  return unknown.length === 0 ? Result.succeed(text) : Result.fail([{
    path,
    message: `unknown slot${unknown.length > 1 ? "s" : ""} ${unknown.map((s) => `{{${s}}}`).join(", ")} ` +
      `(this section's program fills: ${source.slots.map((s) => `{{${s}}}`).join(", ") || "none"})`
  }])
}

export interface MemoryPromptWithInput {
  readonly memoryDir: string
  readonly index: LoadedIndex
  /** Section id → template used instead of that section's default. */
  readonly templates: Partial<Record<SectionId, string>>
}

/**
 * Pure: the memory section of the system prompt as core's `renderMemoryPrompt` builds it, with some sections'
 * templates replaced by an eval variant's (core renders them with the same slots, in the same place).
 */
export const renderMemoryPromptWith = (input: MemoryPromptWithInput): Result.Result<string, string> =>
  Result.mapError(
    renderMemoryPrompt({ memoryDir: input.memoryDir, index: input.index, templates: input.templates }),
    (error) => error.message
  )
