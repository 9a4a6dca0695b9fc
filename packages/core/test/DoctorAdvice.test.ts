/**
 * Each doctor finding with its own right advice, located once (issue: a "keep each under ~150 chars" on an index of
 * short lines, a future `modified:` reported as invalid frontmatter with "mtime time", paths doubled as
 * "broken.md: broken.md:1:", a dead index line located as `gone.md:2`), and the summary a report starts with.
 */
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Path from "effect/Path"
import { diagnose, type DoctorFinding, fix, locationOf, summarize } from "../src/Doctor.js"
import { INDEX_ENTRY_MAX_CHARS } from "../src/Memory.js"
import * as MemoryFs from "../src/MemoryFs.js"
import { INDEX_FILE, INDEX_MAX_BYTES, INDEX_MAX_LINES, layer as memoryIndexLayer } from "../src/MemoryIndex.js"
import { layerNode as scannerLayer } from "../src/Scanner.js"

const DAY = 86_400_000

const memory = (name: string, description: string, extra = "") =>
  `---\nname: ${name}\ndescription: ${description}\ntype: project\n${extra}---\n\nBody of ${name}.\n`

const tempDir = Effect.flatMap(
  FileSystem.FileSystem,
  (fs) => Effect.flatMap(fs.makeTempDirectoryScoped({ prefix: "memdir-doctor-advice-" }), (dir) => fs.realPath(dir))
)

const writeTree = (dir: string, files: Record<string, string>) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    for (const [name, content] of Object.entries(files)) yield* fs.writeFileString(path.join(dir, name), content)
  })

const diagnosed = (files: Record<string, string>) =>
  Effect.gen(function*() {
    const dir = yield* tempDir
    yield* writeTree(dir, files)
    return (yield* diagnose(dir)).findings
  })

const only = (findings: ReadonlyArray<DoctorFinding>, code: string): DoctorFinding => {
  const found = findings.filter((f) => f.code === code)
  assert.strictEqual(found.length, 1, `${code}: ${JSON.stringify(findings)}`)
  return found[0]!
}

/** `count` memories and an index line for each, every line `width` characters. */
const indexOf = (count: number, width: number): Record<string, string> => {
  const files: Record<string, string> = {}
  const lines: Array<string> = []
  for (let i = 0; i < count; i++) {
    const file = `project_m${String(i).padStart(3, "0")}.md`
    files[file] = memory(`M${i}`, `memory ${i}`)
    const head = `- [M${i}](${file}) — `
    lines.push(head + "h".repeat(width - head.length))
  }
  files[INDEX_FILE] = lines.join("\n") + "\n"
  return files
}

const live = Layer.mergeAll(memoryIndexLayer, scannerLayer, MemoryFs.layer).pipe(Layer.provideMerge(NodeServices.layer))

