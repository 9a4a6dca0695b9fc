import { NodeServices } from "@effect/platform-node"
import { assert, describe, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Path from "effect/Path"
import * as FastCheck from "fast-check"
import { spawnSync } from "node:child_process"
import { TEMP_FILE_PATTERN } from "../src/internal/fs/leftovers.js"
import { acquireLock, releaseLock } from "../src/internal/fs/lock.js"
import { formatIndexEntry, parseIndexLine } from "../src/Memory.js"
import * as MemoryFs from "../src/MemoryFs.js"
import {
  countLines,
  INDEX_FILE,
  INDEX_LOCK,
  INDEX_MAX_BYTES,
  INDEX_MAX_LINES,
  indexKeyOf,
  layer as memoryIndexLayer,
  layerTest,
  layerWith,
  MemoryIndex,
  normalizeIndexLink,
  removeFromIndexText,
  truncateIndex,
  upsertIndexText,
  utf8ByteLength
} from "../src/MemoryIndex.js"

const entryLine = (i: number) => `- [Memory ${i}](feedback_m${i}.md) — hook ${i}\n`
const lines = (n: number, make: (i: number) => string = entryLine) =>
  Array.from({ length: n }, (_, i) => make(i)).join("")
/** A line of exactly `bytes` UTF-8 bytes including its newline. */
const lineOfBytes = (bytes: number, i = 0) => {
  const head = `- [M${i}](project_m${i}.md) — `
  return head + "x".repeat(bytes - utf8ByteLength(head) - 1) + "\n"
}

describe("truncateIndex (pure)", () => {
  it("keeps exactly 200 lines untouched and cuts the 201st, naming the line count", () => {
    const exact = lines(INDEX_MAX_LINES)
    const ok = truncateIndex(exact)
    assert.strictEqual(ok.content, exact)
    assert.isFalse(ok.truncatedByLines)
    assert.isUndefined(ok.warning)

    const over = truncateIndex(exact + entryLine(200))
    assert.isTrue(over.truncatedByLines)
    assert.isFalse(over.truncatedByBytes)
    assert.strictEqual(over.kept, exact)
    assert.strictEqual(over.lines, 201)
    assert.include(over.warning!, "201 lines (limit: 200)")
    assert.notInclude(over.warning!, "KB")
    assert.include(over.warning!, "one line under ~200 chars")
    assert.include(over.warning!, "topic files")
    assert.isTrue(over.content.startsWith(exact))
    assert.isTrue(over.content.includes(over.warning!))
  })

  it("counts a final line without newline, and not a trailing newline, as a line", () => {
    assert.strictEqual(countLines(""), 0)
    assert.strictEqual(countLines("a"), 1)
    assert.strictEqual(countLines("a\n"), 1)
    assert.strictEqual(countLines("a\nb"), 2)
    assert.strictEqual(countLines("\n\n"), 2)
    const unterminated = lines(INDEX_MAX_LINES) + "- [x](x.md)"
    assert.isTrue(truncateIndex(unterminated).truncatedByLines)
  })

  it("accepts exactly 25,000 bytes and cuts 25,001 at the last newline, naming the size", () => {
    const exact = lineOfBytes(1000).repeat(24) + lineOfBytes(1000, 24)
    assert.strictEqual(utf8ByteLength(exact), INDEX_MAX_BYTES)
    assert.isUndefined(truncateIndex(exact).warning)

    const plusOne = exact.slice(0, -1) + "y\n"
    assert.strictEqual(utf8ByteLength(plusOne), INDEX_MAX_BYTES + 1)
    const result = truncateIndex(plusOne)
    assert.isTrue(result.truncatedByBytes)
    assert.isFalse(result.truncatedByLines)
    assert.strictEqual(result.kept, lineOfBytes(1000).repeat(24))
    assert.include(result.warning!, "25 KB (limit: 25 KB) — index entries are too long")
    assert.notInclude(result.warning!, "lines (limit")
  })

  it("never splits a multi-byte character at the byte boundary", () => {
    // One huge line: no newline to cut at, so the cut lands on a character boundary.
    for (const char of ["é", "中", "😀"]) {
      const text = "a" + char.repeat(20_000)
      const result = truncateIndex(text)
      assert.isTrue(result.truncatedByBytes)
      assert.isAtMost(utf8ByteLength(result.kept), INDEX_MAX_BYTES)
      assert.isAbove(utf8ByteLength(result.kept), INDEX_MAX_BYTES - 4)
      assert.isTrue(text.startsWith(result.kept))
      assert.isFalse(result.kept.includes("\uFFFD"))
      // The kept part is made of whole characters only.
      assert.strictEqual([...result.kept.slice(1)].every((c) => c === char), true)
    }
    // A newline exists before the boundary: cut there, even if the character at the boundary is multi-byte.
    const withNewline = "- [a](a.md)\n" + "é".repeat(20_000)
    assert.strictEqual(truncateIndex(withNewline).kept, "- [a](a.md)\n")
  })

  it("the observed abuse: 197 lines of 1 KB (197 KB) is cut to 25 lines by size; over 200 lines names both", () => {
    const abuse = Array.from({ length: 197 }, (_, i) => lineOfBytes(1000, i)).join("")
    const result = truncateIndex(abuse)
    assert.strictEqual(result.lines, 197)
    assert.strictEqual(result.bytes, 197_000)
    assert.isTrue(result.truncatedByBytes)
    // 197 lines is under the line cap: only the size is named.
    assert.isFalse(result.truncatedByLines)
    assert.strictEqual(countLines(result.kept), 25)
    assert.include(result.warning!, "197 KB (limit: 25 KB) — index entries are too long")

    const worse = Array.from({ length: 250 }, (_, i) => lineOfBytes(1000, i)).join("")
    const both = truncateIndex(worse)
    assert.isTrue(both.truncatedByLines)
    assert.isTrue(both.truncatedByBytes)
    assert.include(both.warning!, "250 lines (limit: 200)")
    assert.include(both.warning!, "250 KB (limit: 25 KB) — index entries are too long")
    assert.isAtMost(utf8ByteLength(both.kept), INDEX_MAX_BYTES)
  })

  const line = FastCheck.oneof(
    FastCheck.string({ unit: "binary", maxLength: 40 }),
    FastCheck.string({ unit: "grapheme", minLength: 100, maxLength: 400 }),
    FastCheck.constant("- [x](feedback_x.md) — a hook"),
    FastCheck.string({ unit: FastCheck.constantFrom("é", "😀", "a", " ", "\r"), minLength: 500, maxLength: 3000 })
  )
  const indexText = FastCheck.tuple(FastCheck.array(line, { maxLength: 260 }), FastCheck.boolean()).map((
    [parts, trailing]
  ) => parts.join("\n") + (trailing ? "\n" : ""))

  it("for any text, the loaded part is a prefix within both caps, and the warning is present iff cut", () => {
    FastCheck.assert(
      FastCheck.property(indexText, (text) => {
        const result = truncateIndex(text)
        assert.isTrue(text.startsWith(result.kept))
        assert.isAtMost(countLines(result.kept), INDEX_MAX_LINES)
        assert.isAtMost(utf8ByteLength(result.kept), INDEX_MAX_BYTES)
        const over = countLines(text) > INDEX_MAX_LINES || utf8ByteLength(text) > INDEX_MAX_BYTES
        if (over) {
          assert.isDefined(result.warning)
          assert.isTrue(result.content.startsWith(result.kept))
          assert.isTrue(result.content.endsWith(`> ${result.warning}\n`))
          // Only the warning (and the blank line before it) is added.
          assert.isAtMost(result.content.length - result.kept.length, result.warning!.length + 5)
        } else {
          assert.isUndefined(result.warning)
          assert.strictEqual(result.content, text)
        }
      }),
      { numRuns: 150 }
    )
  })
})

describe("index lines (pure)", () => {
  // any name the store writes (MemoryStore.writeRefusal): < > # ? % and : too (Memory.indexLink encodes them)
  const nameChar = FastCheck.constantFrom(..."ab.-_ ()[]—–:/é中<>#?%".split(""))
  const fileName = FastCheck.array(nameChar, { minLength: 1, maxLength: 12 }).map((chars) => `${chars.join("")}.md`)
    .filter((file) => file.split("/").every((s) => s !== "" && s !== "." && s !== ".." && s.trim() === s))

  it("a line links back to exactly the file it was written for, whatever the file is called", () => {
    FastCheck.assert(
      FastCheck.property(fileName, FastCheck.string({ maxLength: 40 }), (file, hook) => {
        const line = formatIndexEntry({ title: "T", file, hook })
        assert.strictEqual(normalizeIndexLink(parseIndexLine(line)?.file ?? ""), file, line)
        assert.strictEqual(indexKeyOf(file), file)
      }),
      {
        numRuns: 300,
        examples: [["a) - b.md/user_a.md", "a"], ["q(1).md", ""], ["a#1.md", ""], ["c%41.md", ""], ["x:y.md", ""]]
      }
    )
  })
})

describe("index edits (pure)", () => {
  const sectioned = [
    "# Project memory",
    "",
    "> One line per entry.",
    "",
    "## Feedback",
    "- [Testing](feedback_testing.md) — real DB, no mocks",
    "- [Commits](feedback_commits.md) — no co-author lines",
    "",
    "## Project",
    "- [Release](project_release.md) — freeze on 2026-03-05",
    "- Someone's note, not a link: see [x](elsewhere.md).",
    ""
  ].join("\n")

  it("replaces the line pointing at the same file in place, keeping every other line byte for byte", () => {
    const result = upsertIndexText(sectioned, { title: "Testing", file: "feedback_testing.md", hook: "integration" })
    assert.isFalse(result.created)
    const before = sectioned.split("\n")
    const after = result.text.split("\n")
    assert.strictEqual(after.length, before.length)
    after.forEach((line, i) =>
      i === 5
        ? assert.strictEqual(line, "- [Testing](feedback_testing.md) — integration")
        : assert.strictEqual(line, before[i])
    )
  })

  it("collapses duplicate lines for one file into the first, and matches ./ and #anchor spellings", () => {
    const text = "- [A](feedback_a.md) — one\n- [B](b.md)\n- [A again](./feedback_a.md#why) — two\n"
    const result = upsertIndexText(text, { title: "A", file: "feedback_a.md", hook: "three" })
    assert.strictEqual(result.text, "- [A](feedback_a.md) — three\n- [B](b.md)\n")
  })

  it("appends a new entry after the last entry of its type, else at the end", () => {
    const project = upsertIndexText(sectioned, { title: "Roadmap", file: "project_roadmap.md", hook: "Q3" })
    assert.isTrue(project.created)
    const projectLines = project.text.split("\n")
    assert.strictEqual(projectLines[10], "- [Roadmap](project_roadmap.md) — Q3")
    assert.strictEqual(projectLines[11], "- Someone's note, not a link: see [x](elsewhere.md).")

    const user = upsertIndexText(sectioned, { title: "Alex", file: "user_alex.md", hook: "SRE" })
    assert.strictEqual(user.text, sectioned + "- [Alex](user_alex.md) — SRE\n")

    const noNewline = upsertIndexText("# Index", { title: "A", file: "a.md", hook: "" })
    assert.strictEqual(noNewline.text, "# Index\n- [A](a.md)\n")
    assert.strictEqual(upsertIndexText("", { title: "A", file: "a.md", hook: "h" }).text, "- [A](a.md) — h\n")
  })

  it("keeps CRLF line endings of a CRLF index", () => {
    const text = "# Index\r\n- [A](feedback_a.md) — one\r\n"
    assert.strictEqual(
      upsertIndexText(text, { title: "A", file: "feedback_a.md", hook: "two" }).text,
      "# Index\r\n- [A](feedback_a.md) — two\r\n"
    )
    assert.strictEqual(
      upsertIndexText(text, { title: "B", file: "feedback_b.md", hook: "new" }).text,
      "# Index\r\n- [A](feedback_a.md) — one\r\n- [B](feedback_b.md) — new\r\n"
    )
  })

  it("shortens the written line to the entry cap", () => {
    const hook = "word ".repeat(60)
    const result = upsertIndexText("", { title: "Long", file: "feedback_long.md", hook })
    assert.isAtMost(result.text.trimEnd().length, 150)
    assert.strictEqual(result.text, formatIndexEntry({ title: "Long", file: "feedback_long.md", hook }) + "\n")
  })

  it("removes every line for a file and nothing else", () => {
    const text = "# I\n- [A](a.md)\nprose about a.md\n- [A2](./a.md) — dup\n- [B](b.md)\n"
    assert.deepStrictEqual(removeFromIndexText(text, "a.md"), {
      text: "# I\nprose about a.md\n- [B](b.md)\n",
      removed: 2
    })
    assert.deepStrictEqual(removeFromIndexText(text, "c.md"), { text, removed: 0 })
  })

  it("normalises links for comparison and ignores URLs", () => {
    assert.strictEqual(normalizeIndexLink("./sub/../feedback_x.md#why"), "feedback_x.md")
    assert.strictEqual(normalizeIndexLink("<my%20file.md>"), "my file.md")
    assert.isUndefined(normalizeIndexLink("https://example.com/x.md"))
    assert.isUndefined(normalizeIndexLink("#section"))
    assert.strictEqual(normalizeIndexLink("../handoff/x.md"), "../handoff/x.md")
  })
})

const tempDir = Effect.flatMap(
  FileSystem.FileSystem,
  (fs) => Effect.flatMap(fs.makeTempDirectoryScoped({ prefix: "memdir-index-" }), (dir) => fs.realPath(dir))
)

/** Entries of `dir` that a write or a lock may leave behind by mistake. */
const leftovers = (dir: string) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) =>
    Effect.map(
      fs.readDirectory(dir),
      (names) => names.filter((name) => TEMP_FILE_PATTERN.test(name) || name.startsWith(INDEX_LOCK))
    ))

