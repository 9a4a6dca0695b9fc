import { NodeServices } from "@effect/platform-node"
import { assert, describe, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Path from "effect/Path"
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { diagnose, DOCTOR_BACKUP_DIR, type DoctorFinding, fix } from "../src/Doctor.js"
import { INDEX_ENTRY_MAX_CHARS } from "../src/Memory.js"
import * as MemoryFs from "../src/MemoryFs.js"
import {
  countLines,
  INDEX_FILE,
  INDEX_MAX_BYTES,
  INDEX_MAX_LINES,
  layer as memoryIndexLayer
} from "../src/MemoryIndex.js"
import { layerNode as scannerLayer, Scanner } from "../src/Scanner.js"

const memory = (name: string, type: string, description: string) =>
  `---\nname: ${name}\ndescription: ${description}\ntype: ${type}\n---\n\nBody of ${name}.\n`

const longHook = "a hook that says far too much about the memory ".repeat(5).trim()

/** One memory dir with every finding a small project can have. */
const fixture: Record<string, string> = {
  [INDEX_FILE]: [
    "# Project memory",
    "",
    "- [Testing](feedback_testing.md) — real DB, no mocks",
    "- [Gone](feedback_gone.md) — this file was deleted",
    "- [Testing again](./feedback_testing.md) — a second line for one file",
    `- [Long](project_long.md) — ${longHook}`,
    "- [Dashboard](https://grafana.example.com/d/abc) — external links are not checked",
    "Some prose a person wrote.",
    ""
  ].join("\n"),
  "feedback_testing.md": memory("Testing", "feedback", "Integration tests must hit the real DB"),
  "project_long.md": memory("Long", "project", "A memory with a long index line"),
  "user_alex.md": memory("Alex", "user", "Alex is an SRE who prefers terse answers"),
  "feedback_testing_copy.md": memory("testing", "feedback", "A second memory with the same name"),
  "broken.md": "no frontmatter here\n",
  "logs/2026/03/2026-03-05.md": "- 10:00 a log line, never a memory\n"
}

const tempDir = Effect.flatMap(
  FileSystem.FileSystem,
  (fs) => Effect.flatMap(fs.makeTempDirectoryScoped({ prefix: "memdir-doctor-" }), (dir) => fs.realPath(dir))
)

const writeTree = (dir: string, files: Record<string, string>) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    for (const [name, content] of Object.entries(files)) {
      yield* fs.makeDirectory(path.dirname(path.join(dir, name)), { recursive: true })
      yield* fs.writeFileString(path.join(dir, name), content)
    }
  })

/** Every file except MEMORY.md and fix's own backups, with its content: fix must leave these alone. */
const memoryFiles = (dir: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const names = (yield* fs.readDirectory(dir, { recursive: true }))
      .filter((n) => n !== INDEX_FILE && n.split(path.sep)[0] !== DOCTOR_BACKUP_DIR)
      .sort()
    const files: Record<string, string> = {}
    for (const name of names) {
      if ((yield* fs.stat(path.join(dir, name))).type === "File") {
        files[name] = yield* fs.readFileString(path.join(dir, name))
      }
    }
    return files
  })

const codes = (findings: ReadonlyArray<DoctorFinding>) => findings.map((f) => `${f.code} ${f.path ?? ""}`).sort()

const live = Layer.mergeAll(memoryIndexLayer, scannerLayer, MemoryFs.layer).pipe(Layer.provideMerge(NodeServices.layer))

