// Bundle the CLI into one self-contained dist/: the launcher memdir.js, the CLI entry main.cjs and its chunks.
// Unbundled ESM start-up costs ~1 s (module resolution of effect and friends), a bundle a fraction, and the
// launcher's V8 code cache (src/CodeCache.ts) most of what is left: the bundle is CommonJS so that it can be
// compiled with cached data. main.cjs holds what parsing argv needs; each command, the SDK and effect/cli's file
// parsers are chunks a run loads only when it uses them (any module a command loads with import() becomes a chunk
// of its own: a new command needs nothing here).
// The library stays importable per module from @memdir/core.
// Outputs are written to a temp name and renamed, so a concurrent build never exposes a half-written bundle
// to a process that is starting it (chunks are content-hashed, so an older entry still finds its chunks).
//
//   node build.mjs          bundle only when an input changed since the last bundle (dist/bundle-stamp.json)
//   node build.mjs --force  bundle unconditionally
//   node build.mjs --pack   what `pnpm pack` ships: bundle if stale, drop chunks of earlier builds, and check
//                           that the bundle leaves external only node built-ins and package.json dependencies
import * as fs from "node:fs"
import { isBuiltin } from "node:module"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { bundleDataFiles, LIBRARY_DATA_FILES } from "../../scripts/bundle-data.mjs"
import { bundleStamp, writeAtomically } from "../../scripts/bundle-stamp.mjs"

const here = path.dirname(fileURLToPath(import.meta.url))

/**
 * effect/cli's file helpers (`Flag.FileParse`/`Argument.FileParse`, `FileSchema`) import effect's ini, toml and yaml
 * parsers at the top of one module (`effect/cli/Primitive`), so a bundle with a file helper would evaluate ~50 KB of
 * parsers memdir never needs to parse argv. This rewrites that module so each parser is imported when a file of its
 * format is parsed: the helpers keep working, and the parsers land in chunks of their own.
 */
export const lazyCliFileParsers = {
  name: "lazy-cli-file-parsers",
  setup(build) {
    build.onLoad({ filter: /[\\/]effect[\\/]dist[\\/]cli[\\/]Primitive\.js$/ }, async (args) => {
      const source = await fs.promises.readFile(args.path, "utf8")
      const eager = [
        "import * as Ini from \"../encoding/Ini.js\";",
        "import * as Toml from \"../encoding/Toml.js\";",
        "import * as Yaml from \"../encoding/Yaml.js\";"
      ]
      const lookup = "const parser = fileParsers[fileFormat];\n    if (parser === undefined) {"
      const parse = "return yield* Effect.try({\n      try: () => parser(content),"
      if (
        eager.some((line) => !source.includes(line)) || !source.includes("const fileParsers = {") ||
        !source.includes(lookup) || !source.includes(parse)
      ) {
        throw new Error(`${args.path} changed shape: update the lazy-cli-file-parsers plugin in build.mjs`)
      }
      let contents = source
      for (const line of eager) contents = contents.replace(line, "")
      contents = contents.replace(
        /const fileParsers = \{[\s\S]*?\n\};/,
        `const fileParsers = {
  ini: () => import("../encoding/Ini.js").then((Ini) => (content) => Ini.parse(content)),
  json: () => Promise.resolve((content) => JSON.parse(content)),
  toml: () => import("../encoding/Toml.js").then((Toml) => (content) => Result.getOrThrow(Toml.parse(content))),
  yml: () => import("../encoding/Yaml.js").then((Yaml) => (content) => Yaml.parse(content)),
  yaml: () => import("../encoding/Yaml.js").then((Yaml) => (content) => Yaml.parse(content))
};`
      )
      contents = contents.replace(lookup, "const load = fileParsers[fileFormat];\n    if (load === undefined) {")
      contents = contents.replace(parse, "const parser = yield* Effect.promise(load);\n    " + parse)
      if (!contents.includes("Effect.promise(load)") || /from "\.\.\/encoding\/(Ini|Toml|Yaml)\.js"/.test(contents)) {
        throw new Error(`${args.path}: the lazy-cli-file-parsers rewrite did not apply`)
      }
      return { contents, loader: "js", resolveDir: path.dirname(args.path) }
    })
  }
}

