import { NodeServices } from "@effect/platform-node"
import { assert, describe, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Path from "effect/Path"
import * as Result from "effect/Result"
import * as FastCheck from "fast-check"
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import { parseFrontmatter } from "../src/Frontmatter.js"
import { readHead } from "../src/internal/scan/head.js"
import {
  type Dated,
  headerlessLookahead,
  type HeadKind,
  isNewer,
  newest,
  readNewest,
  readNewestBatched
} from "../src/internal/scan/select.js"
import type { MemoryHeader } from "../src/Memory.js"
import * as MemoryFs from "../src/MemoryFs.js"
import * as Scanner from "../src/Scanner.js"

const header = (name: string, description: string, type = "feedback") =>
  `---\nname: ${name}\ndescription: ${description}\ntype: ${type}\n---\n\nBody of ${name}.\n`

/** Writes `files` (relative path → content, or content and mtime in seconds) under `dir`. */
const writeFiles = (
  dir: string,
  files: Readonly<Record<string, string | Uint8Array | readonly [string | Uint8Array, number]>>
) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    for (const [relative, spec] of Object.entries(files)) {
      const [content, mtime] = Array.isArray(spec) ? spec : [spec, 1_700_000_000]
      const file = path.join(dir, relative)
      yield* fs.makeDirectory(path.dirname(file), { recursive: true })
      if (typeof content === "string") yield* fs.writeFileString(file, content)
      else yield* fs.writeFile(file, content as Uint8Array)
      yield* fs.utimes(file, mtime, mtime)
    }
  })

const scanDir = (dir: string, options?: Scanner.ScanOptions) =>
  Effect.flatMap(Scanner.Scanner, (scanner) => scanner.scan(dir, options))

const paths = (memories: ReadonlyArray<MemoryHeader>) => memories.map((m) => m.path)

/**
 * 1,000 memory files ranked by age (`m0000.md` newest): rank 50 has a broken header, ranks 300 and older all
 * have one too. A limit of 200 must read the newest 201 heads (plus the headerless look-ahead), never the old ones.
 */
const limitedFiles = (): Record<string, readonly [string, number]> => {
  const files: Record<string, readonly [string, number]> = {}
  for (let rank = 0; rank < 1000; rank++) {
    const name = `m${String(rank).padStart(4, "0")}.md`
    const content = rank === 50 || rank >= 300 ? "---\nname: broken\n- item\n---\n" : header(`M${rank}`, `d${rank}`)
    files[name] = [content, 1_700_000_000 - rank * 60]
  }
  return files
}

const assertLimited = (capped: Scanner.ScanResult) => {
  const expected = Array.from({ length: 201 }, (_, rank) => `m${String(rank).padStart(4, "0")}.md`)
    .filter((name) => name !== "m0050.md")
  assert.deepStrictEqual(paths(capped.memories), expected)
  // The bad head among the newest is still reported (and offered as headerless); none of the 700 old ones is.
  assert.deepStrictEqual(capped.problems.map((p) => [p.path, p.code]), [["m0050.md", "yaml-error"]])
  assert.deepStrictEqual(paths(capped.headerless ?? []), ["m0050.md"])
  // Every memory file counts, read or not; only the one known problem does not.
  assert.strictEqual(capped.total, 999)
}

