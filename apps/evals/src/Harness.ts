/**
 * Which harness runs a suite, which prompt sections suites may vary, and whether a run needs a model.
 */
import * as DreamLockModule from "@memdir/core/DreamLock"
import * as MemoryFsModule from "@memdir/core/MemoryFs"
import * as MemoryIndexModule from "@memdir/core/MemoryIndex"
import * as MemoryStoreModule from "@memdir/core/MemoryStore"
import type { Model } from "@memdir/core/Model"
import * as ScannerModule from "@memdir/core/Scanner"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { prepareAgentSuite } from "./AgentHarness.js"
import { prepareDreamSuite } from "./DreamHarness.js"
import { InvalidRunOptionError } from "./Errors.js"
import { prepareExtractionSuite } from "./ExtractHarness.js"
import type { TrialRunner, TrialSpec } from "./Runner.js"
import { prepareSelectorSuite, selectorNeedsModel } from "./SelectorHarness.js"
import type { LoadedSuite } from "./Suite.js"
import { harnessCatalog } from "./Variants.js"

/** Every prompt section a suite may vary: core's prompt catalog, each section with the harness that runs it. */
export { harnessCatalog }

/** Whether running these variants of the suite calls a model. */
export const suiteNeedsModel = (suite: LoadedSuite, variants: ReadonlyArray<string>): boolean =>
  suite.kind === "selector" ?
    selectorNeedsModel(suite.variants.filter((v) => variants.includes(v.name))) :
    true

/** The live memory store (file system, containment, team guard) over the harness's index, built in this scope. */
const storeFor = (index: Context.Service.Shape<typeof MemoryIndexModule.MemoryIndex>) =>
  Layer.build(MemoryStoreModule.layerNode.pipe(Layer.provide(Layer.succeed(MemoryIndexModule.MemoryIndex, index))))

/** Trials run their memory tools through the store: provide it to every trial. */
const withStore = <A, E, R>(
  store: Context.Context<R>,
  run: (spec: TrialSpec, trialKey: string) => Effect.Effect<A, E, R>
) =>
(spec: TrialSpec, trialKey: string): Effect.Effect<A, E> => Effect.provide(run(spec, trialKey), store)

/** Prepare the suite's harness (fixtures, scans) in the current scope; returns its trial runner. */
export const prepareHarness = (suite: LoadedSuite) =>
  Effect.gen(function*() {
    if (suite.kind === "selector") {
      const scanner = yield* ScannerModule.make.pipe(Effect.provide(MemoryFsModule.layer))
      const runTrial: TrialRunner<Model> = yield* prepareSelectorSuite(suite).pipe(
        Effect.provideService(ScannerModule.Scanner, scanner)
      )
      return runTrial
    }
    if (suite.kind === "agent") {
      const scanner = yield* ScannerModule.make.pipe(Effect.provide(MemoryFsModule.layer))
      const index = yield* MemoryIndexModule.make.pipe(Effect.provide(MemoryFsModule.layer))
      const store = yield* storeFor(index)
      const runTrial: TrialRunner<never> = withStore(
        store,
        yield* prepareAgentSuite(suite, harnessCatalog).pipe(
          Effect.provideService(ScannerModule.Scanner, scanner),
          Effect.provideService(MemoryIndexModule.MemoryIndex, index),
          Effect.provide(store)
        )
      )
      return runTrial
    }
    if (suite.kind === "dream") {
      const scanner = yield* ScannerModule.make.pipe(Effect.provide(MemoryFsModule.layer))
      const index = yield* MemoryIndexModule.make.pipe(Effect.provide(MemoryFsModule.layer))
      const lock = yield* DreamLockModule.make.pipe(Effect.provide(MemoryFsModule.layer))
      const store = yield* storeFor(index)
      const runTrial: TrialRunner<never> = withStore(
        store,
        yield* prepareDreamSuite(suite).pipe(
          Effect.provideService(ScannerModule.Scanner, scanner),
          Effect.provideService(MemoryIndexModule.MemoryIndex, index),
          Effect.provide(store),
          Effect.provideService(DreamLockModule.DreamLock, lock)
        )
      )
      return runTrial
    }
    if (suite.kind === "extraction") {
      const scanner = yield* ScannerModule.make.pipe(Effect.provide(MemoryFsModule.layer))
      const index = yield* MemoryIndexModule.make.pipe(Effect.provide(MemoryFsModule.layer))
      const store = yield* storeFor(index)
      const runTrial: TrialRunner<never> = withStore(
        store,
        yield* prepareExtractionSuite(suite).pipe(
          Effect.provideService(ScannerModule.Scanner, scanner),
          Effect.provideService(MemoryIndexModule.MemoryIndex, index),
          Effect.provide(store)
        )
      )
      return runTrial
    }
    return yield* new InvalidRunOptionError({
      option: "SUITE",
      value: suite.name,
      reason: `${suite.kind} suites are not runnable in this build yet`
    })
  })
