import { assert, describe, it } from "@effect/vitest"
import * as FastCheck from "fast-check"
import * as fs from "node:fs"
import { generateTextData, TEXT_DATA_FILE } from "../scripts/textData.js"
import {
  analyzeQuery,
  analyzeText,
  analyzeWords,
  countTerms,
  detectLanguage,
  detectLanguageOfTallies,
  GRAM_MARK,
  isAscii,
  isStopword,
  PHRASES,
  priorWeight,
  segmentWords,
  tallyWords
} from "../src/internal/text/analysis.js"
import { foldWord, normalizeWord, stemWord, stripKoreanSuffix, unreadScriptOf } from "../src/internal/text/language.js"

describe("text analysis", () => {
  it("ships exactly the word lists the generator makes from the stopword and word-frequency packages", () => {
    assert.strictEqual(fs.readFileSync(TEXT_DATA_FILE, "utf8"), generateTextData())
  })

  it("segments Unicode words and splits code identifiers", () => {
    assert.deepStrictEqual(segmentWords("Wie schlägt der Test fehl?"), ["wie", "schlägt", "der", "test", "fehl"])
    assert.deepStrictEqual(segmentWords("¿Cómo?"), ["cómo"])
    assert.deepStrictEqual(segmentWords("isolatedModules snake_case config.toml"), [
      "isolated",
      "modules",
      "snake",
      "case",
      "config",
      "toml"
    ])
    assert.deepStrictEqual(segmentWords("데이터베이스를 목으로"), ["데이터베이스를", "목으로"])
  })

  it("takes an acronym's plural for the acronym and drops a possessive 's", () => {
    // "APKs" was "ap" + "ks", "week's" was "week'" after stemming: neither matched the memory's "APK" or "week"
    assert.deepStrictEqual(segmentWords("last week's APKs, two PRs and Bun's URLs; what's it's"), [
      "last",
      "week",
      "apk",
      "two",
      "pr",
      "and",
      "bun",
      "url",
      "what",
      "it"
    ])
    assert.deepStrictEqual(segmentWords("la semana del equipo: l'équipe, ¿qué pasó con los APKs de Pablo’s?"), [
      "la",
      "semana",
      "del",
      "equipo",
      "l'équipe",
      "qué",
      "pasó",
      "con",
      "los",
      "apk",
      "de",
      "pablo"
    ])
    assert.deepStrictEqual(segmentWords("getAPIs parseJSONBody HTTPServer don't"), [
      "get",
      "api",
      "parse",
      "json",
      "body",
      "http",
      "server",
      "don't"
    ])
  })

  it("segments ASCII text on its fast path exactly as the Unicode pattern does", () => {
    // A trailing non-ASCII word sends the same text down the Unicode path; the two must agree word for word.
    const viaUnicode = (text: string) => segmentWords(`${text} é`).slice(0, -1)
    const samples = [
      "isolatedModules snake_case config.toml",
      "don't can't l'equipe 'quoted' it''s end' week's Bun's APKs PRs getAPIs 's ''s",
      "HTTPServer parseJSONBody getHTTPResponseCode XMLHttpRequest v2Api ABC abcDEF",
      "node20 3.14 1e9 a-b_c.d/e\\f #tag @user $var 100% x86_64",
      "Mixed CASE words, punctuation!? (parens) [brackets] {braces} <angle> \"quotes\" `code`",
      "   leading and trailing spaces\n\ttabs and\r\nnewlines   "
    ]
    for (const text of samples) assert.deepStrictEqual(segmentWords(text), viaUnicode(text), text)
    // every printable ASCII character in every position around a word
    let all = ""
    for (let code = 32; code < 127; code++) all += `a${String.fromCharCode(code)}B${String.fromCharCode(code)}9 `
    assert.deepStrictEqual(segmentWords(all), viaUnicode(all))
  })

  // ASCII with the characters that decide word ends and case changes over-represented.
  const asciiText = FastCheck.array(
    FastCheck.oneof(
      FastCheck.constantFrom(
        "'",
        " ",
        "_",
        "-",
        ".",
        "a",
        "B",
        "Ab",
        "ABc",
        "9",
        "don't",
        "HTTPServer",
        "x'Y",
        "'s",
        "s",
        "APKs"
      ),
      FastCheck.string({ unit: FastCheck.integer({ min: 0, max: 127 }).map((c) => String.fromCharCode(c)) })
    ),
    { maxLength: 30 }
  ).map((parts) => parts.join(""))

  it("segments any ASCII text on its fast path as the Unicode pattern does", () => {
    FastCheck.assert(FastCheck.property(asciiText, (text) => {
      assert.deepStrictEqual(segmentWords(text), segmentWords(`${text} é`).slice(0, -1))
    }))
  })

  const mixedText = FastCheck.array(
    FastCheck.constantFrom(
      "the database",
      "die Datenbank ist",
      "¿Cómo",
      "l'équipe",
      "데이터베이스를",
      "통합 테스트",
      "pull request",
      "pull requests on call",
      "end to end",
      "time zone time",
      "feature flags",
      "merge",
      "Mehrwertsteuer",
      "isolatedModules",
      "k8s db",
      "é",
      "миграции базы данных",
      "ещё стейдж",
      "手の指が曲がらない",
      "数据库 库",
      ""
    ),
    { maxLength: 8 }
  ).map((parts) => parts.join(" "))

  it("guesses one language for several texts as for their words together", () => {
    FastCheck.assert(FastCheck.property(FastCheck.array(mixedText, { minLength: 1, maxLength: 3 }), (texts) => {
      const tokenLists = texts.map(segmentWords)
      const expected = detectLanguage(tokenLists.flat())
      assert.strictEqual(detectLanguageOfTallies(tokenLists.map(tallyWords)), expected)
      // The same with each all-ASCII text said to be so (its words skip the Hangul test and the folding).
      assert.strictEqual(detectLanguageOfTallies(tokenLists.map(tallyWords), texts.map(isAscii)), expected)
    }))
  })

  it("reads phrases so that every occurrence counts: no phrase's second word starts a phrase", () => {
    // countTerms counts each occurrence of a phrase; analyzeWords reads them left to right. The two agree as long
    // as no phrase can start inside another.
    const firsts = new Set(PHRASES.map(([first]) => first))
    for (const [first, second] of PHRASES) assert.isFalse(firsts.has(second), `${first} ${second}`)
  })

  it("counts the terms and grams analyzeWords lists", () => {
    FastCheck.assert(FastCheck.property(mixedText, (text) => {
      const tokens = segmentWords(text)
      for (const language of ["en", "de", "ko"] as const) {
        const analyzed = analyzeWords(tokens, language)
        const expected = new Map<string, number>()
        for (const term of [...analyzed.words, ...analyzed.grams.flat()]) {
          expected.set(term, (expected.get(term) ?? 0) + 1)
        }
        const counted = countTerms(tokens, tallyWords(tokens), language)
        assert.deepStrictEqual([...counted.counts].sort(), [...expected].sort())
        assert.strictEqual(counted.words, analyzed.words.length)
      }
    }))
  })

  it("guesses the language from stopwords, Korean from Hangul", () => {
    assert.strictEqual(detectLanguage(segmentWords("Die Heizung geht aus, wenn das Fenster offen ist")), "de")
    assert.strictEqual(detectLanguage(segmentWords("¿Cómo debería escribir las pruebas del repositorio?")), "es")
    assert.strictEqual(detectLanguage(segmentWords("Comment écrire les tests de la base ?")), "fr")
    assert.strictEqual(detectLanguage(segmentWords("통합 테스트를 어떻게 작성해야 해?")), "ko")
    assert.strictEqual(detectLanguage(segmentWords("Как нам лучше писать тесты для базы данных?")), "ru")
    // no stopword at all: Cyrillic is Russian, anything else English
    assert.strictEqual(detectLanguage(segmentWords("Vault, путь secret/db. Хост базы staging-db.internal")), "ru")
    assert.strictEqual(detectLanguage(segmentWords("Vault, path secret/db. Host staging-db.internal")), "en")
    assert.strictEqual(detectLanguage(segmentWords("how should I write the integration tests?")), "en")
    assert.strictEqual(detectLanguage([]), "en")
  })

  it("tells Polish, Turkish, Swedish, Ukrainian, Indonesian and Vietnamese apart by their stopwords", () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["Nie używaj ORM-a w tym serwisie, bo zapytania do bazy są za wolne", "pl"],
      ["Bu serviste ORM kullanma, çünkü veritabanı sorguları çok yavaş ve bir de cache yok", "tr"],
      ["Använd inte ORM i den här tjänsten, för frågorna mot databasen är för långsamma", "sv"],
      ["Не використовуй ORM у цьому сервісі, бо запити до бази надто повільні", "uk"],
      ["Jangan pakai ORM di layanan ini karena kueri ke database terlalu lambat dan tidak ada cache", "id"],
      ["Không dùng ORM trong dịch vụ này vì các truy vấn tới cơ sở dữ liệu quá chậm", "vi"],
      // no stopword: a letter only Ukrainian writes makes it Ukrainian, not Russian
      ["Хост бази staging-db, паролі у Vault", "uk"],
      // one stopword French shares ("ne"), a letter only Turkish writes
      ["Şifreyi ne sıklıkla değiştirmek gerekiyor?", "tr"],
      ["Gdzie trzymamy hasło do bazy na stagingu?", "pl"]
    ]
    for (const [text, language] of cases) assert.strictEqual(detectLanguage(segmentWords(text)), language, text)
  })

  it("cuts Swedish compounds into 4-grams as German and Dutch ones, so a part meets the word alone", () => {
    // "kvittoskärmen" (the receipt screen) and "kvittot" (the receipt)
    const compound = analyzeText("kvittoskärmen", "sv")
    const part = analyzeText("kvittot", "sv")
    assert.isAbove(compound.grams[0]!.filter((gram) => part.grams[0]!.includes(gram)).length, 0)
  })

  it("names the script a text is mostly written in when the analysis has no rules for it", () => {
    assert.strictEqual(unreadScriptOf("אל תשתמש ב-ORM בשירות הזה"), "the Hebrew script")
    assert.strictEqual(unreadScriptOf("ห้ามใช้ ORM ในบริการนี้"), "the Thai script")
    assert.strictEqual(unreadScriptOf("ᏣᎳᎩ ᎦᏬᏂᎯᏍᏗ ORM"), "a script of its own")
    // a read script, or a word of another among many read ones: nothing to say
    for (
      const text of [
        "Nepoužívej ORM v této službě",
        "Не використовуй ORM",
        "ORM 쓰지 마",
        "不要用ORM",
        "حفظ is the save button label"
      ]
    ) {
      assert.isUndefined(unreadScriptOf(text), text)
    }
  })

  it("reads a Chinese or Japanese text's Latin-script words as English, whatever stray word they hold", () => {
    // "du" and "la" are French stopwords, "die" a German one: in these texts they are a command, a note, a verb
    assert.strictEqual(detectLanguage(segmentWords("磁盘满了，先用 du -sh 看看 la 目录下的 die logs 文件夹")), "en")
    assert.strictEqual(detectLanguage(segmentWords("ビルド前に du で la フォルダの容量を確認する")), "en")
  })

  it("stems per language and folds accents after stemming, so inflections and accents meet", () => {
    assert.strictEqual(stemWord("de", "datenbanken"), stemWord("de", "datenbank"))
    assert.strictEqual(stemWord("de", "schlägt"), "schlagt")
    assert.strictEqual(stemWord("es", "pruebas"), stemWord("es", "prueba"))
    assert.strictEqual(stemWord("es", "integración"), stemWord("es", "integraciones"))
    assert.strictEqual(stemWord("en", "testing"), stemWord("en", "tests"))
    assert.strictEqual(stemWord("fr", "factures"), stemWord("fr", "facture"))
    // the six languages added after Russian: a word's inflections meet
    assert.strictEqual(stemWord("pl", "testów"), stemWord("pl", "testy"))
    assert.strictEqual(stemWord("pl", "wdrożenia"), stemWord("pl", "wdrożeniu"))
    assert.strictEqual(stemWord("tr", "veritabanına"), stemWord("tr", "veritabanından"))
    assert.strictEqual(stemWord("tr", "testleri"), stemWord("tr", "test"))
    assert.strictEqual(stemWord("sv", "databasen"), stemWord("sv", "databaser"))
    assert.strictEqual(stemWord("uk", "користувачів"), stemWord("uk", "користувач"))
    assert.strictEqual(stemWord("id", "menggunakan"), stemWord("id", "digunakan"))
    assert.strictEqual(stemWord("vi", "dữ"), "du")
    // letters with no accent to strip meet what a keyboard without them types: Turkish "kullanıcılar" typed
    // "kullanicilar", Vietnamese "Đường" typed "duong", Polish "błąd" typed "blad"
    assert.strictEqual(stemWord("tr", "kullanıcılar"), stemWord("tr", "kullanicilar"))
    // Turkish capital "İ" lower-cases to "i" and a combining dot: the dot goes
    assert.strictEqual(stemWord("tr", normalizeWord("İstanbul")), stemWord("tr", "istanbul"))
    assert.strictEqual(normalizeWord("DİKKAT"), "dikkat")
    assert.strictEqual(stemWord("vi", normalizeWord("Đường")), "duong")
    assert.strictEqual(stemWord("pl", "błąd"), stemWord("pl", "blad"))
    assert.strictEqual(foldWord("cómo"), "como")
    assert.strictEqual(foldWord("straße"), "strasse")
    // Russian: a word's cases meet ("базу", "базы", "база"), and "ё" is the "е" most text writes
    assert.strictEqual(stemWord("ru", "базу"), stemWord("ru", "базы"))
    assert.strictEqual(stemWord("ru", "заказов"), stemWord("ru", "заказ"))
    assert.strictEqual(foldWord("ещё"), "еще")
    assert.deepStrictEqual(analyzeText("Почему ещё не работают миграции базы данных?").words, [
      "работа",
      "миграц",
      "баз",
      "дан"
    ])
  })

  it("strips Korean particles and endings from a word, never a whole short word", () => {
    assert.strictEqual(stripKoreanSuffix("데이터베이스를"), "데이터베이스")
    assert.strictEqual(stripKoreanSuffix("목으로"), "목")
    assert.strictEqual(stripKoreanSuffix("서버에서"), "서버")
    assert.strictEqual(stripKoreanSuffix("작성해야"), "작성")
    assert.strictEqual(stripKoreanSuffix("아이"), "아이")
    assert.strictEqual(stripKoreanSuffix("test"), "test")
  })

  it("drops stopwords of the text's language and of English, keeps negations out of the way", () => {
    assert.isTrue(isStopword("de", "nicht"))
    assert.isTrue(isStopword("es", "cómo"))
    assert.isTrue(isStopword("de", "the"))
    assert.isFalse(isStopword("en", "database"))
    // English's one list holds the chat filler of requests too ("please", contractions), with the typographic quote
    for (const word of ["please", "thanks", "don't", "stuff"]) assert.isTrue(isStopword("en", word), word)
    assert.deepStrictEqual(analyzeText("Hey, please don’t touch the stuff in the DB").words, ["touch", "databas"])
    assert.deepStrictEqual(analyzeText("Wie schlägt der Test fehl?").words, ["schlagt", "test", "fehl"])
  })

  it("drops Chinese and Japanese function words and chat filler, whatever the request's language", () => {
    // "how", "one", "help me" and "why" are no topic: before, every word in these scripts weighed as a rare one
    assert.deepStrictEqual(analyzeText("CSS怎么让一个div水平垂直居中").words, ["css", "div", "水平", "垂直", "居中"])
    for (const word of ["怎么", "一个", "为什么", "帮我", "から", "として", "ください"]) {
      assert.isTrue(isStopword("en", word), word)
    }
    assert.isFalse(isStopword("en", "数据库"))
  })

  it("keeps a lone kanji of a Japanese text as a word, never a lone character of a Chinese one", () => {
    // ICU cuts a Japanese verb's or adjective's stem from its kana ("曲|が|ら|ない", "白|く") and many nouns are one
    // kanji ("手" hand, "指" finger); a memory is cut the same way, so the stems meet
    assert.deepStrictEqual(analyzeText("手の指が曲がらない").words, ["手", "指", "曲"])
    assert.includeMembers([...analyzeText("カメラが繋がってない間、画面が白くチカチカする").words], [
      "繋",
      "白",
      "チカチカ"
    ])
    const counted = countTerms(segmentWords("手の指が曲がらない"), tallyWords(segmentWords("手の指が曲がらない")), "en")
    assert.deepStrictEqual([...counted.counts.keys()].sort(), ["手", "指", "曲"].sort())
    // in Chinese a lone character is mostly grammar ("用", "个"): no term
    assert.deepStrictEqual(analyzeText("我要用这个库").words, ["我要"])
  })

  it("weighs Chinese and Japanese words by their general frequency", () => {
    // "知道" (know) and "時間" (time) are common words, "数据库" (database) and "デプロイ" (deploy) are rare in general
    assert.isBelow(priorWeight("en", "知道"), 0.5)
    assert.isBelow(priorWeight("en", "時間"), 0.6)
    assert.strictEqual(priorWeight("en", "数据库"), 1)
    assert.strictEqual(priorWeight("en", "デプロイ"), 1)
  })

  it("stems a request's words the way the candidates' languages do too", () => {
    const spanish = analyzeQuery("¿dónde van los mockups de Stockerly?", ["en", "es"])
    assert.strictEqual(spanish.language, "es")
    const at = (word: string) => spanish.variants[spanish.words.indexOf(word)]
    // Spanish keeps "mockups" and "stockerly", English stems them "mockup" and "stockerli"
    assert.deepStrictEqual(at("mockups"), ["mockup"])
    assert.deepStrictEqual(at("stockerly"), ["stockerli"])
    assert.deepStrictEqual(analyzeQuery("¿dónde van los mockups?", []).variants, [[], []])
  })

  it("adds bigrams of Hangul words and 4-grams of German compounds as marked stand-ins", () => {
    const korean = analyzeText("통합테스트를 실행")
    assert.deepStrictEqual(korean.words, ["통합테스트", "실행"])
    assert.deepStrictEqual(korean.grams[0], ["통합", "합테", "테스", "스트"].map((g) => GRAM_MARK + g))
    const german = analyzeText("die Mehrwertsteuer ist falsch", "de")
    assert.include(german.grams[0]!, GRAM_MARK + "steu")
    assert.deepStrictEqual(analyzeText("the database tests").grams, [[], []])
  })

  it("weighs frequent words low and rare ones high, in every language", () => {
    assert.isBelow(priorWeight("en", stemWord("en", "make")), 0.6)
    assert.isBelow(priorWeight("de", stemWord("de", "machen")), 0.6)
    assert.strictEqual(priorWeight("en", "tokio"), 1)
    assert.strictEqual(priorWeight("de", stemWord("de", "datenbank")), 1)
    assert.isAbove(priorWeight("en", stemWord("en", "migration")), priorWeight("en", stemWord("en", "people")))
  })
})
