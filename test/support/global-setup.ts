/**
 * Vitest global setup of the system tests: brings the CLI bundle up to date once per run, before any test file
 * starts, so every file runs the same current `apps/cli/dist/memdir.js` and none pays for a build of its own.
 * `node apps/cli/build.mjs` bundles only when a source changed since the last bundle (its stamp), so a run
 * after no edit starts at once. On a machine without it, the real Claude Code CLI is installed into its cache here
 * too, once, rather than by the two files that drive it, which would otherwise run `npm install` into the same
 * prefix at the same time.
 */
import { execFileSync } from "node:child_process"
import * as path from "node:path"
import { ensureClaudeCode } from "./claudeCode.js"
import { repoRoot } from "./cli.js"

export default function setup(): void {
  execFileSync(process.execPath, [path.join(repoRoot, "apps/cli/build.mjs")], { stdio: "inherit" })
  // a reason to skip is printed by each file that drives Claude Code
  ensureClaudeCode()
}
