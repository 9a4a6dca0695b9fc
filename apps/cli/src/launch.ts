/**
 * The bundle's entry (`dist/memdir.js`): turns the code cache on for the bundle's CommonJS chunks, then loads the
 * CLI (`dist/main.cjs`, built from main.ts). Kept apart from main.ts so that nothing of the CLI is compiled before
 * the cache is in place.
 */
import { createRequire } from "node:module"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { cacheDirectory, commandTag, install } from "./CodeCache.js"

try {
  install({ root: path.dirname(fileURLToPath(import.meta.url)), dir: cacheDirectory(), tag: commandTag(process.argv) })
} catch {
  // no cache (no home directory, a read-only one…): the CLI compiles as if none had been made
}
createRequire(import.meta.url)("./main.cjs")
