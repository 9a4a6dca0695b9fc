/**
 * Suites as data (docs/evals.md): one directory per suite under `evals/`, with a `suite.yaml` (or `suite.json`) that a
 * prompt engineer reads and edits without TypeScript, plus its fixtures. A suite names the prompt section it
 * varies, its variants (a built-in variant, a full text, or a patch of the default), its scenarios (memory-dir
 * fixture with ages in days, a small project, a conversation, the task), its scorers and its default trials.
 *
 * Loading validates everything up front and reports every problem with its file, line and field path
 * (`evals/staleness/suite.yaml:14: scenarios[0].memories.files[1].ageDays: Expected a non-negative integer…`),
 * so a typo fails in a second, not after an hour of model calls.
 */
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Path from "effect/Path"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import * as Struct from "effect/Struct"
import * as YAML from "yaml"
import { EvalIoError, InvalidSuiteError, SuiteNotFoundError, type SuiteProblem } from "./Errors.js"
import { memoryPromptSections, resolveVariant, type SectionCatalog, type SectionSource } from "./Variants.js"

// ---------------------------------------------------------------------------------------------------------------
// Building blocks
// ---------------------------------------------------------------------------------------------------------------

const NonEmptyString = Schema.String.check(
  Schema.makeFilter((s) => s.trim().length > 0 || "must not be empty")
)

/** Names files and report columns. */
export const Identifier = Schema.String.check(
  Schema.makeFilter((s) =>
    /^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(s) ||
    `${JSON.stringify(s)} is not a valid name: use letters, digits, '.', '_' or '-', starting with a letter or digit`
  )
)

/** A path inside the suite's directory or a fixture: relative, `/`-separated, never leaving it. */
export const RelativePath = Schema.String.check(
  Schema.makeFilter((s) => {
    if (s.length === 0) return "must not be empty"
    if (s.includes("\0")) return "must not contain a null byte"
    if (s.startsWith("/") || /^[A-Za-z]:/.test(s) || s.includes("\\")) {
      return `${JSON.stringify(s)} must be a relative path with '/' separators`
    }
    if (s.split("/").some((segment) => segment === "..")) return `${JSON.stringify(s)} must not contain '..'`
    return true
  })
)

/** A JavaScript regular expression, matched case-insensitively. */
export const Pattern = Schema.String.check(
  Schema.makeFilter((s) => {
    if (s.length === 0) return "must not be empty"
    try {
      new RegExp(s, "iu")
      return true
    } catch (error) {
      return `not a valid regular expression: ${(error as Error).message}`
    }
  })
)

const NonNegativeInt = Schema.Number.check(
  Schema.makeFilter((n) => (Number.isInteger(n) && n >= 0) || `expected a whole number ≥ 0, got ${n}`)
)
const PositiveInt = Schema.Number.check(
  Schema.makeFilter((n) => (Number.isInteger(n) && n >= 1) || `expected a whole number ≥ 1, got ${n}`)
)
const NonNegativeNumber = Schema.Number.check(
  Schema.makeFilter((n) => (Number.isFinite(n) && n >= 0) || `expected a non-negative number, got ${n}`)
)
const Rate = Schema.Number.check(
  Schema.makeFilter((n) => (n >= 0 && n <= 1) || `expected a number from 0 to 1, got ${n}`)
)

/** An ISO date or date-time ("2026-03-10", "2026-03-10T09:00:00Z"): the scenario's "now". */
export const IsoDate = Schema.String.check(
  Schema.makeFilter((s) =>
    (/^\d{4}-\d{2}-\d{2}(?:T[\d:.]+(?:Z|[+-]\d{2}:\d{2})?)?$/.test(s) && !Number.isNaN(Date.parse(s))) ||
    `${JSON.stringify(s)} is not an ISO date like 2026-03-10 or 2026-03-10T09:00:00Z`
  )
)

/** Pinned "now" of scenarios that do not set one: ages and dates must not depend on the day a suite runs. */
export const DEFAULT_NOW = "2026-03-10T12:00:00Z"

// ---------------------------------------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------------------------------------

/** One memory file of a fixture: either its frontmatter fields and body, or its raw `content`. */
export const MemoryFileFixture = Schema.Struct({
  path: RelativePath,
  /** Whole days between the file's mtime and the scenario's "now". */
  ageDays: NonNegativeInt.pipe(Schema.withDecodingDefaultType(Effect.succeed(0))),
  name: Schema.optional(NonEmptyString),
  description: Schema.optional(NonEmptyString),
  type: Schema.optional(NonEmptyString),
  body: Schema.optional(Schema.String),
  /** The whole file, frontmatter included (for broken or unusual files). Excludes the four fields above. */
  content: Schema.optional(Schema.String)
})
export type MemoryFileFixture = typeof MemoryFileFixture.Type