layer(live, { excludeTestServices: true })("Doctor", (it) => {
  it.effect("diagnose produces each finding from the fixture, with lines and fixability", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      yield* writeTree(dir, fixture)
      const { findings } = yield* diagnose(dir)
      assert.deepStrictEqual(codes(findings), [
        "dead-link feedback_gone.md",
        "duplicate-entry ./feedback_testing.md",
        "duplicate-name feedback_testing.md",
        "entry-too-long project_long.md",
        "invalid-frontmatter broken.md",
        "missing-from-index feedback_testing_copy.md",
        "missing-from-index user_alex.md"
      ])
      const byCode = (code: string) => findings.find((f) => f.code === code)!
      assert.deepStrictEqual([byCode("dead-link").line, byCode("dead-link").fixable], [4, true])
      assert.deepStrictEqual([byCode("duplicate-entry").line, byCode("duplicate-entry").fixable], [5, true])
      assert.include(byCode("duplicate-entry").message, "first at line 3")
      assert.deepStrictEqual([byCode("entry-too-long").line, byCode("entry-too-long").fixable], [6, true])
      assert.strictEqual(byCode("invalid-frontmatter").severity, "error")
      assert.isFalse(byCode("invalid-frontmatter").fixable)
      assert.include(byCode("duplicate-name").message, "feedback_testing.md, feedback_testing_copy.md")
      assert.isFalse(byCode("duplicate-name").fixable)
      for (const finding of findings) {
        assert.isAbove(finding.message.length, 0)
        assert.isAbove(finding.fix.length, 0)
      }
    }))

  it.effect("fix repairs what is safe, deletes and rewrites no memory, and is idempotent", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const dir = yield* tempDir
      yield* writeTree(dir, fixture)
      const before = yield* memoryFiles(dir)

      const first = yield* fix(dir)
      assert.deepStrictEqual(
        first.changes.map((c) => `${c.action} ${c.code} ${c.path}`),
        [
          "removed-line dead-link feedback_gone.md",
          "removed-line duplicate-entry ./feedback_testing.md",
          "shortened-line entry-too-long project_long.md",
          "added-line missing-from-index feedback_testing_copy.md",
          "added-line missing-from-index user_alex.md"
        ]
      )
      assert.deepStrictEqual(first.notAdded, [])
      assert.deepStrictEqual(codes(first.remaining), [
        "duplicate-name feedback_testing.md",
        "invalid-frontmatter broken.md"
      ])
      assert.deepStrictEqual(yield* memoryFiles(dir), before)

      const index = yield* fs.readFileString(path.join(dir, INDEX_FILE))
      const lines = index.split("\n")
      assert.strictEqual(lines[0], "# Project memory")
      assert.include(index, "- [Dashboard](https://grafana.example.com/d/abc) — external links are not checked\n")
      assert.include(index, "Some prose a person wrote.\n")
      assert.include(index, "- [Alex](user_alex.md) — Alex is an SRE who prefers terse answers\n")
      // The copy goes after the last feedback entry, where a reader looks for it.
      assert.strictEqual(lines[3], "- [testing](feedback_testing_copy.md) — A second memory with the same name")
      for (const line of lines) assert.isAtMost([...line].length, INDEX_ENTRY_MAX_CHARS)

      const second = yield* fix(dir)
      assert.deepStrictEqual(second.changes, [])
      assert.strictEqual(yield* fs.readFileString(path.join(dir, INDEX_FILE)), index)
    }))

  it.effect("index over the line cap: reported, and fix adds no line past 200 (it says what it could not add)", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const dir = yield* tempDir
      const prose = Array.from({ length: INDEX_MAX_LINES + 1 }, (_, i) => `note ${i}`).join("\n") + "\n"
      yield* writeTree(dir, { [INDEX_FILE]: prose, "user_alex.md": memory("Alex", "user", "SRE") })
      const { findings } = yield* diagnose(dir)
      const overLines = findings.find((f) => f.code === "index-over-lines")!
      assert.deepStrictEqual([overLines.severity, overLines.line, overLines.fixable], ["error", 201, false])
      assert.include(overLines.message, "201 lines (limit: 200)")

      const result = yield* fix(dir)
      assert.deepStrictEqual(result.changes, [])
      assert.deepStrictEqual(result.notAdded.map((n) => n.path), ["user_alex.md"])
      assert.strictEqual(yield* fs.readFileString(path.join(dir, INDEX_FILE)), prose)

      // At exactly 200 lines, nothing more fits either.
      const full = Array.from({ length: INDEX_MAX_LINES }, (_, i) => `note ${i}`).join("\n") + "\n"
      yield* fs.writeFileString(path.join(dir, INDEX_FILE), full)
      assert.isFalse((yield* diagnose(dir)).findings.some((f) => f.code === "index-over-lines"))
      const atCap = yield* fix(dir)
      assert.deepStrictEqual(atCap.notAdded.map((n) => n.path), ["user_alex.md"])
      assert.strictEqual(countLines(yield* fs.readFileString(path.join(dir, INDEX_FILE))), INDEX_MAX_LINES)
    }))

  it.effect("index over the byte cap: reported with the first unloaded line; shortening entries brings it back", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const dir = yield* tempDir
      const files: Record<string, string> = {}
      const lines: Array<string> = []
      for (let i = 0; i < 40; i++) {
        files[`project_p${i}.md`] = memory(`P${i}`, "project", `project ${i}`)
        lines.push(`- [P${i}](project_p${i}.md) — ${"detail that belongs in the file ".repeat(30)}`)
      }
      files[INDEX_FILE] = lines.join("\n") + "\n"
      yield* writeTree(dir, files)
      const { findings } = yield* diagnose(dir)
      const overBytes = findings.find((f) => f.code === "index-over-bytes")!
      assert.strictEqual(overBytes.severity, "error")
      assert.include(overBytes.message, "(limit: 25 KB) in 40 lines, 40 of them over ~150 characters")
      assert.strictEqual(overBytes.line, 26)
      assert.strictEqual(findings.filter((f) => f.code === "entry-too-long").length, 40)

      const result = yield* fix(dir)
      assert.strictEqual(result.changes.filter((c) => c.action === "shortened-line").length, 40)
      assert.deepStrictEqual(result.remaining, [])
      const index = yield* fs.readFileString(path.join(dir, INDEX_FILE))
      assert.isAtMost(new TextEncoder().encode(index).length, INDEX_MAX_BYTES)
    }))

  it.effect("an empty or absent memory dir is healthy and fix creates nothing", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const dir = path.join(yield* tempDir, "absent")
      assert.deepStrictEqual((yield* diagnose(dir)).findings, [])
      assert.deepStrictEqual(yield* fix(dir), { changes: [], notAdded: [], remaining: [] })
      assert.isFalse(yield* fs.exists(dir))
    }))
  it.effect("fix copies the MEMORY.md it rewrites to .doctor/<stamp>/ (0600) first, and says where", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const dir = yield* tempDir
      yield* writeTree(dir, fixture)
      const original = fixture[INDEX_FILE]!

      const first = yield* fix(dir)
      assert.match(first.backup ?? "", /^\.doctor\/\d{4}-\d\d-\d\dT\d\d-\d\d-\d\dZ(-\d+)?\/MEMORY\.md$/)
      const copy = path.join(dir, first.backup!)
      assert.strictEqual(yield* fs.readFileString(copy), original)
      assert.strictEqual(NodeFs.statSync(copy).mode & 0o777, 0o600)
      assert.strictEqual(NodeFs.statSync(path.dirname(copy)).mode & 0o777, 0o700)
      assert.notStrictEqual(yield* fs.readFileString(path.join(dir, INDEX_FILE)), original)
      // the backup is not a memory: nothing reports or indexes it
      assert.isFalse(first.remaining.some((f) => (f.path ?? "").startsWith(DOCTOR_BACKUP_DIR)))

      // nothing to repair: no rewrite, no new backup
      const idle = yield* fix(dir)
      assert.isUndefined(idle.backup)
      assert.strictEqual((yield* fs.readDirectory(path.join(dir, DOCTOR_BACKUP_DIR))).length, 1)

      // a second repair within the same second gets its own directory, holding the text it replaced
      const repaired = yield* fs.readFileString(path.join(dir, INDEX_FILE))
      yield* fs.writeFileString(path.join(dir, INDEX_FILE), `${repaired}- [Gone again](user_gone.md) — deleted\n`)
      const second = yield* fix(dir)
      assert.isDefined(second.backup)
      assert.notStrictEqual(second.backup, first.backup)
      assert.strictEqual(
        yield* fs.readFileString(path.join(dir, second.backup!)),
        `${repaired}- [Gone again](user_gone.md) — deleted\n`
      )
      assert.strictEqual(yield* fs.readFileString(path.join(dir, INDEX_FILE)), repaired)
    }))

  it.effect("a prose MEMORY.md with no memory files is explained: what memdir expects and the fix", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const dir = yield* tempDir
      // 162 lines of notes in the style of an old agent's memory: sections of bullet facts, no memory files
      const prose = NodeFs.readFileSync(
        NodePath.join(import.meta.dirname, "fixtures", "prose-index", INDEX_FILE),
        "utf8"
      )
      assert.isAbove(countLines(prose), 150)
      yield* writeTree(dir, { [INDEX_FILE]: prose })
      const { findings } = yield* diagnose(dir)
      assert.deepStrictEqual(codes(findings), [`prose-index ${INDEX_FILE}`])
      const finding = findings[0]!
      assert.strictEqual(finding.severity, "warning")
      assert.isFalse(finding.fixable)
      assert.include(
        finding.message,
        `${countLines(prose)} lines of notes without one index line, and no memory file`
      )
      assert.include(finding.message, "- [Title](file.md) — hook")
      assert.include(finding.message, "frontmatter (name, description, type)")
      assert.include(finding.fix, "memdir write")
      // fix neither rewrites the prose nor invents memories from it
      const result = yield* fix(dir)
      assert.deepStrictEqual(result.changes, [])
      assert.isUndefined(result.backup)
      assert.strictEqual(yield* fs.readFileString(path.join(dir, INDEX_FILE)), prose)

      // once one memory file exists and is indexed, the directory is in memdir's shape
      yield* writeTree(dir, {
        "project_bootstrap.md": memory("Bootstrap stages", "project", "Three stages; done at the fixed point"),
        [INDEX_FILE]: `${prose}- [Bootstrap stages](project_bootstrap.md) — three stages, fixed point\n`
      })
      assert.isFalse((yield* diagnose(dir)).findings.some((f) => f.code === "prose-index"))
    }))

  it.effect("an empty or heading-only MEMORY.md is not prose", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      yield* writeTree(dir, { [INDEX_FILE]: "# Memory index\n\n" })
      assert.deepStrictEqual((yield* diagnose(dir)).findings, [])
    }))

  it.effect("a file whose name prefix disagrees with its frontmatter type is reported with the rename", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      yield* writeTree(dir, {
        [INDEX_FILE]: "- [Deploys](feedback_deploys.md) — deploy on Fridays\n- [Mine](notes/user_me.md) — me\n" +
          "- [Free](free_form.md) — no prefix\n",
        "feedback_deploys.md": memory("Deploys", "project", "Deploys happen on Fridays"),
        "notes/user_me.md": memory("Mine", "user", "Right prefix, right type"),
        "free_form.md": memory("Free", "reference", "A name without a type prefix")
      })
      const { findings } = yield* diagnose(dir)
      assert.deepStrictEqual(codes(findings), ["type-prefix-mismatch feedback_deploys.md"])
      const finding = findings[0]!
      assert.strictEqual(finding.severity, "warning")
      assert.include(finding.message, "named as a feedback memory but its frontmatter says type: project")
      assert.include(finding.fix, "project_deploys.md")
      assert.include(finding.fix, "type: feedback")
    }))

  it.effect("index links out of the memory directory are reported as such, and fix keeps their lines", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const dir = yield* tempDir
      const memoryDir = path.join(dir, "memory")
      const elsewhere = path.join(dir, "elsewhere")
      yield* writeTree(elsewhere, { "notes.md": memory("Notes", "project", "outside") })
      const lines = [
        "- [Up](../elsewhere/notes.md) — a sibling directory",
        `- [Absolute](${path.join(elsewhere, "notes.md")}) — an absolute path`,
        "- [Home](~/notes.md) — the home directory",
        "- [Through a link](linked.md) — a symlink that leads out",
        "- [Gone](user_gone.md) — an ordinary dead link",
        "- [Here](user_here.md) — an ordinary memory",
        ""
      ]
      yield* writeTree(memoryDir, {
        [INDEX_FILE]: lines.join("\n"),
        "user_here.md": memory("Here", "user", "inside")
      })
      yield* fs.symlink(path.join(elsewhere, "notes.md"), path.join(memoryDir, "linked.md"))
      const { findings } = yield* diagnose(memoryDir)
      assert.deepStrictEqual(
        codes(findings),
        [
          `link-outside ${path.join(elsewhere, "notes.md")}`,
          "dead-link user_gone.md",
          "link-outside ../elsewhere/notes.md",
          "link-outside linked.md",
          "link-outside linked.md",
          "link-outside ~/notes.md"
        ].sort()
      )
      const up = findings.find((f) => f.path === "../elsewhere/notes.md")!
      assert.deepStrictEqual([up.severity, up.line, up.fixable], ["warning", 1, false])
      assert.include(up.message, "outside the memory directory")
      // the symlink itself: the scanner skipped it, and the fix says what to do with a link, not with frontmatter
      const link = findings.find((f) => f.path === "linked.md" && f.line === undefined)!
      assert.include(link.fix, "Replace the symlink by the file itself")
      assert.notInclude(up.message, "does not exist")

      const result = yield* fix(memoryDir)
      assert.deepStrictEqual(result.changes.map((c) => `${c.action} ${c.path}`), ["removed-line user_gone.md"])
      const after = yield* fs.readFileString(path.join(memoryDir, INDEX_FILE))
      assert.strictEqual(after, lines.filter((l) => !l.includes("user_gone.md")).join("\n"))
    }))

  it.effect("an index link to a link that leads nowhere is dead; a memory dir that is such a link has no fix", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const dir = yield* tempDir
      const memoryDir = path.join(dir, "memory")
      const lines = [
        "- [Dangling](user_dangling.md) — a symlink to a file that is gone",
        "- [Here](user_here.md) — an ordinary memory",
        ""
      ]
      yield* writeTree(memoryDir, {
        [INDEX_FILE]: lines.join("\n"),
        "user_here.md": memory("Here", "user", "inside")
      })
      yield* fs.symlink(path.join(dir, "gone.md"), path.join(memoryDir, "user_dangling.md"))
      const { findings } = yield* diagnose(memoryDir)
      assert.deepStrictEqual(
        findings.filter((f) => f.code === "dead-link").map((f) => [f.path, f.line]),
        [["user_dangling.md", 1]]
      )
      const result = yield* fix(memoryDir)
      assert.deepStrictEqual(result.changes.map((c) => `${c.action} ${c.path}`), ["removed-line user_dangling.md"])
      assert.strictEqual(yield* fs.readFileString(path.join(memoryDir, INDEX_FILE)), lines.slice(1).join("\n"))

      const nowhere = path.join(dir, "nowhere")
      yield* fs.symlink(path.join(dir, "no-such-directory"), nowhere)
      assert.deepStrictEqual(yield* fix(nowhere), { changes: [], notAdded: [], remaining: [] })
      assert.isFalse(NodeFs.existsSync(path.join(dir, "no-such-directory")))
    }))
})

