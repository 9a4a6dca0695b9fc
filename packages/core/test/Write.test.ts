import { NodeFileSystem, NodePath, NodeServices } from "@effect/platform-node"
import { assert, describe, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Path from "effect/Path"
import * as PlatformError from "effect/PlatformError"
import * as Result from "effect/Result"
import * as FastCheck from "fast-check"
import { parseMemoryFile } from "../src/Frontmatter.js"
import { TEMP_FILE_PATTERN } from "../src/internal/fs/leftovers.js"
import { INDEX_ENTRY_MAX_CHARS } from "../src/Memory.js"
import * as MemoryFs from "../src/MemoryFs.js"
import { INDEX_FILE, INDEX_LOCK, INDEX_MAX_LINES, layer as memoryIndexLayer } from "../src/MemoryIndex.js"
import * as MemoryStore from "../src/MemoryStore.js"
import * as Operations from "../src/Operations.js"
import { layerNode as scannerLayer, type ScanResult } from "../src/Scanner.js"
import * as TeamGuard from "../src/TeamGuard.js"
import {
  chooseTarget,
  deleteMemory,
  memoryFileName,
  NAME_MAX_LENGTH,
  shortHash,
  SLUG_MAX_LENGTH,
  slugifyTopic,
  validateWriteInput,
  writeMemory
} from "../src/Write.js"

describe("slugifyTopic (pure)", () => {
  it("lowercases, joins [a-z0-9] runs with _, folds accents, trims", () => {
    assert.strictEqual(slugifyTopic("Testing Policy"), "testing_policy")
    assert.strictEqual(slugifyTopic("  --Don't mock the DB!!  "), "don_t_mock_the_db")
    assert.strictEqual(slugifyTopic("Café Déjà-vu 2026"), "cafe_deja_vu_2026")
    assert.strictEqual(slugifyTopic("ＡＢＣ"), "abc")
  })

  it("caps the length at a word boundary and never returns an empty slug", () => {
    const long = slugifyTopic("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron")
    assert.isAtMost(long.length, SLUG_MAX_LENGTH)
    assert.isFalse(long.endsWith("_"))
    assert.isTrue("alpha_beta_gamma_delta_epsilon_zeta_eta_theta_iota_kappa_lambda".startsWith(long))
    assert.strictEqual(slugifyTopic("测试策略"), `m${shortHash("测试策略")}`)
    assert.notStrictEqual(slugifyTopic("测试策略"), slugifyTopic("部署流程"))
    assert.strictEqual(slugifyTopic("!!!"), `m${shortHash("!!!")}`)
  })

  it("is always a non-empty [a-z0-9_] slug of at most 60 chars", () => {
    FastCheck.assert(FastCheck.property(FastCheck.string({ unit: "binary" }), (name) => {
      const slug = slugifyTopic(name)
      assert.match(slug, /^[a-z0-9]+(_[a-z0-9]+)*$/)
      assert.isAtMost(slug.length, SLUG_MAX_LENGTH)
    }))
  })

  it("file names carry the type once", () => {
    assert.strictEqual(memoryFileName("feedback", "Testing policy"), "feedback_testing_policy.md")
    assert.strictEqual(memoryFileName("feedback", "Feedback: testing"), "feedback_testing.md")
    assert.strictEqual(memoryFileName("user", "user"), "user.md")
  })

  it("validates input with the Frontmatter schema, naming the field", () => {
    const bad = (input: { type: string; name: string; description: string; body?: string }) =>
      Result.match(validateWriteInput({ body: "b", ...input }), {
        onFailure: (e) => [e.field, e.value],
        onSuccess: () => []
      })
    assert.deepStrictEqual(bad({ type: "bogus", name: "n", description: "d" }), ["type", "bogus"])
    assert.deepStrictEqual(bad({ type: "user", name: "   ", description: "d" }), ["name", "   "])
    assert.deepStrictEqual(bad({ type: "user", name: "n", description: "" }), ["description", ""])
    assert.deepStrictEqual(bad({ type: "user", name: "n", description: "two\nlines" }), ["description", "two\nlines"])
    assert.deepStrictEqual(bad({ type: "user", name: "a\nb", description: "d" }), ["name", "a\nb"])
    // at most NAME_MAX_LENGTH characters (code points, trimmed): the title of the memory's index line
    assert.deepStrictEqual(bad({ type: "user", name: "é".repeat(NAME_MAX_LENGTH), description: "d" }), [])
    assert.deepStrictEqual(bad({ type: "user", name: ` ${"x".repeat(NAME_MAX_LENGTH)} `, description: "d" }), [])
    assert.deepStrictEqual(bad({ type: "user", name: "x".repeat(NAME_MAX_LENGTH + 1), description: "d" }), [
      "name",
      `${"x".repeat(40)}…`
    ])
    // a memory is its body: none, or only white space, is refused (rule empty-body)
    assert.deepStrictEqual(bad({ type: "user", name: "n", description: "d", body: "" }), ["body", ""])
    assert.deepStrictEqual(bad({ type: "user", name: "n", description: "d", body: " \n\t\n" }), ["body", " \n\t\n"])
    assert.deepStrictEqual(
      validateWriteInput({ type: "user", name: " Alex ", description: " SRE ", body: "b" }),
      Result.succeed({ type: "user" as const, name: "Alex", description: "SRE" })
    )
  })
})

const tempDir = Effect.flatMap(
  FileSystem.FileSystem,
  (fs) => Effect.flatMap(fs.makeTempDirectoryScoped({ prefix: "memdir-write-" }), (dir) => fs.realPath(dir))
)

/** Every path under `dir` (recursive), relative. */
const tree = (dir: string) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) => Effect.map(fs.readDirectory(dir, { recursive: true }), (n) => n.sort()))