layer(Scanner.layerNode.pipe(Layer.provideMerge(Layer.merge(NodeServices.layer, MemoryFs.layer))))(
  "Scanner.layer",
  (it) => {
    it.effect("reads every memory's header, newest first, with absolute paths", () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const path = yield* Path.Path
        const dir = yield* fs.makeTempDirectoryScoped()
        yield* writeFiles(dir, {
          "feedback_testing.md": [header("Testing", "Hit the real DB"), 1000],
          "sub/project_freeze.md": [header("Freeze", "Merge freeze from 2026-03-05", "project"), 3000],
          "team/reference_tracker.md": [header("Tracker", "Bugs live in Linear INGEST", "reference"), 2000]
        })
        const result = yield* scanDir(dir)
        assert.deepStrictEqual(paths(result.memories), [
          "sub/project_freeze.md",
          "team/reference_tracker.md",
          "feedback_testing.md"
        ])
        assert.deepStrictEqual(result.problems, [])
        assert.strictEqual(result.total, 3)
        const freeze = result.memories[0]!
        assert.strictEqual(freeze.absolutePath, path.join(dir, "sub", "project_freeze.md"))
        assert.strictEqual(freeze.mtime, 3_000_000)
        assert.strictEqual(freeze.type, "project")
        assert.strictEqual(freeze.description, "Merge freeze from 2026-03-05")
        // A trailing separator (as MemoryPaths returns it) changes nothing.
        assert.deepStrictEqual(yield* scanDir(dir + path.sep), result)
      }))

    it.effect("orders equal mtimes by path", () =>
      Effect.gen(function*() {
        const dir = yield* FileSystem.FileSystem.pipe(Effect.flatMap((fs) => fs.makeTempDirectoryScoped()))
        yield* writeFiles(dir, {
          "b.md": [header("B", "b"), 500],
          "a.md": [header("A", "a"), 500],
          "c/a.md": [header("CA", "ca"), 500],
          "z.md": [header("Z", "z"), 900]
        })
        assert.deepStrictEqual(paths((yield* scanDir(dir)).memories), ["z.md", "a.md", "b.md", "c/a.md"])
      }))

    it.effect("skips indexes, logs, dot-dirs, dot-files and other files", () =>
      Effect.gen(function*() {
        const dir = yield* FileSystem.FileSystem.pipe(Effect.flatMap((fs) => fs.makeTempDirectoryScoped()))
        yield* writeFiles(dir, {
          "MEMORY.md": "- [Testing](feedback_testing.md) — hit the real DB\n",
          "team/MEMORY.md": "# Team index\n",
          "logs/2026/03/2026-03-05.md": "- 09:12 started\n",
          ".git/info.md": "not a memory",
          ".tmp-write-123.md": "half written",
          "sub/.swap.md": "editor state",
          "notes.txt": "plain notes",
          "feedback_testing.md": header("Testing", "Hit the real DB"),
          "team/feedback_style.md": header("Style", "Two spaces"),
          "sub/logs/project_x.md": header("Nested logs", "also skipped")
        })
        const result = yield* scanDir(dir)
        assert.deepStrictEqual(paths(result.memories).sort(), ["feedback_testing.md", "team/feedback_style.md"])
        assert.deepStrictEqual(result.problems, [])
      }))

    it.effect("caps with limit, counts the total, drops excluded paths unread and skips skipDirs", () =>
      Effect.gen(function*() {
        const dir = yield* FileSystem.FileSystem.pipe(Effect.flatMap((fs) => fs.makeTempDirectoryScoped()))
        yield* writeFiles(dir, {
          "m1.md": [header("1", "one"), 100],
          "m2.md": [header("2", "two"), 200],
          "m3.md": [header("3", "three"), 300],
          "team/m4.md": [header("4", "four"), 400],
          "m5.md": [header("5", "five"), 500],
          "broken.md": "no frontmatter at all"
        })
        const capped = yield* scanDir(dir, { limit: 2 })
        assert.deepStrictEqual(paths(capped.memories), ["m5.md", "team/m4.md"])
        assert.strictEqual(capped.total, 5)
        assert.strictEqual(capped.problems.length, 1)
        assert.deepStrictEqual((yield* scanDir(dir, { limit: 0 })).memories, [])

        const excluded = yield* scanDir(dir, { exclude: new Set(["m5.md", "./team/m4.md", "broken.md"]) })
        assert.deepStrictEqual(paths(excluded.memories), ["m3.md", "m2.md", "m1.md"])
        // Excluded files are not even read: the broken one is not reported.
        assert.deepStrictEqual(excluded.problems, [])
        assert.strictEqual(excluded.total, 3)

        const withoutTeam = yield* scanDir(dir, { skipDirs: ["team/"] })
        assert.deepStrictEqual(paths(withoutTeam.memories), ["m5.md", "m3.md", "m2.md", "m1.md"])
      }))

    it.effect("reports bad files as problems and keeps the good and the recoverable ones", () =>
      Effect.gen(function*() {
        const dir = yield* FileSystem.FileSystem.pipe(Effect.flatMap((fs) => fs.makeTempDirectoryScoped()))
        const tooLong = ["---", ...Array.from({ length: 29 }, (_, i) => `key${i}: v`), "---", ""].join("\n")
        yield* writeFiles(dir, {
          "good.md": header("Good", "fine"),
          "bom_crlf.md": ("\uFEFF" + header("Windows", "written on Windows", "user")).replace(/\n/g, "\r\n"),
          "nested.md": "---\nname: nested\ndescription: type lives under metadata\nmetadata:\n  type: project\n---\n",
          "colon.md": "---\nname: Colon\ndescription: Asked on 2026-05-14: never add trailers\ntype: feedback\n---\n",
          "none.md": "# Just a title\n\nSome text.\n",
          "unclosed.md": "---\nname: x\ndescription: y\n",
          "too_long.md": tooLong,
          "binary.md": new Uint8Array([0x2D, 0x2D, 0x2D, 0x0A, 0x00, 0x01, 0x02, 0x0A, 0x2D, 0x2D, 0x2D, 0x0A]),
          "list.md": "---\n- a\n- b\n---\n",
          "yaml.md": "---\nname: x\ndescription: y\n- item\n---\n"
        })
        const result = yield* scanDir(dir)
        const byPath = new Map(result.memories.map((m) => [m.path, m]))
        assert.deepStrictEqual([...byPath.keys()].sort(), ["bom_crlf.md", "colon.md", "good.md", "nested.md"])
        assert.strictEqual(byPath.get("bom_crlf.md")!.name, "Windows")
        assert.strictEqual(byPath.get("bom_crlf.md")!.type, "user")
        assert.strictEqual(byPath.get("nested.md")!.type, "project")
        assert.strictEqual(byPath.get("colon.md")!.description, "Asked on 2026-05-14: never add trailers")
        assert.match(byPath.get("colon.md")!.warning ?? "", /^line 3:/)
        assert.deepStrictEqual(
          result.problems.map((p) => [p.path, p.code, p.line]),
          [
            ["binary.md", "binary", 2],
            ["list.md", "not-a-map", 2],
            ["none.md", "missing-frontmatter", 1],
            ["too_long.md", "unclosed-frontmatter", 1],
            ["unclosed.md", "unclosed-frontmatter", 1],
            ["yaml.md", "yaml-error", 4]
          ]
        )
        for (const problem of result.problems) assert.include(problem.message, problem.path)
      }))

    it.effect("keeps the start of each body from the bytes already read: up to line 30, at most 1 KiB", () =>
      Effect.gen(function*() {
        const dir = yield* FileSystem.FileSystem.pipe(Effect.flatMap((fs) => fs.makeTempDirectoryScoped()))
        const lines = Array.from({ length: 40 }, (_, i) => `line ${i + 7}`)
        yield* writeFiles(dir, {
          "short.md": header("Short", "one body line"),
          "long.md": header("Long", "forty body lines").replace("Body of Long.\n", lines.join("\n") + "\n"),
          "wide.md": header("Wide", "one huge line").replace("Body of Wide.", "ü".repeat(3000)),
          "empty.md": "---\nname: Empty\ndescription: no body\ntype: user\n---\n"
        })
        const result = yield* scanDir(dir)
        const byPath = new Map(result.memories.map((m) => [m.path, m]))
        assert.strictEqual(byPath.get("short.md")!.bodyHead, "Body of Short.")
        // Lines 1-5 are the header, line 6 is blank, so the body starts on line 7; the body head ends with line 30.
        const long = byPath.get("long.md")!.bodyHead!.split("\n")
        assert.strictEqual(long[0], "line 7")
        assert.strictEqual(long.at(-1), "line 30")
        // Cut at 1 KiB on a whole character: the blank line after the header, then 511 "ü" of two bytes each.
        assert.strictEqual(byPath.get("wide.md")!.bodyHead, "ü".repeat(511))
        assert.strictEqual(byPath.get("empty.md")!.bodyHead, "")
        assert.isUndefined(result.headerless)
      }))

    it.effect("offers text files without a readable header to the selector, and still reports them", () =>
      Effect.gen(function*() {
        const dir = yield* FileSystem.FileSystem.pipe(Effect.flatMap((fs) => fs.makeTempDirectoryScoped()))
        yield* writeFiles(dir, {
          "good.md": [header("Good", "fine"), 3000],
          "notes_config.md": ["\n# Config file format\n\nKeys are kebab-case.\nNever YAML.\n", 2000],
          "broken.md": ["---\nname: x\ndescription: y\n- item\n---\n\nThe body.\n", 1000],
          "binary.md": new Uint8Array([0x2D, 0x2D, 0x2D, 0x0A, 0x00, 0x01, 0x02, 0x0A, 0x2D, 0x2D, 0x2D, 0x0A])
        })
        const result = yield* scanDir(dir)
        assert.deepStrictEqual(paths(result.memories), ["good.md"])
        assert.deepStrictEqual(result.problems.map((p) => [p.path, p.code]), [
          ["binary.md", "binary"],
          ["broken.md", "yaml-error"],
          ["notes_config.md", "missing-frontmatter"]
        ])
        assert.strictEqual(result.total, 1)
        const headerless = result.headerless ?? []
        assert.deepStrictEqual(paths(headerless), ["notes_config.md", "broken.md"])
        const notes = headerless[0]!
        assert.strictEqual(notes.name, "notes_config")
        assert.strictEqual(notes.description, "Config file format")
        assert.strictEqual(notes.bodyHead, "Keys are kebab-case.\nNever YAML.")
        assert.strictEqual(notes.type, "untyped")
        assert.isTrue(notes.headerless)
        assert.match(notes.warning ?? "", /file name and first lines/)
        assert.include(headerless[1]!.bodyHead ?? "", "The body.")
        // Capped like the memories.
        assert.deepStrictEqual(paths((yield* scanDir(dir, { limit: 1 })).headerless ?? []), ["notes_config.md"])
      }))

    it.effect("an absent directory is an empty scan; a file instead of a directory is a problem", () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const path = yield* Path.Path
        const dir = yield* fs.makeTempDirectoryScoped()
        assert.deepStrictEqual(yield* scanDir(path.join(dir, "missing")), { memories: [], problems: [], total: 0 })
        yield* writeFiles(dir, { "file.md": header("F", "f") })
        const onFile = yield* scanDir(path.join(dir, "file.md"))
        assert.deepStrictEqual(onFile.memories, [])
        assert.strictEqual(onFile.problems[0]?.code, "unreadable")
      }))

    it.effect("reads past 4 KiB only for long headers, and stops at 64 KiB", () =>
      Effect.gen(function*() {
        const dir = yield* FileSystem.FileSystem.pipe(Effect.flatMap((fs) => fs.makeTempDirectoryScoped()))
        const longDescription = "word ".repeat(3000).trim()
        // Files of exactly one or two first reads, with no closing fence: the reader must see their end.
        const exactly = (bytes: number) => {
          const start = "---\nname: x\ndescription: "
          return start + "d".repeat(bytes - start.length - 1) + "\n"
        }
        yield* writeFiles(dir, {
          "long.md": header("Long", longDescription),
          "huge.md": header("Huge", "x".repeat(70_000)),
          "exactly_4k.md": exactly(4096),
          "exactly_8k.md": exactly(8192)
        })
        const result = yield* scanDir(dir)
        assert.deepStrictEqual(paths(result.memories), ["long.md"])
        assert.strictEqual(result.memories[0]!.description, longDescription)
        assert.deepStrictEqual(
          result.problems.map((p) => [p.path, p.code]),
          [
            ["exactly_4k.md", "unclosed-frontmatter"],
            ["exactly_8k.md", "unclosed-frontmatter"],
            ["huge.md", "unclosed-frontmatter"]
          ]
        )
        assert.include(result.problems[2]?.message, "65536 bytes")
      }))

    it.effect("never reads a body: a 1 GB sparse file is scanned without its NUL bytes or its size showing", () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const path = yield* Path.Path
        const dir = yield* fs.makeTempDirectoryScoped()
        yield* writeFiles(dir, { "big.md": header("Big", "a memory with a huge body") })
        const file = path.join(dir, "big.md")
        // Holes read back as NUL bytes: a scanner that looked past the header would call this file binary.
        yield* fs.truncate(file, 1024 ** 3)
        const peakBefore = process.resourceUsage().maxRSS
        const result = yield* scanDir(dir)
        const peakGrowthKiB = process.resourceUsage().maxRSS - peakBefore
        assert.deepStrictEqual(paths(result.memories), ["big.md"])
        assert.deepStrictEqual(result.problems, [])
        assert.isBelow(peakGrowthKiB, 256 * 1024, "peak RSS grew by more than 256 MiB: the body was read")
      }))

    it.effect("skips a FIFO without blocking on it", () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const path = yield* Path.Path
        const dir = yield* fs.makeTempDirectoryScoped()
        yield* writeFiles(dir, { "real.md": header("Real", "r") })
        execFileSync("mkfifo", [path.join(dir, "pipe.md")])
        const result = yield* scanDir(dir)
        assert.deepStrictEqual(paths(result.memories), ["real.md"])
      }))

    it.effect("follows symlinks only inside the tree, once, and reports the others", () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const path = yield* Path.Path
        const outside = yield* fs.makeTempDirectoryScoped()
        const dir = yield* fs.makeTempDirectoryScoped()
        yield* writeFiles(outside, { "secret.md": header("Secret", "outside the memory dir") })
        yield* writeFiles(dir, {
          "feedback_a.md": header("A", "a"),
          ".shared/reference_b.md": header("B", "b", "reference")
        })
        NodeFs.symlinkSync(path.join(dir, "feedback_a.md"), path.join(dir, "alias_of_a.md"))
        NodeFs.symlinkSync(path.join(dir, ".shared", "reference_b.md"), path.join(dir, "reference_b.md"))
        NodeFs.symlinkSync(path.join(outside, "secret.md"), path.join(dir, "escape.md"))
        NodeFs.symlinkSync(outside, path.join(dir, "escape_dir"))
        NodeFs.symlinkSync(dir, path.join(dir, "loop"))
        NodeFs.symlinkSync(path.join(dir, "nowhere.md"), path.join(dir, "dangling.md"))
        const result = yield* scanDir(dir)
        assert.deepStrictEqual(paths(result.memories).sort(), ["feedback_a.md", "reference_b.md"])
        assert.deepStrictEqual(
          result.problems.map((p) => [p.path, p.code]),
          [["dangling.md", "unreadable"], ["escape.md", "symlink-escape"], ["escape_dir", "symlink-escape"]]
        )
        assert.isFalse(result.memories.some((m) => m.name === "Secret"))
      }))

    it.effect("through a symlinked memory directory, walks each real directory once and lists each memory once", () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const path = yield* Path.Path
        const real = yield* fs.makeTempDirectoryScoped()
        const links = yield* fs.makeTempDirectoryScoped()
        yield* writeFiles(real, { "a.md": header("A", "a"), "sub/b.md": header("B", "b") })
        const root = path.join(links, "memory")
        NodeFs.symlinkSync(real, root)
        // A link back to the root (by its real path and by the link) and one to a directory the walk enters anyway.
        NodeFs.symlinkSync(real, path.join(real, "again"))
        NodeFs.symlinkSync(root, path.join(real, "sub", "up"))
        NodeFs.symlinkSync(path.join(real, "sub"), path.join(real, "sub_alias"))
        const result = yield* scanDir(root)
        assert.deepStrictEqual(paths(result.memories).sort(), ["a.md", "sub/b.md"])
        assert.deepStrictEqual(result.problems, [])
        assert.strictEqual(result.memories.find((m) => m.path === "a.md")!.absolutePath, path.join(root, "a.md"))
      }))

    // An unreadable file (mode 0000) is reported by the CLI's system test (test/cli-errors.test.ts), which runs
    // as nobody when the suite runs as root (root reads every file whatever its mode).

    it.effect("with a limit reads only the newest heads: an old broken file is not opened, a bad new one reads one further", () =>
      Effect.gen(function*() {
        const dir = yield* FileSystem.FileSystem.pipe(Effect.flatMap((fs) => fs.makeTempDirectoryScoped()))
        yield* writeFiles(dir, limitedFiles())
        const capped = yield* scanDir(dir, { limit: 200 })
        assertLimited(capped)
        // Without a limit every head is read: the old broken files are problems, and the total is exact.
        const all = yield* scanDir(dir)
        assert.strictEqual(all.memories.length, 299)
        assert.strictEqual(all.problems.length, 701)
        assert.strictEqual(all.total, 299)
      }))

    it.effect("gives the same result to concurrent scans of many files (batches never share the buffer)", () =>
      Effect.gen(function*() {
        const dir = yield* FileSystem.FileSystem.pipe(Effect.flatMap((fs) => fs.makeTempDirectoryScoped()))
        const files: Record<string, readonly [string, number]> = {}
        for (let i = 0; i < 1200; i++) {
          files[`d${i % 7}/m${i}.md`] = [header(`Memory ${i}`, `description ${"x".repeat(i % 50)} ${i}`), 1000 + i]
        }
        yield* writeFiles(dir, files)
        const sequential = yield* scanDir(dir)
        assert.strictEqual(sequential.total, 1200)
        assert.strictEqual(sequential.memories[0]!.name, "Memory 1199")
        const concurrent = yield* Effect.all([scanDir(dir), scanDir(dir), scanDir(dir)], { concurrency: "unbounded" })
        for (const result of concurrent) assert.deepStrictEqual(result, sequential)
      }))
  }
)

