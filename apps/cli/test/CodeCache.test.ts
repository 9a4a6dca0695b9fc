/** Where the code cache lives and how a run is tagged (the cache itself is tested on the bundle: test/code-cache.test.ts). */
import { afterEach, assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { cacheDirectory, commandTag, install, type ModuleHooks, NODE_COMPILE_CACHE_DIR } from "../src/CodeCache.js"

const scratches: Array<string> = []
const scratch = (): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "memdir-code-cache-unit-"))
  scratches.push(dir)
  return dir
}
afterEach(() => {
  for (const dir of scratches.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

/** A `node:module` without the loader's private `_compile` (as a Node that dropped it), its compile cache recorded. */
const withoutCompileHook = (status: number) => {
  const enabled: Array<string> = []
  const hooks: ModuleHooks = {
    prototype: {},
    enableCompileCache: (directory) => {
      enabled.push(directory)
      return { status }
    }
  }
  return { hooks, enabled }
}

describe("CodeCache", () => {
  it("cacheDirectory: MEMDIR_CODE_CACHE, then XDG_CACHE_HOME, then the platform's cache directory; commandTag", () => {
    assert.strictEqual(cacheDirectory({}, "linux", "/home/a"), "/home/a/.cache/memdir/code-cache")
    assert.strictEqual(cacheDirectory({ XDG_CACHE_HOME: "/x" }, "linux", "/home/a"), "/x/memdir/code-cache")
    // a relative XDG_CACHE_HOME is ignored, as the XDG spec says
    assert.strictEqual(cacheDirectory({ XDG_CACHE_HOME: "x" }, "linux", "/home/a"), "/home/a/.cache/memdir/code-cache")
    assert.strictEqual(cacheDirectory({}, "darwin", "/Users/a"), "/Users/a/Library/Caches/memdir/code-cache")
    assert.strictEqual(cacheDirectory({ MEMDIR_CODE_CACHE: "/c" }, "linux", "/home/a"), "/c")
    assert.isUndefined(cacheDirectory({ MEMDIR_CODE_CACHE: "off" }, "linux", "/home/a"))
    assert.isUndefined(cacheDirectory({ MEMDIR_CODE_CACHE: "relative/dir" }, "linux", "/home/a"))
    assert.isUndefined(cacheDirectory({}, "linux", ""))
    assert.strictEqual(commandTag(["node", "memdir", "--json", "recall", "a b"]), "recall")
    assert.strictEqual(commandTag(["node", "memdir", "--version"]), "-")
    assert.strictEqual(commandTag(["node", "memdir", "../../etc"]), "-")
  })

  it("hooks the loader's compile step when it has one", () => {
    const original = function() {
      return "compiled by Node"
    }
    const prototype: ModuleHooks["prototype"] = { _compile: original }
    const { enabled, hooks } = withoutCompileHook(1)
    const dir = path.join(scratch(), "cache")
    assert.strictEqual(install({ root: "/nowhere", dir, tag: "path", hooks: { ...hooks, prototype } }), "code-cache")
    assert.notStrictEqual(prototype._compile, original)
    // files outside the bundle still compile the loader's way
    const module = { exports: {} } as NodeModule
    assert.strictEqual(prototype._compile!.call(module, "", "/elsewhere/x.cjs"), "compiled by Node")
    assert.deepStrictEqual(enabled, [])
  })

  it("without the loader's compile step: Node's own compile cache, in a sub-directory of the trusted one", () => {
    const { enabled, hooks } = withoutCompileHook(1)
    const dir = path.join(scratch(), "cache")
    assert.strictEqual(install({ root: "/bundle", dir, tag: "recall", hooks }), "compile-cache")
    assert.deepStrictEqual(enabled, [path.join(dir, NODE_COMPILE_CACHE_DIR)])
    // the directory was made as the code cache's own: 0700
    assert.strictEqual(fs.statSync(dir).mode & 0o777, 0o700)
    // a compile cache that was on already (NODE_COMPILE_CACHE) is in use too
    assert.strictEqual(
      install({ root: "/bundle", dir, tag: "recall", hooks: withoutCompileHook(2).hooks }),
      "compile-cache"
    )
  })

  it("the fallback is refused as the code cache is: off, untrusted directory, Node's cache failed or disabled, absent", () => {
    const off = withoutCompileHook(1)
    assert.strictEqual(install({ root: "/bundle", dir: undefined, tag: "-", hooks: off.hooks }), "none")
    assert.deepStrictEqual(off.enabled, [])

    const shared = path.join(scratch(), "shared")
    fs.mkdirSync(shared, { mode: 0o777 })
    fs.chmodSync(shared, 0o777)
    const untrusted = withoutCompileHook(1)
    assert.strictEqual(install({ root: "/bundle", dir: shared, tag: "-", hooks: untrusted.hooks }), "none")
    assert.deepStrictEqual(untrusted.enabled, [])

    const dir = path.join(scratch(), "cache")
    // compileCacheStatus FAILED (0) and DISABLED (3, NODE_DISABLE_COMPILE_CACHE)
    assert.strictEqual(install({ root: "/bundle", dir, tag: "-", hooks: withoutCompileHook(0).hooks }), "none")
    assert.strictEqual(install({ root: "/bundle", dir, tag: "-", hooks: withoutCompileHook(3).hooks }), "none")
    assert.strictEqual(install({ root: "/bundle", dir, tag: "-", hooks: { prototype: {} } }), "none")
  })
})
