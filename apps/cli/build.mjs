// Bundle the CLI into one ESM file: unbundled ESM start-up costs ~1 s (module resolution of effect and
// friends), a bundle ~0.2 s. The library stays importable per module from @memdir/core.
// Outputs are written to a temp name and renamed, so a concurrent build never exposes a half-written bundle
// to a process that is starting it (chunks are content-hashed, so an older entry still finds its chunks).
import * as esbuild from "esbuild"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const here = path.dirname(fileURLToPath(import.meta.url))

/**
 * @effect/cli's file helpers (`Options.file*`/`Args.file*`, config files) import yaml, toml and ini at the top
 * of one internal module, so every start would evaluate ~150 KB of parsers memdir never needs to parse argv.
 * This rewrites that module so each parser is imported when a file of its format is parsed: the helpers keep
 * working, and the parsers land in chunks of their own.
 */
const lazyCliFileParsers = {
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
        `export const fileParsers = {
  json: () => Promise.resolve((content) => JSON.parse(content)),
  yaml: () => import("yaml").then((Yaml) => (content) => Yaml.parse(content)),
  yml: () => import("yaml").then((Yaml) => (content) => Yaml.parse(content)),
  ini: () => import("ini").then((Ini) => (content) => Ini.parse(content)),
  toml: () => import("toml").then((Toml) => (content) => Toml.parse(content)),
  tml: () => import("toml").then((Toml) => (content) => Toml.parse(content))
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

const result = await esbuild.build({
  absWorkingDir: here,
  // the SDK is imported with import() only when a model is configured: as its own chunk, a run without a
  // key never parses it
  entryPoints: { memdir: "src/main.ts" },
  outdir: path.join(here, "dist"),
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
  write: false,
  metafile: true,
  plugins: [lazyCliFileParsers],
  // gray-matter and js-yaml are CommonJS and call require() on node built-ins
  banner: { js: "import { createRequire as __cr } from \"node:module\"; const require = __cr(import.meta.url);" }
})

// MEMDIR_BUNDLE_META=file writes esbuild's metafile (what each chunk holds) for size analysis
if (process.env.MEMDIR_BUNDLE_META) fs.writeFileSync(process.env.MEMDIR_BUNDLE_META, JSON.stringify(result.metafile))

for (const file of result.outputFiles) {
  fs.mkdirSync(path.dirname(file.path), { recursive: true })
  const temp = `${file.path}.${process.pid}.tmp`
  fs.writeFileSync(temp, file.contents)
  fs.renameSync(temp, file.path)
}