export const MemoryDirFixture = Schema.Struct({
  /** A directory of memory files, relative to the suite directory. */
  dir: Schema.optional(RelativePath),
  /** Age in days of files from `dir` (default 0). */
  ages: Schema.Record(Schema.String, NonNegativeInt).pipe(Schema.withDecodingDefaultType(Effect.succeed({}))),
  files: Schema.Array(MemoryFileFixture).pipe(Schema.withDecodingDefaultType(Effect.succeed([]))),
  /** MEMORY.md as written; default: one index line per memory file. */
  index: Schema.optional(Schema.String)
})
export type MemoryDirFixture = typeof MemoryDirFixture.Type

export const ProjectFixture = Schema.Struct({
  /** A directory copied as the project, relative to the suite directory. */
  dir: Schema.optional(RelativePath),
  /** Files written into the project (relative path → content), after `dir`. */
  files: Schema.Record(Schema.String, Schema.String).pipe(Schema.withDecodingDefaultType(Effect.succeed({})))
})
export type ProjectFixture = typeof ProjectFixture.Type

export const ConversationMessage = Schema.Struct({
  role: Schema.Literals(["user", "assistant"]),
  content: NonEmptyString
})
export type ConversationMessage = typeof ConversationMessage.Type

// ---------------------------------------------------------------------------------------------------------------
// Scorers
// ---------------------------------------------------------------------------------------------------------------

const scorerFields = {
  /** Column name in reports (default: the type, numbered when repeated). */
  id: Schema.optional(Identifier),
  /** What a pass means, in words, for the report. */
  label: Schema.optional(Schema.String),
  /** Whether it decides the trial's pass (default true; false: reported only). */
  required: Schema.Boolean.pipe(Schema.withDecodingDefaultType(Effect.succeed(true)))
}

const Expect = Schema.Boolean.pipe(Schema.withDecodingDefaultType(Effect.succeed(true)))

/** A tool was called on a path (its input mentions it) before the final answer. */
export const ToolBeforeAnswerScorer = Schema.Struct({
  type: Schema.Literal("tool-before-answer"),
  path: NonEmptyString,
  /** Which tools count (default: any tool). */
  tools: Schema.optional(Schema.Array(NonEmptyString)),
  ...scorerFields
})

/** A tool was (or was not) called, optionally on a path. */
export const ToolCalledScorer = Schema.Struct({
  type: Schema.Literal("tool-called"),
  tool: Schema.optional(NonEmptyString),
  path: Schema.optional(NonEmptyString),
  expect: Expect,
  ...scorerFields
})

/** The final answer matches (or does not match) a pattern. */
export const AnswerMatchesScorer = Schema.Struct({
  type: Schema.Literal("answer-matches"),
  pattern: Pattern,
  expect: Expect,
  ...scorerFields
})

/** The final answer asks the user a question (or does not). */
export const AsksQuestionScorer = Schema.Struct({
  type: Schema.Literal("asks-question"),
  expect: Expect,
  ...scorerFields
})

/** A memory file (not MEMORY.md) was created or changed, optionally one whose path matches `path`. */
export const MemoryWrittenScorer = Schema.Struct({
  type: Schema.Literal("memory-written"),
  path: Schema.optional(Pattern),
  expect: Schema.Boolean,
  ...scorerFields
})

/** Memory content matches a pattern: in files changed by the run (default) or in all files after it. */
export const MemoryMatchesScorer = Schema.Struct({
  type: Schema.Literal("memory-matches"),
  pattern: Pattern,
  expect: Schema.Boolean,
  in: Schema.Literals(["changed", "all"]).pipe(Schema.withDecodingDefaultType(Effect.succeed("changed" as const))),
  ...scorerFields
})

const NamedPattern = Schema.Struct({ id: Identifier, pattern: Pattern })

/** Known memorable facts found in memory after the run (capture rate); passes at `minRate`. */
export const FactsCapturedScorer = Schema.Struct({
  type: Schema.Literal("facts-captured"),
  facts: Schema.NonEmptyArray(NamedPattern),
  minRate: Rate.pipe(Schema.withDecodingDefaultType(Effect.succeed(1))),
  in: Schema.Literals(["changed", "all"]).pipe(Schema.withDecodingDefaultType(Effect.succeed("all" as const))),
  ...scorerFields
})

/** Known derivable noise saved anyway (false saves); passes at most `max`. */
export const FalseSavesScorer = Schema.Struct({
  type: Schema.Literal("false-saves"),
  noise: Schema.NonEmptyArray(NamedPattern),
  max: NonNegativeInt.pipe(Schema.withDecodingDefaultType(Effect.succeed(0))),
  ...scorerFields
})

/** Memory files written by the run use absolute dates, not "yesterday" / "next Thursday". */
export const NoRelativeDatesScorer = Schema.Struct({
  type: Schema.Literal("no-relative-dates"),
  ...scorerFields
})

/** Number of memory files after the run. */
export const MemoryCountScorer = Schema.Struct({
  type: Schema.Literal("memory-count"),
  min: Schema.optional(NonNegativeInt),
  max: Schema.optional(NonNegativeInt),
  ...scorerFields
})

/** MEMORY.md points at every memory file, and only at files that exist. */
export const IndexConsistentScorer = Schema.Struct({
  type: Schema.Literal("index-consistent"),
  ...scorerFields
})

