/**
 * Per-language word normalisation for the offline selector: lower case, Snowball stemmers (the `@orama/stemmers`
 * ports) for the Latin-script languages, Russian and Ukrainian, Polish's light stemmer from `@nlpjs/lang-pl` (Snowball
 * has none), no stemming for Vietnamese (its words do not inflect), accents folded after stemming ("Cómo" and "como"
 * meet, as do "ещё" and "еще"), and for Korean the particles and verb endings that attach to a word (eojeol) stripped, so
 * "데이터베이스를" is "데이터베이스".
 * Pure; shared by the analyser and the generator of the shipped word lists (scripts/textData.ts).
 */
import StemmerPl from "@nlpjs/lang-pl/src/stemmer-pl.js"
import { stemmer as dutch } from "@orama/stemmers/dutch"
import { stemmer as english } from "@orama/stemmers/english"
import { stemmer as french } from "@orama/stemmers/french"
import { stemmer as german } from "@orama/stemmers/german"
import { stemmer as indonesian } from "@orama/stemmers/indonesian"
import { stemmer as italian } from "@orama/stemmers/italian"
import { stemmer as portuguese } from "@orama/stemmers/portuguese"
import { stemmer as russian } from "@orama/stemmers/russian"
import { stemmer as spanish } from "@orama/stemmers/spanish"
import { stemmer as swedish } from "@orama/stemmers/swedish"
import { stemmer as turkish } from "@orama/stemmers/turkish"
import { stemmer as ukrainian } from "@orama/stemmers/ukrainian"

export const LANGUAGES = [
  "en",
  "de",
  "es",
  "fr",
  "pt",
  "it",
  "nl",
  "ru",
  "ko",
  "pl",
  "tr",
  "sv",
  "uk",
  "id",
  "vi"
] as const
export type Language = typeof LANGUAGES[number]

let polishStemmer: StemmerPl | undefined
/**
 * Polish: accents stripped first (the stemmer's suffixes are written without them: "ów" is "ow"), "ł" kept (its
 * suffixes "ał", "ił", "łem" have it).
 */
const polish = (word: string): string =>
  (polishStemmer ??= new StemmerPl()).stem(LATIN_DIACRITIC.test(word) ? stripAccents(word) : word)

const STEMMERS: Record<Exclude<Language, "ko">, (word: string) => string> = {
  en: english,
  de: german,
  es: spanish,
  fr: french,
  pt: portuguese,
  it: italian,
  nl: dutch,
  ru: russian,
  pl: polish,
  tr: turkish,
  sv: swedish,
  uk: ukrainian,
  id: indonesian,
  vi: (word) => word
}

/**
 * Lower case, composed (NFC), typographic apostrophes made plain. Turkish "İ" lower-cases to "i" and a combining dot
 * ("İstanbul" would be "i̇stanbul", which no "istanbul" meets): the dot goes.
 */
export const normalizeWord = (word: string): string =>
  word.normalize("NFC").toLowerCase().replace(/[’‘]/g, "'").replace(/i\u0307/g, "i")

/** A Hangul syllable: a Korean word. */
export const HANGUL = /[\uac00-\ud7a3]/
/** A Cyrillic letter: a Russian or Ukrainian word. */
export const CYRILLIC = /[\u0400-\u04ff]/
/**
 * The scripts whose words the analysis reads by a language's rules (Latin, Cyrillic, Hangul, Chinese and Japanese):
 * a letter of any other script is in a language memdir has no stopwords, stems or word frequencies for.
 */
