/**
 * The model selector on the labelled real directories (`pnpm evals:generalize --model`): core's `selectWithModel`
 * alone (no offline fallback), with the shipped system prompt, over each request's directory as recall offers it.
 * It reads what a request is for, which the offline selector cannot, so it is what the off-topic picks on traps
 * are measured against. It needs a model: `ANTHROPIC_API_KEY` (and `ANTHROPIC_BASE_URL` for another endpoint).
 *
 * Its answers are asked for first, a few at a time, then served to the same leave-one-directory-out report as the
 * other systems: it has no setting to choose, so every fold is the same. A request the model fails is counted and
 * selects nothing (its error is kept, so a report never hides that the model was unreachable).
 */
import { Model } from "@memdir/core/Model"
import { selectorPrompt, selectWithModel } from "@memdir/core/ModelSelector"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { LabelledDirectory, LabelledQuery, System } from "./Generalization.js"

/** The model's answers, by directory and request, and the requests it failed. */
export interface ModelAnswers {
  readonly selected: ReadonlyMap<string, ReadonlyArray<string>>
  readonly failures: ReadonlyArray<{ readonly id: string; readonly error: string }>
}

const keyOf = (dir: string, query: string): string => `${dir}\u0000${query}`

/** Ask the model selector about every request (`concurrency` at a time). */
export const modelAnswers = (
  directories: ReadonlyMap<string, LabelledDirectory>,
  queries: ReadonlyArray<LabelledQuery>,
  concurrency = 4
) =>
  Effect.gen(function*() {
    const model = yield* Model
    const system = Result.getOrThrow(selectorPrompt())
    const selected = new Map<string, ReadonlyArray<string>>()
    const failures: Array<{ readonly id: string; readonly error: string }> = []
    yield* Effect.forEach(queries, (query) =>
      selectWithModel(model, { query: query.query, candidates: directories.get(query.dir)!.candidates }, system).pipe(
        Effect.match({
          onFailure: (error) => {
            failures.push({ id: query.id, error: error.message })
          },
          onSuccess: (selection) => {
            selected.set(keyOf(query.dir, query.query), selection.selected)
          }
        })
      ), { concurrency, discard: true })
    const answers: ModelAnswers = { selected, failures }
    return answers
  })

/** The model selector as a system of the report: one setting, its answers as asked for. */
export const memdirModelSelector = (answers: ModelAnswers): System => ({
  name: "memdir model selector (Messages API)",
  description: "core's model selector alone, the shipped prompt; a request it failed selects nothing",
  settings: [{
    label: "model",
    select: (directory, query) => answers.selected.get(keyOf(directory.dir, query)) ?? []
  }]
})
