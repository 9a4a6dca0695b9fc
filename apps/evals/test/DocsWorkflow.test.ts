/**
 * docs/evals.md, "Evaluating a prompt change", run as written on a scratch copy of the suite: the variant of
 * step 1 added to the suite file, `evals list` accepting it, the command of step 2 (with the scripted responder
 * standing in for the key: CI has none), the paired line of step 3 in its output, the file step 4 names, and the
 * committed-cassette replay CI then does. If the page changes, this test reads the new text.
 */
import { NodeServices } from "@effect/platform-node"
import { assert, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Path from "effect/Path"
import * as nodeFs from "node:fs"
import { fileURLToPath } from "node:url"
import * as YAML from "yaml"
import { runEvals } from "./fixtures.js"

const repoRoot = fileURLToPath(new URL("../../..", import.meta.url))
const DOC = "docs/evals.md"
const HEADING = "## Evaluating a prompt change"

/** The section's text, up to the next heading of the same or a higher level. */
const section = (): string => {
  const doc = nodeFs.readFileSync(`${repoRoot}/${DOC}`, "utf8")
  const start = doc.indexOf(HEADING)
  if (start < 0) throw new Error(`${DOC} has no "${HEADING}" section`)
  const rest = doc.slice(start + HEADING.length)
  const end = rest.search(/^#{1,2} /m)
  return end < 0 ? rest : rest.slice(0, end)
}

/** Fenced code blocks, in order, with the list item's indentation removed. */
const codeBlocks = (text: string): ReadonlyArray<{ readonly lang: string; readonly code: string }> =>
  [...text.matchAll(/^([ \t]*)```(\w*)\n([\s\S]*?)^[ \t]*```/gm)].map((m) => ({
    lang: m[2]!,
    code: m[3]!.split("\n").map((line) => line.startsWith(m[1]!) ? line.slice(m[1]!.length) : line).join("\n")
  }))

/** A shell line of `pnpm evals …` as arguments, with the key prefix (`ANTHROPIC_API_KEY=… `) taken off. */
const evalsArgs = (line: string): ReadonlyArray<string> => {
  const words = line.trim().split(/\s+/).filter((w) => !/^[A-Z_]+=/.test(w))
  assert.deepStrictEqual(words.slice(0, 2), ["pnpm", "evals"], line)
  return words.slice(2)
}

layer(NodeServices.layer)("docs: evaluating a prompt change", (it) => {
  it.effect("runs as written, end to end, on a scratch copy of the suite with no key", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const text = section()
      const blocks = codeBlocks(text)
      const yamlBlock = blocks.find((b) => b.lang === "yaml")
      const shBlock = blocks.find((b) => b.lang === "sh")
      assert.isDefined(yamlBlock, "step 1 has a yaml block")
      assert.isDefined(shBlock, "step 2 has a sh block")

      // The suite the page names, copied (its fixtures and cassette too) to a scratch evals directory.
      const suiteName = /`evals\/([\w.-]+)\/suite\.yaml`/.exec(text)?.[1]
      assert.isDefined(suiteName, "step 1 names the suite file")
      const scratch = yield* fs.makeTempDirectoryScoped()
      yield* fs.copy(path.join(repoRoot, "evals", suiteName!), path.join(scratch, suiteName!))
      const suiteFile = path.join(scratch, suiteName!, "suite.yaml")

      // Step 1: add the page's variants that the suite does not have yet.
      const snippet = YAML.parse(yamlBlock!.code) as { variants: ReadonlyArray<{ name: string }> }
      const suite = YAML.parseDocument(yield* fs.readFileString(suiteFile))
      const existing = (suite.toJS().variants as ReadonlyArray<{ name: string }>).map((v) => v.name)
      const added = snippet.variants.filter((v) => !existing.includes(v.name))
      assert.isAbove(added.length, 0, "step 1 adds a variant the suite does not have")
      for (const variant of added) suite.addIn(["variants"], suite.createNode(variant))
      yield* fs.writeFileString(suiteFile, suite.toString())
      const list = yield* runEvals(["list", "--dir", scratch])
      assert.strictEqual(list.code, 0, list.stdout + list.stderr)
      for (const variant of added) assert.include(list.stdout, variant.name)

      // Step 2: the command as written, answered by the scripted responder instead of a model.
      const command = shBlock!.code.split("\n").find((line) => line.includes("pnpm evals run"))!
      const run = yield* runEvals([...evalsArgs(command), "--scripted", "--dir", scratch])
      assert.strictEqual(run.code, 0, run.stdout + run.stderr)

      // Step 3: the paired line the page tells you to read is there, with the pairs it says.
      const paired = /`([\w.-]+) vs ([\w.-]+): (\d+)\s+pairs/.exec(text)
      assert.isNotNull(paired, "step 3 quotes a paired line")
      assert.include(run.stdout, `${paired![1]} vs ${paired![2]}: ${paired![3]} pairs`)
      const report = /report: +(\S+)/.exec(run.stdout)![1]!
      const html = yield* fs.readFileString(path.resolve(repoRoot, report))
      assert.include(html, `id="prompt--${added[0]!.name}"`)
      assert.include(html, "<b>Tool calls</b>")

      // Step 4: the file it names exists, and the recorded cassette replays with no key as CI does.
      const shipIn = /`(packages\/[^`]+\.ts)`/.exec(text.slice(text.indexOf("4. ")))
      assert.isNotNull(shipIn, "step 4 names the file of the built-in variants")
      assert.isTrue(nodeFs.existsSync(path.join(repoRoot, shipIn![1]!)), shipIn![1])
      const replay = yield* runEvals(["run", suiteName!, "--replay", "--dir", scratch])
      assert.strictEqual(replay.code, 0, replay.stdout + replay.stderr)
    }), 240_000)
})
