// When a bundle is up to date, for the esbuild bundles of the repository (apps/cli/build.mjs, apps/evals/build.mjs):
// a stamp file beside the outputs records the repository files the bundle was made from and their content digest;
// a changed input, a deleted one or a missing output makes it stale. Outputs are written to a temp name and renamed,
// so a concurrent build never exposes a half-written file to a process that is starting it.
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"

/**
 * The stamp of one bundle: `here` is the directory esbuild works in (its metafile's paths are relative to it),
 * `fixedInputs` the files that decide the bundle besides the modules it holds (the lockfile for every node_modules
 * input, the build script for the options, the shared compiler options), relative to `repoRoot`.
 */
export const bundleStamp = ({ here, repoRoot, stampName, fixedInputs }) => {
  const stampFile = (outdir) => path.join(outdir, stampName)

  /**
   * The repository files a bundle was made from, relative to the repository: the workspace modules esbuild read
   * (its metafile; node_modules is covered by the lockfile), the package.json and tsconfig.json of each package
   * they belong to (module resolution, compiler options) and the fixed inputs. A module added later is imported
   * by one of these, so it changes their digest.
   */
  const inputsOf = (metafile) => {
    const files = new Set(fixedInputs)
    for (const input of Object.keys(metafile.inputs)) {
      const absolute = path.resolve(here, input)
      const relative = path.relative(repoRoot, absolute)
      if (relative.startsWith("..") || relative.split(path.sep).includes("node_modules")) continue
      files.add(relative.split(path.sep).join("/"))
      for (let dir = path.dirname(absolute); dir.startsWith(repoRoot); dir = path.dirname(dir)) {
        if (!fs.existsSync(path.join(dir, "package.json"))) continue
        for (const config of ["package.json", "tsconfig.json"]) {
          const file = path.join(dir, config)
          if (fs.existsSync(file)) files.add(path.relative(repoRoot, file).split(path.sep).join("/"))
        }
        break
      }
    }
    return [...files].sort()
  }

  /** The content digest of the inputs; undefined when one is gone (a deleted module: the bundle is stale). */
  const digestOf = (inputs) => {
    const hash = createHash("sha256")
    for (const input of inputs) {
      let content
      try {
        content = fs.readFileSync(path.join(repoRoot, input))
      } catch {
        return undefined
      }
      hash.update(input).update("\0").update(content).update("\0")
    }
    return hash.digest("hex")
  }

  const readStamp = (outdir) => {
    try {
      const stamp = JSON.parse(fs.readFileSync(stampFile(outdir), "utf8"))
      return Array.isArray(stamp.inputs) && Array.isArray(stamp.outputs) && typeof stamp.digest === "string"
        ? stamp
        : undefined
    } catch {
      return undefined
    }
  }

  /** The bundle in outdir was made from the current inputs and every file it wrote is still there. */
  const isUpToDate = (outdir) => {
    const stamp = readStamp(outdir)
    return stamp !== undefined && digestOf(stamp.inputs) === stamp.digest &&
      stamp.outputs.every((output) => fs.existsSync(path.join(outdir, output)))
  }

  return { stampFile, inputsOf, digestOf, readStamp, isUpToDate }
}

/** Writes file through a temp name and a rename: a reader sees the old file or the whole new one. */
export const writeAtomically = (file, contents) => {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  const temp = `${file}.${process.pid}.tmp`
  fs.writeFileSync(temp, contents)
  fs.renameSync(temp, file)
}
