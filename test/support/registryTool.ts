/**
 * An agent CLI from the npm registry for system tests (Claude Code, Codex): `pkg@version` installed into
 * `$MEMDIR_TEST_CACHE/<dir>` (default `~/.cache/memdir-test/<dir>`) on first use. Only when the registry cannot be
 * reached is there a reason to skip (`ensure` returns it); any other install failure throws.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

export const testCache = process.env.MEMDIR_TEST_CACHE ?? path.join(os.homedir(), ".cache", "memdir-test")

export interface RegistryTool {
  /** The tool's executable in the cache. */
  readonly bin: string
  /** Installs it when missing; a reason to skip only when the registry is out of reach. */
  readonly ensure: () => string | undefined
}

export const registryTool = (pkg: string, version: string, dir: string, binName: string): RegistryTool => {
  const cache = path.join(testCache, dir)
  const bin = path.join(cache, "node_modules", ".bin", binName)
  const installedVersion = (): string | undefined => {
    try {
      return JSON.parse(fs.readFileSync(path.join(cache, "node_modules", pkg, "package.json"), "utf8")).version
    } catch {
      return undefined
    }
  }
  const ensure = (): string | undefined => {
    if (installedVersion() === version && fs.existsSync(bin)) return undefined
    fs.mkdirSync(cache, { recursive: true })
    try {
      execFileSync("npm", ["install", "--prefix", cache, "--no-audit", "--no-fund", `${pkg}@${version}`], {
        stdio: ["ignore", "pipe", "pipe"],
        timeout: 600_000
      })
    } catch (error) {
      let reachable = true
      try {
        execFileSync("npm", ["ping"], { stdio: "ignore", timeout: 60_000 })
      } catch {
        reachable = false
      }
      if (!reachable) {
        return `the npm registry is unreachable, so ${pkg}@${version} could not be installed into ${cache}: ` +
          String((error as { stderr?: unknown }).stderr ?? error).slice(0, 300)
      }
      throw error
    }
    if (installedVersion() !== version) throw new Error(`npm installed no ${pkg} into ${cache}`)
    return undefined
  }
  return { bin, ensure }
}
