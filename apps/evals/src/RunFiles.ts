/**
 * Finding and reading a run's `results.json`: by path (the file or its directory), by run id under the runs
 * directory, or `latest`.
 */
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Path from "effect/Path"
import * as Schema from "effect/Schema"
import { RunNotFoundError } from "./Errors.js"
import { RunResults } from "./Results.js"

export const RESULTS_FILE = "results.json"

/** The results file a reference names; `latest` is the newest run directory (names start with a timestamp). */
export const resolveRun = Effect.fn("RunFiles.resolveRun")(function*(reference: string, runsDir?: string) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const notFound = (detail: string) => new RunNotFoundError({ run: reference, detail })
  const exists = (p: string) => fs.exists(p).pipe(Effect.mapError((e) => notFound(e.message)))
  if (reference === "latest") {
    if (runsDir === undefined || !(yield* exists(runsDir))) return yield* notFound("there are no runs yet")
    const entries = yield* fs.readDirectory(runsDir).pipe(Effect.mapError((e) => notFound(e.message)))
    const runs: Array<string> = []
    for (const entry of entries) if (yield* exists(path.join(runsDir, entry, RESULTS_FILE))) runs.push(entry)
    runs.sort()
    if (runs.length === 0) return yield* notFound("there are no runs yet")
    return path.join(runsDir, runs[runs.length - 1]!, RESULTS_FILE)
  }
  const candidates = [
    reference,
    path.join(reference, RESULTS_FILE),
    ...(runsDir === undefined ? [] : [path.join(runsDir, reference, RESULTS_FILE)])
  ]
  for (const candidate of candidates) {
    if (!(yield* exists(candidate))) continue
    const info = yield* fs.stat(candidate).pipe(Effect.mapError((e) => notFound(e.message)))
    if (info.type === "File") return candidate
  }
  return yield* notFound("no such file or run directory")
})

/** Reads and validates a run's results. */
export const readRun = Effect.fn("RunFiles.readRun")(function*(reference: string, runsDir?: string) {
  const fs = yield* FileSystem.FileSystem
  const file = yield* resolveRun(reference, runsDir)
  const text = yield* fs.readFileString(file).pipe(
    Effect.mapError((e) => new RunNotFoundError({ run: file, detail: e.message }))
  )
  const json = yield* Effect.try({
    try: () => JSON.parse(text) as unknown,
    catch: (e) => new RunNotFoundError({ run: file, detail: `not JSON: ${(e as Error).message}` })
  })
  return yield* Schema.decodeUnknownEffect(RunResults)(json).pipe(
    Effect.mapError((e) => new RunNotFoundError({ run: file, detail: `not an eval run: ${e.message}` }))
  )
})
