#!/usr/bin/env node
// The `memdir` command: the bundle in dist/. In the repository (build.mjs sits beside bin/; the package ships
// without it), the bundle is first rebuilt when a source changed since the last bundle, so `pnpm memdir`
// always runs the current code and pays for a build only after an edit. CommonJS, as the bundle is: an ES module
// here costs every run Node's ES module loader, ~30 ms of each hook (docs/hooks.md#what-the-hooks-cost).
"use strict"
const { existsSync } = require("node:fs")
const path = require("node:path")
const { pathToFileURL } = require("node:url")

const build = path.join(__dirname, "..", "build.mjs")
if (existsSync(build)) {
  import(pathToFileURL(build).href)
    .then((module) => module.ensureBundle())
    .then(() => require("../dist/memdir.js"), (error) => {
      console.error(error)
      process.exit(1)
    })
} else {
  require("../dist/memdir.js")
}
