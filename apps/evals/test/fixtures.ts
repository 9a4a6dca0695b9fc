/** Shared by the command-line and report tests: a small agent suite and `pnpm evals` as a child process. */
import * as Effect from "effect/Effect"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const repoRoot = fileURLToPath(new URL("../../..", import.meta.url))

/**
 * What `pnpm evals` runs, from the root package.json's `evals` script: `node apps/evals/run.mjs main`, which starts
 * the bundle dist/main.js (brought up to date by the global setup, test/global-setup.ts) in its own process.
 */
const evalsScript = (): ReadonlyArray<string> => {
  const manifest = JSON.parse(fs.readFileSync(path.join(repoRoot, "package.json"), "utf8"))
  const words = String(manifest.scripts.evals).split(/\s+/)
  if (words[0] !== "node") throw new Error(`the evals script no longer starts with node: ${manifest.scripts.evals}`)
  return words.slice(1)
}

/**
 * `pnpm evals ARGS` as one Node process, started in the repository (the `pnpm` in front would add a second one for
 * nothing): a test that spawns it itself to signal it signals the evals run.
 */
export const evalsCommand = (args: ReadonlyArray<string>) => ({
  file: process.execPath,
  args: [...evalsScript(), ...args],
  cwd: repoRoot
})

/** Runs `pnpm evals ARGS` as a child process (evalsCommand): its exit code and output. */
export const runEvals = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  Effect.callback<{ readonly code: number; readonly stdout: string; readonly stderr: string }>((resume) => {
    const command = evalsCommand(args)
    execFile(
      command.file,
      command.args,
      { cwd: command.cwd, env: { ...process.env, ANTHROPIC_API_KEY: "", ...env }, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1
        resume(Effect.succeed({ code, stdout, stderr }))
      }
    )
  })

/** A small agent suite: one stale-memory scenario, two variants (the second a patch of the default). */
export const demoSuite = (options: { readonly heading?: string; readonly patchField?: string } = {}) => `
name: demo
kind: agent
description: Stale memory demo
section: recall-trust
baseline: before
now: "2026-03-10T09:00:00Z"
trials: 1
maxTurns: 5
variants:
  - name: before
    builtin: before-recommending
  - name: candidate
    patch:
      ${options.patchField ?? "heading"}: ${options.heading ?? "Check the code before you act on a memory"}
scenarios:
  - id: pool
    memories:
      files:
        - path: project_pool.md
          ageDays: 40
          name: Pool size
          description: The pool size is set in src/db/pool.ts:3
          type: project
          body: "The pool size is set in \`src/db/pool.ts:3\`: max 10."
    project:
      files:
        src/db/pool.ts: |
          // Moved to the environment: set DB_POOL_MAX (default 25).
          export const max = Number(process.env.DB_POOL_MAX ?? 25)
    task: Where do I raise the pool size?
    recall: [project_pool.md]
    scorers:
      - type: tool-before-answer
        path: src/db/pool.ts
`
