/**
 * A request's words in the languages its memories are written in: "Füg eine Einstellung für den Wochenstart hinzu"
 * over English notes on settings, "切到跟随视角" over English notes on the follow camera. No word is shared, so only a
 * dictionary bridges them: the glossary (`scripts/glossary.txt`, generated into `glossary.data.txt`) lists concepts, one
 * sense per line, each with its usual words in sixteen languages (those the analysis stems: the Latin-script ones,
 * Russian and Ukrainian; Chinese, Japanese, Korean; not Vietnamese, whose words are of several syllables), written
 * for memdir.
 *
 * A request word finds its concepts by its stem in the request's language (Chinese and Japanese words as written); a
 * German, Dutch or Swedish compound no line holds finds them through its two parts ("Wochenstart": Woche + Start). Every
 * word of those concepts, analysed as each candidate language analyses its own words, is a translation the selector
 * matches at a discount (`translationWeight`). The keys are worked out when the glossary is generated: a request
 * searches one language's sorted table and parses only the lines it needs.
 *
 * The glossary is a data file beside this module (in `src/` and in the packed `dist/`; a bundle writes it beside the
 * output holding this code, `scripts/bundle-data.mjs`), read once per process on the first lookup, as bytes: a
 * lookup decodes the key rows its binary search reads and the concept lines it needs, nothing else (as JavaScript the
 * glossary cost every process ~20 ms of start-up; decoded whole, a process's first lookup 10–20 ms).
 */
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import {
  type Concept,
  GLOSSARY_LANGUAGES,
  type GlossaryLanguage,
  glossarySections,
  keyOf,
  lineIn,
  lineStartsIn,
  parseConcept
} from "./glossaryFormat.js"
import { CJK, CYRILLIC, HANGUL, type Language, normalizeWord, stemWord } from "./language.js"

/** Where the glossary is: beside this module, wherever it runs from. */
export const GLOSSARY_URL = new URL("./glossary.data.txt", import.meta.url)

/** The glossary as a lookup reads it: a language's key table and a concept's line, each decoded when first asked for. */
export interface Glossary {
  /** The rows of a language's key table, sorted by key ("key id id…"): one decoded per call. */
  readonly keyRows: (language: GlossaryLanguage) => { readonly count: number; readonly row: (i: number) => string }
  /** Concept `id`'s line ("en: word, word | de: …"). */
  readonly conceptLine: (id: number) => string
  /** Every concept line, in order (what the generator wrote). */
  readonly concepts: () => string
}

/**
 * The glossary's data file, read as bytes with its sections located. Synchronous (a lookup is, and the read takes a
 * millisecond or two), with no `MemoryFs`: this is memdir's own file, not a memory. Only what a lookup needs is
 * decoded: decoding the whole 1.6 MB as text cost a process's first lookup ~10 ms. A file missing or malformed is a
 * broken install, which a retry cannot mend: the error names the file and the remedy rather than letting a hook hang.
 */
export const readGlossary = (url: URL): Glossary => {
  const file = fileURLToPath(url)
  let bytes: Buffer
  try {
    bytes = readFileSync(file)
  } catch (cause) {
    throw new Error(`memdir's glossary ${file} cannot be read (${(cause as Error).message}): reinstall memdir`, {
      cause
    })
  }
  const sections = glossarySections(bytes)
  if (typeof sections === "string") {
    throw new Error(`memdir's glossary ${file} is damaged (${sections}): reinstall memdir`)
  }
  const keyStarts = new Map<GlossaryLanguage, Int32Array>()
  let conceptStarts: Int32Array | undefined
  const { concepts } = sections
  return {
    keyRows: (language) => {
      const range = sections.keys[language]
      let starts = keyStarts.get(language)
      if (starts === undefined) {
        starts = lineStartsIn(bytes, range)
        keyStarts.set(language, starts)
      }
      const rows = starts
      return { count: rows.length, row: (i) => lineIn(bytes, rows[i]!, range.end) }
    },
    conceptLine: (id) => lineIn(bytes, (conceptStarts ??= lineStartsIn(bytes, concepts))[id]!, concepts.end),
    concepts: () => bytes.toString("utf8", concepts.start, concepts.end)
  }
}

let glossary: Glossary | undefined
const theGlossary = (): Glossary => glossary ??= readGlossary(GLOSSARY_URL)

const parsedConcepts = new Map<number, Concept>()

const conceptOf = (id: number): Concept => {
  let concept = parsedConcepts.get(id)
  if (concept === undefined) {
    concept = parseConcept(theGlossary().conceptLine(id))
    parsedConcepts.set(id, concept)
  }
  return concept
}

const isGlossaryLanguage = (language: Language): language is Language & GlossaryLanguage =>
  (GLOSSARY_LANGUAGES as ReadonlyArray<string>).includes(language)

/** The scripts no other language writes: their words are what they are in a text of any language. */
const OWN_SCRIPT: ReadonlyArray<GlossaryLanguage> = ["zh", "ja", "ko"]