/**
 * The live scanner, then `afterScan` on the first scan of `memoryDir`: what another process can do to the directory
 * between doctor's scan and its reads of the memories it found.
 */
const scannerThen = (memoryDir: string, afterScan: () => void) =>
  Layer.effect(
    Scanner,
    Effect.map(Scanner, (scanner) => {
      let pending = true
      return Scanner.of({
        ...scanner,
        scan: (dir, options) =>
          Effect.tap(scanner.scan(dir, options), () =>
            Effect.sync(() => {
              if (!pending || dir !== memoryDir) return
              pending = false
              afterScan()
            }))
      })
    })
  ).pipe(Layer.provide(scannerLayer))

const withScanner = (scanner: Layer.Layer<Scanner, never, Path.Path>) =>
  Effect.provide(Layer.mergeAll(memoryIndexLayer, scanner, MemoryFs.layer).pipe(Layer.provideMerge(NodeServices.layer)))

/** A memory whose body links `[[target]]`: doctor reports the link as dead only if it read the body. */
const linking = (name: string, target: string) =>
  `${memory(name, "project", `Links to ${target}`)}See [[${target}]], which no memory is.\n`

/** Names of the dead `[[links]]` doctor found: the bodies it read. */
const deadLinkTargets = (findings: ReadonlyArray<DoctorFinding>) =>
  findings.filter((f) => f.code === "dead-memory-link").map((f) => /\[\[([^\]]+)\]\]/.exec(f.message)![1]).sort()