/** The page of `memdir ui`: its browser modules and style sheet (src/ui/page). */
const pageDir = path.join(here, "src/ui/page")

/** Every file of the page, for the bundle stamp: esbuild's metafile does not see the page's own build. */
const pageFiles = (dir = pageDir) =>
  fs.existsSync(dir) ?
    fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? pageFiles(path.join(dir, entry.name)) : [path.join(dir, entry.name)]
    ) :
    []

/**
 * `import("memdir-ui-assets")` (src/ui/assets.d.ts): the page of `memdir ui` compiled for the browser (one script,
 * its `diff` dependency included) and its style sheet, as strings in a chunk of the bundle, so the server reads no
 * file and the page needs no network.
 */
export const uiAssets = {
  name: "ui-assets",
  setup(build) {
    // the module is the page's entry file, so the bundle stamp records a file that exists (a namespaced path of
    // its own would never exist, and the stamp would never be up to date); the CLI imports that file nowhere else
    const entry = path.join(pageDir, "main.ts")
    build.onResolve({ filter: /^memdir-ui-assets$/ }, () => ({ path: entry }))
    build.onLoad({ filter: /[\\/]src[\\/]ui[\\/]page[\\/]main\.ts$/ }, async (args) => {
      if (args.path !== entry) return undefined
      const esbuild = await import("esbuild")
      const page = await esbuild.build({
        absWorkingDir: here,
        entryPoints: [entry],
        bundle: true,
        format: "iife",
        platform: "browser",
        target: "es2022",
        minify: true,
        legalComments: "none",
        logLevel: "warning",
        write: false
      })
      const style = await fs.promises.readFile(path.join(pageDir, "page.css"), "utf8")
      return {
        contents: `export const script = ${JSON.stringify(page.outputFiles[0].text)};\n` +
          `export const style = ${JSON.stringify(style)};\n`,
        loader: "js",
        watchFiles: pageFiles()
      }
    })
  }
}

/** What `import.meta.url` is in the CLI's bundle: a constant of each chunk that uses it, its file's URL. */
const CHUNK_URL = "__memdirChunkUrl"
const CHUNK_URL_DECLARATION = `const ${CHUNK_URL}=require("node:url").pathToFileURL(__filename).href;`

/**
 * The CLI's esbuild options (also used by the start-up tests). esbuild splits only ES modules, so this first
 * bundle is ESM; `bundleTo` then turns each output into CommonJS (`.cjs`), which the launcher compiles through the
 * V8 code cache (src/CodeCache.ts hooks the CommonJS loader's compile step).
 */
export const bundleOptions = (outdir) => ({
  absWorkingDir: here,
  // every command module and the SDK are imported with import(): as chunks of their own, a run evaluates only
  // the command it runs, and a run without a model never parses the SDK
  entryPoints: { main: "src/main.ts" },
  outdir,
  splitting: true,
  chunkNames: "chunks/[name]-[hash]",
  outExtension: { ".js": ".cjs" },
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node22",
  minify: true,
  sourcemap: "inline",
  legalComments: "none",
  logLevel: "warning",
  metafile: true,
  // effect's ConfigProvider.fromEnv also reads `import.meta.env` (Vite, Bun): Node has none, and the bundle is
  // turned into CommonJS, which has no import.meta at all. A module's `import.meta.url` (the library finds its data
  // files beside itself with it) becomes the URL of the chunk that holds it: `bundleTo` declares it in that chunk.
  define: { "import.meta.env": "undefined", "import.meta.url": CHUNK_URL },
  plugins: [lazyCliFileParsers, uiAssets]
})

/**
 * The launcher `dist/memdir.js`: turns the code cache on, then requires `main.cjs` (src/launch.ts). CommonJS, like
 * the rest of dist/ (`dist/package.json` says so): a process started on it never sets up Node's ES module loader
 * (a few milliseconds of every start, hooks included). Its `import.meta.url` is the file's URL.
 */
const launcherOptions = (outdir) => ({
  absWorkingDir: here,
  entryPoints: { memdir: "src/launch.ts" },
  outdir,
  bundle: true,
  platform: "node",
  format: "cjs",
  define: { "import.meta.url": "__launcherUrl" },
  banner: { js: "\"use strict\";const __launcherUrl = require(\"node:url\").pathToFileURL(__filename).href;" },
  target: "node22",
  minify: true,
  sourcemap: "linked",
  legalComments: "none",
  logLevel: "warning",
  metafile: true
})

