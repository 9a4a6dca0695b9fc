/**
 * Text analysis for the offline selector: tokens, stopwords, a light stemmer and a short list of
 * developer abbreviations. Pure and dependency-free so the benchmark and the evals can reuse it.
 *
 * "Light" on purpose: memories are one-line descriptions, so a full Porter stemmer buys little, while a
 * wrong conflation (user → use) costs precision. Each rule below is conservative and applied identically
 * to queries and memories, which is all BM25 needs.
 */

/** Function words and chat filler that never decide relevance. */
export const STOPWORDS: ReadonlySet<string> = new Set(
  `a about above after again against all also am an and any are aren't as at be because been before
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
  without`.split(/\s+/)
)

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
 * Split into lower-case word tokens: camelCase and snake_case parts, numbers and version tags kept
 * (`v1`, `p95`, `2026`), single letters dropped. Apostrophes inside words are kept so stopwords match.
 */
export const rawTokens = (text: string): Array<string> => {
  const spaced = text
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .toLowerCase()
    .replace(/[’‘]/g, "'")
  const out: Array<string> = []
  for (const match of spaced.matchAll(/[a-z0-9]+(?:['-][a-z0-9]+)*/g)) {
    const token = match[0]
    // Keep known hyphenated forms whole ("end-to-end", "e-mail"); split the rest into their parts.
    if (token.includes("-") && !CANONICAL.has(token)) {
      for (const part of token.split("-")) if (part.length > 1) out.push(part)
    } else if (token.length > 1) {
      out.push(token)
    }
  }
  return out
}

const VOWEL = /[aeiouy]/

/** A conservative suffix stripper; the same word family maps to the same stem in queries and memories. */
export const stem = (word: string): string => {
  let w = word.endsWith("'s") ? word.slice(0, -2) : word
  if (w.length <= 2 || /\d/.test(w)) return w
  // British and American spellings meet ("optimise" = "optimize").
  w = w.replace(/isation$/, "ization").replace(/is(e|ed|es|ing)$/, "iz$1")
  if (w.endsWith("ies") && w.length > 4) w = w.slice(0, -3) + "y"
  else if (w.endsWith("sses")) w = w.slice(0, -2)
  else if (w.endsWith("s") && !/(ss|us)$/.test(w) && !(w.endsWith("is") && w.length > 4)) w = w.slice(0, -1)
  const strip = (suffix: string, minRest: number): boolean => {
    if (!w.endsWith(suffix)) return false
    const rest = w.slice(0, -suffix.length)
    if (rest.length < minRest || !VOWEL.test(rest)) return false
    w = rest
    return true
  }
  if (w.endsWith("ied") && w.length > 4) w = w.slice(0, -3) + "y"
  else if (strip("ing", 2) || strip("ed", 2)) {
    // running → runn → run; but keep ll/ss/zz (fill, pass).
    if (/([^aeiouylsz])\1$/.test(w)) w = w.slice(0, -1)
  }
  // migration → migrate, optimization → optimize, so the noun and the verb share a stem.
  if (w.endsWith("ization") && w.length > 9) w = w.slice(0, -5) + "e"
  else if (w.endsWith("ation") && w.length > 7) w = w.slice(0, -3) + "e"
  else if (!strip("ment", 4) && !strip("ness", 3)) strip("ly", 4)
  if (w.length > 2 && w.endsWith("e")) w = w.slice(0, -1)
  return w
}

/** Query words that carry little topical signal in a coding session; they count, but weakly. */
export const WEAK_STEMS: ReadonlySet<string> = new Set(
  `fix add mak us chang updat creat new get set work cod fil run writ check look try show explain help
  tell see go keep put find start take giv know think good right today day week first last next old
  call stuff`.split(/\s+/)
)

const PHRASES_BY_FIRST_WORD = new Map<string, Array<readonly [string, string, string]>>()
for (const phrase of PHRASES) {
  const same = PHRASES_BY_FIRST_WORD.get(phrase[0])
  if (same === undefined) PHRASES_BY_FIRST_WORD.set(phrase[0], [phrase])
  else same.push(phrase)
}

// Stemming dominates analysis time and vocabularies are small: memoise (bounded, so no unbounded growth).
const STEM_CACHE_LIMIT = 50_000
const stemCache = new Map<string, string>()
const cachedStem = (word: string): string => {
  let stemmed = stemCache.get(word)
  if (stemmed === undefined) {
    if (stemCache.size >= STEM_CACHE_LIMIT) stemCache.clear()
    stemmed = stem(word)
    stemCache.set(word, stemmed)
  }
  return stemmed
}

/** Tokens → canonical stems, stopwords and phrase rewrites applied. */
export const analyze = (text: string): Array<string> => {
  const tokens = rawTokens(text)
  const out: Array<string> = []
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!
    const phrase = PHRASES_BY_FIRST_WORD.get(token)?.find(([, second]) => tokens[i + 1] === second)
    if (phrase !== undefined) {
      out.push(phrase[2])
      i++
      continue
    }
    if (STOPWORDS.has(token)) continue
    const canonicals = CANONICAL.get(token)
    if (canonicals === undefined) out.push(cachedStem(token))
    else for (const canonical of canonicals) out.push(cachedStem(canonical))
  }
  return out
}

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
