/**
 * The V8 code cache of the bundle: most of a short `memdir` run (a hook on every prompt, `recall`, `path`) is V8
 * parsing and compiling the bundle's chunks, and Node compiles user code afresh on every run unless a cache is
 * turned on (its own, `module.enableCompileCache`, is the fallback below: slower than this one). The CLI's
 * CommonJS chunks are compiled here through `vm.Script` with the bytes V8 produced for them on an earlier run
 * (`createCachedData` at exit, so the functions that run used also compiled ones, not just the top level).
 *
 * This runs before Effect is loaded (it is what makes loading Effect cheap), so it is plain Node code, and it
 * must never make a run fail: any problem with the cache only means compiling as if there were none.
 *
 * Trust: V8 checks cached data only against the source's length and its own version and flags, and deserializing
 * crafted bytes is not safe. So a cache file is found by the SHA-256 of the source it was made from (with the Node
 * version and architecture), it is read only from a directory that is not a link, is owned by this user and
 * writable by no one else (created with mode 0700; files 0600, written to a temp name and renamed), and a file
 * that is a link, not a regular file or another user's is ignored. See docs/install.md, "The code cache".
 *
 * Learning: a chunk shared by several commands is first cached by whichever command ran first. Each file records
 * the commands whose run wrote it; a run of a command not in that list rewrites it once at exit, so the cache
 * comes to hold what every command used.
 *
 * Fallback: the cache hooks the CommonJS loader's private `Module.prototype._compile`. A Node without it gets
 * Node's own compile cache (`module.enableCompileCache`, Node 22.1+) in a sub-directory of the same trusted
 * directory instead: slower than this cache as measured (on Node 20, where it was built), much faster than none.
 */
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import Module from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { debuglog } from "node:util"
import * as vm from "node:vm"

const debug = debuglog("memdir-code-cache")

/** The first line of every cache file; a file without it (an older format, garbage) is a miss. */
const MAGIC = "memdir-code-cache 1\n"
/** A cache file larger than this is not read (the whole bundle's cached data is ~2 MB). */
const MAX_CACHE_BYTES = 64 * 1024 * 1024
/** At most this many commands are learned per file, so a file is rewritten a bounded number of times. */
const MAX_TAGS = 24
/** Cache files not used for this long are removed when a new one is written. */
const PRUNE_AFTER_MS = 30 * 24 * 60 * 60 * 1000
/** A used file's mtime is refreshed at most this often (it is what pruning goes by). */
const TOUCH_AFTER_MS = 24 * 60 * 60 * 1000

/** Where the cache lives, or undefined when it is turned off. */
export const cacheDirectory = (
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
  home: string = os.homedir()
): string | undefined => {
  const setting = env.MEMDIR_CODE_CACHE
  if (setting !== undefined && setting !== "") {
    if (["off", "0", "false", "no"].includes(setting.toLowerCase())) return undefined
    // only an absolute directory: a relative one would depend on where memdir is started
    return path.isAbsolute(setting) ? setting : undefined
  }
  const xdg = env.XDG_CACHE_HOME
  if (platform === "win32") {
    const local = env.LOCALAPPDATA
    return local !== undefined && path.isAbsolute(local) ? path.join(local, "memdir", "code-cache") : undefined
  }
  if (xdg !== undefined && path.isAbsolute(xdg)) return path.join(xdg, "memdir", "code-cache")
  if (home === "" || !path.isAbsolute(home)) return undefined
  return platform === "darwin"
    ? path.join(home, "Library", "Caches", "memdir", "code-cache")
    : path.join(home, ".cache", "memdir", "code-cache")
}

/** The tag of this run: its command (`recall`, `hook`…), or `-` for a run with no command (`--version`). */
export const commandTag = (argv: ReadonlyArray<string>): string => {
  const command = argv.slice(2).find((arg) => !arg.startsWith("-"))
  return command !== undefined && /^[a-z][a-z-]{0,31}$/.test(command) ? command : "-"
}

const ownedByMe = (stat: fs.Stats): boolean =>
  process.platform === "win32" || typeof process.getuid !== "function" || stat.uid === process.getuid()

/** The directory, created if need be, when it is safe to read code from; undefined otherwise. */
const trustedDirectory = (dir: string): string | undefined => {
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
    const stat = fs.lstatSync(dir)
    if (!stat.isDirectory() || !ownedByMe(stat)) return undefined
    if (process.platform !== "win32" && (stat.mode & 0o022) !== 0) {
      debug("not using %s: writable by others (chmod 700 it)", dir)
      return undefined
    }
    return dir
  } catch (error) {
    debug("not using %s: %s", dir, String(error))
    return undefined
  }
}

