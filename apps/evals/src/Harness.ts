/**
 * Which harness runs a suite, which prompt sections suites may vary, and whether a run needs a model.
 */
import * as DreamLockModule from "@memdir/core/DreamLock"
import * as MemoryIndexModule from "@memdir/core/MemoryIndex"
import type { Model } from "@memdir/core/Model"
import * as ScannerModule from "@memdir/core/Scanner"
import * as Effect from "effect/Effect"
import { prepareAgentSuite } from "./AgentHarness.js"
import { prepareDreamSuite } from "./DreamHarness.js"
import { InvalidRunOptionError } from "./Errors.js"
import { prepareExtractionSuite } from "./ExtractHarness.js"
import type { TrialRunner } from "./Runner.js"
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

/** Prepare the suite's harness (fixtures, scans) in the current scope; returns its trial runner. */
export const prepareHarness = (suite: LoadedSuite) =>
  Effect.gen(function*() {
    if (suite.kind === "selector") {
      const scanner = yield* ScannerModule.make
      const runTrial: TrialRunner<Model> = yield* prepareSelectorSuite(suite).pipe(
        Effect.provideService(ScannerModule.Scanner, scanner)
      )
      return runTrial
    }
    if (suite.kind === "agent") {
      const scanner = yield* ScannerModule.make
      const index = yield* MemoryIndexModule.make
      const runTrial: TrialRunner<never> = yield* prepareAgentSuite(suite, harnessCatalog).pipe(
        Effect.provideService(ScannerModule.Scanner, scanner),
        Effect.provideService(MemoryIndexModule.MemoryIndex, index)
      )
      return runTrial
    }
    if (suite.kind === "dream") {
      const scanner = yield* ScannerModule.make
      const index = yield* MemoryIndexModule.make
      const lock = yield* DreamLockModule.make
      const runTrial: TrialRunner<never> = yield* prepareDreamSuite(suite).pipe(
        Effect.provideService(ScannerModule.Scanner, scanner),
        Effect.provideService(MemoryIndexModule.MemoryIndex, index),
        Effect.provideService(DreamLockModule.DreamLock, lock)
      )
      return runTrial
    }
    if (suite.kind === "extraction") {
      const scanner = yield* ScannerModule.make
      const index = yield* MemoryIndexModule.make
      const runTrial: TrialRunner<never> = yield* prepareExtractionSuite(suite).pipe(
        Effect.provideService(ScannerModule.Scanner, scanner),
        Effect.provideService(MemoryIndexModule.MemoryIndex, index)
      )
      return runTrial
    }
    return yield* new InvalidRunOptionError({
      option: "SUITE",
      value: suite.name,
      reason: `${suite.kind} suites are not runnable in this build yet`
    })
  })