const modeOf = (file: string) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) => Effect.map(fs.stat(file), (info) => info.mode & 0o777))

const readMemory = (file: string) =>
  Effect.flatMap(
    FileSystem.FileSystem,
    (fs) => Effect.map(fs.readFileString(file), (text) => Result.getOrThrow(parseMemoryFile(text, file)))
  )

const readIndex = (dir: string) =>
  Effect.flatMap(
    Path.Path,
    (path) => Effect.flatMap(FileSystem.FileSystem, (fs) => fs.readFileString(path.join(dir, INDEX_FILE)))
  )

const testing = {
  type: "feedback",
  name: "Testing Policy",
  description: "Integration tests must hit real DB, not mocks",
  body: "Use the real database.\n\n**Why:** mocks hid a broken migration.\n\n**How to apply:** any test touching SQL."
}

const live = MemoryStore.layerNode.pipe(
  Layer.provideMerge(Layer.mergeAll(memoryIndexLayer, scannerLayer)),
  Layer.provideMerge(NodeServices.layer)
)

layer(live, { excludeTestServices: true })("writeMemory (real files)", (it) => {
  it.effect("writes the file with frontmatter (0600, dir 0700 created on demand) and one index line", () =>
    Effect.gen(function*() {
      const path = yield* Path.Path
      const dir = path.join(yield* tempDir, "projects", "-repo", "memory")
      const result = yield* writeMemory({ memoryDir: dir, ...testing })
      assert.deepStrictEqual(result, {
        path: path.join(dir, "feedback_testing_policy.md"),
        file: "feedback_testing_policy.md",
        created: true,
        indexCreated: true
      })
      const memory = yield* readMemory(result.path)
      assert.deepStrictEqual(
        [memory.frontmatter.name, memory.frontmatter.description, memory.frontmatter.type],
        [testing.name, testing.description, "feedback"]
      )
      assert.strictEqual(memory.body, testing.body + "\n")
      assert.strictEqual(
        yield* readIndex(dir),
        "- [Testing Policy](feedback_testing_policy.md) — Integration tests must hit real DB, not mocks\n"
      )
      assert.strictEqual(yield* modeOf(dir), 0o700)
      assert.strictEqual(yield* modeOf(path.dirname(dir)), 0o700)
      assert.strictEqual(yield* modeOf(result.path), 0o600)
      assert.strictEqual(yield* modeOf(path.join(dir, INDEX_FILE)), 0o600)
      assert.deepStrictEqual(yield* tree(dir), ["MEMORY.md", "feedback_testing_policy.md"])
    }))

  it.effect("a second write of the same memory updates it (name case-insensitive), never duplicates", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const first = yield* writeMemory({ memoryDir: dir, ...testing })
      const second = yield* writeMemory({
        memoryDir: dir,
        ...testing,
        name: "testing policy",
        description: "Integration tests hit the real DB",
        body: "Updated."
      })
      assert.strictEqual(second.path, first.path)
      assert.isFalse(second.created)
      assert.isFalse(second.indexCreated)
      assert.strictEqual((yield* readMemory(second.path)).body, "Updated.\n")
      assert.strictEqual((yield* readMemory(second.path)).frontmatter.name, "testing policy")
      assert.strictEqual(
        yield* readIndex(dir),
        "- [testing policy](feedback_testing_policy.md) — Integration tests hit the real DB\n"
      )
      // Same name, other type: another memory.
      const other = yield* writeMemory({ memoryDir: dir, ...testing, type: "project" })
      assert.strictEqual(other.file, "project_testing_policy.md")
      assert.deepStrictEqual(yield* tree(dir), ["MEMORY.md", "feedback_testing_policy.md", "project_testing_policy.md"])
    }))

  it.effect("updates a hand-written memory found by name, keeping its unknown frontmatter keys", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const dir = yield* tempDir
      const handWritten = [
        "---",
        "name: Testing Policy",
        "description: old",
        "metadata:",
        "  node_type: memory",
        "  type: feedback",
        "tags: [db, tests]",
        "---",
        "",
        "Old body.",
        ""
      ].join("\n")
      yield* fs.writeFileString(path.join(dir, "testing.md"), handWritten)
      yield* fs.writeFileString(path.join(dir, INDEX_FILE), "# Index\n- [Testing](testing.md) — old\n")
      const result = yield* writeMemory({ memoryDir: dir, ...testing })
      assert.strictEqual(result.file, "testing.md")
      assert.isFalse(result.created)
      assert.isFalse(result.indexCreated)
      const memory = yield* readMemory(result.path)
      assert.strictEqual(memory.frontmatter.type, "feedback")
      assert.strictEqual(memory.frontmatter.description, testing.description)
      // The file's own (nested) layout is kept, `modified:` stamped beside its `type`.
      const { modified, ...metadata } = memory.frontmatter.extra.metadata as Record<string, unknown>
      assert.deepStrictEqual({ ...memory.frontmatter.extra, metadata }, {
        metadata: { node_type: "memory", type: "feedback" },
        tags: ["db", "tests"]
      })
      assert.isFalse(Number.isNaN(new Date(modified as string).getTime()))
      assert.deepStrictEqual(yield* tree(dir), ["MEMORY.md", "testing.md"])
      assert.strictEqual(
        yield* readIndex(dir),
        "# Index\n- [Testing Policy](testing.md) — Integration tests must hit real DB, not mocks\n"
      )
    }))

  it.effect("a different memory whose name slugs the same gets its own file", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const c = yield* writeMemory({ memoryDir: dir, type: "reference", name: "C tips", description: "c", body: "b" })
      const cpp = yield* writeMemory({
        memoryDir: dir,
        type: "reference",
        name: "C++ tips",
        description: "c++",
        body: "b"
      })
      assert.strictEqual(c.file, "reference_c_tips.md")
      assert.strictEqual(cpp.file, `reference_c_tips_${shortHash("C++ tips")}.md`)
      assert.isTrue(cpp.created)
      assert.strictEqual((yield* readMemory(c.path)).frontmatter.name, "C tips")
      const again = yield* writeMemory({
        memoryDir: dir,
        type: "reference",
        name: "c++ TIPS",
        description: "x",
        body: "b"
      })
      assert.strictEqual(again.file, cpp.file)
    }))

  it.effect("a memory another writer created since the scan is updated, never given a second file", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      // the scan this writer took before the other writer's file landed saw nothing
      const stale = { memories: [], problems: [], total: 0 } as unknown as ScanResult
      const c = { name: "C tips", description: "c", type: "reference" as const }
      const first = yield* writeMemory({ memoryDir: dir, ...c, body: "by the other writer\n" })
      assert.strictEqual(first.file, "reference_c_tips.md")
      assert.strictEqual(yield* chooseTarget(dir, c, stale), first.file)
      // a different memory whose name slugs the same still gets its own file
      assert.strictEqual(
        yield* chooseTarget(dir, { ...c, name: "C++ tips" }, stale),
        `reference_c_tips_${shortHash("C++ tips")}.md`
      )
    }))

  it.effect("an explicit file is written where asked, nested dirs created 0700, index line ≤ 150 chars", () =>
    Effect.gen(function*() {
      const path = yield* Path.Path
      const dir = yield* tempDir
      const result = yield* writeMemory({
        memoryDir: dir,
        ...testing,
        description: "a very long description ".repeat(20).trim(),
        file: "./topics/db/feedback_db.md"
      })
      assert.strictEqual(result.file, "topics/db/feedback_db.md")
      assert.strictEqual(yield* modeOf(path.join(dir, "topics")), 0o700)
      assert.strictEqual(yield* modeOf(path.join(dir, "topics", "db")), 0o700)
      const line = (yield* readIndex(dir)).trimEnd()
      assert.isTrue(line.startsWith("- [Testing Policy](topics/db/feedback_db.md) — a very long"))
      assert.isAtMost(line.length, 150)
      // The description in the file stays whole: only the index line is shortened.
      assert.strictEqual((yield* readMemory(result.path)).frontmatter.description.length, 479)
    }))

  it.effect("refuses paths that leave the memory dir, with the right reason, writing nothing", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const base = yield* tempDir
      const dir = path.join(base, "memory")
      yield* fs.makeDirectory(dir)
      const cases: Array<[string, string]> = [
        ["../evil.md", "escapes-root"],
        ["sub/../../evil.md", "escapes-root"],
        ["../memory-evil/x.md", "escapes-root"],
        [path.join(base, "evil.md"), "absolute"],
        ["evil\0.md", "null-byte"],
        ["..\\evil.md", "backslash"]
      ]
      for (const [file, reason] of cases) {
        const error = yield* Effect.flip(writeMemory({ memoryDir: dir, ...testing, file }))
        assert.strictEqual(error._tag, "PathTraversalError", file)
        if (error._tag === "PathTraversalError") assert.strictEqual(error.reason, reason, file)
      }
      // Through a symlink inside the memory dir.
      const outside = path.join(base, "outside")
      yield* fs.makeDirectory(outside)
      yield* fs.symlink(outside, path.join(dir, "link"))
      const viaLink = yield* Effect.flip(writeMemory({ memoryDir: dir, ...testing, file: "link/deeper/x.md" }))
      assert.strictEqual(viaLink._tag, "PathTraversalError")
      if (viaLink._tag === "PathTraversalError") assert.strictEqual(viaLink.reason, "symlink-escape")
      assert.deepStrictEqual(yield* tree(outside), [])
      assert.deepStrictEqual((yield* tree(base)).sort(), ["memory", "memory/link", "outside"])

      const notMarkdown = yield* Effect.flip(writeMemory({ memoryDir: dir, ...testing, file: "notes.txt" }))
      assert.strictEqual(notMarkdown._tag, "InvalidMemoryInputError")
      const theIndex = yield* Effect.flip(writeMemory({ memoryDir: dir, ...testing, file: "MEMORY.md" }))
      assert.strictEqual(theIndex._tag, "InvalidMemoryInputError")
    }))

  it.effect("invalid input fails with InvalidMemoryInputError and creates nothing", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const dir = path.join(yield* tempDir, "memory")
      const error = yield* Effect.flip(writeMemory({ memoryDir: dir, ...testing, type: "opinion" }))
      assert.strictEqual(error._tag, "InvalidMemoryInputError")
      if (error._tag === "InvalidMemoryInputError") {
        assert.strictEqual(error.field, "type")
        assert.include(error.message, "user, feedback, project, reference")
      }
      assert.isFalse(yield* fs.exists(dir))
    }))

  it.effect("an over-cap write changes nothing, not even the memory file; updating an indexed memory still works", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const dir = yield* tempDir
      const existing = yield* writeMemory({ memoryDir: dir, ...testing })
      const fill = Array.from({ length: INDEX_MAX_LINES - 1 }, (_, i) => `- [N${i}](n${i}.md)\n`).join("")
      yield* fs.writeFileString(path.join(dir, INDEX_FILE), (yield* readIndex(dir)) + fill)
      const indexBefore = yield* readIndex(dir)

      const error = yield* Effect.flip(writeMemory({ memoryDir: dir, ...testing, name: "Another", type: "user" }))
      assert.strictEqual(error._tag, "IndexOverCapError")
      assert.isFalse(yield* fs.exists(path.join(dir, "user_another.md")))
      assert.strictEqual(yield* readIndex(dir), indexBefore)

      const update = yield* writeMemory({ memoryDir: dir, ...testing, body: "still fits" })
      assert.strictEqual(update.path, existing.path)
      assert.strictEqual((yield* readMemory(existing.path)).body, "still fits\n")
    }))

  it.effect("a failure mid-way (target is a directory) leaves no temp file, no lock and no index line", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const dir = yield* tempDir
      yield* fs.makeDirectory(path.join(dir, "feedback_dir.md"))
      const error = yield* Effect.flip(writeMemory({ memoryDir: dir, ...testing, file: "feedback_dir.md" }))
      assert.strictEqual(error._tag, "MemoryIoError")
      const names = yield* tree(dir)
      assert.deepStrictEqual(names.filter((n) => TEMP_FILE_PATTERN.test(path.basename(n))), [])
      assert.deepStrictEqual(names, ["feedback_dir.md"])
      assert.isFalse(names.some((n) => n.startsWith(INDEX_LOCK)))
    }))

  it.effect("deleteMemory removes the file and its line; a second delete is MemoryNotFoundError", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const dir = yield* tempDir
      const kept = yield* writeMemory({ memoryDir: dir, ...testing, type: "user", name: "Alex" })
      const gone = yield* writeMemory({ memoryDir: dir, ...testing })
      const result = yield* deleteMemory({ memoryDir: dir, file: gone.file })
      assert.deepStrictEqual(result, { path: gone.path, file: gone.file, fileRemoved: true, indexLinesRemoved: 1 })
      assert.isFalse(yield* fs.exists(gone.path))
      assert.strictEqual(yield* readIndex(dir), `- [Alex](${kept.file}) — ${testing.description}\n`)
      const again = yield* Effect.flip(deleteMemory({ memoryDir: dir, file: gone.file }))
      assert.strictEqual(again._tag, "MemoryNotFoundError")
      const escape = yield* Effect.flip(deleteMemory({ memoryDir: dir, file: "../x.md" }))
      assert.strictEqual(escape._tag, "PathTraversalError")
      // A dangling index line alone is still forgotten.
      yield* fs.writeFileString(path.join(dir, INDEX_FILE), "- [Ghost](ghost.md) — gone\n")
      const ghost = yield* deleteMemory({ memoryDir: dir, file: "ghost.md" })
      assert.deepStrictEqual([ghost.fileRemoved, ghost.indexLinesRemoved], [false, 1])
    }))
})