/**
 * The words of the concepts a text in `language` may use: that language's, and the Chinese, Japanese and Korean ones
 * (their scripts are their own). Another Latin-script language's are left out: Spanish "red" (network) is no English
 * "red", Dutch "map" (folder) no English "map". A text in a script of its own (Russian, Korean) also gets the English
 * ones: it writes its technical words in English ("миграции через goose", "staging"), and no word of its own can be
 * taken for an English one.
 */
export const wordsOfConcepts = (ids: ReadonlyArray<number>, language: Language): ReadonlyArray<string> => {
  const out = new Set<string>()
  // a language the glossary does not hold (Vietnamese) has only the others; Ukrainian, in a script of its own too, the
  // English ones as Russian does
  const own: ReadonlyArray<GlossaryLanguage> = isGlossaryLanguage(language) ? [language] : []
  const fields = language === "ru" || language === "ko" || language === "uk"
    ? [...own, "en" as const, ...OWN_SCRIPT]
    : [...own, ...OWN_SCRIPT]
  for (const id of ids) {
    const concept = conceptOf(id)
    for (const field of fields) for (const word of concept.get(field) ?? []) out.add(word)
  }
  return [...out]
}

/**
 * The concepts holding a word of `language` with this key: a binary search of the generated table (its lines are
 * sorted by key), so a request builds no map of the whole glossary.
 */
const conceptsWithKey = (language: GlossaryLanguage, key: string): ReadonlyArray<number> | undefined => {
  const table = theGlossary().keyRows(language)
  let low = 0
  let high = table.count - 1
  while (low <= high) {
    const middle = (low + high) >> 1
    const row = table.row(middle)
    const space = row.indexOf(" ")
    const rowKey = row.slice(0, space)
    if (rowKey === key) return row.slice(space + 1).split(" ").map(Number)
    if (rowKey < key) low = middle + 1
    else high = middle - 1
  }
  return undefined
}

const COMPOUNDING: ReadonlySet<GlossaryLanguage> = new Set(["de", "nl", "sv"])
/** Linking elements between a compound's parts ("Wochen|start", "Arbeits|zeit"). */
const LINKS = ["", "s", "n", "en", "es", "e"]
const NO_PARTS: ReadonlyArray<ReadonlyArray<number>> = []

/**
 * The concepts a request word stands for, as groups: one group for a word the glossary holds, two (head and tail)
 * for a German, Dutch or Swedish compound found through its parts, none otherwise. A Chinese or Japanese word also stands for
 * the words it forms with its neighbours (`joined`): the segmenter cuts "数据库" into "数据" and "库".
 */
export const conceptsOfWord = (
  language: Language,
  word: string,
  joined: ReadonlyArray<string> = []
): ReadonlyArray<ReadonlyArray<number>> => {
  const normal = normalizeWord(word)
  if (CJK.test(normal)) {
    const ids = new Set<number>()
    for (const form of [normal, ...joined]) {
      for (const id of conceptsWithKey("zh", form) ?? []) ids.add(id)
      for (const id of conceptsWithKey("ja", form) ?? []) ids.add(id)
    }
    return ids.size > 0 ? [[...ids]] : NO_PARTS
  }
  // a word is looked up in its script's language (Hangul; Cyrillic: Russian, or Ukrainian in a Ukrainian request);
  // a Latin-script word in a Korean, Russian or Ukrainian request as English, the language code and tools are written
  // in; a word of a Latin-script language the glossary does not hold is none of its words (Vietnamese: its words are
  // of several syllables, which no one request word is)
  const own: GlossaryLanguage | undefined = HANGUL.test(normal) ? "ko" : CYRILLIC.test(normal) ?
    language === "uk" ? "uk" : "ru" :
    language === "ko" || language === "ru" || language === "uk"
    ? "en"
    : isGlossaryLanguage(language)
    ? language
    : undefined
  if (own === undefined) return NO_PARTS
  // a Ukrainian word the Ukrainian words do not hold may be the slang both languages write, which the Russian ones
  // hold ("стейдж", "прод"): by its Russian stem, or its Ukrainian one ("стейджі" is "стейдж" to Ukrainian's stemmer)
  const whole = conceptsWithKey(own, keyOf(own, normal)) ??
    (own === "uk"
      ? conceptsWithKey("ru", keyOf("ru", normal)) ?? conceptsWithKey("ru", stemWord("uk", normal))
      : undefined)
  if (whole !== undefined) return [whole]
  if (!COMPOUNDING.has(own) || normal.length < 7) return NO_PARTS
  // the longest tail both of whose parts are words of the glossary (the tail is what a compound is)
  for (let cut = 3; cut <= normal.length - 3; cut++) {
    const tail = conceptsWithKey(own, keyOf(own, normal.slice(cut)))
    if (tail === undefined) continue
    const head = normal.slice(0, cut)
    for (const link of LINKS) {
      if (!head.endsWith(link) || head.length - link.length < 3) continue
      const ids = conceptsWithKey(own, keyOf(own, head.slice(0, head.length - link.length)))
      if (ids !== undefined) return [ids, tail]
    }
  }
  return NO_PARTS
}