/**
 * MODEL-GRADED: a grader model reads the transcript and the rubric and says pass or fail. Reported apart from the
 * deterministic scorers, and does not decide a trial's pass unless `required: true`.
 */
export const RubricScorer = Schema.Struct({
  type: Schema.Literal("rubric"),
  rubric: NonEmptyString,
  ...scorerFields,
  required: Schema.Boolean.pipe(Schema.withDecodingDefaultType(Effect.succeed(false)))
})

export const Scorer = Schema.Union([
  ToolBeforeAnswerScorer,
  ToolCalledScorer,
  AnswerMatchesScorer,
  AsksQuestionScorer,
  MemoryWrittenScorer,
  MemoryMatchesScorer,
  FactsCapturedScorer,
  FalseSavesScorer,
  NoRelativeDatesScorer,
  MemoryCountScorer,
  IndexConsistentScorer,
  RubricScorer
])
export type Scorer = typeof Scorer.Type

/** Selector suites: a query passes with every relevant memory found and nothing irrelevant selected. */
export const SelectionScorer = Schema.Struct({
  type: Schema.Literal("selection"),
  /** Share of the relevant memories a pass must find (1: all of them). */
  minRecall: Rate.pipe(Schema.withDecodingDefaultType(Effect.succeed(1))),
  /** Irrelevant memories (neither relevant nor acceptable) a pass may include. */
  maxIrrelevant: NonNegativeInt.pipe(Schema.withDecodingDefaultType(Effect.succeed(0))),
  ...scorerFields
})
export type SelectionScorer = typeof SelectionScorer.Type

// ---------------------------------------------------------------------------------------------------------------
// Variants
// ---------------------------------------------------------------------------------------------------------------

/** A patch of a section's text: its heading, find/replace edits, text before or after. */
export const PromptPatch = Schema.Struct({
  /** The built-in variant to patch (default: the section's default). */
  base: Schema.optional(NonEmptyString),
  /** New text of the section's first Markdown heading (its level is kept). */
  heading: Schema.optional(NonEmptyString),
  /** Exact-text edits, in order; each `find` must occur in the text. */
  replace: Schema.optional(Schema.Array(Schema.Struct({ find: NonEmptyString, with: Schema.String }))),
  prepend: Schema.optional(NonEmptyString),
  append: Schema.optional(NonEmptyString)
})
export type PromptPatch = typeof PromptPatch.Type

/** A prompt-section variant: exactly one of `builtin` (a named variant in the code), `text` or `patch`. */
export const PromptVariant = Schema.Struct({
  name: Identifier,
  description: Schema.optional(Schema.String),
  builtin: Schema.optional(NonEmptyString),
  text: Schema.optional(NonEmptyString),
  patch: Schema.optional(PromptPatch)
})
export type PromptVariant = typeof PromptVariant.Type

/** Knobs of the offline selector a variant may change (see Selector.defaultOfflineOptions). */
export const OfflineSelectorPatch = Schema.Struct({
  minEvidence: Schema.optional(NonNegativeNumber),
  relativeToTop: Schema.optional(Rate),
  clearEvidence: Schema.optional(NonNegativeNumber),
  recentToolWarningBonus: Schema.optional(NonNegativeNumber)
})
export type OfflineSelectorPatch = typeof OfflineSelectorPatch.Type

/** A variant's options: the offline selector's knobs, or the BM25 baseline's `threshold` (Bm25Baseline.ts). */
export const SelectorVariantOptions = Schema.Struct({
  ...OfflineSelectorPatch.fields,
  /** `bm25` only: the score a hit must reach (default: the one `pnpm evals:generalize --written` chooses). */
  threshold: Schema.optional(NonNegativeNumber)
})
export type SelectorVariantOptions = typeof SelectorVariantOptions.Type

export const SelectorVariant = Schema.Struct({
  name: Identifier,
  description: Schema.optional(Schema.String),
  /**
   * `offline`: memdir's offline selector, no key. `bm25`: the textbook BM25+ baseline it is measured against
   * (Bm25Baseline.ts), no key. `llm`: the model selector (needs a model or a cassette).
   */
  selector: Schema.Literals(["offline", "bm25", "llm"]),
  options: Schema.optional(SelectorVariantOptions),
  /** The LLM selector's prompt: a built-in variant name, or a full text / patch as for prompt sections. */
  prompt: Schema.optional(
    Schema.Union([NonEmptyString, PromptVariant.mapFields(Struct.omit(["name", "description"]))])
  )
})
export type SelectorVariant = typeof SelectorVariant.Type

// ---------------------------------------------------------------------------------------------------------------
// Suites
// ---------------------------------------------------------------------------------------------------------------

