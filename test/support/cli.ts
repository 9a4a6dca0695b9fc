/**
 * Running the bundled `memdir` CLI from system tests: the bundle the global setup built once per run, a child
 * environment with none of the caller's memdir or Anthropic settings, and JSON output parsed with a readable failure.
 */
import { DEPRECATION_WARNING } from "@memdir/testing/SdkModels"
import * as Effect from "effect/Effect"
import { execFile, execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")
export const cliPath = path.join(repoRoot, "apps/cli/dist/memdir.js")

export interface CliRun {
  readonly status: number
  readonly stdout: string
  readonly stderr: string
}

/**
 * The bundle is built once per run by the global setup (test/support/global-setup.ts); a test file only checks
 * that it is there, with a clear message when a file is run outside vitest's `test` project.
 */
export const buildCli = (): void => {
  if (!fs.existsSync(cliPath)) {
    throw new Error(
      `${cliPath} is missing: run the tests through vitest (its global setup bundles the CLI) or ` +
        "run `node apps/cli/build.mjs` first"
    )
  }
}

/**
 * The code cache every test's CLI shares (apps/cli/src/CodeCache.ts): a run with a scratch home would otherwise
 * start cold and pay for writing a cache of its own. The CLI creates it 0700 and uses it only if it is this
 * user's; test/code-cache.test.ts tests the cache itself in directories of its own.
 */
export const testCodeCache = path.join(os.tmpdir(), `memdir-test-code-cache-${process.getuid?.() ?? "user"}`)

/**
 * process.env without MEMDIR_* and ANTHROPIC_*: a developer's own settings or key never reach a test run (but
 * the shared code cache does). Without NODE_EXTRA_CA_CERTS too: the processes a test starts talk to local HTTP
 * servers only, and loading a CA bundle costs every Node start 40–90 ms on the project's machines (hundreds of
 * starts per run). npm, which reaches the registry, gets it back (`test/support/pack.ts`).
 */
export const scrubbedEnv = (): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) {
    // CLAUDE_CODE_SESSION_ID: a suite run from inside Claude Code must not share that session's record
    if (v === undefined || k === "NODE_EXTRA_CA_CERTS" || k === "CLAUDE_CODE_SESSION_ID") continue
    if (!k.startsWith("MEMDIR_") && !k.startsWith("ANTHROPIC_")) env[k] = v
  }
  env.MEMDIR_CODE_CACHE = testCodeCache
  return env
}

/** The scrubbed environment with HOME and MEMDIR_HOME in a scratch home: a run never sees the real one. */
export const scratchHomeEnv = (home: string, extra: Record<string, string> = {}): Record<string, string> => ({
  ...scrubbedEnv(),
  HOME: home,
  MEMDIR_HOME: path.join(home, ".memdir"),
  ...extra
})

/**
 * Runs the CLI without blocking the event loop (an in-process Messages API server keeps answering). A run whose
 * stderr carries the SDK's deprecated-model warning dies: no test passes with a CLI that sends such a model.
 */
export const runCli = (
  args: ReadonlyArray<string>,
  options: { readonly cwd: string; readonly env: Record<string, string> }
): Effect.Effect<CliRun> =>
  Effect.callback<CliRun>((resume) => {
    const child = execFile(
      process.execPath,
      [cliPath, ...args],
      { cwd: options.cwd, env: options.env, encoding: "utf8", maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const status = error === null ? 0 : typeof error.code === "number" ? error.code : -1
        // the SDK prints this when the CLI's request names a deprecated model: the test fails, as it does when
        // the warning is printed in the test's own process (test/support/sdk-deprecation-guard.ts)
        const warning = stderr.split("\n").find((line) => DEPRECATION_WARNING.test(line))
        resume(
          warning === undefined ?
            Effect.succeed({ status, stdout, stderr }) :
            Effect.die(
              new Error(
                `memdir ${args.join(" ")}: @anthropic-ai/sdk warned of a deprecated model:\n  ${warning}\n` +
                  "Use a current model of ModelCatalog (packages/core/src/ModelCatalog.ts)."
              )
            )
        )
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

/**
 * `<bin>/memdir`: a shell script running the bundled CLI, the `memdir` an agent's hooks find on PATH (a real install
 * links npm's bin there instead), and `<bin>/memdir-hook`, the package's own hook script, what `hooks install`
 * writes: its fallback runs `memdir.cjs` beside it (here one that loads the bundled CLI) with the `node` on PATH,
 * which `<bin>/node` makes this Node (the machine's may be older).
 */
export const writeMemdirShim = (bin: string) => {
  fs.mkdirSync(bin, { recursive: true })
  fs.writeFileSync(
    path.join(bin, "memdir"),
    `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(cliPath)} "$@"\n`,
    { mode: 0o755 }
  )
  fs.copyFileSync(path.join(repoRoot, "apps/cli/bin/memdir-hook"), path.join(bin, "memdir-hook"))
  fs.chmodSync(path.join(bin, "memdir-hook"), 0o755)
  fs.writeFileSync(path.join(bin, "memdir.cjs"), `require(${JSON.stringify(cliPath)})\n`)
  fs.rmSync(path.join(bin, "node"), { force: true })
  fs.symlinkSync(process.execPath, path.join(bin, "node"))
}

/**
 * A scratch directory (its real path, so paths compare on systems whose temp directory is a link) holding a `home`
 * for `scratchHomeEnv` and a git-initialised `project` to run the CLI in.
 */
export const makeScratchProject = (prefix: string) => {
  const scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)))
  const home = path.join(scratch, "home")
  const project = path.join(scratch, "project")
  fs.mkdirSync(home, { recursive: true })
  fs.mkdirSync(project, { recursive: true })
  execFileSync("git", ["init", "-q"], { cwd: project })
  return { scratch, home, project }
}

/**
 * Root ignores permission bits, so under root a permission case runs the CLI as `nobody` (uid/gid 65534); the
 * user to pass to `execFile`, or undefined when the tests do not run as root.
 */
export const permissionUser: { readonly uid: number; readonly gid: number } | undefined = process.getuid?.() === 0 ?
  { uid: 65534, gid: 65534 } :
  undefined

/**
 * The Node binary `permissionUser` runs: this one, unless that user cannot reach it (Node 22 fetched by
 * `npx -y -p node@22` lives under root's 0700 home, as on CI machines whose own Node is older): then a copy in
 * `scratch` (which that user must be able to enter).
 */
export const nodeForPermissionUser = (scratch: string): string => {
  if (permissionUser === undefined) return process.execPath
  // world-executable: the file itself and every directory on the way to it
  const reachable = (file: string): boolean => {
    if ((fs.statSync(file).mode & 0o001) === 0) return false
    const parent = path.dirname(file)
    return parent === file || reachable(parent)
  }
  if (reachable(fs.realpathSync(process.execPath))) return process.execPath
  const copy = path.join(scratch, "node")
  if (!fs.existsSync(copy)) {
    fs.copyFileSync(process.execPath, copy)
    fs.chmodSync(copy, 0o755)
  }
  return copy
}
