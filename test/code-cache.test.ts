/**
 * The bundle's V8 code cache (apps/cli/src/CodeCache.ts), on the real bundle in child processes: a first run
 * writes the cache, later runs compile from it, a command learns its own functions once, and a cache that is
 * off, untrusted, corrupt or made from other source is never used to run code. `NODE_DEBUG=memdir-code-cache`
 * makes a run report its hits and misses on stderr.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { execFileSync, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { buildCli, cliPath, scratchHomeEnv } from "./support/cli.js"

let scratch: string
let home: string

beforeAll(() => {
  buildCli()
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), "memdir-code-cache-"))
  home = path.join(scratch, "home")
  fs.mkdirSync(home)
})

afterAll(() => {
  fs.rmSync(scratch, { recursive: true, force: true })
})

interface Run {
  readonly status: number | null
  readonly stdout: string
  readonly stderr: string
  readonly hits: number
  readonly misses: number
  readonly rejected: number
  readonly wrote: ReadonlyArray<string>
}

/** One run of the bundle (or of `cli`) with the cache setting `cache`, and what it reported of the cache. */
const run = (args: ReadonlyArray<string>, cache: string | undefined, cli = cliPath): Run => {
  const env: Record<string, string> = {
    ...scratchHomeEnv(home),
    NODE_DEBUG: "memdir-code-cache",
    MEMDIR_MEMORY_DIR: path.join(scratch, "memory")
  }
  if (cache !== undefined) env.MEMDIR_CODE_CACHE = cache
  else delete env.MEMDIR_CODE_CACHE
  const result = spawnSync(process.execPath, [cli, ...args], { cwd: scratch, env, encoding: "utf8", timeout: 60_000 })
  const counts = /(\d+) hits, (\d+) misses, (\d+) rejected/.exec(result.stderr)
  return {
    status: result.status,
    stdout: result.stdout,
    stderr: result.stderr,
    hits: counts === null ? 0 : Number(counts[1]),
    misses: counts === null ? 0 : Number(counts[2]),
    rejected: counts === null ? 0 : Number(counts[3]),
    wrote: [...result.stderr.matchAll(/wrote (\S+)/g)].map((m) => m[1]!)
  }
}

const cacheFiles = (dir: string) => fs.readdirSync(dir).filter((name) => name.endsWith(".cache")).sort()

