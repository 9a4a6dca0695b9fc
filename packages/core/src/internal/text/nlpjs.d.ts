/** `@nlpjs/lang-pl` ships no types: the one class memdir uses, its Polish light stemmer. */
declare module "@nlpjs/lang-pl/src/stemmer-pl.js" {
  export default class StemmerPl {
    stem(word: string): string
  }
}
