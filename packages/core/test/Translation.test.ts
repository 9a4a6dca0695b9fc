/**
 * The glossary and what the offline selector does with it: a request's words translated into the languages its
 * memories are written in (`translation.ts`), so a German, Chinese or Korean request finds an English memory that
 * shares no word with it, and an English request a Chinese one.
 */
import { assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { generateGlossary, GLOSSARY_FILE, GLOSSARY_SOURCE } from "../scripts/glossary.js"
import { analyzeQuery } from "../src/internal/text/analysis.js"
import { glossaryLineProblem, parseConcept } from "../src/internal/text/glossaryFormat.js"
import { conceptsOfWord, GLOSSARY_URL, readGlossary, wordsOfConcepts } from "../src/internal/text/translation.js"
import { defaultOfflineOptions, explainSelection, matchedTermText, selectRelevantMemories } from "../src/Selector.js"
import { memoryHeader } from "./support/memoryHeader.js"

const memory = memoryHeader

const GLOSSARY = readGlossary(GLOSSARY_URL).concepts()

/** The words of a word's concept groups an English (or Spanish) text may use, one array per group. */
const translationsOf = (language: Parameters<typeof conceptsOfWord>[0], word: string, into: "en" | "es" = "en") =>
  conceptsOfWord(language, word).map((ids) => wordsOfConcepts(ids, into))

describe("glossary", () => {
  it("ships exactly what the generator makes of scripts/glossary.txt, where translation reads it", () => {
    assert.strictEqual(fs.readFileSync(GLOSSARY_FILE, "utf8"), generateGlossary())
    assert.strictEqual(fileURLToPath(GLOSSARY_URL), GLOSSARY_FILE)
  })

  it("a missing or damaged data file is an error naming the file and the remedy", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "memdir-glossary-"))
    try {
      const missing = path.join(dir, "glossary.data.txt")
      assert.throws(() => readGlossary(pathToFileURL(missing)), `${missing} cannot be read`)
      assert.throws(() => readGlossary(pathToFileURL(missing)), /ENOENT.*: reinstall memdir$/)
      fs.writeFileSync(missing, generateGlossary().replace("@keys ko", "@keys xx"))
      assert.throws(() => readGlossary(pathToFileURL(missing)), /damaged \(it has no @keys ko section\): reinstall/)
      fs.writeFileSync(missing, "")
      assert.throws(() => readGlossary(pathToFileURL(missing)), /damaged \(its first line is not/)
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it("holds concepts in five languages or more, English first, no word twice on a line", () => {
    const lines = GLOSSARY.split("\n")
    assert.isAbove(lines.length, 400)
    for (const line of lines) {
      assert.isUndefined(glossaryLineProblem(line), line)
      const concept = parseConcept(line)
      assert.isTrue(concept.has("en"), line)
      assert.isAtLeast(concept.size, 5, line)
      for (const words of concept.values()) assert.strictEqual(new Set(words).size, words.length, line)
    }
    assert.strictEqual(fs.readFileSync(GLOSSARY_SOURCE, "utf8"), `${GLOSSARY}\n`)
  })

  it("refuses a malformed line with its number and what is wrong", () => {
    assert.match(glossaryLineProblem("en: block (traffic, user) | de: blockieren")!, /note or punctuation/)
    assert.match(glossaryLineProblem("de: Ordner | en: folder")!, /out of order/)
    assert.match(glossaryLineProblem("en: folder | xx: dossier")!, /not a glossary language/)
    assert.match(glossaryLineProblem("en: folder, , dir | de: Ordner")!, /empty word/)
    assert.match(glossaryLineProblem("en: folder")!, /two languages/)
    assert.throws(() => generateGlossary("en: folder | de: Ordner\nen: folder de: Ordner\n"), /line 2: /)
  })
})

describe("conceptsOfWord", () => {
  it("finds a word by its stem in the request's language", () => {
    const [folder] = translationsOf("de", "Ordnern")
    assert.include(folder, "folder")
    assert.include(folder, "文件夹")
    assert.notInclude(folder, "carpeta", "Spanish words are not for an English text")
    assert.include(translationsOf("de", "Ordnern", "es")[0], "carpeta")
    assert.include(translationsOf("es", "contraseñas")[0], "password")
  })

  it("finds a German compound no line holds through its two parts", () => {
    const groups = translationsOf("de", "Serverzugriff")
    assert.strictEqual(groups.length, 2)
    assert.include(groups[0], "server")
    assert.include(groups[1], "access")
  })

  it("reads Chinese and Japanese words as written, and a Korean word without its particle", () => {
    assert.include(translationsOf("en", "密码")[0], "password")
    assert.include(translationsOf("en", "パスワード")[0], "password")
    assert.include(translationsOf("ko", "비밀번호를")[0], "password")
    // a Latin-script word of a Korean request is an English one
    assert.include(translationsOf("ko", "folders")[0], "폴더")
    // a Russian word by its stem, its developers' slang too; a Latin-script word of a Russian request is English
    assert.include(translationsOf("ru", "пароля")[0], "password")
    assert.include(translationsOf("ru", "задеплоить")[0], "deploy")
    assert.include(translationsOf("en", "стейдже")[0], "staging", "a Cyrillic word is Russian whatever the request")
    assert.include(translationsOf("ru", "folders")[0], "폴더")
    // a Russian or Korean text writes its technical words in English too, which no word of its script can be taken for
    assert.include(wordsOfConcepts(conceptsOfWord("en", "folder")[0]!, "ru"), "folder")
    assert.notInclude(wordsOfConcepts(conceptsOfWord("en", "folder")[0]!, "es"), "folder")
  })

  it("finds a Ukrainian word by its Ukrainian stem where its Russian one is no key", () => {
    // "стейджі" (on staging) is "стейдж" to Ukrainian's stemmer only; a Russian request gets no such second try
    assert.deepStrictEqual(conceptsOfWord("uk", "стейджі"), conceptsOfWord("ru", "стейдж"))
    assert.strictEqual(conceptsOfWord("uk", "стейджі").length, 1)
    assert.deepStrictEqual(conceptsOfWord("ru", "стейджі"), [])
  })

  it("finds nothing for a word, or a compound's parts, it does not hold", () => {
    assert.deepStrictEqual(conceptsOfWord("en", "stockerly"), [])
    assert.deepStrictEqual(conceptsOfWord("de", "Xyzqwertzuiop"), [])
    assert.deepStrictEqual(conceptsOfWord("en", "hostname-ish-thing"), [])
  })

  it("gives analyzeQuery a word's translations in the candidates' languages, none without candidates", () => {
    const german = analyzeQuery("Wo liegt das Passwort?", ["en"])
    const at = german.words.indexOf("passwort")
    assert.include(german.translations(at).flat(), "password")
    assert.isFalse(german.translations(at).flat().includes("passwort"), "the word's own term is no translation")
    assert.deepStrictEqual(analyzeQuery("Wo liegt das Passwort?", []).translations(at), [])
  })
})

describe("translations in the offline selector", () => {
  const english = [
    memory(
      "password-rotation.md",
      "Password rotation",
      "The database password is rotated every 90 days through the vault; never paste it into chat"
    ),
    memory("folder-layout.md", "Folder layout", "Generated output goes to the out folder, which is never committed"),
    memory("release-notes.md", "Release notes", "Write the changelog entry before tagging a release")
  ]
  const chinese = [
    memory("数据库密码.md", "数据库密码轮换", "数据库密码每90天通过保险库轮换一次，不要贴到聊天里"),
    memory("发布流程.md", "发布流程", "打标签之前先写更新日志")
  ]
  const noTranslation = { ...defaultOfflineOptions, translationWeight: 0 }

  it("finds an English memory for a German, Spanish, Chinese, Korean or Russian request sharing no word with it", () => {
    for (
      const query of [
        "Wie oft muss das Passwort gewechselt werden?",
        "¿Cada cuánto hay que cambiar la contraseña?",
        "数据库密码多久要换一次",
        "비밀번호는 얼마나 자주 바꿔야 해?",
        "Как часто надо менять пароль?"
      ]
    ) {
      assert.deepStrictEqual(selectRelevantMemories({ query, candidates: english }), ["password-rotation.md"], query)
      assert.deepStrictEqual(selectRelevantMemories({ query, candidates: english }, noTranslation), [], query)
    }
  })

  it("finds an English memory for a Polish, Turkish, Swedish, Ukrainian or Indonesian request, too", () => {
    for (
      const query of [
        "Jak często trzeba zmieniać hasło?",
        "Şifreyi ne sıklıkla değiştirmek gerekiyor?",
        "Hur ofta måste man byta lösenord?",
        "Як часто треба змінювати пароль?",
        "Seberapa sering kata sandi harus diganti?"
      ]
    ) {
      assert.deepStrictEqual(selectRelevantMemories({ query, candidates: english }), ["password-rotation.md"], query)
      assert.deepStrictEqual(selectRelevantMemories({ query, candidates: english }, noTranslation), [], query)
    }
  })

  it("finds a Chinese memory for an English request", () => {
    const query = "How often is the database password rotated?"
    assert.deepStrictEqual(selectRelevantMemories({ query, candidates: chinese }), ["数据库密码.md"])
    assert.deepStrictEqual(selectRelevantMemories({ query, candidates: chinese }, noTranslation), [])
  })

  it("counts a translated word as known, and explains where its translation matched", () => {
    const explanation = explainSelection({ query: "Wo liegt der Ordner für die Ausgabe?", candidates: english })
    assert.deepStrictEqual(explanation.selected, ["folder-layout.md"])
    assert.notInclude(explanation.unknownWords, "ordn")
    const kept = explanation.considered.find((c) => c.path === "folder-layout.md")!
    const ordner = kept.matched.find((m) => m.term === "ordn")!
    assert.deepStrictEqual(ordner.translatedAs, ["folder"])
    assert.deepStrictEqual(ordner.fields, ["name", "description", "path"])
    assert.strictEqual(matchedTermText(ordner), "ordn as folder (name, description, path)")
    // a word matched in its own form says nothing of translations
    const own = explainSelection({ query: "folder layout", candidates: english }).considered[0]!.matched[0]!
    assert.strictEqual(matchedTermText(own), "folder (name, description, path)")
  })

  it("translates only a word no candidate contains: one a memory writes needs no synonyms", () => {
    const directory = memory(
      "directory-structure.md",
      "Directory structure",
      "Sources live under src, tests beside them"
    )
    const query = "which folder holds generated output"
    // "folder" is in folder-layout.md: the directory note is not pulled in as its synonym
    assert.deepStrictEqual(
      explainSelection({ query, candidates: [...english, directory] }).considered.map((c) => c.path),
      ["folder-layout.md"]
    )
    // without the folder note, no candidate has "folder": its synonym "directory" finds the other one
    const alone = explainSelection({ query: "which folder", candidates: [directory, english[2]!] })
    assert.deepStrictEqual(alone.considered.map((c) => [c.path, c.matched.map(matchedTermText)]), [
      ["directory-structure.md", ["folder as directori (name, path)"]]
    ])
  })

  it("leaves a request in the memories' own language as it was", () => {
    const query = "where does generated output go"
    assert.deepStrictEqual(
      explainSelection({ query, candidates: english }).considered.map((c) => [c.path, c.score]),
      explainSelection({ query, candidates: english }, noTranslation).considered.map((c) => [c.path, c.score])
    )
  })
})