export const Scenario = Schema.Struct({
  id: Identifier,
  description: Schema.optional(Schema.String),
  /** Labels the report filters by (e.g. "stale-path", "control"). */
  tags: Schema.optional(Schema.Array(Identifier)),
  /** "Now" for this scenario (ages of memory files, dates in prompts); default: the suite's. */
  now: Schema.optional(IsoDate),
  memories: Schema.optional(MemoryDirFixture),
  project: Schema.optional(ProjectFixture),
  /** Earlier turns, oldest first. */
  conversation: Schema.Array(ConversationMessage).pipe(Schema.withDecodingDefaultType(Effect.succeed([]))),
  /** The user's message that starts the run (agent suites). Extraction runs over `conversation` alone. */
  task: Schema.optional(NonEmptyString),
  /**
   * Memories shown to the agent as recalled (with age and staleness caveat): relative paths, or `selector`
   * to let the offline selector choose from the task. Default: none.
   */
  recall: Schema.optional(Schema.Union([Schema.Literal("selector"), Schema.Array(RelativePath)])),
  /** Added to the suite's scorers for this scenario. */
  scorers: Schema.Array(Scorer).pipe(Schema.withDecodingDefaultType(Effect.succeed([])))
})
export type Scenario = typeof Scenario.Type

const suiteFields = {
  name: Identifier,
  description: NonEmptyString,
  /** The variant others are compared with (default: the first). */
  baseline: Schema.optional(Identifier),
  now: IsoDate.pipe(Schema.withDecodingDefaultType(Effect.succeed(DEFAULT_NOW)))
}

/** Agent, extraction and dream suites: each trial is a model run whose transcript and files are scored. */
export const ModelSuite = Schema.Struct({
  kind: Schema.Literals(["agent", "extraction", "dream"]),
  ...suiteFields,
  /** The prompt section the variants replace (a memory prompt section, `extraction` or `dream`). */
  section: NonEmptyString,
  variants: Schema.NonEmptyArray(PromptVariant),
  trials: PositiveInt.pipe(Schema.withDecodingDefaultType(Effect.succeed(3))),
  /** Model calls per run at most. */
  maxTurns: PositiveInt.pipe(Schema.withDecodingDefaultType(Effect.succeed(8))),
  maxTokens: PositiveInt.pipe(Schema.withDecodingDefaultType(Effect.succeed(2048))),
  /** Applied to every scenario. */
  scorers: Schema.Array(Scorer).pipe(Schema.withDecodingDefaultType(Effect.succeed([]))),
  scenarios: Schema.NonEmptyArray(Scenario)
})
export type ModelSuite = typeof ModelSuite.Type

export const SelectorScenario = Schema.Struct({
  id: Identifier,
  /** Free-form category for breakdowns (direct, paraphrase, none, negation, tools…). */
  kind: Schema.optional(Schema.String),
  query: NonEmptyString,
  /**
   * For a suite whose `memories` holds several memory directories: the one (a sub-directory) this query is asked
   * in. Its files are the only candidates, and `relevant`/`acceptable` are relative to it. Default: all files.
   */
  dir: Schema.optional(RelativePath),
  /** The language of the query and of its memories (for breakdowns). */
  language: Schema.optional(Schema.String),
  /** Memories a selector should surface. Empty with no `acceptable`: nothing should be surfaced. */
  relevant: Schema.Array(RelativePath),
  /** Memories whose selection is not an error. */
  acceptable: Schema.Array(RelativePath).pipe(Schema.withDecodingDefaultType(Effect.succeed([]))),
  recentTools: Schema.Array(NonEmptyString).pipe(Schema.withDecodingDefaultType(Effect.succeed([]))),
  /** Why the labels are what they are (for people). */
  note: Schema.optional(Schema.String)
})
export type SelectorScenario = typeof SelectorScenario.Type

/** A labels file: `{ "queries": [SelectorScenario…] }` (the format of core's selector-labels.json). */
export const SelectorLabels = Schema.Struct({
  description: Schema.optional(Schema.String),
  /** The memory directory the labels refer to (informational: the suite's `memories` decides). */
  memoryDir: Schema.optional(Schema.String),
  queries: Schema.Array(SelectorScenario)
})

export const SelectorSuite = Schema.Struct({
  kind: Schema.Literal("selector"),
  ...suiteFields,
  section: Schema.Literal("selector").pipe(Schema.withDecodingDefaultType(Effect.succeed("selector" as const))),
  variants: Schema.NonEmptyArray(SelectorVariant),
  /** The offline selector is deterministic: one trial is all it needs. */
  trials: PositiveInt.pipe(Schema.withDecodingDefaultType(Effect.succeed(1))),
  memories: MemoryDirFixture,
  /** A labels file (relative to the suite directory) with more scenarios. */
  labels: Schema.optional(RelativePath),
  scenarios: Schema.Array(SelectorScenario).pipe(Schema.withDecodingDefaultType(Effect.succeed([]))),
  scorer: SelectionScorer.pipe(
    Schema.withDecodingDefaultType(
      Effect.succeed({ type: "selection" as const, minRecall: 1, maxIrrelevant: 0, required: true })
    )
  )
})
export type SelectorSuite = typeof SelectorSuite.Type

export const SuiteDefinition = Schema.Union([ModelSuite, SelectorSuite])
export type SuiteDefinition = typeof SuiteDefinition.Type

