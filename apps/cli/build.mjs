// Bundle the CLI into one ESM file: unbundled ESM start-up costs ~1 s (module resolution of effect and
// friends), a bundle ~0.2 s. The library stays importable per module from @memdir/core.
import * as esbuild from "esbuild"

await esbuild.build({
  entryPoints: ["src/main.ts"],
  outfile: "dist/memdir.js",
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  minify: true,
  keepNames: false,
  sourcemap: "linked",
  legalComments: "none",
  logLevel: "warning",
  // gray-matter and js-yaml are CommonJS and call require() on node built-ins
  banner: { js: "import { createRequire as __cr } from \"node:module\"; const require = __cr(import.meta.url);" }
})