/** The real file system, except that renaming onto a memory file fails (as a full disk or a crash would). */
const failingRename = Layer.effect(
  FileSystem.FileSystem,
  Effect.map(FileSystem.FileSystem, (fs) =>
    FileSystem.FileSystem.of({
      ...fs,
      rename: (from, to) =>
        to.endsWith(".md") && !to.endsWith(INDEX_FILE)
          ? Effect.fail(
            PlatformError.systemError({
              _tag: "Unknown",
              module: "FileSystem",
              method: "rename",
              pathOrDescriptor: to,
              description: "injected failure"
            })
          )
          : fs.rename(from, to)
    }))
).pipe(Layer.provide(NodeFileSystem.layer))

/** The memory store's file system, failing the same way when a memory file (not the index) is replaced. */
const failingMemoryFs = Layer.effect(
  MemoryFs.MemoryFs,
  Effect.map(MemoryFs.MemoryFs, (fs) =>
    MemoryFs.MemoryFs.of({
      ...fs,
      writeFileAtomic: (target, data, options) =>
        target.endsWith(".md") && !target.endsWith(INDEX_FILE)
          ? Effect.fail(
            new MemoryFs.MemoryFsError({ op: "rename", path: target, reason: "Unknown", detail: "injected failure" })
          )
          : fs.writeFileAtomic(target, data, options)
    }))
).pipe(Layer.provide(MemoryFs.layer))

