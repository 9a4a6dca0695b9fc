/**
 * No deprecated-model warning in the suite's output: every vitest project runs test/support/sdk-deprecation-guard.ts,
 * which fails a test during which `@anthropic-ai/sdk` warns that a request names a deprecated model. Shown here by
 * running vitest (a child process) on a fixture project wired like the repository's (vitest.projects.ts): of two
 * successful requests through memdir's `Model` and the real SDK to a local Messages API server, the one naming a
 * deprecated model fails, the one naming the default model passes.
 */
import { assert, describe, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { repoRoot } from "./support/cli.js"

interface AssertionResult {
  readonly title: string
  readonly status: string
  readonly failureMessages: ReadonlyArray<string>
}

/** Vitest on the fixture project, its JSON report read back. */
const runFixture = async (): Promise<ReadonlyArray<AssertionResult>> => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "memdir-deprecation-guard-"))
  try {
    const report = path.join(scratch, "report.json")
    const args = [
      path.join(repoRoot, "node_modules/vitest/vitest.mjs"),
      "run",
      "--config",
      path.join(repoRoot, "test/fixtures/deprecated-model/vitest.config.mjs"),
      "--reporter=json",
      `--outputFile=${report}`
    ]
    const output = await new Promise<string>((resolve) =>
      execFile(
        process.execPath,
        args,
        { cwd: repoRoot, encoding: "utf8" },
        (_error, stdout, stderr) => resolve(stdout + stderr)
      )
    )
    assert.isTrue(fs.existsSync(report), `vitest wrote no report:\n${output}`)
    const json = JSON.parse(fs.readFileSync(report, "utf8")) as {
      readonly testResults: ReadonlyArray<{ readonly assertionResults: ReadonlyArray<AssertionResult> }>
    }
    return json.testResults.flatMap((file) => file.assertionResults)
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true })
  }
}

describe("the SDK's deprecated-model warning", () => {
  it("fails the test during which it is printed, and only that one", async () => {
    const results = await runFixture()
    const byTitle = new Map(results.map((r) => [r.title, r]))
    assert.strictEqual(results.length, 2)
    const deprecated = byTitle.get("a request naming a deprecated model")
    assert.strictEqual(deprecated?.status, "failed")
    assert.match(deprecated!.failureMessages.join("\n"), /@anthropic-ai\/sdk warned of a deprecated model:/)
    assert.match(deprecated!.failureMessages.join("\n"), /The model '[^']+' is deprecated and will reach end-of-life/)
    assert.include(deprecated!.failureMessages.join("\n"), "packages/core/src/ModelCatalog.ts")
    assert.strictEqual(byTitle.get("a request naming the default model")?.status, "passed")
  })
})