describe("Scanner.layerTest", () => {
  const files: Record<string, Scanner.TestFile> = {
    "MEMORY.md": { content: "- [A](a.md) — a\n", mtime: 9 },
    "logs/2026/03/2026-03-05.md": { content: "- log\n", mtime: 9 },
    ".git/x.md": { content: header("Git", "g"), mtime: 9 },
    "a.md": { content: header("A", "a"), mtime: 1 },
    "team/b.md": { content: header("B", "b", "reference"), mtime: 3 },
    "team/MEMORY.md": { content: "# team\n", mtime: 9 },
    "c.md": { content: header("C", "c", "user"), mtime: 2 },
    "bad.md": { content: "no header", mtime: 5 }
  }

  it.effect("applies the live scanner's rules to in-memory files", () =>
    Effect.gen(function*() {
      const result = yield* scanDir("/memory/")
      assert.deepStrictEqual(paths(result.memories), ["team/b.md", "c.md", "a.md"])
      assert.strictEqual(result.memories[0]!.absolutePath, "/memory/team/b.md")
      assert.deepStrictEqual(result.problems.map((p) => [p.path, p.code]), [["bad.md", "missing-frontmatter"]])
      const capped = yield* scanDir("/memory", { limit: 1, exclude: new Set(["team/b.md"]) })
      assert.deepStrictEqual(paths(capped.memories), ["c.md"])
      assert.strictEqual(capped.total, 2)
      assert.deepStrictEqual(paths((yield* scanDir("/memory", { skipDirs: ["team"] })).memories), ["c.md", "a.md"])
    }).pipe(Effect.provide(Scanner.layerTest(files))))

  it.effect("with a limit parses only the newest heads, as the live scanner does", () =>
    Effect.gen(function*() {
      const files = Object.fromEntries(
        Object.entries(limitedFiles()).map(([name, [content, seconds]]) => [name, { content, mtime: seconds * 1000 }])
      )
      const capped = yield* Effect.provide(scanDir("/memory", { limit: 200 }), Scanner.layerTest(files))
      assertLimited(capped)
    }))

  it.effect("keeps body heads and offers headerless files as the live scanner does", () =>
    Effect.gen(function*() {
      const result = yield* scanDir("/memory")
      assert.strictEqual(result.memories.find((m) => m.path === "a.md")!.bodyHead, "Body of A.")
      assert.deepStrictEqual(paths(result.headerless ?? []), ["bad.md"])
      assert.strictEqual(result.headerless![0]!.absolutePath, "/memory/bad.md")
    }).pipe(Effect.provide(Scanner.layerTest(files))))
})

