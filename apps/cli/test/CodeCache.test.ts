/** Where the code cache lives and how a run is tagged (the cache itself is tested on the bundle: test/code-cache.test.ts). */
import { assert, describe, it } from "@effect/vitest"
import { cacheDirectory, commandTag } from "../src/CodeCache.js"

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
})
