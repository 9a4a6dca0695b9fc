/**
 * Vitest global setup of the evals tests: brings the evals bundle (apps/evals/dist, build.mjs) up to date once per
 * run, before any test file starts, so the tests that run `pnpm evals` as a child process all start the same
 * current bundle and none of them pays for a build (or races another to make one). `node build.mjs` bundles only
 * when a source changed since the last bundle, so a run after no edit starts at once.
 */
import { execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"

export default function setup(): void {
  execFileSync(process.execPath, [fileURLToPath(new URL("../build.mjs", import.meta.url))], { stdio: "inherit" })
}
