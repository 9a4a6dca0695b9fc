/**
 * The published packages as a stranger gets them: `pnpm pack` of a workspace package (its prepack builds what
 * it ships), a global npm install of a tarball into a scratch prefix, and runs of the installed `memdir` bin.
 * npm runs with a cache, a user config and a global config of its own in the scratch directory, so neither a
 * developer's npm settings nor their cache decide the result. See docs/install.md.
 */
import { execFile, execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { promisify } from "node:util"
import type { CliRun } from "./cli.js"
import { repoRoot } from "./cli.js"

export interface PackageManifest {
  readonly name: string
  readonly version: string
  readonly bin?: Record<string, string>
  readonly files?: ReadonlyArray<string>
  readonly exports?: unknown
  readonly dependencies?: Record<string, string>
  readonly peerDependencies?: Record<string, string>
  readonly [key: string]: unknown
}

/** A packed tarball, with the manifest and the file list it holds. */
export interface Tarball {
  readonly file: string
  readonly manifest: PackageManifest
  /** Paths inside the package (without tar's leading `package/`), sorted. */
  readonly entries: ReadonlyArray<string>
}

/** The `memdir` installed from a tarball into a scratch npm prefix. */
export interface InstalledCli {
  readonly prefix: string
  /** `<prefix>/bin/memdir`: the link npm made to the package's bin. */
  readonly bin: string
}

/**
 * pnpm itself: the one running this test run (`pnpm test` sets npm_execpath), else the version the repository
 * pins in packageManager, through npx.
 */
const pnpm = (): readonly [string, ReadonlyArray<string>] => {
  const running = process.env.npm_execpath
  if (running !== undefined && /pnpm/.test(path.basename(running))) return [process.execPath, [running]]
  const manifest = JSON.parse(fs.readFileSync(path.join(repoRoot, "package.json"), "utf8"))
  return ["npx", ["-y", String(manifest.packageManager)]]
}

/** The environment for npm and the installed bin: node's own directory first on PATH, npm's state in scratch. */
export const npmEnv = (scratch: string, base: Record<string, string>): Record<string, string> => {
  const npmDir = path.join(scratch, "npm")
  fs.mkdirSync(npmDir, { recursive: true })
  for (const rc of ["npmrc", "globalrc"]) fs.writeFileSync(path.join(npmDir, rc), "")
  const caCerts = process.env.NODE_EXTRA_CA_CERTS
  return {
    ...base,
    // the registry may sit behind a proxy whose CA the machine adds this way (scrubbedEnv drops it)
    ...(caCerts === undefined ? {} : { NODE_EXTRA_CA_CERTS: caCerts }),
    PATH: [path.dirname(process.execPath), base.PATH ?? ""].join(path.delimiter),
    npm_config_cache: path.join(npmDir, "cache"),
    npm_config_userconfig: path.join(npmDir, "npmrc"),
    npm_config_globalconfig: path.join(npmDir, "globalrc"),
    npm_config_audit: "false",
    npm_config_fund: "false",
    npm_config_update_notifier: "false"
  }
}

const tarEntries = (file: string): ReadonlyArray<string> =>
  execFileSync("tar", ["-tzf", file], { encoding: "utf8" }).split("\n").filter((line) => line !== "")
    .map((line) => line.replace(/^package\//, "")).sort()

const tarManifest = (file: string): PackageManifest =>
  JSON.parse(execFileSync("tar", ["-xzOf", file, "package/package.json"], { encoding: "utf8" }))

/** Runs a command without blocking the test worker; a failure carries its output. */
const run = async (
  command: string,
  args: ReadonlyArray<string>,
  options: { cwd: string; env: Record<string, string> }
) => {
  try {
    await promisify(execFile)(command, [...args], { ...options, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 })
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string }
    throw new Error(`${command} ${args.join(" ")} failed in ${options.cwd}:\n${stdout ?? ""}\n${stderr ?? ""}`)
  }
}

/** `pnpm pack` of the workspace package in `packageDir` (relative to the repository) into `destination`. */
export const pack = async (packageDir: string, destination: string, env: Record<string, string>): Promise<Tarball> => {
  const cwd = path.join(repoRoot, packageDir)
  const { name, version } = JSON.parse(fs.readFileSync(path.join(cwd, "package.json"), "utf8"))
  const [command, prefixArgs] = pnpm()
  await run(command, [...prefixArgs, "pack", "--pack-destination", destination], { cwd, env })
  const file = path.join(destination, `${String(name).replace(/^@/, "").replace("/", "-")}-${version}.tgz`)
  if (!fs.existsSync(file)) throw new Error(`pnpm pack in ${packageDir} wrote no ${file}`)
  return { file, manifest: tarManifest(file), entries: tarEntries(file) }
}

/**
 * `npm i -g --prefix <prefix> <tarball>`: offline when the package declares no dependencies (nothing to
 * fetch, so a run without network proves it), from the registry otherwise.
 */
export const installGlobally = async (
  tarball: Tarball,
  prefix: string,
  env: Record<string, string>
): Promise<InstalledCli> => {
  const offline = Object.keys(tarball.manifest.dependencies ?? {}).length === 0 ? ["--offline"] : []
  await run("npm", ["install", "--global", "--prefix", prefix, ...offline, tarball.file], {
    cwd: path.dirname(tarball.file),
    env
  })
  return { prefix, bin: path.join(prefix, "bin", "memdir") }
}

/** Runs the installed bin itself (its shebang finds node on PATH), with `input` on stdin. */
export const runInstalled = (
  installed: InstalledCli,
  args: ReadonlyArray<string>,
  options: { readonly cwd: string; readonly env: Record<string, string>; readonly input?: string }
): Promise<CliRun> =>
  new Promise((resolve) => {
    const child = execFile(
      installed.bin,
      [...args],
      { cwd: options.cwd, env: options.env, encoding: "utf8", maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const status = error === null ? 0 : typeof error.code === "number" ? error.code : -1
        resolve({ status, stdout, stderr })
      }
    )
    child.stdin?.end(options.input ?? "")
  })

/** The total size of the files under dir, in bytes (what `du` reports, without block rounding). */
export const sizeOf = (dir: string): number =>
  fs.readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .reduce((total, entry) => total + fs.statSync(path.join(entry.parentPath, entry.name)).size, 0)
