// The data files the library reads beside its own modules (`new URL("./file", import.meta.url)`), for the esbuild
// bundles of the repository (apps/cli/build.mjs, apps/evals/build.mjs): in a bundle the module is part of an output
// file, so its URL is that output's, and the data file must be written beside it.
import * as fs from "node:fs"
import * as path from "node:path"

/** Each data file and the module that reads it, relative to the repository. */
export const LIBRARY_DATA_FILES = [
  {
    module: "packages/core/src/internal/text/translation.ts",
    file: "packages/core/src/internal/text/glossary.data.txt"
  }
]

/**
 * The data files a bundle writes, `{ path, contents }`: each beside every output that holds the module reading it
 * (none when the bundle holds no such module). `here` is the directory esbuild works in (its metafile's paths are
 * relative to it).
 */
export const bundleDataFiles = ({ metafile, here, repoRoot }) =>
  LIBRARY_DATA_FILES.flatMap(({ module, file }) => {
    const source = path.join(repoRoot, module)
    if (!fs.existsSync(source)) {
      throw new Error(`${module} is gone: update LIBRARY_DATA_FILES in scripts/bundle-data.mjs`)
    }
    const input = path.relative(here, source).split(path.sep).join("/")
    const dirs = new Set(
      Object.entries(metafile.outputs).filter(([, output]) => output.inputs[input] !== undefined).map(([name]) =>
        path.dirname(path.resolve(here, name))
      )
    )
    if (dirs.size === 0) return []
    const contents = fs.readFileSync(path.join(repoRoot, file))
    return [...dirs].map((dir) => ({ path: path.join(dir, path.basename(file)), contents }))
  })
