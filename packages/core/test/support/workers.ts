/**
 * Real processes for the concurrency tests: a fixture under `test/fixtures/` bundled once into a runnable ESM file,
 * and started as a child process whose exit code and output are collected.
 */
import { build } from "esbuild"
import { spawn } from "node:child_process"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"

const fixtures = NodePath.join(NodePath.dirname(fileURLToPath(import.meta.url)), "../fixtures")

/** Bundles `test/fixtures/<name>.ts` into `<outDir>/<name>.mjs` and returns that path. */
export const bundleWorker = async (name: string, outDir: string): Promise<string> => {
  const outfile = NodePath.join(outDir, `${name}.mjs`)
  await build({
    entryPoints: [NodePath.join(fixtures, `${name}.ts`)],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    logLevel: "warning",
    banner: {
      js:
        "import { createRequire as __createRequire } from \"node:module\"; const require = __createRequire(import.meta.url);"
    }
  })
  return outfile
}

export interface WorkerRun {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs a bundled worker with `args` to its end. */
export const runWorker = (worker: string, args: ReadonlyArray<string>): Promise<WorkerRun> =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, [worker, ...args], { stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk) => (stdout += chunk))
    child.stderr.on("data", (chunk) => (stderr += chunk))
    child.on("close", (code) => resolve({ code, stdout, stderr }))
  })