/** A suite as loaded: the definition plus where it came from (labels resolved into `scenarios`). */
export type LoadedSuite =
  | (ModelSuite & { readonly file: string; readonly directory: string })
  | (SelectorSuite & { readonly file: string; readonly directory: string })

export const SUITE_FILES = ["suite.yaml", "suite.yml", "suite.json"] as const

// ---------------------------------------------------------------------------------------------------------------
// Parsing with file, line and field path in every error
// ---------------------------------------------------------------------------------------------------------------

/** `scenarios[0].memories.files[1].ageDays` */
export const formatFieldPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>(
    (out, key) =>
      typeof key === "number" ?
        `${out}[${key}]` :
        /^[A-Za-z_$][\w$-]*$/.test(String(key)) ?
        (out === "" ? String(key) : `${out}.${String(key)}`) :
        `${out}[${JSON.stringify(String(key))}]`,
    ""
  )

interface ParsedText {
  readonly value: unknown
  /** 1-based line of the value at a field path (or of its nearest existing parent). */
  readonly lineOf: (path: ReadonlyArray<PropertyKey>) => number | undefined
}

/** YAML 1.2 (a superset of JSON, so `.json` files get line numbers too). */
const parseText = (text: string): Result.Result<ParsedText, ReadonlyArray<SuiteProblem>> => {
  const lineCounter = new YAML.LineCounter()
  const document = YAML.parseDocument(text, { lineCounter, prettyErrors: true, uniqueKeys: true })
  if (document.errors.length > 0) {
    return Result.fail(document.errors.map((error) => ({
      path: "",
      ...(error.linePos === undefined ? {} : { line: error.linePos[0].line }),
      message: error.message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "")
    })))
  }
  const lineOf = (path: ReadonlyArray<PropertyKey>): number | undefined => {
    for (let depth = path.length; depth >= 0; depth--) {
      const node = document.getIn(path.slice(0, depth) as Array<unknown>, true) as { range?: [number, number, number] }
      if (node !== undefined && node !== null && typeof node === "object" && node.range !== undefined) {
        return lineCounter.linePos(node.range[0]).line
      }
    }
    return undefined
  }
  return Result.succeed({ value: document.toJS({ maxAliasCount: 100 }), lineOf })
}

/** Unknown keys read as a likely misspelling; every other issue keeps effect's own message. */
const formatIssue = SchemaIssue.makeFormatterStandardSchemaV1({
  leafHook: (issue) =>
    issue._tag === "UnexpectedKey" ? "unknown field (check its spelling)" : SchemaIssue.defaultLeafHook(issue)
})

/** Every schema issue as a problem at its field path. */
const decodeWith = <S extends Schema.Decoder<unknown>>(
  schema: S,
  parsed: ParsedText
): Result.Result<S["Type"], ReadonlyArray<SuiteProblem>> =>
  Schema.decodeUnknownResult(schema, { errors: "all", onExcessProperty: "error" })(parsed.value).pipe(
    Result.mapError((error) => {
      const issues = formatIssue(error.issue).issues.map((issue) => ({
        path: (issue.path ?? []).map((key) => typeof key === "object" ? key.key : key),
        message: issue.message
      }))
      // A mistake inside a nested value may also be reported at the field holding it: keep the most specific
      // issue only (the misspelt key, not its parent).
      const isPrefix = (short: ReadonlyArray<PropertyKey>, long: ReadonlyArray<PropertyKey>) =>
        short.length < long.length && short.every((key, i) => key === long[i])
      return issues.filter((issue) => !issues.some((other) => isPrefix(issue.path, other.path))).map((issue) => {
        const line = parsed.lineOf(issue.path)
        return { path: formatFieldPath(issue.path), ...(line === undefined ? {} : { line }), message: issue.message }
      })
    })
  )

/** Pure: decode a suite file's text; problems name the field and the line. */
export const parseSuiteText = (
  text: string
): Result.Result<
  { readonly definition: SuiteDefinition; readonly lineOf: ParsedText["lineOf"] },
  ReadonlyArray<SuiteProblem>
> =>
  Result.flatMap(
    parseText(text),
    (parsed) => Result.map(decodeByKind(parsed), (definition) => ({ definition, lineOf: parsed.lineOf }))
  )

/**
 * Decodes against the member of the union the file's `kind` picks: decoding against the whole union would report
 * a misspelt field of an agent suite as "kind: Expected selector" (the other member's complaint) instead of
 * naming the field.
 */
const decodeByKind = (parsed: ParsedText): Result.Result<SuiteDefinition, ReadonlyArray<SuiteProblem>> => {
  const value = parsed.value
  const kind = typeof value === "object" && value !== null ? (value as Record<string, unknown>)["kind"] : undefined
  if (kind === "selector") return decodeWith(SelectorSuite, parsed)
  if (kind === "agent" || kind === "extraction" || kind === "dream") return decodeWith(ModelSuite, parsed)
  return decodeWith(SuiteDefinition, parsed)
}

// ---------------------------------------------------------------------------------------------------------------
// Semantic checks (what a schema cannot see)
// ---------------------------------------------------------------------------------------------------------------

