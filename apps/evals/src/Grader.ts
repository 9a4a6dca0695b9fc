/**
 * The optional model-graded rubric: a grader model (role `grader`) reads the run and a rubric and answers pass or
 * fail with a reason. Always marked MODEL-GRADED in results and reports, and it decides a trial only when the
 * suite says `required: true`: a deterministic scorer is the evidence, a grader is an opinion.
 */
import { Model } from "@memdir/core/Model"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { ScoreOutput } from "./Scoring.js"

export const RubricVerdict = Schema.Struct({
  passed: Schema.Boolean.annotate({ description: "true when the run meets the rubric" }),
  reason: Schema.String.annotate({ description: "One or two sentences citing what in the run decided it" })
})

export const GRADER_SYSTEM = "You grade one run of an AI coding agent against a rubric. Judge only what the " +
  "transcript and the memory changes show, not what the agent may have intended. When the evidence is missing, " +
  "the run fails. Answer with the verdict tool."

export const GRADER_MAX_TOKENS = 512

/** What the grader reads: the user's task, the tool calls, the final answer and the memory files written. */
export const graderMaterial = (run: {
  readonly task: string
  readonly toolCalls: ReadonlyArray<{ readonly name: string; readonly input: unknown }>
  readonly finalText: string
  readonly written: ReadonlyArray<readonly [path: string, text: string]>
}): string =>
  [
    `<task>\n${run.task}\n</task>`,
    `<tool_calls>\n${
      run.toolCalls.map((c, i) => `${i + 1}. ${c.name} ${JSON.stringify(c.input)}`).join("\n") || "(none)"
    }\n</tool_calls>`,
    `<final_answer>\n${run.finalText}\n</final_answer>`,
    `<memory_files_written>\n${
      run.written.map(([p, t]) => `--- ${p}\n${t}`).join("\n") || "(none)"
    }\n</memory_files_written>`
  ].join("\n\n")

/** Grade one run; a grader failure is a failed, explained score (never a silent pass). */
export const gradeRubric = (id: string, rubric: string, required: boolean, material: string) =>
  Effect.gen(function*() {
    const model = yield* Model
    const verdict = yield* model.structured({
      role: "grader",
      system: GRADER_SYSTEM,
      messages: [{ role: "user", content: `<rubric>\n${rubric}\n</rubric>\n\n${material}` }],
      maxTokens: GRADER_MAX_TOKENS,
      temperature: 0
    }, { name: "verdict", description: "Report whether the run meets the rubric.", schema: RubricVerdict }).pipe(
      Effect.map(({ value }) => ({ passed: value.passed, detail: value.reason })),
      Effect.catchTag("ModelError", (error) =>
        Effect.succeed({ passed: false, detail: `grader failed: ${error.message}` }))
    )
    return {
      result: { id, type: "rubric", passed: verdict.passed, required, modelGraded: true, detail: verdict.detail },
      metrics: {}
    } satisfies ScoreOutput
  })