/** A scratch memory directory, and beside it a memory-looking file that links `[[nowhere-outside]]`. */
const outsideAndIn = Effect.gen(function*() {
  const dir = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeFs.realpathSync("/tmp"), "memdir-doctor-")))
  yield* Effect.addFinalizer(() => Effect.sync(() => NodeFs.rmSync(dir, { recursive: true, force: true })))
  const memoryDir = NodePath.join(dir, "memory")
  const outside = NodePath.join(dir, "outside", "secret.md")
  NodeFs.mkdirSync(NodePath.dirname(outside), { recursive: true })
  NodeFs.writeFileSync(outside, linking("Secret", "nowhere-outside"))
  NodeFs.mkdirSync(NodePath.join(memoryDir, ".archive"), { recursive: true })
  NodeFs.writeFileSync(NodePath.join(memoryDir, INDEX_FILE), "")
  NodeFs.writeFileSync(NodePath.join(memoryDir, "project_kept.md"), linking("Kept", "nowhere-kept"))
  // a link inside the directory is followed, as the scan follows it
  NodeFs.writeFileSync(NodePath.join(memoryDir, ".archive", "alias.md"), linking("Alias", "nowhere-alias"))
  NodeFs.symlinkSync(NodePath.join(memoryDir, ".archive", "alias.md"), NodePath.join(memoryDir, "project_alias.md"))
  return { memoryDir, outside }
})

