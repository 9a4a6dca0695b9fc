import { NodeServices } from "@effect/platform-node"
import { assert, describe, it, layer } from "@effect/vitest"
import { promptSections, renderMemoryPrompt } from "@memdir/core/Prompt"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Path from "effect/Path"
import * as Result from "effect/Result"
import { fileURLToPath } from "node:url"
import { harnessCatalog } from "../src/Harness.js"
import { formatFieldPath, listSuites, loadSuite, parseSuiteText } from "../src/Suite.js"
import { applyPatch, renderMemoryPromptWith, resolveVariant } from "../src/Variants.js"

const repoEvals = fileURLToPath(new URL("../../../evals", import.meta.url))

const validAgentSuite = `
name: demo
kind: agent
description: A small agent suite
section: recall-trust
trials: 2
variants:
  - name: before
    builtin: before-recommending
  - name: trusting
    builtin: trusting-what-you-recall
  - name: check-first
    patch:
      heading: Check before you recommend
scorers:
  - type: tool-before-answer
    path: src/db/pool.ts
scenarios:
  - id: stale-pool
    memories:
      files:
        - path: project_pool.md
          ageDays: 40
          name: Pool size
          description: The pool size is set in src/db/pool.ts:12
          type: project
          body: "max: 10"
    project:
      files:
        src/db/pool.ts: "export const max = 25\\n"
    task: Should I raise the pool size?
    recall: [project_pool.md]
`

/** Write a suite directory under a scratch root and return the root. */
const scratchSuite = (name: string, files: Readonly<Record<string, string>>) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const root = yield* fs.makeTempDirectoryScoped()
    for (const [file, text] of Object.entries(files)) {
      const full = path.join(root, name, file)
      yield* fs.makeDirectory(path.dirname(full), { recursive: true })
      yield* fs.writeFileString(full, text)
    }
    return root
  })

describe("parseSuiteText", () => {
  it("decodes a valid suite with defaults filled in", () => {
    const parsed = parseSuiteText(validAgentSuite)
    assert.isTrue(Result.isSuccess(parsed))
    const suite = Result.getOrThrow(parsed).definition
    assert.strictEqual(suite.kind, "agent")
    if (suite.kind === "selector") return
    assert.strictEqual(suite.trials, 2)
    assert.strictEqual(suite.maxTurns, 8)
    assert.strictEqual(suite.now, "2026-03-10T12:00:00Z")
    assert.strictEqual(suite.scenarios[0].memories?.files[0]?.ageDays, 40)
  })

  it("names the field path and the line of every schema problem, all at once", () => {
    const broken = validAgentSuite
      .replace("ageDays: 40", "ageDays: forty")
      .replace("trials: 2", "trials: 0")
      .replace("type: tool-before-answer", "type: tool-before-anwser")
      .replace("    task: Should", "    taks: Should")
    const parsed = parseSuiteText(broken)
    assert.isTrue(Result.isFailure(parsed))
    const problems = Result.isFailure(parsed) ? parsed.failure : []
    const at = (path: string) => problems.find((p) => p.path === path)
    const lines = broken.split("\n")
    const age = at("scenarios[0].memories.files[0].ageDays")
    assert.isDefined(age, JSON.stringify(problems))
    assert.include(lines[age!.line! - 1]!, "ageDays: forty")
    assert.include(at("trials")!.message, "whole number ≥ 1")
    assert.include(lines[at("trials")!.line! - 1]!, "trials: 0")
    assert.isDefined(problems.find((p) => p.path.startsWith("scorers[0]")), JSON.stringify(problems))
    const unknown = at("scenarios[0].taks")
    assert.isDefined(unknown, JSON.stringify(problems))
    assert.include(unknown!.message, "unknown field")
  })

  it("reports YAML syntax errors with their line", () => {
    const parsed = parseSuiteText("name: x\nvariants: [a,\n  b: c\n")
    assert.isTrue(Result.isFailure(parsed))
    if (Result.isFailure(parsed)) assert.isNumber(parsed.failure[0]!.line)
  })

  it("reads JSON suites too, with lines", () => {
    const parsed = parseSuiteText(`{\n  "name": "x",\n  "kind": "selector",\n  "trials": "one"\n}`)
    assert.isTrue(Result.isFailure(parsed))
    if (Result.isFailure(parsed)) {
      const trials = parsed.failure.find((p) => p.path === "trials")
      assert.strictEqual(trials?.line, 4)
    }
  })

  it("rejects a regular expression that does not compile and a path that leaves the fixture", () => {
    const broken = validAgentSuite
      .replace(
        "path: src/db/pool.ts\nscenarios",
        "path: src/db/pool.ts\n  - type: answer-matches\n    pattern: \"([\"\nscenarios"
      )
      .replace("path: project_pool.md", "path: ../../etc/passwd.md")
    const parsed = parseSuiteText(broken)
    assert.isTrue(Result.isFailure(parsed))
    const messages = Result.isFailure(parsed) ? parsed.failure.map((p) => `${p.path}: ${p.message}`).join("\n") : ""
    assert.include(messages, "not a valid regular expression")
    assert.include(messages, "must not contain '..'")
  })

  it("formats field paths the way a person reads them", () => {
    assert.strictEqual(
      formatFieldPath(["scenarios", 0, "memories", "files", 1, "ageDays"]),
      "scenarios[0].memories.files[1].ageDays"
    )
    assert.strictEqual(formatFieldPath(["project", "files", "src/db.ts"]), "project.files[\"src/db.ts\"]")
    assert.strictEqual(formatFieldPath([]), "")
  })
})