const modeOf = (file: string) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) => Effect.map(fs.stat(file), (info) => info.mode & 0o777))

/** A pid that belonged to a process which has exited. */
const deadPid = (): number => spawnSync(process.execPath, ["-e", "0"]).pid!

// Real files, real clock: lock waits are real sleeps.
const live = { excludeTestServices: true } as const

layer(Layer.provideMerge(memoryIndexLayer, NodeServices.layer), live)("MemoryIndex (real files)", (it) => {
  it.effect("load: an absent index is empty, a present one is loaded whole or truncated with the warning", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const index = yield* MemoryIndex
      const dir = yield* tempDir
      const absent = yield* index.load(path.join(dir, "nope"))
      assert.deepStrictEqual([absent.exists, absent.content, absent.entries.length], [false, "", 0])

      const text = lines(INDEX_MAX_LINES + 5)
      yield* fs.writeFileString(path.join(dir, INDEX_FILE), text)
      const loaded = yield* index.load(dir)
      assert.isTrue(loaded.exists)
      assert.isTrue(loaded.truncatedByLines)
      assert.strictEqual(loaded.lines, 205)
      assert.strictEqual(loaded.bytes, utf8ByteLength(text))
      assert.include(loaded.content, "205 lines (limit: 200)")
      assert.strictEqual(countLines(loaded.content.split("\n\n> ")[0]!), 200)
      // Entries cover the whole file, not only the loaded part.
      assert.strictEqual(loaded.entries.length, 205)
      assert.deepStrictEqual(loaded.entries[204], { title: "Memory 204", file: "feedback_m204.md", hook: "hook 204" })
    }))

  it.effect("upsert creates the directory (0700) and MEMORY.md (0600), then replaces in place", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const index = yield* MemoryIndex
      const dir = path.join(yield* tempDir, "projects", "x", "memory")
      const first = yield* index.upsert(dir, { title: "Testing", file: "feedback_testing.md", hook: "real DB" })
      assert.deepStrictEqual(first, { created: true, fileCreated: true, changed: true })
      assert.strictEqual(yield* modeOf(dir), 0o700)
      assert.strictEqual(yield* modeOf(path.join(dir, INDEX_FILE)), 0o600)

      const second = yield* index.upsert(dir, { title: "Testing", file: "feedback_testing.md", hook: "no mocks" })
      assert.deepStrictEqual(second, { created: false, fileCreated: false, changed: true })
      const same = yield* index.upsert(dir, { title: "Testing", file: "feedback_testing.md", hook: "no mocks" })
      assert.isFalse(same.changed)
      assert.strictEqual(
        yield* fs.readFileString(path.join(dir, INDEX_FILE)),
        "- [Testing](feedback_testing.md) — no mocks\n"
      )
      // Removing the last entry leaves an empty index (an empty atomic write).
      assert.strictEqual(yield* index.remove(dir, "feedback_testing.md"), 1)
      assert.strictEqual(yield* fs.readFileString(path.join(dir, INDEX_FILE)), "")
      assert.deepStrictEqual(yield* leftovers(dir), [])
    }))

  it.effect("an index change clears what killed writers left: old temp files and lock staging dirs of dead pids", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const index = yield* MemoryIndex
      const dir = yield* tempDir
      const dead = deadPid()
      const old = new Date(Date.now() - 10 * 60_000)
      const abandoned = [`.MEMORY.md.${dead}.0123456789ab.tmp`, `.feedback_x.md.${dead}.0123456789ab.tmp`]
      const staging = `${INDEX_LOCK}.${dead}.0123456789ab.staging`
      const alive = `.MEMORY.md.${process.ppid}.0123456789ab.tmp`
      const young = `.user_y.md.${dead}.ba9876543210.tmp`
      for (const name of [...abandoned, alive, young]) yield* fs.writeFileString(path.join(dir, name), "partial")
      yield* fs.makeDirectory(path.join(dir, staging))
      yield* fs.writeFileString(path.join(dir, staging, `owner.${dead}.0123456789ab.json`), "{}")
      for (const name of [...abandoned, alive, staging]) yield* fs.utimes(path.join(dir, name), old, old)

      yield* index.upsert(dir, { title: "A", file: "a.md", hook: "" })
      assert.deepStrictEqual((yield* fs.readDirectory(dir)).sort(), [alive, young, INDEX_FILE].sort())
    }))

  it.effect("upsert and remove keep other people's lines, headings and prose byte for byte", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const index = yield* MemoryIndex
      const dir = yield* tempDir
      const original = "# Team index\r\n\r\nWritten by hand — keep  two  spaces.\n- [Theirs](reference_board.md)" +
        " — the board\n- [Mine](feedback_mine.md) — old\n\ttrailing tab line\t"
      yield* fs.writeFileString(path.join(dir, INDEX_FILE), original)
      yield* index.upsert(dir, { title: "Mine", file: "feedback_mine.md", hook: "new" })
      const afterUpsert = yield* fs.readFileString(path.join(dir, INDEX_FILE))
      assert.strictEqual(
        afterUpsert,
        original.replace("- [Mine](feedback_mine.md) — old", "- [Mine](feedback_mine.md) — new")
      )

      assert.strictEqual(yield* index.remove(dir, "feedback_mine.md"), 1)
      assert.strictEqual(
        yield* fs.readFileString(path.join(dir, INDEX_FILE)),
        original.replace("- [Mine](feedback_mine.md) — old\n", "")
      )
      assert.strictEqual(yield* index.remove(dir, "feedback_mine.md"), 0)
    }))

  it.effect("an upsert over the caps is refused and leaves MEMORY.md untouched", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const index = yield* MemoryIndex
      const dir = yield* tempDir
      const file = path.join(dir, INDEX_FILE)
      const full = lines(INDEX_MAX_LINES)
      yield* fs.writeFileString(file, full)
      const before = yield* fs.stat(file)

      const error = yield* Effect.flip(index.upsert(dir, { title: "One more", file: "user_more.md", hook: "x" }))
      assert.strictEqual(error._tag, "IndexOverCapError")
      if (error._tag === "IndexOverCapError") {
        assert.strictEqual(error.lines, 201)
        assert.strictEqual(error.maxLines, 200)
        assert.include(error.message, "nothing was written")
      }
      assert.strictEqual(yield* fs.readFileString(file), full)
      const after = yield* fs.stat(file)
      assert.deepStrictEqual([after.ino, after.mtime], [before.ino, before.mtime])

      // Replacing an existing line does not grow the file: still allowed at the cap.
      yield* index.upsert(dir, { title: "Memory 3", file: "feedback_m3.md", hook: "shorter" })
      assert.strictEqual(countLines(yield* fs.readFileString(file)), INDEX_MAX_LINES)

      // By bytes: a near-25,000-byte index refuses a line that would cross the cap.
      const dir2 = yield* tempDir
      const heavy = lineOfBytes(1000).repeat(24) + lineOfBytes(950, 1)
      yield* fs.writeFileString(path.join(dir2, INDEX_FILE), heavy)
      const bytesError = yield* Effect.flip(index.upsert(dir2, { title: "B", file: "b.md", hook: "y".repeat(60) }))
      assert.strictEqual(bytesError._tag, "IndexOverCapError")
      assert.strictEqual(yield* fs.readFileString(path.join(dir2, INDEX_FILE)), heavy)
      assert.deepStrictEqual(yield* leftovers(dir2), [])
    }))

  it.effect("remove on a directory that does not exist returns 0 and creates nothing", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const index = yield* MemoryIndex
      const dir = path.join(yield* tempDir, "absent")
      assert.strictEqual(yield* index.remove(dir, "a.md"), 0)
      assert.isFalse(yield* fs.exists(dir))
    }))

  it.effect("concurrent upserts from many fibers lose no line and leave no lock or temp file", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const index = yield* MemoryIndex
      const dir = yield* tempDir
      yield* Effect.forEach(
        Array.from({ length: 40 }, (_, i) => i),
        (i) => index.upsert(dir, { title: `M${i}`, file: `project_m${i}.md`, hook: `h${i}` }),
        { concurrency: "unbounded" }
      )
      const text = yield* fs.readFileString(path.join(dir, INDEX_FILE))
      for (let i = 0; i < 40; i++) {
        assert.strictEqual(text.split("\n").filter((l) => l === `- [M${i}](project_m${i}.md) — h${i}`).length, 1)
      }
      assert.strictEqual(countLines(text), 40)
      assert.deepStrictEqual(yield* leftovers(dir), [])
    }))
})

