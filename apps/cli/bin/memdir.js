#!/usr/bin/env node
// The `memdir` command: the bundle in dist/. In the repository (build.mjs sits beside bin/; the package ships
// without it), the bundle is first rebuilt when a source changed since the last bundle, so `pnpm memdir`
// always runs the current code and pays for a build only after an edit.
import { existsSync } from "node:fs"

const build = new URL("../build.mjs", import.meta.url)
if (existsSync(build)) await (await import(build.href)).ensureBundle()
await import("../dist/memdir.js")
