/**
 * The glossary's format (`scripts/glossary.txt`, `translation.ts`): one concept per line, "en: word, word | de: …",
 * the fields in the order of `GLOSSARY_LANGUAGES`; and its lookup keys, which the generator works out once. Apart
 * from the generated data, so the generator can run before the data exists.
 */
import { normalizeWord, stemWord } from "./language.js"

/** The glossary's languages, in the order of its fields. */
export const GLOSSARY_LANGUAGES = ["en", "de", "es", "fr", "pt", "it", "nl", "zh", "ja", "ko"] as const
export type GlossaryLanguage = typeof GLOSSARY_LANGUAGES[number]

/** One concept: its words per language, normalised (lower case, NFC). */
export type Concept = ReadonlyMap<GlossaryLanguage, ReadonlyArray<string>>

const FIELD = /^([a-z]{2}):\s*(.*)$/

/** Why a glossary line is malformed, or undefined: what the generator refuses. */
export const glossaryLineProblem = (line: string): string | undefined => {
  const fields = line.split(" | ")
  let previous = -1
  for (const field of fields) {
    const match = FIELD.exec(field)
    if (match === null) return `"${field}" is not "xx: word, word"`
    const position = GLOSSARY_LANGUAGES.indexOf(match[1] as GlossaryLanguage)
    if (position < 0) return `"${match[1]}" is not a glossary language (${GLOSSARY_LANGUAGES.join(", ")})`
    if (position <= previous) return `"${match[1]}" is out of order (${GLOSSARY_LANGUAGES.join(", ")})`
    previous = position
    const words = match[2]!.split(", ")
    if (words.some((word) => word.trim() !== word || word.length === 0)) return `"${field}" has an empty word`
    if (words.some((word) => /[(),;|`$\\]/.test(word))) return `"${field}" has a note or punctuation in a word`
    if (new Set(words.map(normalizeWord)).size < words.length) return `"${field}" has a word twice`
  }
  return fields.length < 2 ? "a concept needs words in two languages at least" : undefined
}

/** One glossary line as a concept (it is well formed: `glossaryLineProblem`). */
export const parseConcept = (line: string): Concept => {
  const concept = new Map<GlossaryLanguage, ReadonlyArray<string>>()
  for (const field of line.split(" | ")) {
    const colon = field.indexOf(":")
    concept.set(
      field.slice(0, colon) as GlossaryLanguage,
      field.slice(colon + 1).split(",").map((word) => normalizeWord(word.trim()))
    )
  }
  return concept
}

const isCjkLanguage = (language: GlossaryLanguage): language is "zh" | "ja" => language === "zh" || language === "ja"

/** How a glossary word of `language` is looked up: its stem, or as written for Chinese and Japanese. */
export const keyOf = (language: GlossaryLanguage, word: string): string =>
  isCjkLanguage(language) ? word : stemWord(language, word)

/**
 * Per language, its words' keys and the concepts (line numbers) holding them, as the generator writes them: a line
 * per key, "key id id…". A word of several words is left out (a request word is one).
 */
export const glossaryKeys = (lines: ReadonlyArray<string>): Record<GlossaryLanguage, string> => {
  const tables = Object.fromEntries(GLOSSARY_LANGUAGES.map((language) => [language, new Map<string, Array<number>>()]))
  lines.forEach((line, id) => {
    parseConcept(line).forEach((words, language) => {
      for (const word of words) {
        if (word.includes(" ")) continue
        const key = keyOf(language, word)
        const ids = tables[language]!.get(key)
        if (ids === undefined) tables[language]!.set(key, [id])
        else if (ids.at(-1) !== id) ids.push(id)
      }
    })
  })
  return Object.fromEntries(
    GLOSSARY_LANGUAGES.map((language) => [
      language,
      [...tables[language]!].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0).map(([key, ids]) =>
        `${key} ${ids.join(" ")}`
      ).join("\n")
    ])
  ) as Record<GlossaryLanguage, string>
}
