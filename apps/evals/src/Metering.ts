/**
 * Tokens, calls and model ids per trial, whoever makes the calls (the agent loop, the selector, the grader):
 * a `Model` wrapper adds every response to the meter of the trial the calling fiber runs.
 */
import { Model, type ModelRequest, type ModelResponse, structuredWith } from "@memdir/core/Model"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import type { PricedRequest } from "./Pricing.js"
import { addUsage, emptyUsage, type Usage } from "./Results.js"

export interface Meter {
  /** Usage per model id (as the responses named it). */
  readonly byModel: ReadonlyMap<string, Usage>
  /** Every response's model and usage, in order: each request is priced on its own (`Pricing.costOfRequests`). */
  readonly requests: ReadonlyArray<PricedRequest>
  readonly calls: number
  /** What the model calls took, summed. */
  readonly latencyMs: number
}

export const emptyMeter: Meter = { byModel: new Map(), requests: [], calls: 0, latencyMs: 0 }

/** The meter of the trial the current fiber runs (none outside `metered`). */
export const currentMeter: Context.Reference<Ref.Ref<Meter> | undefined> = Context.Reference<
  Ref.Ref<Meter> | undefined
>("@memdir/evals/currentMeter", { defaultValue: () => undefined })

const record = (meter: Meter, response: ModelResponse): Meter => {
  const byModel = new Map(meter.byModel)
  byModel.set(response.model, addUsage(byModel.get(response.model) ?? emptyUsage, response.usage))
  return {
    byModel,
    requests: [...meter.requests, { model: response.model, usage: response.usage }],
    calls: meter.calls + 1,
    latencyMs: meter.latencyMs + response.latencyMs
  }
}

/** Runs `effect` with a fresh meter; returns its result and what its model calls used. */
export const metered = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<[A, Meter], E, R> =>
  Effect.gen(function*() {
    const meter = yield* Ref.make(emptyMeter)
    const result = yield* Effect.provideService(effect, currentMeter, meter)
    return [result, yield* Ref.get(meter)] as [A, Meter]
  })

/** `inner`, metering every response into the calling trial's meter. */
export const meterModel = (inner: Context.Service.Shape<typeof Model>): Context.Service.Shape<typeof Model> => {
  const complete = (request: ModelRequest) =>
    Effect.tap(
      inner.complete(request),
      (response) =>
        Effect.flatMap(currentMeter, (meter) =>
          meter === undefined ? Effect.void : Ref.update(meter, (m) => record(m, response)))
    )
  return Model.of({
    available: inner.available,
    modelFor: inner.modelFor,
    complete,
    structured: structuredWith(complete, inner.modelFor)
  })
}

/** The `Model` in context, metered. */
export const layerMetered: Layer.Layer<Model, never, Model> = Layer.effect(Model, Effect.map(Model, meterModel))

/** Total usage of a meter, all models together. */
export const meterUsage = (meter: Meter): Usage => [...meter.byModel.values()].reduce(addUsage, emptyUsage)
