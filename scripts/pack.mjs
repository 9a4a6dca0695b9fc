// Steps of `pnpm pack` for the published packages (their prepack/postpack scripts), run in the package's
// directory:
//
//   node ../../scripts/pack.mjs license     copy the repository's LICENSE into the package (one source of truth)
//   node ../../scripts/pack.mjs unlicense   remove that copy again (only if it is still the copy)
//   node ../../scripts/pack.mjs core-dist   @memdir/core: dist/ (JavaScript and declarations) from src/, with the
//                                           data files its modules read beside themselves (the glossary), current
//                                           and holding nothing a removed module or data file left behind
//
// See docs/install.md for what each package holds.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const packageDir = process.cwd()
const rootLicense = path.join(repoRoot, "LICENSE")
const packageLicense = path.join(packageDir, "LICENSE")

const license = () => fs.copyFileSync(rootLicense, packageLicense)

const unlicense = () => {
  if (!fs.existsSync(packageLicense)) return
  if (fs.readFileSync(packageLicense, "utf8") === fs.readFileSync(rootLicense, "utf8")) fs.rmSync(packageLicense)
}

/** src/a/B.ts → "a/B"; dist/a/B.js, .d.ts and their maps → "a/B" (undefined for any other file). */
const moduleOf = (file, suffixes) => {
  const suffix = suffixes.find((s) => file.endsWith(s))
  return suffix === undefined ? undefined : file.slice(0, -suffix.length).split(path.sep).join("/")
}

const filesUnder = (dir) =>
  fs.existsSync(dir) ? fs.readdirSync(dir, { recursive: true, encoding: "utf8" }) : []

const OUTPUT_SUFFIXES = [".d.ts.map", ".d.ts", ".js.map", ".js"]

/** A file of src/ that is no TypeScript (nor a directory): a data file, shipped as it is. */
const isData = (file) => !file.endsWith(".ts") && fs.statSync(file).isFile()

/** The modules of src/ whose .js or .d.ts is missing from dist/ (a build info newer than a deleted dist/). */
const missingOutputs = (src, dist) =>
  filesUnder(src).map((f) => f.endsWith(".d.ts") ? undefined : moduleOf(f, [".ts"]))
    .filter((m) => m !== undefined)
    .filter((m) => [".js", ".d.ts"].some((s) => !fs.existsSync(path.join(dist, m + s))))

const coreDist = () => {
  const src = path.join(packageDir, "src")
  const dist = path.join(packageDir, "dist")
  const tsc = createRequire(path.join(repoRoot, "package.json")).resolve("typescript/bin/tsc")
  const compile = () => execFileSync(process.execPath, [tsc, "-b", "tsconfig.json"], { stdio: "inherit" })
  compile()
  if (missingOutputs(src, dist).length > 0) {
    fs.rmSync(path.join(packageDir, "build/tsbuildinfo/src.tsbuildinfo"), { force: true })
    compile()
  }
  const missing = missingOutputs(src, dist)
  if (missing.length > 0) throw new Error(`tsc -b wrote no dist/ output for ${missing.join(", ")}`)
  const modules = new Set(filesUnder(src).map((f) => moduleOf(f, [".ts"])))
  // every other file of src/ is data a module reads beside itself (new URL("./file", import.meta.url)): tsc copies
  // none, so a packed module would look for it in vain
  const data = new Set(filesUnder(src).filter((f) => isData(path.join(src, f))))
  for (const file of data) {
    fs.mkdirSync(path.dirname(path.join(dist, file)), { recursive: true })
    fs.copyFileSync(path.join(src, file), path.join(dist, file))
  }
  for (const file of filesUnder(dist)) {
    const module = moduleOf(file, OUTPUT_SUFFIXES)
    const stale = module === undefined ? isData(path.join(dist, file)) && !data.has(file) : !modules.has(module)
    if (stale) fs.rmSync(path.join(dist, file))
  }
}

const steps = { license, unlicense, "core-dist": coreDist }
const step = steps[process.argv[2]]
if (step === undefined) throw new Error(`usage: node scripts/pack.mjs ${Object.keys(steps).join(" | ")}`)
step()
