// `pnpm evals …` and `pnpm evals:generalize …`: `node apps/evals/run.mjs main|generalize ARGS…` runs that entry's
// bundle, dist/ENTRY.js, bringing it up to date first when a source changed since it was built (build.mjs: a few
// seconds, once). The entry runs in this process, with ARGS as its own arguments, so a signal sent to this process
// (Ctrl-C) reaches the evals run itself: it exits 130 as documented (docs/evals.md).
import module from "node:module"
import { fileURLToPath } from "node:url"
import { ENTRIES, ensureBundle } from "./build.mjs"

const entry = process.argv[2]
if (!ENTRIES.includes(entry)) {
  process.stderr.write(
    `run.mjs: ${entry === undefined ? "no entry given" : `unknown entry "${entry}"`}: ` +
      `node apps/evals/run.mjs ${ENTRIES.join("|")} [ARGS…]\n`
  )
  process.exit(64)
}
// the entry reads its arguments from process.argv.slice(2), as if it had been started itself
process.argv.splice(2, 1)

await ensureBundle(undefined, {
  onBuild: () => {
    if (process.stderr.isTTY) {
      process.stderr.write("evals: a source changed since the last build: bundling apps/evals/dist/ first…\n")
    }
  }
})
// V8's compiled code of the bundle, kept between runs (Node's own compile cache, checked against the source):
// about 0.1 s less CPU for every start
module.enableCompileCache(fileURLToPath(new URL("./dist/compile-cache", import.meta.url)))
await import(`./dist/${entry}.js`)