// ---------------------------------------------------------------------------------------------------------------
// The byte-level reading agrees with the string parser
// ---------------------------------------------------------------------------------------------------------------

const headLines = [
  "---",
  "--- ",
  "---\t",
  "---\u00A0",
  "----",
  "--- yaml",
  "name: Testing",
  "description: hit the real DB",
  "description: on 2026-05-14: no trailers",
  "type: feedback",
  "type: other",
  "metadata:",
  "  type: project",
  "- item",
  "key: 😀 日本",
  "\u0000",
  "",
  "   ",
  "x".repeat(3000),
  "long: " + "y".repeat(5000)
]
const headText = FastCheck.tuple(
  FastCheck.boolean(),
  FastCheck.array(FastCheck.constantFrom(...headLines), { minLength: 1, maxLength: 40 }),
  FastCheck.constantFrom("\n", "\r\n"),
  FastCheck.boolean()
).map(([bom, all, newline, trailing]) => (bom ? "\uFEFF" : "") + all.join(newline) + (trailing ? newline : ""))

const settle = <A>(either: Result.Result<A, { readonly reason: string; readonly line?: number | undefined }>) =>
  Result.match(either, { onFailure: (e) => ({ reason: e.reason, line: e.line }), onSuccess: (a) => ({ parsed: a }) })

