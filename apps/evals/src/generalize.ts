/**
 * `pnpm evals:generalize [--corpus DIR] [--labels FILE ...] [--written] [--json FILE] [--misses] [--learned]
 * [--fields] [--unknown-words] [--translations] [--proximity] [--general-questions] [--model] [--explain ID ...]`: the offline selector
 * leave-one-directory-out on labelled real memory directories, beside the BM25+ baseline (Generalization.ts), and its
 * ranking apart from its decision. `--learned` adds an experiment: the decision learned from the development sets (LearnedDecision.ts).
 *
 * The directories are read where they are (`--corpus`, default `../shared/corpora/memories` beside the checkout:
 * real directories from public repositories, which stay outside the project); a directory that keeps its memories
 * under `.claude/memory/` is read from there. Labels default to `evals/selector-real/labels.json`. `--written` adds the
 * ten directories written for the selector's test (`packages/core/test/fixtures/selector-set`), so the folds run over
 * all 22 directories, as the shipped defaults were chosen. `--fields`, `--unknown-words`, `--translations` and
 * `--proximity` add systems whose field weights, unknown-words bar, translations' or proximity's weight (each with
 * the relative cut) are chosen per fold too. `--model` adds the model selector (ModelGeneralization.ts; needs
 * `ANTHROPIC_API_KEY`, exits 2 without it). `--explain ID` prints the shipped selector's explanation of one labelled
 * request (whole bodies, as recall reads them) beside its labels.
 */
import { NodeServices } from "@effect/platform-node"
import * as ModelModule from "@memdir/core/Model"
import * as ScannerModule from "@memdir/core/Scanner"
import { explainSelection } from "@memdir/core/Selector"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as path from "node:path"
import {
  bm25Baseline,
  bm25Ranker,
  bodiesOf,
  leaveOneDirectoryOut,
  memdirAsShipped,
  memdirFieldsTuned,
  memdirGeneralQuestionsTuned,
  memdirProximityTuned,
  memdirRanker,
  memdirTranslationsTuned,
  memdirTuned,
  memdirUnknownWordsTuned,
  rankingQuality,
  renderRanking,
  renderReport
} from "./Generalization.js"
import {
  developmentSets,
  loadDirectories,
  readLabelledSets,
  REAL_CORPUS,
  REAL_LABELS,
  writtenSet
} from "./LabelledSets.js"
import { learnedLeaveOneDirectoryOut, renderLearned } from "./LearnedDecision.js"
import { memdirModelSelector, modelAnswers } from "./ModelGeneralization.js"
import { trialExplanation } from "./SelectorHarness.js"

const argv = process.argv.slice(2)
const option = (name: string): Array<string> => {
  const values: Array<string> = []
  argv.forEach((arg, i) => {
    if (arg === name && argv[i + 1] !== undefined) values.push(argv[i + 1]!)
  })
  return values
}
const corpus = path.resolve(option("--corpus")[0] ?? REAL_CORPUS)
const labelFiles = option("--labels").length > 0 ? option("--labels") : [REAL_LABELS]

/** `--written`: the set written for the selector's test (ten directories, in the repository) joins the run. */
const { corpusOf, queries } = readLabelledSets([
  ...labelFiles.map((file) => ({ corpus, file })),
  ...(argv.includes("--written") ? [writtenSet] : [])
])