layer(
  Layer.provideMerge(layerWith({ lock: { timeout: "100 millis" } }), Layer.merge(NodeServices.layer, MemoryFs.layer)),
  live
)(
  "MemoryIndex with lock options",
  (it) => {
    it.effect("upsert fails with LockTimeoutError while another process holds the index lock", () =>
      Effect.gen(function*() {
        const path = yield* Path.Path
        const fs = yield* FileSystem.FileSystem
        const index = yield* MemoryIndex
        const dir = yield* tempDir
        const held = yield* acquireLock(path.join(dir, INDEX_LOCK))
        const error = yield* Effect.flip(index.upsert(dir, { title: "A", file: "a.md", hook: "" }))
        assert.strictEqual(error._tag, "LockTimeoutError")
        assert.isFalse(yield* fs.exists(path.join(dir, INDEX_FILE)))
        yield* releaseLock(held)
      }))
  }
)

layer(layerTest)("MemoryIndex.layerTest (in memory)", (it) => {
  it.effect("has the same caps and edits as the live index", () =>
    Effect.gen(function*() {
      const index = yield* MemoryIndex
      assert.isFalse((yield* index.load("/m")).exists)
      const created = yield* index.upsert("/m/", { title: "A", file: "feedback_a.md", hook: "one" })
      assert.deepStrictEqual(created, { created: true, fileCreated: true, changed: true })
      yield* index.upsert("/m", { title: "A", file: "feedback_a.md", hook: "two" })
      assert.strictEqual((yield* index.read("/m")).text, "- [A](feedback_a.md) — two\n")
      for (let i = 1; i < INDEX_MAX_LINES; i++) {
        yield* index.upsert("/m", { title: `M${i}`, file: `feedback_m${i}.md`, hook: "" })
      }
      const error = yield* Effect.flip(index.upsert("/m", { title: "Z", file: "z.md", hook: "" }))
      assert.strictEqual(error._tag, "IndexOverCapError")
      assert.strictEqual(countLines((yield* index.read("/m")).text), INDEX_MAX_LINES)
      assert.strictEqual(yield* index.remove("/m", "feedback_a.md"), 1)
      assert.strictEqual(yield* index.remove("/other", "feedback_a.md"), 0)
      assert.isFalse((yield* index.read("/other")).exists)
    }))
})