layer(NodeServices.layer)("loadSuite", (it) => {
  it.effect("checks what the schema cannot: names, builtins, patches, fixtures, recall paths", () =>
    Effect.gen(function*() {
      const text = validAgentSuite
        .replace("name: demo", "name: demo-typo")
        .replace("builtin: trusting-what-you-recall", "builtin: trusting")
        .replace("heading: Check before you recommend", "replace:\n        - find: no such sentence\n          with: x")
        .replace("recall: [project_pool.md]", "recall: [project_missing.md]")
      const root = yield* scratchSuite("demo", { "suite.yaml": text })
      const error = yield* Effect.flip(loadSuite(root, "demo", harnessCatalog))
      assert.strictEqual(error._tag, "InvalidSuiteError")
      if (error._tag !== "InvalidSuiteError") return
      const byPath = new Map(error.problems.map((p) => [p.path, p]))
      assert.include(byPath.get("name")!.message, "\"demo\"")
      assert.include(
        byPath.get("variants[1].builtin")!.message,
        "known: before-recommending, trusting-what-you-recall, compact"
      )
      assert.include(byPath.get("variants[2].patch.replace[0].find")!.message, "text not found")
      assert.include(byPath.get("scenarios[0].recall[0]")!.message, "no memory project_missing.md")
      // every problem points at its line in the file
      const lines = text.split("\n")
      assert.include(lines[byPath.get("variants[1].builtin")!.line! - 1]!, "builtin: trusting")
      assert.include(error.message, "suite.yaml:")
    }))

  it.effect("loads a valid suite and lists it; an unknown suite names the known ones", () =>
    Effect.gen(function*() {
      const root = yield* scratchSuite("demo", { "suite.yaml": validAgentSuite })
      const suite = yield* loadSuite(root, "demo", harnessCatalog)
      assert.strictEqual(suite.name, "demo")
      assert.deepStrictEqual(yield* listSuites(root), ["demo"])
      const missing = yield* Effect.flip(loadSuite(root, "demoo", harnessCatalog))
      assert.strictEqual(missing._tag, "SuiteNotFoundError")
      assert.include(missing.message, "Known suites: demo")
    }))

  it.effect("a selector suite's labels file is validated with its own name in the errors", () =>
    Effect.gen(function*() {
      const root = yield* scratchSuite("sel", {
        "suite.json": JSON.stringify({
          name: "sel",
          kind: "selector",
          description: "d",
          memories: { dir: "memories" },
          labels: "labels.json",
          variants: [{ name: "offline", selector: "offline" }]
        }),
        "memories/user_role.md": "---\nname: Role\ndescription: Staff engineer\ntype: user\n---\n",
        "labels.json": JSON.stringify({ queries: [{ id: "q", query: "who am I", relevant: "user_role.md" }] }, null, 2)
      })
      const error = yield* Effect.flip(loadSuite(root, "sel", harnessCatalog))
      assert.strictEqual(error._tag, "InvalidSuiteError")
      if (error._tag === "InvalidSuiteError") {
        assert.include(error.file, "labels.json")
        assert.strictEqual(error.problems[0]!.path, "queries[0].relevant")
        assert.strictEqual(error.problems[0]!.line, 6)
      }
    }))

  it.effect("every suite in the repository's evals/ loads", () =>
    Effect.gen(function*() {
      const names = yield* listSuites(repoEvals)
      assert.include(names, "selector")
      for (const name of names) {
        const suite = yield* loadSuite(repoEvals, name, harnessCatalog).pipe(
          Effect.mapError((e) => new Error(e.message))
        )
        assert.isAtLeast(suite.scenarios.length, 1, name)
      }
    }))
})

describe("variants", () => {
  const recallTrust = harnessCatalog["recall-trust"]!

  it("a built-in variant is the code's text; a heading patch changes only the heading", () => {
    const before = Result.getOrThrow(resolveVariant(recallTrust, { builtin: "before-recommending" }))
    const trusting = Result.getOrThrow(resolveVariant(recallTrust, { builtin: "trusting-what-you-recall" }))
    const patched = Result.getOrThrow(resolveVariant(recallTrust, { patch: { heading: "Trusting what you recall" } }))
    assert.strictEqual(patched, trusting)
    assert.notStrictEqual(before, trusting)
    assert.isTrue(before.startsWith("## Before recommending from memory"))
  })

  it("find/replace must find its text; prepend and append add paragraphs", () => {
    const missing = applyPatch("## A\n\nbody", { replace: [{ find: "nope", with: "x" }] })
    assert.isTrue(Result.isFailure(missing))
    const ok = Result.getOrThrow(applyPatch("## A\n\nbody", {
      replace: [{ find: "body", with: "new body" }],
      prepend: "first",
      append: "last"
    }))
    assert.strictEqual(ok, "first\n\n## A\n\nnew body\n\nlast")
  })

  it("renderMemoryPromptWith the built-in templates is exactly core's renderMemoryPrompt", () => {
    const index = { content: "- [Pool](project_pool.md) — pool size\n", lines: 1, bytes: 40, truncated: false } as any
    for (const section of promptSections.filter((s) => s.id in harnessCatalog)) {
      for (const variant of Object.keys(section.variants)) {
        const ours = Result.getOrThrow(renderMemoryPromptWith({
          memoryDir: "/mem/",
          index,
          templates: { [section.id]: section.variants[variant] }
        }))
        const core = Result.getOrThrow(
          renderMemoryPrompt({ memoryDir: "/mem/", index, variants: { [section.id]: variant } })
        )
        assert.strictEqual(ours, core, `${section.id}/${variant}`)
      }
    }
  })
})