const withFailingRename = MemoryStore.layerWithContainment.pipe(
  Layer.provideMerge(Layer.mergeAll(memoryIndexLayer, scannerLayer, failingMemoryFs, TeamGuard.layer)),
  Layer.provideMerge(Layer.mergeAll(failingRename, NodePath.layer))
)

layer(withFailingRename, { excludeTestServices: true })("writeMemory when the file system fails", (it) => {
  it.effect("the old memory stays whole, the temp file is removed, the index is not touched", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const dir = yield* tempDir
      const original = "---\nname: Testing Policy\ndescription: old\ntype: feedback\n---\n\nOld body.\n"
      yield* fs.writeFileString(path.join(dir, "feedback_testing_policy.md"), original)
      yield* fs.writeFileString(path.join(dir, INDEX_FILE), "- [Testing Policy](feedback_testing_policy.md) — old\n")
      const error = yield* Effect.flip(writeMemory({ memoryDir: dir, ...testing }))
      assert.strictEqual(error._tag, "MemoryIoError")
      if (error._tag === "MemoryIoError") assert.include(error.detail, "injected failure")
      assert.strictEqual(yield* fs.readFileString(path.join(dir, "feedback_testing_policy.md")), original)
      assert.strictEqual(yield* readIndex(dir), "- [Testing Policy](feedback_testing_policy.md) — old\n")
      assert.deepStrictEqual(yield* tree(dir), ["MEMORY.md", "feedback_testing_policy.md"])
    }))
})