const mkfifo = (file: string) => execFileSync("mkfifo", [file])

describe("Doctor reads memories as memdir reads them", () => {
  it.effect("a memory that is a link out of the directory, or a FIFO, is neither read nor waited on", () =>
    Effect.gen(function*() {
      const { memoryDir, outside } = yield* outsideAndIn
      NodeFs.symlinkSync(outside, NodePath.join(memoryDir, "project_linked.md"))
      mkfifo(NodePath.join(memoryDir, "project_piped.md"))
      const { findings } = yield* diagnose(memoryDir)
      assert.deepStrictEqual(deadLinkTargets(findings), ["nowhere-alias", "nowhere-kept"])
    }).pipe(withScanner(scannerLayer)))

  it.effect("a memory swapped for a link out, or for a FIFO, between the scan and the read is left alone", () =>
    Effect.gen(function*() {
      const { memoryDir, outside } = yield* outsideAndIn
      const linked = NodePath.join(memoryDir, "project_linked.md")
      const piped = NodePath.join(memoryDir, "project_piped.md")
      NodeFs.writeFileSync(linked, linking("Linked", "nowhere-linked"))
      NodeFs.writeFileSync(piped, linking("Piped", "nowhere-piped"))
      const swap = () => {
        NodeFs.rmSync(linked)
        NodeFs.symlinkSync(outside, linked)
        NodeFs.rmSync(piped)
        mkfifo(piped)
      }
      const { findings } = yield* diagnose(memoryDir).pipe(withScanner(scannerThen(memoryDir, swap)))
      assert.isTrue(NodeFs.lstatSync(piped).isFIFO(), "the swap happened")
      assert.deepStrictEqual(deadLinkTargets(findings), ["nowhere-alias", "nowhere-kept"])
    }))
})
