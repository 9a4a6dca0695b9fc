/**
 * `Containment.isInside`, the one answer to "is this path inside that directory?": what every path check of memdir
 * (the key check, `MemoryFs`'s `within`, the team guard and audit, the memory-directory override rules, doctor)
 * now asks. It must agree with the `path.relative` rule the override checks used before, on POSIX and Windows
 * paths, and never take a sibling with a common prefix (`memory-evil`) for a child.
 */
import { assert, describe, it } from "@effect/vitest"
import * as FastCheck from "fast-check"
import * as NodePath from "node:path"
import { isInside, sanitizeKey } from "../src/Containment.js"

/** The rule `internal/location/paths.ts` answered with `path.relative` (case-insensitive on Windows, as `relative` is). */
const byRelative = (path: NodePath.PlatformPath, root: string, candidate: string): boolean => {
  const relative = path.relative(root, candidate)
  return relative === "" || (relative !== ".." && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative))
}

const segment = FastCheck.constantFrom("a", "A", "b", "memory", "Memory", "memory-evil", "..x", "x..", ".hidden", "é")
const segments = FastCheck.array(segment, { maxLength: 4 })

describe("isInside", () => {
  it("compares with a trailing separator: a sibling with a common prefix is outside", () => {
    assert.isTrue(isInside("/m/memory", "/m/memory/x.md"))
    assert.isFalse(isInside("/m/memory", "/m/memory-evil/x.md"))
    assert.isFalse(isInside("/m/memory", "/m/memory"))
    assert.isTrue(isInside("/m/memory", "/m/memory", { allowRoot: true }))
    assert.isTrue(isInside("/", "/etc/passwd"))
    assert.isTrue(isInside("/m/memory/", "/m/memory/x.md"), "a root given with its separator")
  })

  it("takes the separator of the paths compared, and case only when told", () => {
    assert.isTrue(isInside("C:\\m", "C:\\m\\x.md", { sep: "\\" }))
    assert.isFalse(isInside("C:\\m", "C:\\m-evil\\x.md", { sep: "\\" }))
    assert.isFalse(isInside("C:\\m", "c:\\M\\x.md", { sep: "\\" }))
    assert.isTrue(isInside("C:\\m", "c:\\M\\x.md", { sep: "\\", ignoreCase: true }))
  })

  it("agrees with path.relative on resolved POSIX paths", () => {
    FastCheck.assert(FastCheck.property(segments, segments, FastCheck.boolean(), (rootParts, rest, nested) => {
      const root = NodePath.posix.resolve("/", ...rootParts)
      const candidate = NodePath.posix.resolve(nested ? root : "/", ...rest)
      assert.strictEqual(
        isInside(root, candidate, { allowRoot: true, sep: "/" }),
        byRelative(NodePath.posix, root, candidate),
        `${root} ⊇ ${candidate}`
      )
    }))
  })

  it("agrees with path.relative on resolved Windows paths, without case", () => {
    FastCheck.assert(
      FastCheck.property(
        segments,
        segments,
        FastCheck.boolean(),
        FastCheck.constantFrom("C:\\", "c:\\", "D:\\", "\\\\srv\\share\\"),
        (rootParts, rest, nested, drive) => {
          const root = NodePath.win32.resolve("C:\\", ...rootParts)
          const candidate = NodePath.win32.resolve(nested ? root : drive, ...rest)
          assert.strictEqual(
            isInside(root, candidate, { allowRoot: true, sep: "\\", ignoreCase: true }),
            byRelative(NodePath.win32, root, candidate),
            `${root} ⊇ ${candidate}`
          )
        }
      )
    )
  })
})

describe("sanitizeKey (Containment's, shared with the team guard)", () => {
  it("refuses what the key's characters alone give away", () => {
    const reason = (key: string) => {
      const result = sanitizeKey(key)
      return result._tag === "Failure" ? result.failure.reason : "ok"
    }
    assert.strictEqual(reason("notes/a.md"), "ok")
    assert.strictEqual(reason("50%-off.md"), "ok")
    assert.strictEqual(reason("/etc/passwd"), "absolute")
    assert.strictEqual(reason("a\\b.md"), "backslash")
    assert.strictEqual(reason("%2e%2e/x.md"), "encoded-traversal")
    assert.strictEqual(reason("a\u2215b.md"), "unicode-traversal")
  })
})