const READ_SCRIPT =
  /[\p{Script=Latin}\p{Script=Cyrillic}\p{Script=Hangul}\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u
const LETTER = /\p{L}/gu

/**
 * The script most of a text's letters are in when at least a third of them are in one the analysis has no rules for
 * ("the Arabic script", "the Thai script"…, "a script of its own" for one not named here), else undefined. A language written in a read script but not
 * listed (Czech, Finnish) is not told apart here: it is read by the rules of the listed language it resembles most.
 */
export const unreadScriptOf = (text: string): string | undefined => {
  let letters = 0
  const unread = new Map<string, number>()
  for (const [letter] of text.matchAll(LETTER)) {
    letters++
    if (READ_SCRIPT.test(letter)) continue
    const script = SCRIPTS.find(([, pattern]) => pattern.test(letter))?.[0] ?? "a script of its own"
    unread.set(script, (unread.get(script) ?? 0) + 1)
  }
  let total = 0
  let most: [string, number] | undefined
  for (const entry of unread) {
    total += entry[1]
    if (most === undefined || entry[1] > most[1]) most = entry
  }
  return most !== undefined && total * 3 >= letters ? most[0] : undefined
}

/** The scripts `unreadScriptOf` names. */
const SCRIPTS: ReadonlyArray<readonly [string, RegExp]> = [
  "Arabic",
  "Hebrew",
  "Greek",
  "Thai",
  "Devanagari",
  "Bengali",
  "Tamil",
  "Telugu",
  "Georgian",
  "Armenian",
  "Ethiopic",
  "Khmer",
  "Lao",
  "Myanmar",
  "Sinhala",
  "Gujarati",
  "Gurmukhi",
  "Kannada",
  "Malayalam"
].map((name) => [`the ${name} script`, new RegExp(`\\p{Script=${name}}`, "u")] as const)

/** Letters Ukrainian writes and Russian does not. */
export const UKRAINIAN_LETTER = /[іїєґ]/i
/** Kana or a CJK ideograph: a Chinese or Japanese word. */
export const CJK = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]/
const HANGUL_ONLY = /^[\uac00-\ud7a3]+$/
const LATIN_DIACRITIC = /[\u00c0-\u024f\u1e00-\u1eff]/

/**
 * Accents removed from Latin letters ("é" → "e", "ß" → "ss", "ı" → "i", "ł" → "l", Vietnamese "đường" → "duong",
 * as a keyboard without them types them) and Russian "ё" written "е", as most Russian text does;
 * other scripts untouched (Hangul must stay composed).
 */
export const foldWord = (word: string): string => {
  const folded = LATIN_DIACRITIC.test(word) ? stripAccents(word).replace(/[ıłđ]/g, (letter) => PLAIN[letter]!) : word
  return folded.includes("ё") ? folded.replace(/ё/g, "е") : folded
}

/** Letters with no decomposition, as a keyboard without them types them: Turkish "ı", Polish "ł", Vietnamese "đ". */
const PLAIN: Readonly<Record<string, string>> = { ı: "i", ł: "l", đ: "d" }

/** Combining accents removed, "ß" written "ss". */
const stripAccents = (word: string): string => word.replace(/ß/g, "ss").normalize("NFD").replace(/[\u0300-\u036f]/g, "")

/**
 * Korean case particles, postpositions and the commonest predicate endings, longest first. A grammar closed class
 * (a few dozen forms), not vocabulary: no pure-JS Korean morphological analyser is kept up on npm, so the few
 * forms that decide matching are listed here; character bigrams (textAnalysis) cover what this misses.
 */
const KOREAN_SUFFIXES: ReadonlyArray<string> = [
  "으로부터",
  "에서부터",
  "했는지",
  "됐는지",
  "하려고",
  "했는데",
  "합니다",
  "됩니다",
  "입니다",
  "에서는",
  "에서도",
  "에게는",
  "으로는",
  "으로도",
  "까지는",
  "부터는",
  "이라는",
  "이라고",
  "에서",
  "에게",
  "한테",
  "께서",
  "으로",
  "까지",
  "부터",
  "처럼",
  "보다",
  "이나",
  "이랑",
  "마다",
  "조차",
  "밖에",
  "에는",
  "에도",
  "와는",
  "과는",
  "해야",
  "해서",
  "했어",
  "했다",
  "하는",
  "하고",
  "하면",
  "하지",
  "하기",
  "한다",
  "하다",
  "된다",
  "되는",
  "되면",
  "됐어",
  "인데",
  "이다",
  "은",
  "는",
  "이",
  "가",
  "을",
  "를",
  "에",
  "의",
  "도",
  "만",
  "와",
  "과",
  "로",
  "랑",
  "해",
  "한",
  "할",
  "돼",
  "된",
  "될",
  "요"
].sort((a, b) => b.length - a.length)

/** One suffix stripped; a one-syllable suffix only from a word of three or more syllables ("아이" stays). */
export const stripKoreanSuffix = (word: string): string => {
  if (!HANGUL_ONLY.test(word)) return word
  for (const suffix of KOREAN_SUFFIXES) {
    if (!word.endsWith(suffix)) continue
    const rest = word.length - suffix.length
    if (rest >= (suffix.length === 1 ? 2 : 1)) return word.slice(0, rest)
  }
  return word
}

/** The selector's term for one normalised word of `language`: stemmed, then accents folded. */
export const stemWord = (language: Language, word: string): string => {
  if (HANGUL.test(word)) return stripKoreanSuffix(word)
  if (language === "ko") return foldWord(english(word))
  return foldWord(STEMMERS[language](word))
}