/** The capped-scan loop over a synchronous listing and synchronous reads. */
const readNewestSync = <A extends Dated>(
  limit: number,
  select: (count: number, olderThan: A | undefined) => ReadonlyArray<A>,
  read: (item: A) => HeadKind
): void =>
  Effect.runSync(
    readNewest(limit, (count, olderThan: A | undefined) =>
      Effect.sync(() => select(count, olderThan)), (item: A) =>
      Effect.sync(() => read(item)))
  )

describe("partial selection of the newest", () => {
  const dated = FastCheck.array(
    FastCheck.record({
      path: FastCheck.stringMatching(/^[a-d]{1,3}\.md$/),
      mtime: FastCheck.integer({ min: 0, max: 20 })
    }),
    { maxLength: 60 }
  ).map((items) => [...new Map(items.map((item) => [item.path, item])).values()])
  const sorted = <A extends { path: string; mtime: number }>(items: ReadonlyArray<A>) =>
    [...items].sort((a, b) => (isNewer(a, b) ? -1 : isNewer(b, a) ? 1 : 0))

  it("picks what a full sort would, page after page", () => {
    FastCheck.assert(
      FastCheck.property(
        dated,
        FastCheck.integer({ min: 0, max: 70 }),
        FastCheck.integer({ min: 0, max: 60 }),
        (items, count, boundary) => {
          const all = sorted(items)
          assert.deepStrictEqual(newest(items, count), all.slice(0, count))
          const olderThan = all[boundary]
          if (olderThan !== undefined) {
            assert.deepStrictEqual(newest(items, count, olderThan), all.slice(boundary + 1, boundary + 1 + count))
          }
        }
      )
    )
  })

  it("reads limit heads plus the headerless look-ahead, one further per bad head, newest first", () => {
    const items = Array.from({ length: 1000 }, (_, rank) => ({ path: `m${rank}`, mtime: 1000 - rank }))
    const reads: Array<string> = []
    let pages = 0
    const select = (count: number, olderThan: (typeof items)[number] | undefined) => {
      pages++
      return newest(items, count, olderThan)
    }
    readNewestSync(200, select, (item) => {
      reads.push(item.path)
      return "memory"
    })
    assert.strictEqual(reads.length, 200 + headerlessLookahead(200))
    assert.strictEqual(pages, 1)

    // The look-ahead never costs another listing: 75 bad heads fill the first page exactly to the 200th memory.
    pages = 0
    let firstPage = 0
    readNewestSync(200, select, (item) => {
      firstPage++
      return 1000 - item.mtime < 75 ? "none" : "memory"
    })
    assert.deepStrictEqual([pages, firstPage], [1, 275])
    assert.deepStrictEqual(reads, items.slice(0, reads.length).map((item) => item.path))

    // Bad heads (every third of the newest 450) are skipped over: the next pages are selected as needed.
    const bad = (rank: number) => rank < 450 && rank % 3 === 0
    const kept: Array<number> = []
    let opened = 0
    readNewestSync(200, (count, olderThan) => newest(items, count, olderThan), (item) => {
      opened++
      const rank = 1000 - item.mtime
      if (bad(rank)) return "none"
      kept.push(rank)
      return "memory"
    })
    assert.deepStrictEqual(kept.slice(0, 200), Array.from({ length: 300 }, (_, r) => r).filter((r) => !bad(r)))
    assert.strictEqual(opened, 300 + headerlessLookahead(200))

    let none = 0
    readNewestSync(0, () => assert.fail("a limit of 0 lists nothing to read"), () => {
      none++
      return "memory"
    })
    assert.strictEqual(none, 0)
  })
})

