/**
 * The bundle's entry (`dist/memdir.js`): turns the code cache on for the bundle's CommonJS chunks, then loads the
 * CLI (`dist/main.cjs`, built from main.ts). Kept apart from main.ts so that nothing of the CLI is compiled before
 * the cache is in place. A `memdir hook` is first offered to the session's hook daemon (hookd/HookClient.ts), which
 * answers without loading the CLI at all; the CLI is loaded only when it does not.
 */
import { createRequire } from "node:module"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { cacheDirectory, commandTag, install } from "./CodeCache.js"
import { hookClientArgs, runHookClient } from "./hookd/HookClient.js"
import { BUNDLE_ROOT, bundleIdentity } from "./hookd/HookSocket.js"

const root = path.dirname(fileURLToPath(import.meta.url))
const store = globalThis as Record<symbol, string>
// for a hook daemon to notice memdir updated in place (hookd/HookDaemon.ts)
store[BUNDLE_ROOT] = root

const loadCli = () => {
  try {
    install({ root, dir: cacheDirectory(), tag: commandTag(process.argv) })
  } catch {
    // no cache (no home directory, a read-only one…): the CLI compiles as if none had been made
  }
  createRequire(import.meta.url)("./main.cjs")
}

const hookArgs = process.env.MEMDIR_HOOK_DAEMON === "off" ? undefined : hookClientArgs(process.argv)
if (hookArgs === undefined) {
  loadCli()
} else {
  // a client that throws (a bug) still leaves the hook to the CLI, which fails open
  runHookClient(hookArgs, bundleIdentity(root)).catch(() => false).then((answered) => answered || loadCli())
}