type Problem = { readonly path: ReadonlyArray<PropertyKey>; readonly message: string }

const duplicates = (values: ReadonlyArray<string>): ReadonlyArray<number> => {
  const seen = new Set<string>()
  return values.flatMap((v, i) => {
    if (seen.has(v)) return [i]
    seen.add(v)
    return []
  })
}

const variantProblems = (
  source: SectionSource | undefined,
  variant: Pick<PromptVariant, "builtin" | "text" | "patch">,
  at: ReadonlyArray<PropertyKey>
): ReadonlyArray<Problem> => {
  // Unknown section: reported once at `section`; the variant cannot be checked against it.
  if (source === undefined) return []
  const resolved = resolveVariant(source, variant)
  return Result.isFailure(resolved)
    ? resolved.failure.map((p) => ({ path: [...at, ...p.path], message: p.message }))
    : []
}

const checkMemoryFixture = (fixture: MemoryDirFixture, at: ReadonlyArray<PropertyKey>): ReadonlyArray<Problem> => {
  const problems: Array<Problem> = []
  fixture.files.forEach((file, i) => {
    const fields = (["name", "description", "type", "body"] as const).filter((k) => file[k] !== undefined)
    if (file.content !== undefined && fields.length > 0) {
      problems.push({ path: [...at, "files", i], message: `give either content or ${fields.join(", ")}, not both` })
    }
    if (file.content === undefined) {
      for (const required of ["name", "description", "type"] as const) {
        if (file[required] === undefined) {
          problems.push({ path: [...at, "files", i, required], message: "required (or give the raw file as content)" })
        }
      }
    }
    if (!file.path.endsWith(".md")) {
      problems.push({ path: [...at, "files", i, "path"], message: "a memory file name ends in .md" })
    }
  })
  for (const i of duplicates(fixture.files.map((f) => f.path))) {
    problems.push({ path: [...at, "files", i, "path"], message: "duplicate memory path" })
  }
  return problems
}

const fixturePaths = (fixture: MemoryDirFixture | undefined, dirFiles: ReadonlyArray<string>): ReadonlySet<string> =>
  new Set([...dirFiles, ...(fixture?.files ?? []).map((f) => f.path)])

/**
 * Pure: what the schema cannot check. `listDir` lists the `.md` files of a fixture directory relative to the suite
 * (undefined when it does not exist).
 */