const mergeMetafiles = (a, b) => ({ inputs: { ...a.inputs, ...b.inputs }, outputs: { ...a.outputs, ...b.outputs } })

/** dist/package.json: every .js file in dist/ (the launcher) is CommonJS. */
const DIST_MANIFEST = `{ "type": "commonjs" }\n`

/**
 * Bundles into memory: the launcher, the CLI entry `main.cjs` and its chunks as CommonJS (each `import()` of a
 * chunk becomes a `require` when it runs, so a chunk is still evaluated only when used), with source maps when
 * `sourcemap` (linked, composed through both steps), and the library's data files beside the chunks that read them
 * (the glossary, scripts/bundle-data.mjs); `minify: false` keeps names, for CPU profiles. Returns
 * `{ files: [{ path, contents }], metafile }`.
 */
export const bundleTo = async (outdir, { sourcemap = true, minify = true } = {}) => {
  const esbuild = await import("esbuild")
  const [cli, launcher] = await Promise.all([
    esbuild.build({ ...bundleOptions(outdir), minify, sourcemap: sourcemap ? "inline" : false, write: false }),
    esbuild.build({ ...launcherOptions(outdir), minify, sourcemap: sourcemap ? "linked" : false, write: false })
  ])
  const files = launcher.outputFiles.map((file) => ({ path: file.path, contents: file.contents }))
  // dist/memdir.js is CommonJS although the package is "type": "module"
  files.push({ path: path.join(outdir, "package.json"), contents: Buffer.from(DIST_MANIFEST) })
  for (const file of cli.outputFiles) {
    const result = await esbuild.transform(file.text, {
      format: "cjs",
      platform: "node",
      target: "node22",
      minify,
      legalComments: "none",
      // import() of a chunk → Promise.resolve().then(() => require(chunk)): still lazy, now CommonJS
      supported: { "dynamic-import": false },
      // ES modules are strict code; CommonJS is only when it says so
      banner: "\"use strict\";" + (file.text.includes(CHUNK_URL) ? CHUNK_URL_DECLARATION : ""),
      sourcemap: sourcemap ? "external" : false,
      sourcefile: path.basename(file.path)
    })
    // e.g. import.meta, which CommonJS has not: the chunk would run with it undefined
    if (result.warnings.length > 0) {
      const messages = await esbuild.formatMessages(result.warnings, { kind: "warning" })
      throw new Error(`${path.basename(file.path)} does not convert cleanly to CommonJS:\n${messages.join("\n")}`)
    }
    if (!sourcemap) {
      files.push({ path: file.path, contents: Buffer.from(result.code) })
      continue
    }
    const map = `${path.basename(file.path)}.map`
    files.push({ path: file.path, contents: Buffer.from(`${result.code}//# sourceMappingURL=${map}\n`) })
    files.push({ path: `${file.path}.map`, contents: Buffer.from(result.map) })
  }
  files.push(...bundleDataFiles({ metafile: cli.metafile, here, repoRoot }))
  return { files, metafile: mergeMetafiles(cli.metafile, launcher.metafile) }
}

/** Chunks of earlier builds are removed once no process can still be starting from them. */
const STALE_CHUNK_AGE_MS = 60 * 60 * 1000

const repoRoot = path.resolve(here, "../..")
const distDir = path.join(here, "dist")

const { stampFile, inputsOf, digestOf, readStamp, isUpToDate: upToDate } = bundleStamp({
  here,
  repoRoot,
  stampName: "bundle-stamp.json",
  fixedInputs: [
    "pnpm-lock.yaml",
    "apps/cli/build.mjs",
    "tsconfig.base.json",
    // read by the bundle at run time, not bundled: esbuild's metafile does not see them
    ...LIBRARY_DATA_FILES.map((data) => data.file),
    ...pageFiles().map((file) => path.relative(repoRoot, file).split(path.sep).join("/"))
  ]
})