interface CacheEntry {
  readonly data: Buffer
  readonly tags: ReadonlyArray<string>
}

/** A cache file's tags and data, or undefined when it is missing, unsafe or not a cache file. */
const readEntry = (file: string): CacheEntry | undefined => {
  let fd: number
  try {
    // no link followed; O_NONBLOCK: a FIFO in the cache's place must not block the start (fstat then refuses it)
    fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0) | (fs.constants.O_NONBLOCK ?? 0))
  } catch {
    return undefined
  }
  try {
    const stat = fs.fstatSync(fd)
    if (!stat.isFile() || !ownedByMe(stat) || stat.size > MAX_CACHE_BYTES || stat.size < MAGIC.length) return undefined
    const bytes = Buffer.allocUnsafe(stat.size)
    let read = 0
    while (read < bytes.length) {
      const n = fs.readSync(fd, bytes, read, bytes.length - read, read)
      if (n === 0) return undefined
      read += n
    }
    if (bytes.toString("latin1", 0, MAGIC.length) !== MAGIC) return undefined
    const tagsEnd = bytes.indexOf(10, MAGIC.length)
    if (tagsEnd < 0) return undefined
    const tags = bytes.toString("latin1", MAGIC.length, tagsEnd).split(",").filter((tag) => tag !== "")
    if (Date.now() - stat.mtimeMs > TOUCH_AFTER_MS) {
      try {
        const now = new Date()
        fs.futimesSync(fd, now, now)
      } catch { /* a read-only cache still works */ }
    }
    return { data: bytes.subarray(tagsEnd + 1), tags }
  } catch {
    return undefined
  } finally {
    fs.closeSync(fd)
  }
}

/** Writes all of `bytes` (a write may take fewer bytes than it is given). */
const writeAll = (fd: number, bytes: Uint8Array): void => {
  for (let written = 0; written < bytes.length;) written += fs.writeSync(fd, bytes, written, bytes.length - written)
}

