/**
 * Running the bundled `memdir` CLI from system tests: one bundle build per test process, a child environment
 * with none of the caller's memdir or Anthropic settings, and JSON output parsed with a readable failure.
 */
import * as Effect from "effect/Effect"
import { execFile, execFileSync } from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")
export const cliPath = path.join(repoRoot, "apps/cli/dist/memdir.js")

export interface CliRun {
  readonly status: number
  readonly stdout: string
  readonly stderr: string
}

let built = false
/** Bundles the CLI once per test process (the bundle script writes atomically, so parallel files are safe). */
export const buildCli = (): void => {
  if (built) return
  execFileSync(process.execPath, [path.join(repoRoot, "apps/cli/build.mjs")])
  built = true
}

/** process.env without MEMDIR_* and ANTHROPIC_*: a developer's own settings or key never reach a test run. */
export const scrubbedEnv = (): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith("MEMDIR_") && !k.startsWith("ANTHROPIC_")) env[k] = v
  }
  return env
}

/** The scrubbed environment with HOME and MEMDIR_HOME in a scratch home: a run never sees the real one. */
export const scratchHomeEnv = (home: string, extra: Record<string, string> = {}): Record<string, string> => ({
  ...scrubbedEnv(),
  HOME: home,
  MEMDIR_HOME: path.join(home, ".memdir"),
  ...extra
})

/** Runs the CLI without blocking the event loop (an in-process Messages API server keeps answering). */
export const runCli = (
  args: ReadonlyArray<string>,
  options: { readonly cwd: string; readonly env: Record<string, string> }
): Effect.Effect<CliRun> =>
  Effect.async<CliRun>((resume) => {
    const child = execFile(
      process.execPath,
      [cliPath, ...args],
      { cwd: options.cwd, env: options.env, encoding: "utf8", maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const status = error === null ? 0 : typeof error.code === "number" ? error.code : -1
        resume(Effect.succeed({ status, stdout, stderr }))
      }
    )
    child.stdin?.end()
  })

export const parseJson = (run: Pick<CliRun, "stdout" | "stderr"> & { readonly status: number | null }): any => {
  try {
    return JSON.parse(run.stdout)
  } catch {
    throw new Error(`not JSON (exit ${run.status}):\n${run.stdout}\n${run.stderr}`)
  }
}
