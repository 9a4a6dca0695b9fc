// Bundle the evals command line into dist/: one self-contained ES module per entry (dist/main.js for `pnpm evals`,
// dist/generalize.js for `pnpm evals:generalize`), run by run.mjs. Under tsx every start compiled and resolved
// ~1,800 modules (~4 s of CPU for `evals list`); the bundle starts in a fraction of a second.
// Outputs are written to a temp name and renamed, so a concurrent build never exposes a half-written bundle to a
// process that is starting it; the stamp (dist/build-stamp.json) goes last.
//
//   node build.mjs          bundle only when an input changed since the last bundle (the stamp says)
//   node build.mjs --force  bundle unconditionally
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { bundleDataFiles, LIBRARY_DATA_FILES } from "../../scripts/bundle-data.mjs"
import { bundleStamp, writeAtomically } from "../../scripts/bundle-stamp.mjs"

const here = path.dirname(fileURLToPath(import.meta.url))
const repoRoot = path.resolve(here, "../..")
const distDir = path.join(here, "dist")

/** The entries run.mjs runs, each src/NAME.ts bundled to dist/NAME.js. */
export const ENTRIES = ["main", "generalize"]

/**
 * The esbuild options. Everything is bundled (effect, the SDK, @memdir/core…): resolving and loading node_modules
 * one ES module at a time is most of an unbundled start. dist/ sits as deep as src/, so the paths the sources
 * derive from `import.meta` (the repository's evals/, its root) hold in the bundle too.
 */
export const bundleOptions = (outdir) => ({
  absWorkingDir: here,
  entryPoints: Object.fromEntries(ENTRIES.map((entry) => [entry, `src/${entry}.ts`])),
  outdir,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node22",
  minify: true,
  // `node --enable-source-maps` maps a stack trace back to the sources (read from the checkout: no copies inside)
  sourcemap: "linked",
  sourcesContent: false,
  legalComments: "none",
  logLevel: "warning",
  metafile: true,
  write: false,
  // the CommonJS packages inside require node built-ins, which an ES module has no `require` for
  banner: {
    js: "import { createRequire as __evalsCreateRequire } from \"node:module\";" +
      "const require = __evalsCreateRequire(import.meta.url);"
  }
})

const { stampFile, inputsOf, digestOf, readStamp, isUpToDate: upToDate } = bundleStamp({
  here,
  repoRoot,
  stampName: "build-stamp.json",
  // the library's data files are read by the bundle at run time, not bundled: esbuild's metafile does not see them
  fixedInputs: [
    "pnpm-lock.yaml",
    "apps/evals/build.mjs",
    "tsconfig.base.json",
    ...LIBRARY_DATA_FILES.map((data) => data.file)
  ]
})

/** The bundle in outdir was made from the current inputs and every file it wrote is still there. */
export const isUpToDate = (outdir = distDir) => upToDate(outdir)

/** Bundles into outdir unconditionally, then records what it was made from (the stamp goes last). */
export const build = async (outdir = distDir) => {
  const esbuild = await import("esbuild")
  // the digest of the known inputs is taken before esbuild reads them, so an edit during the build leaves the
  // stamp stale (a first build, or one whose module set changed, can only hash them afterwards)
  const previous = readStamp(outdir)
  const before = previous === undefined ? undefined : digestOf(previous.inputs)
  const result = await esbuild.build(bundleOptions(outdir))
  // the bundle's JavaScript, and the library's data files beside the outputs that read them (the glossary)
  const files = [
    ...result.outputFiles.map((file) => ({ path: file.path, contents: file.contents })),
    ...bundleDataFiles({ metafile: result.metafile, here, repoRoot })
  ]
  for (const file of files) writeAtomically(file.path, file.contents)
  const inputs = inputsOf(result.metafile)
  const digest = previous !== undefined && inputs.join("\n") === previous.inputs.join("\n") && before !== undefined
    ? before
    : digestOf(inputs)
  const outputs = files.map((file) => path.relative(outdir, file.path).split(path.sep).join("/"))
  writeAtomically(stampFile(outdir), JSON.stringify({ digest, inputs, outputs }, null, 2) + "\n")
  return result
}

/**
 * Bundles only when the inputs changed since the last bundle (or a file of it is gone); true when it bundled.
 * `onBuild` is called first when it does (run.mjs says why the start is slow).
 */
export const ensureBundle = async (outdir = distDir, { onBuild = () => {} } = {}) => {
  if (isUpToDate(outdir)) return false
  onBuild()
  await build(outdir)
  return true
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const flag = process.argv[2]
  if (flag === "--force") await build()
  else if (flag === undefined) await ensureBundle()
  else throw new Error(`unknown option ${flag}: node build.mjs [--force]`)
}