layer(live, { excludeTestServices: true })("Doctor advice", (it) => {
  it.effect("an index over its bytes in short lines: fewer entries, not shorter ones", () =>
    Effect.gen(function*() {
      const width = 140
      assert.isBelow(width, INDEX_ENTRY_MAX_CHARS)
      const count = Math.ceil(INDEX_MAX_BYTES / width) + 5
      assert.isAtMost(count, 200, "under the line cap: only the bytes are over")
      const findings = yield* diagnosed(indexOf(count, width))
      const over = only(findings, "index-over-bytes")
      assert.include(over.message, `every one under ~${INDEX_ENTRY_MAX_CHARS} characters`)
      assert.include(over.fix, "Fewer entries: merge memories")
      assert.notInclude(over.fix, "Shorten")
      assert.notInclude(over.message, "too long")
      assert.isFalse(findings.some((f) => f.code === "entry-too-long"))
    }))

  it.effect("an index over its bytes in long lines: shorten them", () =>
    Effect.gen(function*() {
      const findings = yield* diagnosed(indexOf(120, 240))
      const over = only(findings, "index-over-bytes")
      assert.include(over.message, `120 of them over ~${INDEX_ENTRY_MAX_CHARS} characters`)
      assert.include(over.fix, "Shorten the lines over")
    }))

  it.effect("a future or unreadable `modified:`: its own finding and advice, apart from the header's warnings", () =>
    Effect.gen(function*() {
      const future = new Date(Date.now() + 400 * DAY).toISOString()
      const findings = yield* diagnosed({
        [INDEX_FILE]: "- [Future](project_future.md) — f\n- [Bad](project_bad.md) — b\n- [Both](project_both.md) — x\n",
        "project_future.md": memory("Future", "from the future", `modified: ${future}\n`),
        "project_bad.md": memory("Bad", "not a time", "modified: last tuesday\n"),
        "project_both.md": `---\nname: Both\ntype: project\nmodified: ${future}\n---\nNo description, a future stamp.\n`
      })
      const modified = findings.filter((f) => f.code === "modified-ignored").sort((a, b) => a.path! < b.path! ? -1 : 1)
      assert.deepStrictEqual(modified.map((f) => f.path), ["project_bad.md", "project_both.md", "project_future.md"])
      for (const f of modified) {
        assert.strictEqual(f.severity, "warning")
        assert.match(f.message, /^modified: /)
        assert.include(f.message, "the age counts from the file's mtime")
        assert.notInclude(f.message, "mtime time")
        assert.include(f.fix, "Set `modified:` to when the memory was written")
        assert.notInclude(f.fix, "one-line description")
      }
      assert.include(modified[2]!.message, "is in the future")
      assert.include(modified[0]!.message, "is not an ISO 8601 timestamp")
      // the header's own warning is its own finding, with its own advice, and no word of `modified:`
      const header = only(findings, "invalid-frontmatter")
      assert.strictEqual(header.path, "project_both.md")
      assert.notInclude(header.message, "modified")
      assert.include(header.fix, "one-line description")
    }))

  it.effect("each finding is located once: a line of the index as MEMORY.md:N, a file as path[:line]", () =>
    Effect.gen(function*() {
      const findings = yield* diagnosed({
        [INDEX_FILE]: "- [Here](project_here.md) — h\n- [Gone](gone.md) — deleted\n",
        "project_here.md": memory("Here", "a memory"),
        "project_unlisted.md": memory("Unlisted", "no index line"),
        "broken.md": "---\nname: [broken\ndescription: x\ntype: project\n---\nbody\n"
      })
      const dead = only(findings, "dead-link")
      assert.strictEqual(locationOf(dead), `${INDEX_FILE}:2`)
      assert.strictEqual(dead.message, "points at gone.md, which does not exist")
      const broken = only(findings, "invalid-frontmatter")
      assert.match(locationOf(broken)!, /^broken\.md:\d+$/)
      assert.strictEqual(locationOf(only(findings, "missing-from-index")), "project_unlisted.md")
      for (const f of findings) {
        assert.isFalse(f.message.startsWith(f.path ?? "\u0000"), `${f.code} repeats its path: ${f.message}`)
        assert.notInclude(f.message, `${INDEX_FILE}:`, `${f.code} repeats its location: ${f.message}`)
      }
      // the YAML error's own advice, once: in the fix, not also at the end of the message
      assert.notInclude(broken.message, "Fix the frontmatter")
      assert.include(broken.fix, "Fix the YAML between the two '---' lines")
    }))

  it.effect("a memory missing from a full index: no room, so merge first (not fixable); with room, add its line", () =>
    Effect.gen(function*() {
      const full = indexOf(200, 100)
      full["project_late.md"] = memory("Late", "one memory too many")
      const missing = only(yield* diagnosed(full), "missing-from-index")
      assert.isFalse(missing.fixable)
      assert.include(missing.fix, `${INDEX_FILE} has no room for its line`)
      const roomy = indexOf(3, 60)
      roomy["project_late.md"] = memory("Late", "one memory too many")
      const added = only(yield* diagnosed(roomy), "missing-from-index")
      assert.isTrue(added.fixable)
      assert.strictEqual(added.fix, "Add `- [Late](project_late.md) — one memory too many`")
    }))

  it.effect("room for some: the newest written are added first, and diagnose says so before fix does it", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      // 199 lines: room for one more; the older memory's file is the newer one on disk (its `modified:` counts)
      yield* writeTree(dir, {
        ...indexOf(INDEX_MAX_LINES - 1, 60),
        "project_new.md": memory("New", "written last week", "modified: 2026-11-20T10:00:00Z\n"),
        "project_old.md": memory("Old", "written last year", "modified: 2025-11-20T10:00:00Z\n")
      })
      const missing = (yield* diagnose(dir)).findings.filter((f) => f.code === "missing-from-index")
      assert.deepStrictEqual(missing.map((f) => [f.path, f.fixable]), [["project_new.md", true], [
        "project_old.md",
        false
      ]])
      const fixed = yield* fix(dir)
      assert.deepStrictEqual(fixed.changes.map((c) => `${c.action} ${c.path}`), ["added-line project_new.md"])
      assert.deepStrictEqual(fixed.notAdded, [{
        path: "project_old.md",
        reason: `${INDEX_FILE} would exceed its caps (${INDEX_MAX_LINES} lines / 25 KB)`
      }])
    }))

  it.effect("a team conflict copy is located once: its path, then whose version of which memory it is", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      yield* fs.makeDirectory(path.join(dir, "team"))
      yield* writeTree(dir, {
        "team/project_release.md": memory("Release", "ours"),
        "team/project_release.conflict-1a2b3c4d.md": memory("Release", "theirs")
      })
      const conflict = only((yield* diagnose(dir)).findings, "team-conflict")
      assert.strictEqual(locationOf(conflict), "team/project_release.conflict-1a2b3c4d.md")
      assert.strictEqual(
        conflict.message,
        "a teammate's version of team/project_release.md: both were edited at once and team sync kept both"
      )
    }))

  it.effect("a memory in a script the offline selector has no word lists for: a warning naming the script", () =>
    Effect.gen(function*() {
      const findings = yield* diagnosed({
        [INDEX_FILE]: "- [Arabic](project_ar.md) — a\n- [Greek](project_el.md) — g\n- [Mixed](project_mixed.md) — m\n" +
          "- [Polish](project_pl.md) — p\n",
        "project_ar.md": memory("قاعدة البيانات", "لا تستخدم ORM في هذه الخدمة لأن الاستعلامات بطيئة"),
        "project_el.md": memory("Βάση δεδομένων", "Μην χρησιμοποιείς ORM σε αυτή την υπηρεσία"),
        // mostly English with an Arabic word, and a language memdir reads: no finding
        "project_mixed.md": memory("Arabic UI strings", "The right-to-left labels, e.g. حفظ for save, live in ar.json"),
        "project_pl.md": memory("Baza danych", "Nie używaj ORM-a w tym serwisie")
      })
      const unread = findings.filter((f) => f.code === "unread-language").sort((a, b) => a.path! < b.path! ? -1 : 1)
      assert.deepStrictEqual(unread.map((f) => [f.path, f.severity]), [
        ["project_ar.md", "warning"],
        ["project_el.md", "warning"]
      ])
      assert.include(unread[0]!.message, "written in the Arabic script")
      assert.include(unread[1]!.message, "written in the Greek script")
      assert.include(unread[0]!.fix, "the model selector")
      assert.isFalse(unread[0]!.fixable)
    }))

  it.effect("a full index with a dead line: the missing memory takes its place, so it is fixable", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const files = indexOf(INDEX_MAX_LINES - 1, 60)
      files[INDEX_FILE] += "- [Gone](project_gone.md) — deleted by hand\n"
      yield* writeTree(dir, { ...files, "project_late.md": memory("Late", "one memory too many") })
      const missing = only((yield* diagnose(dir)).findings, "missing-from-index")
      assert.isTrue(missing.fixable, missing.fix)
      const fixed = yield* fix(dir)
      assert.deepStrictEqual(fixed.changes.map((c) => `${c.action} ${c.path}`), [
        "removed-line project_gone.md",
        "added-line project_late.md"
      ])
      assert.deepStrictEqual(fixed.notAdded, [])
    }))
})

describe("Doctor summary", () => {
  it("counts errors, warnings and each kind, errors' kinds first", () => {
    const finding = (code: DoctorFinding["code"], severity: DoctorFinding["severity"]): DoctorFinding => ({
      code,
      severity,
      message: "m",
      fix: "f",
      fixable: false
    })
    const summary = summarize([
      finding("missing-from-index", "warning"),
      finding("invalid-frontmatter", "warning"),
      finding("missing-from-index", "warning"),
      finding("invalid-frontmatter", "error")
    ])
    assert.deepStrictEqual(summary, {
      errors: 1,
      warnings: 3,
      byCode: [
        { code: "invalid-frontmatter", severity: "error", count: 1 },
        { code: "missing-from-index", severity: "warning", count: 2 },
        { code: "invalid-frontmatter", severity: "warning", count: 1 }
      ]
    })
  })
})