const writeEntry = (file: string, tags: ReadonlyArray<string>, data: Buffer): void => {
  const temp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`
  try {
    const fd = fs.openSync(temp, "wx", 0o600)
    try {
      writeAll(fd, Buffer.from(`${MAGIC}${tags.join(",")}\n`, "latin1"))
      writeAll(fd, data)
    } finally {
      fs.closeSync(fd)
    }
    fs.renameSync(temp, file)
    debug("wrote %s (%d bytes, commands %s)", path.basename(file), data.length, tags.join(","))
  } catch (error) {
    debug("could not write %s: %s", file, String(error))
    fs.rmSync(temp, { force: true })
  }
}

/** A cache file's name, or a writer's temp file (MEMDIR_CODE_CACHE may name a directory that holds other files). */
const OWN_FILE = /^[\w.-]+-[0-9a-f]{40}\.cache(\.\d+\.[0-9a-z]+\.tmp)?$/

/** Removes cache files (and temp files of crashed writers) unused for PRUNE_AFTER_MS; no other file. */
const prune = (dir: string): void => {
  try {
    const now = Date.now()
    for (const name of fs.readdirSync(dir)) {
      if (!OWN_FILE.test(name)) continue
      const file = path.join(dir, name)
      const stat = fs.lstatSync(file, { throwIfNoEntry: false })
      if (stat !== undefined && stat.isFile() && now - stat.mtimeMs > PRUNE_AFTER_MS) fs.rmSync(file, { force: true })
    }
  } catch { /* pruning is best effort */ }
}

interface Compiled {
  readonly script: vm.Script
  readonly file: string
  readonly tags: ReadonlyArray<string> | undefined
}

/**
 * The module system's own compile step (private to Node's CommonJS loader); `this` is the Module being loaded.
 */
type Compile = (this: NodeModule, content: string, filename: string, ...rest: ReadonlyArray<unknown>) => unknown

/** What of `node:module` the cache uses: the loader's compile step, else Node's own compile cache (22.1+). */
export interface ModuleHooks {
  readonly prototype: { _compile?: Compile }
  readonly enableCompileCache?: (directory: string) => { readonly status: number; readonly message?: string }
}

/** `module.constants.compileCacheStatus`: ENABLED and ALREADY_ENABLED, the statuses of a cache in use. */
const COMPILE_CACHE_IN_USE: ReadonlyArray<number> = [1, 2]

/** Where Node's own compile cache goes inside the trusted directory: apart from our files (and their pruning). */
export const NODE_COMPILE_CACHE_DIR = "node"

/** Which cache a run got: ours, Node's own compile cache (the fallback), or none. */
export type CacheKind = "code-cache" | "compile-cache" | "none"

/** Node's compile cache in `dir`'s sub-directory, for a Node whose loader has no `_compile` to hook. */
const enableNodeCompileCache = (hooks: ModuleHooks, dir: string): CacheKind => {
  if (typeof hooks.enableCompileCache !== "function") {
    debug("no code cache: this Node has neither Module.prototype._compile nor module.enableCompileCache")
    return "none"
  }
  const result = hooks.enableCompileCache(path.join(dir, NODE_COMPILE_CACHE_DIR))
  debug("Node's compile cache: status %d %s", result.status, result.message ?? "")
  return COMPILE_CACHE_IN_USE.includes(result.status) ? "compile-cache" : "none"
}

/**
 * Compiles every CommonJS file under `root` through the cache in `dir` from now on, and writes what this run
 * compiled at exit (with `NODE_DEBUG=memdir-code-cache`, the counts of hits, misses and rejected files on
 * stderr). Files elsewhere load as usual; without a trusted `dir`, nothing changes. Where the loader's
 * `_compile` is gone, Node's own compile cache is turned on instead (`hooks`: `node:module`, or a test's double).
 */
export const install = (options: {
  readonly root: string
  readonly dir: string | undefined
  readonly tag: string
  readonly hooks?: ModuleHooks
}): CacheKind => {
  const stats = { hits: 0, misses: 0, rejected: 0 }
  const dir = options.dir === undefined ? undefined : trustedDirectory(options.dir)
  if (dir === undefined) return "none"
  const hooks = options.hooks ?? (Module as unknown as ModuleHooks)
  const proto = hooks.prototype
  const original = proto._compile
  if (typeof original !== "function") return enableNodeCompileCache(hooks, dir)
  const root = options.root.endsWith(path.sep) ? options.root : options.root + path.sep
  const prefix = `${process.version}\0${process.arch}\0`
  const compiled: Array<Compiled> = []

  /** Compiles and runs one CommonJS file of the bundle with its cached data, as Node's loader would run it. */
  const runCached = (module: NodeModule, content: string, filename: string): unknown => {
    const key = createHash("sha256").update(prefix).update(content).digest("hex").slice(0, 40)
    const file = path.join(dir, `${path.basename(filename, ".cjs").replace(/[^\w.-]/g, "_")}-${key}.cache`)
    const entry = readEntry(file)
    // the wrapper is on a line of its own (lineOffset -1): positions in stack traces stay the file's own
    const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {\n${content}\n})`, {
      filename,
      lineOffset: -1,
      ...(entry === undefined ? {} : { cachedData: entry.data }),
      importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER
    })
    const accepted = entry !== undefined && script.cachedDataRejected !== true
    if (entry === undefined) stats.misses++
    else if (accepted) stats.hits++
    else stats.rejected++
    compiled.push({ script, file, tags: accepted ? entry.tags : undefined })
    const wrapper = script.runInThisContext({ displayErrors: true }) as (...args: ReadonlyArray<unknown>) => unknown
    // relative requires resolve beside the file, as with the require Node's loader gives a module
    const require = Module.createRequire(filename)
    return wrapper.call(module.exports, module.exports, require, module, filename, path.dirname(filename))
  }

  proto._compile = function(this: NodeModule, content: string, filename: string, ...rest: ReadonlyArray<unknown>) {
    return filename.startsWith(root) && filename.endsWith(".cjs")
      ? runCached(this, content, filename)
      : original.call(this, content, filename, ...rest)
  }

  process.once("exit", () => {
    let wrote = false
    for (const { file, script, tags } of compiled) {
      if (tags !== undefined && (tags.includes(options.tag) || tags.length >= MAX_TAGS)) continue
      try {
        writeEntry(file, [...(tags ?? []), options.tag], script.createCachedData())
        wrote = true
      } catch (error) {
        debug("could not cache %s: %s", file, String(error))
      }
    }
    if (wrote) prune(dir)
    debug("%d hits, %d misses, %d rejected", stats.hits, stats.misses, stats.rejected)
  })
  return "code-cache"
}