export const checkSuite = (
  suite: SuiteDefinition,
  directoryName: string,
  catalog: SectionCatalog,
  listDir: (relative: string) => ReadonlyArray<string> | undefined
): ReadonlyArray<Problem> => {
  const problems: Array<Problem> = []
  if (suite.name !== directoryName) {
    problems.push({ path: ["name"], message: `must be the suite's directory name, ${JSON.stringify(directoryName)}` })
  }
  const variantNames = suite.variants.map((v) => v.name)
  for (const i of duplicates(variantNames)) {
    const first = variantNames.indexOf(variantNames[i]!)
    problems.push({
      path: ["variants", i, "name"],
      message: `duplicate variant name ${variantNames[i]}: variants[${first}] already has it; rename this one ` +
        `or edit that one (names are report columns and cassette keys)`
    })
  }
  if (suite.baseline !== undefined && !variantNames.includes(suite.baseline)) {
    problems.push({
      path: ["baseline"],
      message: `no variant named ${suite.baseline} (variants: ${variantNames.join(", ")})`
    })
  }
  const checkDir = (fixture: MemoryDirFixture | undefined, at: ReadonlyArray<PropertyKey>) => {
    if (fixture === undefined) return []
    problems.push(...checkMemoryFixture(fixture, at))
    if (fixture.dir === undefined) {
      for (const key of Object.keys(fixture.ages)) {
        problems.push({ path: [...at, "ages", key], message: "ages apply to files from dir, and there is no dir" })
      }
      return []
    }
    const files = listDir(fixture.dir)
    if (files === undefined) {
      problems.push({ path: [...at, "dir"], message: `no directory ${fixture.dir} beside the suite file` })
      return []
    }
    for (const key of Object.keys(fixture.ages)) {
      if (!files.includes(key)) {
        problems.push({ path: [...at, "ages", key], message: `no file ${key} in ${fixture.dir}` })
      }
    }
    return files
  }

  if (suite.kind === "selector") {
    suite.variants.forEach((variant, i) => {
      if (variant.selector === "offline" && variant.prompt !== undefined) {
        problems.push({ path: ["variants", i, "prompt"], message: "the offline selector has no prompt (use options)" })
      }
      if (variant.selector === "bm25" && variant.prompt !== undefined) {
        problems.push({ path: ["variants", i, "prompt"], message: "the BM25 baseline has no prompt (use options)" })
      }
      if (variant.selector === "llm" && variant.options !== undefined) {
        problems.push({
          path: ["variants", i, "options"],
          message: "options tune the offline selector and the BM25 baseline only"
        })
      }
      if (variant.selector === "offline" && variant.options?.threshold !== undefined) {
        problems.push({
          path: ["variants", i, "options", "threshold"],
          message: "threshold is the BM25 baseline's (selector: bm25); the offline selector's bar is minEvidence"
        })
      }
      if (variant.selector === "bm25") {
        for (const key of Object.keys(variant.options ?? {})) {
          if (key === "threshold") continue
          problems.push({
            path: ["variants", i, "options", key],
            message: `${key} tunes the offline selector; the BM25 baseline takes only threshold`
          })
        }
      }
      if (variant.prompt !== undefined) {
        const source = catalog["selector"]
        const at = ["variants", i, "prompt"]
        if (source === undefined) {
          problems.push({ path: at, message: "no LLM selector prompt is available to vary in this build" })
        } else if (typeof variant.prompt === "string") {
          problems.push(...variantProblems(source, { builtin: variant.prompt }, at).map((p) => ({ ...p, path: at })))
        } else {
          problems.push(...variantProblems(source, variant.prompt, at))
        }
      }
    })
    const memories = fixturePaths(suite.memories, checkDir(suite.memories, ["memories"]))
    if (suite.labels === undefined && suite.scenarios.length === 0) {
      problems.push({ path: ["scenarios"], message: "a selector suite needs scenarios or a labels file" })
    }
    suite.scenarios.forEach((scenario, i) => {
      for (const key of ["relevant", "acceptable"] as const) {
        scenario[key].forEach((p, j) => {
          const inFixture = scenario.dir === undefined ? p : `${scenario.dir.replace(/\/+$/, "")}/${p}`
          if (!memories.has(inFixture)) {
            problems.push({ path: ["scenarios", i, key, j], message: `no memory ${inFixture} in the fixture` })
          }
        })
      }
    })
    for (const i of duplicates(suite.scenarios.map((s) => s.id))) {
      problems.push({ path: ["scenarios", i, "id"], message: "duplicate scenario id" })
    }
    return problems
  }

  const source = catalog[suite.section]
  if (source === undefined) {
    problems.push({
      path: ["section"],
      message: `unknown prompt section ${JSON.stringify(suite.section)} (known: ${
        Object.entries(catalog).filter(([, s]) => s.kind === suite.kind).map(([id]) => id).join(", ") || "none"
      })`
    })
  } else if (source.kind !== suite.kind) {
    problems.push({
      path: ["section"],
      message: `section ${suite.section} is varied by ${source.kind} suites, not ${suite.kind} suites`
    })
  }
  suite.variants.forEach((variant, i) => problems.push(...variantProblems(source, variant, ["variants", i])))
  for (const i of duplicates(suite.scenarios.map((s) => s.id))) {
    problems.push({ path: ["scenarios", i, "id"], message: "duplicate scenario id" })
  }
  suite.scenarios.forEach((scenario, i) => {
    const memories = fixturePaths(scenario.memories, checkDir(scenario.memories, ["scenarios", i, "memories"]))
    if (scenario.project?.dir !== undefined && listDir(scenario.project.dir) === undefined) {
      problems.push({ path: ["scenarios", i, "project", "dir"], message: `no directory ${scenario.project.dir}` })
    }
    if (suite.kind === "agent" && scenario.task === undefined) {
      problems.push({
        path: ["scenarios", i, "task"],
        message: "an agent scenario needs the task (the user's message)"
      })
    }
    if (suite.kind === "extraction" && scenario.conversation.length === 0) {
      problems.push({ path: ["scenarios", i, "conversation"], message: "extraction runs over a conversation" })
    }
    if (Array.isArray(scenario.recall)) {
      scenario.recall.forEach((p: string, j: number) => {
        if (!memories.has(p)) {
          problems.push({ path: ["scenarios", i, "recall", j], message: `no memory ${p} in the fixture` })
        }
      })
    }
    if ([...suite.scorers, ...scenario.scorers].length === 0) {
      problems.push({
        path: ["scenarios", i, "scorers"],
        message: "nothing scores this scenario (no suite or scenario scorers)"
      })
    }
  })
  return problems
}

// ---------------------------------------------------------------------------------------------------------------
// Loading from disk
// ---------------------------------------------------------------------------------------------------------------

const ioError = (op: string, path: string) => (error: { readonly message: string }) =>
  new EvalIoError({ op, path, detail: error.message })

/** Suite directories under `root` (those holding a suite file), sorted. */
export const listSuites = Effect.fn("Suite.listSuites")(function*(root: string) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  if (!(yield* fs.exists(root).pipe(Effect.mapError(ioError("read", root))))) return []
  const entries = yield* fs.readDirectory(root).pipe(Effect.mapError(ioError("read", root)))
  const suites: Array<string> = []
  for (const entry of [...entries].sort()) {
    const info = yield* fs.stat(path.join(root, entry)).pipe(Effect.mapError(ioError("stat", path.join(root, entry))))
    if (info.type !== "Directory") continue
    for (const file of SUITE_FILES) {
      if (yield* fs.exists(path.join(root, entry, file)).pipe(Effect.mapError(ioError("read", root)))) {
        suites.push(entry)
        break
      }
    }
  }
  return suites
})

