/**
 * Vitest global setup of the system tests: bundles the CLI once per run, before any test file starts, so every
 * file runs the same fresh `apps/cli/dist/memdir.js` and none pays for a build of its own.
 */
import { execFileSync } from "node:child_process"
import * as path from "node:path"
import { repoRoot } from "./cli.js"

export default function setup(): void {
  execFileSync(process.execPath, [path.join(repoRoot, "apps/cli/build.mjs")], { stdio: "inherit" })
}
