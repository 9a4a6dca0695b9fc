/**
 * Prompt variants as a suite states them (a built-in variant, a whole text, or a patch of the default) turned
 * into the text a run uses, and the memory prompt rendered with one section replaced.
 */
import type { LoadedIndex } from "@memdir/core/MemoryIndex"
import { promptSections, promptSlots, renderMemoryPrompt, renderTemplate, type SectionId } from "@memdir/core/Prompt"
import * as Either from "effect/Either"
import type { PromptPatch, PromptVariant } from "./Suite.js"

/** A prompt section a suite may vary: its built-in variants and which kind of suite uses it. */
export interface SectionSource {
  readonly kind: "agent" | "extraction" | "dream" | "selector"
  readonly default: string
  /** Variant name → template. */
  readonly variants: Readonly<Record<string, string>>
  /** The program takes a variant name, not a text: suites may name built-in variants only. */
  readonly builtinOnly?: boolean | undefined
}

export type SectionCatalog = Readonly<Record<string, SectionSource>>

/**
 * The memory prompt sections of core's Prompt.ts: the agent suites vary them. Not the team section: it is rendered
 * only with team memory on, and the agent harness runs without it.
 */
export const memoryPromptSections: SectionCatalog = Object.fromEntries(
  promptSections.filter((s) => (s.id as string) !== "team").map((
    s
  ) => [s.id, { kind: "agent" as const, default: s.default, variants: s.variants }])
)

/** Built-in variant names, the default first. */
export const builtinNames = (source: SectionSource): ReadonlyArray<string> => [
  source.default,
  ...Object.keys(source.variants).filter((name) => name !== source.default)
]

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
): Either.Either<string, ReadonlyArray<VariantProblem>> => {
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
  return problems.length > 0 ? Either.left(problems) : Either.right(text)
}

/** Pure: the template a variant stands for. */
export const resolveVariant = (
  source: SectionSource,
  variant: Pick<PromptVariant, "builtin" | "text" | "patch">
): Either.Either<string, ReadonlyArray<VariantProblem>> => {
  const given = (["builtin", "text", "patch"] as const).filter((k) => variant[k] !== undefined)
  if (given.length !== 1) {
    return Either.left([{
      path: [],
      message: given.length === 0 ?
        "give one of builtin (a variant name from the code), text (the whole section) or patch" :
        `give only one of builtin, text and patch (got ${given.join(", ")})`
    }])
  }
  const known = `known: ${builtinNames(source).join(", ")}`
  const builtin = (name: string, path: ReadonlyArray<PropertyKey>) =>
    Object.hasOwn(source.variants, name) ?
      Either.right(source.variants[name]!) :
      Either.left([{ path, message: `no built-in variant ${JSON.stringify(name)} (${known})` }])
  if (variant.builtin !== undefined) return builtin(variant.builtin, ["builtin"])
  if (source.builtinOnly === true) {
    return Either.left([{
      path: [variant.text !== undefined ? "text" : "patch"],
      message: `this section's program takes a built-in variant name only (${known})`
    }])
  }
  if (variant.text !== undefined) return Either.right(variant.text)
  const patch = variant.patch!
  if (
    patch.heading === undefined && patch.replace === undefined && patch.prepend === undefined &&
    patch.append === undefined
  ) {
    return Either.left([{ path: ["patch"], message: "a patch needs heading, replace, prepend or append" }])
  }
  return Either.flatMap(builtin(patch.base ?? source.default, ["patch", "base"]), (base) => applyPatch(base, patch))
}

export interface MemoryPromptWithInput {
  readonly memoryDir: string
  readonly index: LoadedIndex
  /** Section id → template used instead of that section's default. */
  readonly templates: Partial<Record<SectionId, string>>
}

/**
 * Pure: the memory section of the system prompt exactly as core's `renderMemoryPrompt` builds it (same sections,
 * slots and order, whatever core adds later), with some sections' rendered text swapped for an eval variant's.
 * Fails (Left) only when a section's default text cannot be found once in core's rendering — a bug to report.
 */
export const renderMemoryPromptWith = (input: MemoryPromptWithInput): Either.Either<string, string> => {
  const base = renderMemoryPrompt({ memoryDir: input.memoryDir, index: input.index })
  if (Either.isLeft(base)) return Either.left(base.left.message)
  const { indexContent, ...templateSlots } = promptSlots(input)
  const render = (template: string) =>
    renderTemplate(template, templateSlots).replace("{{indexContent}}", () => indexContent!)
  let prompt = base.right
  for (const [id, template] of Object.entries(input.templates) as Array<[SectionId, string | undefined]>) {
    if (template === undefined) continue
    const section = promptSections.find((s) => s.id === id)
    if (section === undefined) return Either.left(`no prompt section ${id}`)
    const current = render(section.variants[section.default]!)
    const at = prompt.indexOf(current)
    if (at < 0 || prompt.indexOf(current, at + 1) >= 0) {
      return Either.left(`section ${id} is not rendered exactly once in the memory prompt`)
    }
    prompt = prompt.slice(0, at) + render(template) + prompt.slice(at + current.length)
  }
  return Either.right(prompt)
}