/** Fixture directories a suite names, relative to its directory. */
const fixtureDirectories = (suite: SuiteDefinition): ReadonlyArray<string> => {
  const dirs = suite.kind === "selector" ?
    [suite.memories.dir] :
    suite.scenarios.flatMap((s) => [s.memories?.dir, s.project?.dir])
  return [...new Set(dirs.filter((d): d is string => d !== undefined))]
}

/** `.md` files under a directory, relative with `/`, sorted; undefined when it is not a directory. */
export const listMarkdown = Effect.fn("Suite.listMarkdown")(function*(directory: string) {
  const fs = yield* FileSystem.FileSystem
  if (!(yield* fs.exists(directory).pipe(Effect.mapError(ioError("read", directory))))) return undefined
  const info = yield* fs.stat(directory).pipe(Effect.mapError(ioError("stat", directory)))
  if (info.type !== "Directory") return undefined
  const entries = yield* fs.readDirectory(directory, { recursive: true }).pipe(
    Effect.mapError(ioError("read", directory))
  )
  return entries.map((p) => p.split("\\").join("/")).filter((p) => p.endsWith(".md")).sort()
})

/** Load, decode and check the suite `name` under `root`. Every problem is reported at once. */
export const loadSuite = Effect.fn("Suite.loadSuite")(function*(
  root: string,
  name: string,
  catalog: SectionCatalog = memoryPromptSections
) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const directory = path.join(root, name)
  let file: string | undefined
  const isDirectory = /^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name) &&
    (yield* fs.exists(directory).pipe(Effect.mapError(ioError("read", directory)))) &&
    (yield* fs.stat(directory).pipe(Effect.mapError(ioError("stat", directory)))).type === "Directory"
  if (isDirectory) {
    for (const candidate of SUITE_FILES) {
      const full = path.join(directory, candidate)
      if (yield* fs.exists(full).pipe(Effect.mapError(ioError("read", full)))) {
        file = full
        break
      }
    }
  }
  if (file === undefined) {
    return yield* new SuiteNotFoundError({ name, directory: root, known: yield* listSuites(root) })
  }
  const shown = path.relative(process.cwd(), file) || file
  const text = yield* fs.readFileString(file).pipe(Effect.mapError(ioError("read", file)))
  const parsed = parseSuiteText(text)
  if (Result.isFailure(parsed)) return yield* new InvalidSuiteError({ file: shown, problems: parsed.failure })
  const { definition, lineOf } = parsed.success

  let suite: SuiteDefinition = definition
  const extraProblems: Array<SuiteProblem> = []
  if (suite.kind === "selector" && suite.labels !== undefined) {
    const labelsFile = path.join(directory, suite.labels)
    const labelsShown = path.relative(process.cwd(), labelsFile) || labelsFile
    const exists = yield* fs.exists(labelsFile).pipe(Effect.mapError(ioError("read", labelsFile)))
    if (!exists) {
      const line = lineOf(["labels"])
      extraProblems.push({
        path: "labels",
        ...(line === undefined ? {} : { line }),
        message: `no file ${suite.labels}`
      })
    } else {
      const labelsText = yield* fs.readFileString(labelsFile).pipe(Effect.mapError(ioError("read", labelsFile)))
      const labels = Result.flatMap(parseText(labelsText), (p) => decodeWith(SelectorLabels, p))
      if (Result.isFailure(labels)) return yield* new InvalidSuiteError({ file: labelsShown, problems: labels.failure })
      suite = { ...suite, scenarios: [...suite.scenarios, ...labels.success.queries] }
    }
  }
  const listings = new Map<string, ReadonlyArray<string> | undefined>()
  for (const relative of fixtureDirectories(suite)) {
    listings.set(relative, yield* listMarkdown(path.join(directory, relative)))
  }
  const problems = checkSuite(suite, name, catalog, (relative) => listings.get(relative)).map((p): SuiteProblem => {
    const line = lineOf(p.path)
    return { path: formatFieldPath(p.path), ...(line === undefined ? {} : { line }), message: p.message }
  })
  if (problems.length + extraProblems.length > 0) {
    return yield* new InvalidSuiteError({ file: shown, problems: [...extraProblems, ...problems] })
  }
  return { ...suite, file, directory } as LoadedSuite
})

/** The scorers that apply to a scenario: the suite's, then its own. */
export const scorersFor = (suite: ModelSuite, scenario: Scenario): ReadonlyArray<Scorer> => [
  ...suite.scorers,
  ...scenario.scorers
]

/** A scorer's column name: its id, or its type numbered when a scenario has several of that type. */
export const scorerIds = (scorers: ReadonlyArray<Scorer | SelectionScorer>): ReadonlyArray<string> => {
  const counts = new Map<string, number>()
  return scorers.map((s) => {
    if (s.id !== undefined) return s.id
    const n = (counts.get(s.type) ?? 0) + 1
    counts.set(s.type, n)
    return n === 1 ? s.type : `${s.type}-${n}`
  })
}
