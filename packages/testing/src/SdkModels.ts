/**
 * The installed `@anthropic-ai/sdk`'s own model lists, read from the package as installed: `knownModelIds` (its
 * `Model` type) and `deprecatedModels` (the `DEPRECATED_MODELS` table for which `messages.create` prints "The model
 * '…' is deprecated and will reach end-of-life on …", id → that date). Tests check memdir's model ids against them
 * (packages/core/test/ModelCatalog.test.ts, test/models.test.ts), so an SDK upgrade that deprecates a model memdir
 * names fails a test instead of printing warnings.
 */
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"

const require = createRequire(import.meta.url)

/** The SDK's package directory (its CommonJS entry sits at the root). */
const sdkDir = (): string => path.dirname(require.resolve("@anthropic-ai/sdk"))

/** Model id → end-of-life date, as the SDK's warning prints it; the very table its requests are checked against. */
export const deprecatedModels = (): Readonly<Record<string, string>> => {
  const data = require(path.join(sdkDir(), "internal/data/deprecated-models.js")) as {
    readonly DEPRECATED_MODELS?: Readonly<Record<string, string>>
  }
  if (data.DEPRECATED_MODELS === undefined) throw new Error("the SDK no longer exports DEPRECATED_MODELS there")
  return data.DEPRECATED_MODELS
}

/** The ids of the SDK's `Model` type (the models its Messages API types name). */
export const knownModelIds = (): ReadonlyArray<string> => {
  const types = fs.readFileSync(path.join(sdkDir(), "resources/messages/messages.d.ts"), "utf8")
  const union = /export type Model =([^;]*);/.exec(types)?.[1]
  if (union === undefined) throw new Error("the SDK's messages.d.ts no longer declares `type Model`")
  return [...union.matchAll(/'([^']+)'/g)].map((m) => m[1]!)
}

/** The warning the SDK prints for a deprecated model: a test fails when it appears in a child's output. */
export const DEPRECATION_WARNING = /The model '[^']+' is deprecated and will reach end-of-life/
