/**
 * The labelled selector sets, read where they are: the ten directories written for the selector's test
 * (`packages/core/test/fixtures/selector-set`, in the repository) and the twelve real ones of
 * `../shared/corpora/memories` (public repositories beside the checkout, labelled in `evals/selector-real/labels.json`).
 * The generalization run and the selector-vs-BM25 bench load them the same way: every candidate as a scan offers it
 * (files without a readable header too), each with its whole body.
 */
import { Scanner } from "@memdir/core/Scanner"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { bodyOfMemoryFile } from "./Bm25Baseline.js"
import type { LabelledDirectory, LabelledQuery } from "./Generalization.js"

/** src/ and dist/ sit as deep in apps/evals, so this holds in the bundle too. */
export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..")

/** The set written for the selector's test: its directories and its labels.json. */
export const WRITTEN_SET = path.join(repoRoot, "packages/core/test/fixtures/selector-set")
/** The real memory directories (outside the project), and our labels for them. */
export const REAL_CORPUS = path.join(repoRoot, "../shared/corpora/memories")
export const REAL_LABELS = path.join(repoRoot, "evals/selector-real/labels.json")
/** The first blind set: its misses have been read (stop 37), so it is a development set now (docs/evals.md). */
export const FIRST_BLIND_LABELS = path.join(repoRoot, "evals/selector-real/labels-blind.json")

/** A labels file and the directory holding the memory directories its queries name. */
export interface LabelledSet {
  readonly corpus: string
  readonly file: string
}

export const writtenSet: LabelledSet = { corpus: WRITTEN_SET, file: path.join(WRITTEN_SET, "labels.json") }

/** Every set whose misses have been read while the selector was built: what an experiment may learn from. */
export const developmentSets = (realCorpus: string = REAL_CORPUS): ReadonlyArray<LabelledSet> => [
  { corpus: realCorpus, file: REAL_LABELS },
  { corpus: realCorpus, file: FIRST_BLIND_LABELS },
  writtenSet
]

/** Every query of `sets`, and where each query's directory lives. */
export const readLabelledSets = (sets: ReadonlyArray<LabelledSet>) => {
  const corpusOf = new Map<string, string>()
  const queries: ReadonlyArray<LabelledQuery> = sets.flatMap(({ corpus, file }) =>
    (JSON.parse(fs.readFileSync(file, "utf8")) as { queries: Array<LabelledQuery> }).queries.map((query) => {
      corpusOf.set(query.dir, corpus)
      return query
    })
  )
  return { queries, corpusOf }
}

/** A directory's memories: under `.claude/memory/` where it keeps them there, else the directory itself. */
export const memoryDirOf = (root: string, dir: string): string => {
  const nested = path.join(root, dir, ".claude", "memory")
  return fs.existsSync(nested) ? nested : path.join(root, dir)
}

/** One directory's candidates, as a scan offers them, and each one's whole body. */
export const loadDirectory = (dir: string, memoryDir: string) =>
  Effect.gen(function*() {
    const scanner = yield* Scanner
    const scan = yield* scanner.scan(memoryDir)
    const candidates = [...scan.memories, ...(scan.headerless ?? [])]
    const bodies = new Map<string, string>()
    for (const m of candidates) bodies.set(m.path, bodyOfMemoryFile(fs.readFileSync(m.absolutePath, "utf8"), m.path))
    const directory: LabelledDirectory = { dir, candidates, bodies }
    return directory
  })

/** Every directory the queries name, loaded once, by name (sorted). */
export const loadDirectories = (
  queries: ReadonlyArray<LabelledQuery>,
  corpusOf: ReadonlyMap<string, string>,
  fallbackCorpus: string = REAL_CORPUS
) =>
  Effect.gen(function*() {
    const directories = new Map<string, LabelledDirectory>()
    for (const dir of [...new Set(queries.map((q) => q.dir))].sort()) {
      directories.set(dir, yield* loadDirectory(dir, memoryDirOf(corpusOf.get(dir) ?? fallbackCorpus, dir)))
    }
    return directories
  })
