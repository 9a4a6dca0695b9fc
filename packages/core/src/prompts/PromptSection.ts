/**
 * The one shape of a prompt section, its one lookup and its one render.
 *
 * A prompt section is data: named variants of one template (the evals swap a variant by name and measure the
 * difference), the variant used unless another is asked for, and the `{{slot}}`s its templates use. The program
 * that renders a section fills every one of its slots; a slot left unfilled or a slot the section does not declare
 * is a bug in the templates, caught by the catalog test (`packages/core/test/PromptCatalog.test.ts`).
 */
import * as Result from "effect/Result"
import { UnknownPromptVariantError } from "../Errors.js"

/** The program that renders a section (and so fills its slots). */
export type PromptProgram = "memory-prompt" | "extraction" | "selector" | "dream" | "daily-log" | "mcp"

export interface PromptSection<Id extends string = string, Slot extends string = string> {
  readonly id: Id
  /** What the section is for (for people and eval reports; a heading, when there is one, is part of each variant). */
  readonly title: string
  readonly program: PromptProgram
  /** Variant name → template. */
  readonly variants: Readonly<Record<string, string>>
  /** The variant used unless another is asked for; one of `variants`. */
  readonly default: string
  /** Every `{{slot}}` the variants' templates use, which the rendering program fills. */
  readonly slots: ReadonlyArray<Slot>
}

/** A section, typed by its id and slots (so `renderSection` asks for exactly the slots it declares). */
export const makeSection = <const Id extends string, const Slot extends string = never>(
  section: PromptSection<Id, Slot>
): PromptSection<Id, Slot> => section

const SLOT = /\{\{(\w+)\}\}/g

/** The slot names a template uses, in order of first use. */
export const templateSlots = (template: string): ReadonlyArray<string> => [
  ...new Set(Array.from(template.matchAll(SLOT), (match) => match[1]!))
]

/** Variant names of a section, the default first. */
export const variantNames = (section: PromptSection): ReadonlyArray<string> => [
  section.default,
  ...Object.keys(section.variants).filter((name) => name !== section.default)
]

/** The template of a section's variant (its default when `variant` is undefined); unknown → the known names. */
export const lookup = (
  section: PromptSection,
  variant?: string | undefined
): Result.Result<string, UnknownPromptVariantError> => {
  const name = variant ?? section.default
  return Object.hasOwn(section.variants, name) ?
    Result.succeed(section.variants[name]!) :
    Result.fail(new UnknownPromptVariantError({ section: section.id, variant: name, known: variantNames(section) }))
}

/**
 * Fills a template's `{{slot}}`s in one pass: a value is inserted as it is, never scanned for slots itself (an
 * index holding a literal "{{x}}" stays so). A slot without a value is left visible rather than blanked, so the
 * catalog test sees it.
 */
export const render = (template: string, slots: Readonly<Record<string, string>>): string =>
  template.replace(SLOT, (whole, name: string) => Object.hasOwn(slots, name) ? slots[name]! : whole)

/** Lookup, then render: the text of a section's variant with its slots filled. */
export const renderSection = <Slot extends string>(
  section: PromptSection<string, Slot>,
  variant: string | undefined,
  slots: Readonly<Record<Slot, string>>
): Result.Result<string, UnknownPromptVariantError> => Result.map(lookup(section, variant), (t) => render(t, slots))

/** A directory as the prompts name it: with its trailing separator (added as `/` when missing). */
export const withTrailingSeparator = (dir: string, separator = "/"): string =>
  /[\\/]$/.test(dir) ? dir : dir + separator

/** Paragraphs separated by blank lines. */
export const paragraphs = (...parts: ReadonlyArray<string>): string => parts.join("\n\n")
/** Lines of one block (a list, a code block). */
export const lines = (...parts: ReadonlyArray<string>): string => parts.join("\n")