/** The capped scan's reading rule, one head at a time (as it was first written): what the batches must match. */
const readOneByOne = <A extends Dated>(
  limit: number,
  select: (count: number, olderThan: A | undefined) => ReadonlyArray<A>,
  read: (item: A) => HeadKind
): void => {
  if (limit <= 0) return
  const lookahead = headerlessLookahead(limit)
  let [memories, headerless, extra] = [0, 0, 0]
  const done = () => memories >= limit && (headerless >= limit || extra >= lookahead)
  let capacity = limit + lookahead + Math.ceil(limit / 4)
  let olderThan: A | undefined = undefined
  for (;;) {
    const page = select(capacity, olderThan)
    for (const item of page) {
      if (done()) return
      if (memories >= limit) extra++
      const kind = read(item)
      if (kind === "memory") memories++
      else if (kind === "headerless") headerless++
    }
    if (page.length < capacity || memories >= limit) return
    olderThan = page[page.length - 1]
    capacity *= 2
  }
}

describe("reading the newest heads in batches", () => {
  it("reads exactly the heads, in the order, that reading one at a time reads", () => {
    FastCheck.assert(FastCheck.property(
      FastCheck.array(FastCheck.constantFrom<HeadKind>("memory", "memory", "memory", "headerless", "none"), {
        maxLength: 400
      }),
      FastCheck.integer({ min: 0, max: 120 }),
      (kinds, limit) => {
        const items = kinds.map((kind, rank) => ({
          path: `m${String(rank).padStart(3, "0")}`,
          mtime: 1000 - rank,
          kind
        }))
        const select = (count: number, olderThan: (typeof items)[number] | undefined) => newest(items, count, olderThan)
        const one: Array<string> = []
        readOneByOne(limit, select, (item) => {
          one.push(item.path)
          return item.kind
        })
        const batched: Array<string> = []
        Effect.runSync(
          readNewestBatched(
            limit,
            (count, olderThan: (typeof items)[number] | undefined) => Effect.sync(() => select(count, olderThan)),
            (chunk) =>
              Effect.sync(() => {
                for (const item of chunk) batched.push(item.path)
                return chunk.map((item) => item.kind)
              })
          )
        )
        assert.deepStrictEqual(batched, one)
      }
    ))
  })
})

