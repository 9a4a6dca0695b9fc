/**
 * `memdir recall --explain` through the bundled CLI on a scratch memory directory: the kept memory with the terms it
 * matched and where (a German request's words through their translations), a cut one with its reason, and for an
 * off-topic request why nothing was kept (no shared word, too little evidence, or a request mostly about words no
 * memory contains).
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { buildCli, parseJson, runCli, scratchHomeEnv } from "./support/cli.js"

let scratch: string
let memoryDir: string

const memdir = (...args: Array<string>) =>
  runCli(["recall", "--memory-dir", memoryDir, ...args], { cwd: scratch, env: scratchHomeEnv(scratch) })

const write = (file: string, name: string, description: string, body: string) =>
  fs.writeFileSync(
    path.join(memoryDir, file),
    `---\nname: ${name}\ndescription: ${description}\ntype: reference\n---\n${body}\n`
  )

beforeAll(() => {
  buildCli()
  scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "memdir-explain-")))
  memoryDir = path.join(scratch, "memory")
  fs.mkdirSync(memoryDir)
  write(
    "feedback_db-tests.md",
    "Database tests use a real Postgres",
    "Integration tests must hit a real database, never mocks",
    "We got burned when mocked tests passed but the prod migration failed."
  )
  write("reference_msw.md", "Mocking HTTP", "Use msw to mock HTTP calls in unit tests", "Handlers in test/handlers.ts")
  write("project_release.md", "Release on Fridays", "Never ship releases on a Friday afternoon", "Freeze at noon.")
  for (const [i, v] of [45, 81].entries()) {
    write(
      `reference_mcpe-v${v}-protocol.md`,
      `MCPE protocol v${v}`,
      `Packet layout of MCPE protocol version ${v}, handshake and login`,
      "The handshake sends a login packet."
    )
    // equal scores keep the candidates' order, newest first: v45 is made the newer, whatever the clock did between
    // the two writes (written in one millisecond or not)
    const at = Date.now() / 1000 - 60 * (i + 1)
    fs.utimesSync(path.join(memoryDir, `reference_mcpe-v${v}-protocol.md`), at, at)
  }
})

afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }))

describe("memdir recall --explain", () => {
  it.effect("shows the kept memory with its matched terms and fields, and a cut one with its reason", () =>
    Effect.gen(function*() {
      const query = "should this test mock the database?"
      const run = yield* memdir("--explain", "--json", query)
      assert.strictEqual(run.status, 0, run.stderr)
      const out = parseJson(run)
      assert.deepStrictEqual(out.selected.map((m: { path: string }) => m.path), ["feedback_db-tests.md"])
      const kept = out.explain.find((c: { path: string }) => c.path === "feedback_db-tests.md")
      assert.strictEqual(kept.verdict, "kept")
      assert.deepInclude(kept.matched, { term: "databas", fields: ["name", "description", "path"] })
      assert.deepInclude(kept.matched, { term: "mock", fields: ["description", "body"] })
      // its body names tests and mocks in one sentence: that ranks it, not its evidence
      assert.deepStrictEqual(kept.together, ["test", "mock"])
      assert.isAbove(kept.proximity, 0)
      const cut = out.explain.find((c: { path: string }) => c.path === "reference_msw.md")
      assert.strictEqual(cut.verdict, "below-relative-cut")
      assert.match(cut.reason, /^cut: 0\.\d\d is below 0\.9 × the top score /)
      assert.strictEqual(out.explainSummary.unmatched, 3)
      assert.strictEqual(out.explainSummary.summary, "kept 1 of 5 candidates (2 matched a term of the request)")

      const text = yield* memdir("--explain", query)
      assert.strictEqual(text.status, 0, text.stderr)
      const lines = text.stdout.split("\n")
      assert.include(text.stdout, "## feedback_db-tests.md")
      assert.include(text.stdout, "explain (offline selector): request terms: test, mock, databas")
      const keptRow = lines.find((l) => l.startsWith("  1 "))!
      assert.match(
        keptRow,
        /^ {2}1 {2}\d\.\d\d\+\d\.\d\d {2}kept .*mock \(description, body\), databas \(name, description, path\); together in one passage: test, mock$/
      )
      const cutRow = lines.find((l) => l.includes(" reference_msw.md "))!
      assert.match(cutRow, /cut: below the relative cut \d\.\d\d/)
      assert.include(text.stdout, "3 candidates share no term with the request")
      // without the flag, no explanation
      const plain = yield* memdir(query)
      assert.notInclude(plain.stdout, "explain")
      assert.notProperty(parseJson(yield* memdir("--json", query)), "explain")
    }))

  it.effect("names the kept member of a near-duplicate family", () =>
    Effect.gen(function*() {
      const out = parseJson(yield* memdir("--explain", "--json", "how does the mcpe protocol handshake work"))
      assert.deepStrictEqual(out.selected.map((m: { path: string }) => m.path), ["reference_mcpe-v45-protocol.md"])
      const duplicate = out.explain.find((c: { path: string }) => c.path === "reference_mcpe-v81-protocol.md")
      assert.strictEqual(duplicate.verdict, "near-duplicate")
      assert.strictEqual(duplicate.duplicateOf, "reference_mcpe-v45-protocol.md")
    }))

  it.effect("finds an English memory for a German request through its translations, and says so", () =>
    Effect.gen(function*() {
      const query = "Darf der Integrationstest die Datenbank simulieren?"
      const run = yield* memdir("--explain", query)
      assert.strictEqual(run.status, 0, run.stderr)
      assert.include(run.stdout, "feedback_db-tests.md")
      assert.match(run.stdout, /kept +feedback_db-tests\.md +.*datenbank as databas \(name, description, path\)/)
      const out = parseJson(yield* memdir("--explain", "--json", query))
      assert.deepStrictEqual(out.selected.map((m: { path: string }) => m.path), ["feedback_db-tests.md"])
      assert.deepInclude(out.explain[0].matched, {
        term: "datenbank",
        fields: ["name", "description", "path"],
        translatedAs: ["databas"]
      })
    }))

  it.effect("says why nothing was kept for an off-topic request", () =>
    Effect.gen(function*() {
      const weak = yield* memdir("--explain", "the login form button color in the app")
      assert.strictEqual(weak.status, 0, weak.stderr)
      assert.include(weak.stdout, "no relevant memory (5 candidates, selector: offline)")
      assert.match(
        weak.stdout,
        /cut: below the floor 0\.40 +reference_mcpe-v45-protocol\.md +login \(description, body\)/
      )
      assert.match(
        weak.stdout,
        /nothing kept: the best score 0\.\d\d \(reference_mcpe-v45-protocol\.md\) is below the evidence floor 0\.40/
      )

      const none = parseJson(yield* memdir("--explain", "--json", "what is the weather in paris tomorrow"))
      assert.deepStrictEqual(none.selected, [])
      assert.deepStrictEqual(none.explain, [])
      assert.strictEqual(
        none.explainSummary.summary,
        "nothing kept: none of the 5 candidates shares a term with the request"
      )

      // a project word in another sense, among words no memory contains: cut by the unknown words' bar
      const trapQuery = "was Hamlet first staged at the Globe theatre on a Friday"
      const trap = yield* memdir("--explain", trapQuery)
      assert.strictEqual(trap.status, 0, trap.stderr)
      assert.include(trap.stdout, "no relevant memory (5 candidates, selector: offline)")
      assert.match(trap.stdout, /words no memory contains: .*hamlet.*globe.* \(every candidate needs 0\.\d\d\)/)
      assert.match(trap.stdout, /cut: below 0\.\d\d for unknown words +project_release\.md +fridai/)
      const trapJson = parseJson(yield* memdir("--explain", "--json", trapQuery))
      assert.includeMembers(trapJson.explainSummary.unknownWords, ["hamlet", "globe"])
      assert.strictEqual(
        trapJson.explainSummary.unknownWordsBar,
        Math.min(1, 0.2 * trapJson.explainSummary.unknownWeight)
      )
      assert.strictEqual(trapJson.explain[0].verdict, "unknown-words")

      const skipped = yield* memdir("--explain", "thanks!")
      assert.include(skipped.stdout, "explain: nothing to explain: the request was skipped (one-word-prompt)")
    }))
})
