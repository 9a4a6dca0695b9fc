/**
 * The recall caches of a memory directory made complete in process (docs/architecture.md#the-recall-caches): one
 * scan through the header cache, every body's terms analysed with no budget. What a directory has after a few
 * recalls; the benchmarks start their warm cases from it.
 */
import { NodeServices } from "@effect/platform-node"
import * as HeaderCache from "@memdir/core/HeaderCache"
import * as MemoryFs from "@memdir/core/MemoryFs"
import * as Scanner from "@memdir/core/Scanner"
import * as TermCache from "@memdir/core/TermCache"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as path from "node:path"

export const warmCaches = (directory: string): Promise<void> => {
  const memoryDir = path.resolve(directory)
  return Effect.runPromise(
    Effect.gen(function*() {
      const scan = yield* (yield* Scanner.Scanner).scan(memoryDir)
      yield* (yield* TermCache.TermCache).bodies(memoryDir, scan.memories)
    }).pipe(
      Effect.provide(
        Layer.mergeAll(Scanner.layer, TermCache.layerWith({ analyseBudgetBytes: Number.POSITIVE_INFINITY })).pipe(
          Layer.provideMerge(HeaderCache.layer),
          Layer.provideMerge(MemoryFs.layer),
          Layer.provideMerge(NodeServices.layer)
        )
      )
    )
  )
}