describe("reading heads from bytes", () => {
  it("gives what the string parser gives on the whole file", () => {
    FastCheck.assert(
      FastCheck.property(headText, (text) => {
        const bytes = Buffer.from(text, "utf8")
        const buffer = Buffer.alloc(Scanner.FRONTMATTER_MAX_BYTES + 1)
        let reads = 0
        const fromBytes = readHead(buffer, (offset, length) => {
          reads++
          return bytes.copy(buffer, offset, offset, Math.min(bytes.length, offset + length))
        }, "m.md")
        assert.deepStrictEqual(
          settle(fromBytes),
          settle(parseFrontmatter(text, "m.md")),
          JSON.stringify(text.slice(0, 300))
        )
        // Never more reads than it takes to double from 4 KiB to the bound.
        assert.isAtMost(reads, 6)
      }),
      { numRuns: Number(process.env.MEMDIR_PROPERTY_RUNS ?? 1500) }
    )
  })
})

describe("MemoryFs.readDirectoryChunks (the scan's listing)", () => {
  const chunksOf = (dir: string) =>
    Effect.gen(function*() {
      const fs = yield* MemoryFs.MemoryFs
      const chunks: Array<ReadonlyArray<MemoryFs.DirectoryEntry>> = []
      yield* fs.readDirectoryChunks(dir, 3, (entries) => Effect.sync(() => void chunks.push(entries)))
      return chunks
    })
  const names = ["a.md", "b.md", "c.md", "d.md", "e.md", "f.md", "g.md"]

  it.effect("hands a real directory in chunks of at most the chunk size, every entry once, with its kind", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped()
      yield* writeFiles(dir, Object.fromEntries(names.map((name) => [name, header(name, "d")])))
      yield* fs.makeDirectory(`${dir}/sub`)
      const chunks = yield* chunksOf(dir)
      assert.deepStrictEqual(chunks.map((chunk) => chunk.length), [3, 3, 2])
      const entries = chunks.flat().sort((a, b) => (a.name < b.name ? -1 : 1))
      assert.deepStrictEqual(entries, [
        ...names.map((name) => ({ name, kind: "File" as const })),
        { name: "sub", kind: "Directory" as const }
      ])
      const missing = yield* Effect.flip(chunksOf(`${dir}/missing`))
      assert.strictEqual(missing.reason, "NotFound")
      const notDirectory = yield* Effect.flip(chunksOf(`${dir}/a.md`))
      assert.strictEqual(notDirectory.reason, "NotDirectory")
    }).pipe(Effect.provide(Layer.merge(NodeServices.layer, MemoryFs.layer))))

  it.effect("does the same over the in-memory tree", () =>
    Effect.gen(function*() {
      const chunks = yield* chunksOf("/m")
      assert.deepStrictEqual(chunks.map((chunk) => chunk.map((entry) => entry.name)), [
        ["a.md", "b.md", "c.md"],
        ["d.md", "e.md", "f.md"],
        ["g.md"]
      ])
      assert.strictEqual((yield* Effect.flip(chunksOf("/m/none"))).reason, "NotFound")
    }).pipe(
      Effect.provide(MemoryFs.layerMemory(Object.fromEntries(names.map((name) => [`/m/${name}`, "x"]))))
    ))
})
