// Bundle the CLI into one ESM file: unbundled ESM start-up costs ~1 s (module resolution of effect and
// friends), a bundle ~0.2 s. The library stays importable per module from @memdir/core.
// Outputs are written to a temp name and renamed, so a concurrent build never exposes a half-written bundle
// to a process that is starting it (chunks are content-hashed, so an older entry still finds its chunks).
import * as esbuild from "esbuild"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const here = path.dirname(fileURLToPath(import.meta.url))

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
  // gray-matter and js-yaml are CommonJS and call require() on node built-ins
  banner: { js: "import { createRequire as __cr } from \"node:module\"; const require = __cr(import.meta.url);" }
})

for (const file of result.outputFiles) {
  fs.mkdirSync(path.dirname(file.path), { recursive: true })
  const temp = `${file.path}.${process.pid}.tmp`
  fs.writeFileSync(temp, file.contents)
  fs.renameSync(temp, file.path)
}