const program = Effect.gen(function*() {
  const dirs = [...new Set(queries.map((q) => q.dir))].sort()
  const directories = yield* loadDirectories(queries, corpusOf, corpus)
  const missing = queries.flatMap((q) =>
    [...q.relevant, ...q.acceptable].filter((p) => !directories.get(q.dir)!.candidates.some((m) => m.path === p))
      .map((p) => `${q.id}: ${p}`)
  )
  if (missing.length > 0) console.error(`labels naming no candidate:\n  ${missing.join("\n  ")}`)
  const model = argv.includes("--model") ?
    yield* modelAnswers(directories, queries).pipe(Effect.provide(ModelModule.layer)) :
    undefined
  const results = leaveOneDirectoryOut(
    [
      memdirAsShipped(undefined, "whole", "memdir as shipped (recall: whole bodies)"),
      memdirAsShipped(undefined, "head", "memdir as shipped, heads only"),
      memdirTuned(),
      memdirTuned(undefined, "whole", "memdir whole body (knobs per fold)"),
      ...(argv.includes("--fields") ? [memdirFieldsTuned()] : []),
      ...(argv.includes("--unknown-words") ? [memdirUnknownWordsTuned()] : []),
      ...(argv.includes("--translations") ? [memdirTranslationsTuned()] : []),
      ...(argv.includes("--proximity") ? [memdirProximityTuned()] : []),
      ...(argv.includes("--general-questions") ? [memdirGeneralQuestionsTuned()] : []),
      ...(model === undefined ? [] : [memdirModelSelector(model)]),
      bm25Baseline
    ],
    directories,
    queries
  )
  console.log(`${queries.length} labelled requests over ${dirs.length} directories (${corpus})\n`)
  if (model !== undefined && model.failures.length > 0) {
    console.log(
      `The model selector failed ${model.failures.length} of ${queries.length} requests; they select nothing ` +
        `(first: ${model.failures[0]!.id}: ${model.failures[0]!.error}).\n`
    )
  }
  console.log(renderReport(results))
  const ranking = [memdirRanker, bm25Ranker].map((ranker) => ({
    name: ranker.name,
    figures: rankingQuality(ranker, directories, queries)
  }))
  console.log(`\n${renderRanking(ranking)}`)
  if (argv.includes("--learned")) {
    const development = readLabelledSets(developmentSets(corpus))
    const all = new Map([
      ...(yield* loadDirectories(development.queries, development.corpusOf, corpus)),
      ...directories
    ])
    const learned = learnedLeaveOneDirectoryOut(all, queries, development.queries)
    console.log(`\n${renderLearned(learned, results[0]?.overall)}`)
  }
  if (argv.includes("--misses")) {
    for (const r of results) {
      console.log(`\n## ${r.system.name}: wrong answers`)
      for (const fold of r.folds) {
        for (const { query, selected } of fold.perQuery) {
          const ok = new Set([...query.relevant, ...query.acceptable])
          const missed = query.relevant.filter((p) => !selected.includes(p))
          const wrong = selected.filter((p) => !ok.has(p))
          if (missed.length === 0 && wrong.length === 0) continue
          console.log(`- ${query.id} [${query.language} ${query.kind}] ${JSON.stringify(query.query)}`)
          if (missed.length > 0) console.log(`    missed: ${missed.join(", ")}`)
          if (wrong.length > 0) console.log(`    wrong:  ${wrong.join(", ")}`)
        }
      }
    }
  }
  for (const id of option("--explain")) {
    const query = queries.find((q) => q.id === id)
    if (query === undefined) {
      console.error(`--explain ${id}: no labelled request has that id`)
      process.exitCode = 2
      continue
    }
    const directory = directories.get(query.dir)!
    const explanation = explainSelection({
      query: query.query,
      candidates: directory.candidates,
      bodies: bodiesOf(directory, "whole")
    })
    console.log(`\n## ${id} [${query.language} ${query.kind}] ${JSON.stringify(query.query)}`)
    console.log(
      `relevant: ${query.relevant.join(", ") || "none"}; acceptable: ${query.acceptable.join(", ") || "none"}`
    )
    console.log(JSON.stringify(trialExplanation(explanation), null, 2))
  }
  const jsonOut = option("--json")[0]
  if (jsonOut !== undefined) {
    fs.writeFileSync(
      jsonOut,
      JSON.stringify(
        {
          systems: results.map((r) => ({
            system: r.system.name,
            overall: r.overall,
            byLanguage: r.byLanguage,
            byKind: r.byKind,
            folds: r.folds.map((f) => ({ dir: f.dir, setting: f.setting, counts: f.counts }))
          })),
          ranking: ranking.map((r) => ({ system: r.name, ...r.figures }))
        },
        null,
        2
      ) + "\n"
    )
  }
})

if (argv.includes("--model") && (process.env["ANTHROPIC_API_KEY"] ?? "").trim() === "") {
  // the model selector calls the Messages API: without a key every request would fail, and the report would be noise
  console.error(
    "--model needs ANTHROPIC_API_KEY: the model selector asks the Messages API about every request " +
      "(ANTHROPIC_BASE_URL for another endpoint); without it, run without --model (offline selector and BM25+ only)"
  )
  process.exitCode = 2
} else {
  program.pipe(
    Effect.provide(ScannerModule.layerNode.pipe(Layer.provideMerge(NodeServices.layer))),
    Effect.runPromise
  ).catch((error) => {
    console.error(error)
    process.exitCode = 1
  })
}
