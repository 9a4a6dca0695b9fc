/**
 * The learned-decision experiment (`pnpm evals:generalize --learned`): the logistic regression learns what it is
 * shown, and a directory's requests are never decided by a model that saw that directory's labels.
 */
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it, layer } from "@effect/vitest"
import * as ScannerModule from "@memdir/core/Scanner"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import { fileURLToPath } from "node:url"
import type { LabelledQuery } from "../src/Generalization.js"
import { loadDirectories } from "../src/LabelledSets.js"
import { type Example, learnedLeaveOneDirectoryOut, train } from "../src/LearnedDecision.js"

describe("train", () => {
  it("learns a separable problem: high x relevant, low x not", () => {
    const examples: Array<Example> = []
    for (let i = 0; i < 40; i++) examples.push({ x: [i / 40, 0.5], y: i >= 20 ? 1 : 0 })
    const p = train(examples)
    assert.isAbove(p([0.95, 0.5]), 0.8)
    assert.isBelow(p([0.05, 0.5]), 0.2)
  })

  it("weighs the classes equally: one positive among many negatives still moves it", () => {
    const examples: Array<Example> = [
      { x: [1], y: 1 },
      ...Array.from({ length: 99 }, (_, i) => ({ x: [i / 200], y: 0 as const }))
    ]
    const p = train(examples)
    assert.isAbove(p([1]), 0.5)
  })

  it("answers a constant when it has one class only", () => {
    assert.strictEqual(train([{ x: [1], y: 0 }, { x: [2], y: 0 }])([3]), 0)
    assert.strictEqual(train([])([3]), 0)
  })
})

const selectorSet = fileURLToPath(new URL("../../../evals/selector", import.meta.url))
const services = ScannerModule.layerNode.pipe(Layer.provideMerge(NodeServices.layer))

layer(services)("learnedLeaveOneDirectoryOut", (it) => {
  it.effect("decides a directory with a model that never saw its labels", () =>
    Effect.gen(function*() {
      const queries = (JSON.parse(fs.readFileSync(`${selectorSet}/labels.json`, "utf8")) as {
        queries: Array<LabelledQuery>
      }).queries
      const held = "webapp-en"
      const corpusOf = new Map(queries.map((q) => [q.dir, `${selectorSet}/memories`] as const))
      const directories = yield* loadDirectories(queries, corpusOf)
      const scored = queries.filter((q) => q.dir === held)
      // what each fold's model is trained on, as the trainer receives it
      const seen: Array<ReadonlyArray<Example>> = []
      const spy: typeof train = (examples, options) => {
        seen.push(examples)
        return train(examples, options)
      }
      const result = learnedLeaveOneDirectoryOut(directories, scored, queries, undefined, spy)
      const withoutHeld: Array<ReadonlyArray<Example>> = []
      learnedLeaveOneDirectoryOut(directories, scored, queries.filter((q) => q.dir !== held), undefined, (e, o) => {
        withoutHeld.push(e)
        return train(e, o)
      })
      // the held directory's own requests added nothing to its model
      assert.strictEqual(seen.length, 1)
      assert.deepStrictEqual(seen, withoutHeld)
      assert.isAbove(seen[0]!.length, 100)
      // and it decided something: the fold's figures are real ones
      assert.deepStrictEqual(result.byDirectory.map((d) => d.dir), [held])
      assert.strictEqual(result.overall.queries, scored.length)
      assert.isAbove(result.overall.produced, 0)
    }))
})