/** A memory as text, as the agents' `memory_write` and `team write` give it. */
const memoryFile = (name: string, body: string) =>
  `---\nname: ${name}\ndescription: What it is about\ntype: project\n---\n\n${body}`

layer(live, { excludeTestServices: true })("the write limits hold in every door", (it) => {
  const tooLong = "N".repeat(NAME_MAX_LENGTH + 1)

  it.effect("writeMemory and Operations.write (MCP's and the agents' memory_write): no blank body, nothing written", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      for (const body of ["", " \n\t\n"]) {
        const direct = yield* Effect.flip(writeMemory({ memoryDir: dir, ...testing, body }))
        assert.strictEqual(direct._tag, "InvalidMemoryInputError")
        if (direct._tag === "InvalidMemoryInputError") {
          assert.strictEqual(direct.field, "body")
          assert.strictEqual(direct.rule, "empty-body")
          assert.include(direct.message, "the body is empty: a memory is its body")
        }
        const operation = yield* Effect.flip(Operations.write({ memoryDir: dir }, { ...testing, body } as any))
        assert.strictEqual(operation._tag, "InvalidMemoryInputError")
        if (operation._tag === "InvalidMemoryInputError") assert.strictEqual(operation.rule, "empty-body")
      }
      const named = yield* Effect.flip(Operations.write({ memoryDir: dir }, { ...testing, name: tooLong } as any))
      assert.strictEqual(named._tag, "InvalidMemoryInputError")
      if (named._tag === "InvalidMemoryInputError") {
        assert.strictEqual(named.rule, "name-too-long")
        assert.include(named.message, `name is ${NAME_MAX_LENGTH + 1} characters, at most ${NAME_MAX_LENGTH}`)
      }
      assert.deepStrictEqual(yield* tree(dir), [])
    }))

  it.effect("a memory written as text (agents' memory_write, team write) keeps them too; nothing written", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const store = yield* MemoryStore.MemoryStore
      const root = { memoryDir: dir }
      const named = yield* Effect.flip(store.write(root, "project_long.md", memoryFile(tooLong, "Body.\n")))
      assert.strictEqual(named._tag, "InvalidMemoryInputError")
      if (named._tag === "InvalidMemoryInputError") assert.strictEqual(named.rule, "name-too-long")
      const empty = yield* Effect.flip(store.write(root, "project_empty.md", memoryFile("Empty", "\n\n")))
      assert.strictEqual(empty._tag, "InvalidMemoryInputError")
      if (empty._tag === "InvalidMemoryInputError") assert.strictEqual(empty.rule, "empty-body")
      assert.deepStrictEqual(yield* tree(dir), [])
      // the memory tool stores the model's file as given (docs/memory-tool.md); its index line stays short
      const plain = yield* store.write(root, "project_long.md", memoryFile("N".repeat(5000), "Body.\n"), {
        plain: true,
        verbatim: true
      })
      assert.isTrue(plain.created)
      assert.deepStrictEqual(
        (yield* readIndex(dir)).trimEnd().split("\n").map((line) => [...line].length <= INDEX_ENTRY_MAX_CHARS),
        [true]
      )
    }))

  it.effect("an edit (MCP's and the agents' memory_edit) may not break them, and may fix what was written by hand", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const dir = yield* tempDir
      const root = { memoryDir: dir }
      const written = yield* writeMemory({ memoryDir: dir, ...testing })
      const before = yield* fs.readFileString(written.path)
      const longer = yield* Effect.flip(
        Operations.edit(root, { path: written.file, old: "name: Testing Policy", new: `name: ${tooLong}` })
      )
      assert.strictEqual(longer._tag, "InvalidMemoryInputError")
      if (longer._tag === "InvalidMemoryInputError") assert.strictEqual(longer.rule, "name-too-long")
      const emptied = yield* Effect.flip(Operations.edit(root, { path: written.file, old: testing.body, new: "" }))
      assert.strictEqual(emptied._tag, "InvalidMemoryInputError")
      if (emptied._tag === "InvalidMemoryInputError") assert.strictEqual(emptied.rule, "empty-body")
      assert.strictEqual(yield* fs.readFileString(written.path), before)

      // written by hand over the limit: an edit of its body goes through, a move too, and so does the fix
      const handName = "H".repeat(NAME_MAX_LENGTH + 80)
      yield* fs.writeFileString(path.join(dir, "project_hand.md"), memoryFile(handName, "Old body.\n"))
      const body = yield* Operations.edit(root, { path: "project_hand.md", old: "Old body.", new: "New body." })
      assert.include(body.after, "New body.")
      const moved = yield* (yield* MemoryStore.MemoryStore).rename(root, "project_hand.md", "project_moved.md")
      assert.strictEqual(moved.key, "project_moved.md")
      // the index line of a memory over the limit is never longer for it: its title is cut
      const lines = (yield* readIndex(dir)).trimEnd().split("\n")
      assert.include(lines[1], `- [${"H".repeat(NAME_MAX_LENGTH - 1)}…](project_moved.md)`)
      for (const line of lines) assert.isAtMost([...line].length, INDEX_ENTRY_MAX_CHARS, line)
      const fixed = yield* Operations.edit(root, { path: "project_moved.md", old: handName, new: "Hand-written" })
      assert.include(fixed.after, "name: Hand-written")
    }))
})
