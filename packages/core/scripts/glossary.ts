/**
 * Generates `src/internal/text/glossary.data.txt` from `scripts/glossary.txt`, the concepts the offline selector
 * translates a request's words with (`translation.ts`): the lines as written, and per language the lookup keys of
 * their words (stems, as the analysis makes them), so a request never stems the glossary. A data file, not a module:
 * a process reads it on its first translation lookup, and one that needs none (most) never parses 800 KB of
 * JavaScript at start-up. Run `pnpm --filter @memdir/core run glossary` after editing the text (one sense per line:
 * "en: word, word | de: …", the fields in the order of `GLOSSARY_LANGUAGES`, a language left out where it has no
 * natural word); `test/Translation.test.ts` fails while the committed file differs from what this produces. A
 * malformed line stops the run with its number and what is wrong.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import {
  GLOSSARY_LANGUAGES,
  glossaryKeys,
  glossaryLineProblem,
  renderGlossaryData
} from "../src/internal/text/glossaryFormat.js"

const here = path.dirname(fileURLToPath(import.meta.url))

export const GLOSSARY_SOURCE = path.join(here, "glossary.txt")
export const GLOSSARY_FILE = path.join(here, "..", "src", "internal", "text", "glossary.data.txt")

export const generateGlossary = (source: string = fs.readFileSync(GLOSSARY_SOURCE, "utf8")): string => {
  const lines = source.split("\n").filter((line) => line.length > 0)
  const problems = lines.flatMap((line, i) => {
    const problem = glossaryLineProblem(line)
    return problem === undefined ? [] : [`line ${i + 1}: ${problem}`]
  })
  if (problems.length > 0) throw new Error(`scripts/glossary.txt:\n  ${problems.join("\n  ")}`)
  const keys = glossaryKeys(lines)
  // a line starting with "@" would read as a section header of the data file
  const headerLike = GLOSSARY_LANGUAGES.flatMap((language) =>
    keys[language].split("\n").filter((row) => row.startsWith("@")).map((row) => `${language} key ${row}`)
  )
  if (headerLike.length > 0) throw new Error(`scripts/glossary.txt: keys starting with "@": ${headerLike.join(", ")}`)
  return renderGlossaryData({ concepts: lines.join("\n"), keys })
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  fs.writeFileSync(GLOSSARY_FILE, generateGlossary())
}
