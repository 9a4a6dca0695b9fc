// Bundle the CLI into one self-contained dist/ (an ESM entry and its chunks): unbundled ESM start-up costs ~1 s
// (module resolution of effect and friends), a bundle a fraction. The entry holds what parsing argv needs; each
// command, the SDK and @effect/cli's file parsers are chunks a run loads only when it uses them.
// The library stays importable per module from @memdir/core.
// Outputs are written to a temp name and renamed, so a concurrent build never exposes a half-written bundle
// to a process that is starting it (chunks are content-hashed, so an older entry still finds its chunks).
import * as esbuild from "esbuild"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const here = path.dirname(fileURLToPath(import.meta.url))

/**
 * @effect/cli's file helpers (`Options.file*`/`Args.file*`, config files) import yaml, toml and ini at the top
 * of one internal module, so every start would evaluate ~150 KB of parsers memdir never needs to parse argv.
 * This rewrites that module so each parser is imported when a file of its format is parsed: the helpers keep
 * working, and the parsers land in chunks of their own.
 */
export const lazyCliFileParsers = {
  name: "lazy-cli-file-parsers",
  setup(build) {
    build.onLoad({ filter: /[\\/]@effect[\\/]cli[\\/]dist[\\/]esm[\\/]internal[\\/]files\.js$/ }, async (args) => {
      const source = await fs.promises.readFile(args.path, "utf8")
      const eager = [
        "import * as Ini from \"ini\";",
        "import * as Toml from \"toml\";",
        "import * as Yaml from \"yaml\";"
      ]
      const parsers = source.indexOf("export const fileParsers = {")
      const parse = source.indexOf("export const parse = ")
      if (eager.some((line) => !source.includes(line)) || parsers < 0 || parse < 0) {
        throw new Error(`${args.path} changed shape: update the lazy-cli-file-parsers plugin in build.mjs`)
      }
      let contents = source
      for (const line of eager) contents = contents.replace(line, "")
      contents = contents.replace(
        /export const fileParsers = \{[\s\S]*?\n\};/,
        // a CommonJS parser's namespace may hold its exports only under `default`
        `const parserOf = (module) => (module.parse ?? module.default.parse);
export const fileParsers = {
  json: () => Promise.resolve((content) => JSON.parse(content)),
  yaml: () => import("yaml").then(parserOf),
  yml: () => import("yaml").then(parserOf),
  ini: () => import("ini").then(parserOf),
  toml: () => import("toml").then(parserOf),
  tml: () => import("toml").then(parserOf)
};`
      )
      contents = contents.slice(0, contents.indexOf("export const parse = ")) +
        `export const parse = (path, content, format) => {
  const load = fileParsers[format ?? path.split(".").pop()];
  if (load === undefined) {
    return Effect.fail(\`Unsupported file format: \${format}\`);
  }
  return Effect.flatMap(Effect.promise(load), (parser) => Effect.try({
    try: () => parser(content),
    catch: e => \`Could not parse \${format} file (\${path}): \${e}\`
  }));
};
`
      if (!contents.includes("Effect.promise(load)") || contents.includes("from \"yaml\"")) {
        throw new Error(`${args.path}: the lazy-cli-file-parsers rewrite did not apply`)
      }
      return { contents, loader: "js" }
    })
  }
}

/** The bundle's esbuild options (also used by the start-up tests, which bundle into a directory of their own). */
export const bundleOptions = (outdir) => ({
  absWorkingDir: here,
  // every command module and the SDK are imported with import(): as chunks of their own, a run evaluates only
  // the command it runs, and a run without a model never parses the SDK
  entryPoints: { memdir: "src/main.ts" },
  outdir,
  splitting: true,
  chunkNames: "chunks/[name]-[hash]",
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  minify: true,
  sourcemap: "linked",
  legalComments: "none",
  logLevel: "warning",
  metafile: true,
  plugins: [lazyCliFileParsers],
  // gray-matter and js-yaml are CommonJS and call require() on node built-ins
  banner: { js: "import { createRequire as __cr } from \"node:module\"; const require = __cr(import.meta.url);" }
})

/** Chunks of earlier builds are removed once no process can still be starting from them. */
const STALE_CHUNK_AGE_MS = 60 * 60 * 1000

const build = async () => {
  const outdir = path.join(here, "dist")
  const result = await esbuild.build({ ...bundleOptions(outdir), write: false })
  // MEMDIR_BUNDLE_META=file writes esbuild's metafile (what each chunk holds) for size analysis
  if (process.env.MEMDIR_BUNDLE_META) {
    fs.writeFileSync(process.env.MEMDIR_BUNDLE_META, JSON.stringify(result.metafile))
  }
  for (const file of result.outputFiles) {
    fs.mkdirSync(path.dirname(file.path), { recursive: true })
    const temp = `${file.path}.${process.pid}.tmp`
    fs.writeFileSync(temp, file.contents)
    fs.renameSync(temp, file.path)
  }
  const current = new Set(result.outputFiles.map((file) => file.path))
  const chunks = path.join(outdir, "chunks")
  for (const name of fs.readdirSync(chunks)) {
    const file = path.join(chunks, name)
    if (current.has(file) || name.endsWith(".tmp")) continue
    const stat = fs.statSync(file, { throwIfNoEntry: false })
    if (stat !== undefined && Date.now() - stat.mtimeMs > STALE_CHUNK_AGE_MS) fs.rmSync(file, { force: true })
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  await build()
}