describe("code cache", () => {
  it("a first run writes the cache (0700 directory, 0600 files); the next compiles every chunk from it", () => {
    const dir = path.join(scratch, "first", "cache")
    const first = run(["--version"], dir)
    assert.strictEqual(first.status, 0, first.stderr)
    assert.isAbove(first.misses, 0)
    assert.strictEqual(first.hits, 0)
    assert.isNotEmpty(cacheFiles(dir))
    assert.strictEqual(fs.statSync(dir).mode & 0o777, 0o700)
    for (const name of cacheFiles(dir)) assert.strictEqual(fs.statSync(path.join(dir, name)).mode & 0o777, 0o600)
    const second = run(["--version"], dir)
    assert.strictEqual(second.status, 0, second.stderr)
    assert.strictEqual(second.stdout, first.stdout)
    assert.strictEqual(second.misses, 0)
    assert.strictEqual(second.rejected, 0)
    assert.strictEqual(second.hits, first.misses)
    assert.deepStrictEqual(second.wrote, [])
  })

  it("a command not seen yet rewrites the chunks it shares once, then only reads them", () => {
    const dir = path.join(scratch, "learn")
    run(["--version"], dir)
    const shared = run(["path"], dir)
    assert.strictEqual(shared.status, 0, shared.stderr)
    assert.isAbove(shared.hits, 0)
    // the chunks --version had cached are rewritten with what path compiled, and path's own are new
    assert.isAbove(shared.wrote.length, shared.misses)
    const again = run(["path"], dir)
    assert.deepStrictEqual(again.wrote, [])
    assert.strictEqual(again.misses, 0)
    assert.strictEqual(again.stdout, shared.stdout)
  })

  it("the default lives under XDG_CACHE_HOME or ~/.cache; MEMDIR_CODE_CACHE=off writes nothing", () => {
    const off = run(["--version"], "off")
    assert.strictEqual(off.status, 0, off.stderr)
    assert.deepStrictEqual([off.hits, off.misses, off.wrote.length], [0, 0, 0])
    assert.isFalse(fs.existsSync(path.join(home, ".cache")))
    const byDefault = run(["--version"], undefined)
    assert.strictEqual(byDefault.stdout, off.stdout)
    assert.isNotEmpty(cacheFiles(path.join(home, ".cache", "memdir", "code-cache")))
  })

  it("a directory others can write to, or a link, is not used", () => {
    const open = path.join(scratch, "open")
    fs.mkdirSync(open, { mode: 0o700 })
    fs.chmodSync(open, 0o777)
    const untrusted = run(["--version"], open)
    assert.strictEqual(untrusted.status, 0, untrusted.stderr)
    assert.include(untrusted.stderr, "writable by others")
    assert.deepStrictEqual(fs.readdirSync(open), [])

    const target = path.join(scratch, "target")
    fs.mkdirSync(target, { mode: 0o700 })
    const link = path.join(scratch, "link")
    fs.symlinkSync(target, link)
    const linked = run(["--version"], link)
    assert.strictEqual(linked.status, 0, linked.stderr)
    assert.deepStrictEqual([linked.hits, linked.misses], [0, 0])
    assert.deepStrictEqual(fs.readdirSync(target), [])
  })

  it("corrupt cache data is rejected by V8 and rewritten; the run is unaffected", () => {
    const dir = path.join(scratch, "corrupt")
    const clean = run(["--version"], dir)
    for (const name of cacheFiles(dir)) {
      const file = path.join(dir, name)
      const bytes = fs.readFileSync(file)
      const header = bytes.indexOf(10, bytes.indexOf(10) + 1) + 1
      for (let i = header; i < bytes.length; i++) bytes[i] = bytes[i]! ^ 0x5a
      fs.writeFileSync(file, bytes)
    }
    const corrupt = run(["--version"], dir)
    assert.strictEqual(corrupt.status, 0, corrupt.stderr)
    assert.strictEqual(corrupt.stdout, clean.stdout)
    assert.strictEqual(corrupt.rejected, clean.misses)
    assert.strictEqual(corrupt.wrote.length, clean.misses)
    const healed = run(["--version"], dir)
    assert.strictEqual(healed.hits, clean.misses)
  })

  it("a cache file that is a link, a FIFO or not in the cache's format is a miss, and nothing blocks", () => {
    const dir = path.join(scratch, "kinds")
    const clean = run(["--version"], dir)
    const [first, second, third] = cacheFiles(dir)
    const outside = path.join(scratch, "outside.cache")
    fs.renameSync(path.join(dir, first!), outside)
    fs.symlinkSync(outside, path.join(dir, first!))
    fs.writeFileSync(path.join(dir, second!), "not a cache\n")
    fs.rmSync(path.join(dir, third!))
    execFileSync("mkfifo", [path.join(dir, third!)])
    const after = run(["--version"], dir)
    assert.strictEqual(after.status, 0, after.stderr)
    assert.strictEqual(after.misses, 3)
    assert.strictEqual(after.hits, clean.misses - 3)
  })

  it("a chunk edited without changing its length runs its new code, not the cached one", () => {
    const dist = path.join(scratch, "dist-copy")
    fs.cpSync(path.dirname(cliPath), dist, { recursive: true })
    const copy = path.join(dist, path.basename(cliPath))
    const dir = path.join(scratch, "edited")
    const before = run(["--version"], dir, copy)
    const version = before.stdout.trim()
    assert.match(version, /^\d+\.\d+\.\d+$/)
    const edited = `9${version.slice(1)}`
    const chunks = path.join(dist, "chunks")
    const holder = fs.readdirSync(chunks).filter((name) => name.endsWith(".cjs"))
      .find((name) => fs.readFileSync(path.join(chunks, name), "utf8").includes(`"${version}"`))
    assert.isDefined(holder, "the chunk that holds the version string")
    const file = path.join(chunks, holder!)
    fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace(`"${version}"`, `"${edited}"`))
    const after = run(["--version"], dir, copy)
    assert.strictEqual(after.status, 0, after.stderr)
    assert.strictEqual(after.stdout.trim(), edited)
    assert.strictEqual(after.misses, 1)
  })

  it("a write prunes cache files unused for 30 days, and no other file of the directory", () => {
    const dir = path.join(scratch, "prune")
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
    const old = new Date(Date.now() - 40 * 86_400_000)
    const stale = path.join(dir, `chunk-OLD-${"a".repeat(40)}.cache`)
    const crashed = `${stale}.123.abc.tmp`
    const mine = path.join(dir, "notes.cache")
    for (const file of [stale, crashed, mine]) {
      fs.writeFileSync(file, "x")
      fs.utimesSync(file, old, old)
    }
    const first = run(["--version"], dir)
    assert.isAbove(first.wrote.length, 0)
    assert.isFalse(fs.existsSync(stale))
    assert.isFalse(fs.existsSync(crashed))
    assert.isTrue(fs.existsSync(mine))
  })
})