/** The bundle in outdir was made from the current inputs and every file it wrote is still there. */
export const isUpToDate = (outdir = distDir) => upToDate(outdir)

const removeStaleChunks = (outdir, current, maxAgeMs) => {
  const chunks = path.join(outdir, "chunks")
  for (const name of fs.readdirSync(chunks)) {
    const file = path.join(chunks, name)
    if (current.has(file) || name.endsWith(".tmp")) continue
    const stat = fs.statSync(file, { throwIfNoEntry: false })
    if (stat !== undefined && Date.now() - stat.mtimeMs >= maxAgeMs) fs.rmSync(file, { force: true })
  }
}

/** Bundles into outdir unconditionally, then records what it was made from (the stamp goes last). */
export const build = async (outdir = distDir) => {
  // the digest of the known inputs is taken before esbuild reads them, so an edit during the build leaves the
  // stamp stale (a first build, or one whose module set changed, can only hash them afterwards)
  const previous = readStamp(outdir)
  const before = previous === undefined ? undefined : digestOf(previous.inputs)
  const result = await bundleTo(outdir)
  // MEMDIR_BUNDLE_META=file writes esbuild's metafile (what each chunk holds) for size analysis
  if (process.env.MEMDIR_BUNDLE_META) {
    fs.writeFileSync(process.env.MEMDIR_BUNDLE_META, JSON.stringify(result.metafile))
  }
  for (const file of result.files) writeAtomically(file.path, file.contents)
  const current = new Set(result.files.map((file) => file.path))
  removeStaleChunks(outdir, current, STALE_CHUNK_AGE_MS)
  const inputs = inputsOf(result.metafile)
  const digest = previous !== undefined && inputs.join("\n") === previous.inputs.join("\n") && before !== undefined
    ? before
    : digestOf(inputs)
  const outputs = result.files.map((file) => path.relative(outdir, file.path).split(path.sep).join("/"))
  const externals = [
    ...new Set(
      Object.values(result.metafile.outputs).flatMap((output) =>
        output.imports.filter((i) => i.external).map((i) => i.path)
      )
    )
  ].sort()
  writeAtomically(stampFile(outdir), JSON.stringify({ digest, inputs, outputs, externals }, null, 2) + "\n")
  return result
}

/** Bundles only when the inputs changed since the last bundle (or a file of it is gone); true when it bundled. */
export const ensureBundle = async (outdir = distDir) => {
  if (isUpToDate(outdir)) return false
  await build(outdir)
  return true
}

/** A bare package name of an import specifier (`@scope/name/sub` → `@scope/name`). */
const packageNameOf = (specifier) => specifier.split("/").slice(0, specifier.startsWith("@") ? 2 : 1).join("/")

/**
 * The package `pnpm pack` ships: no chunk of an earlier build (the files list takes every chunk), and
 * package.json's `dependencies` exactly what the bundle leaves external besides node built-ins: a missing one
 * would fail at run time, a bundled one would install for nothing.
 */
export const preparePack = async (outdir = distDir) => {
  await ensureBundle(outdir)
  const stamp = readStamp(outdir)
  removeStaleChunks(outdir, new Set(stamp.outputs.map((output) => path.join(outdir, output))), 0)
  const manifest = JSON.parse(fs.readFileSync(path.join(here, "package.json"), "utf8"))
  const declared = Object.keys(manifest.dependencies ?? {})
  const external = [...new Set(stamp.externals.filter((i) => !isBuiltin(i)).map(packageNameOf))]
  const missing = external.filter((name) => !declared.includes(name))
  const bundled = declared.filter((name) => !external.includes(name))
  if (missing.length > 0 || bundled.length > 0) {
    throw new Error(
      [
        missing.length > 0 ? `the bundle imports ${missing.join(", ")} at run time: add them to dependencies` : "",
        bundled.length > 0
          ? `the bundle already holds ${bundled.join(", ")}: move them to devDependencies of apps/cli/package.json`
          : ""
      ].filter((line) => line !== "").join("; ")
    )
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const flag = process.argv[2]
  if (flag === "--force") await build()
  else if (flag === "--pack") await preparePack()
  else if (flag === undefined) await ensureBundle()
  else throw new Error(`unknown option ${flag}: node build.mjs [--force | --pack]`)
}
