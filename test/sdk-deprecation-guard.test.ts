/**
 * No deprecated-model warning in the suite's output: every vitest project runs test/support/sdk-deprecation-guard.ts,
 * which fails a test during which `@anthropic-ai/sdk` warns that a request names a deprecated model. Shown here by
 * running vitest (a child process) on a fixture project wired like the repository's (vitest.projects.ts): of two
 * successful requests through memdir's `Model` and the real SDK to a local Messages API server, the one naming a
 * deprecated model fails, the one naming the default model passes. The bundled CLI's warning, on a child's stderr,
 * fails a test through `runCli` (test/support/cli.ts).
 */
import { assert, describe, it } from "@effect/vitest"
import * as ModelCatalog from "@memdir/core/ModelCatalog"
import * as MessagesApiServer from "@memdir/testing/MessagesApiServer"
import * as SdkModels from "@memdir/testing/SdkModels"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { execFile, execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { buildCli, repoRoot, runCli, scratchHomeEnv } from "./support/cli.js"

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

describe("runCli", () => {
  it.live("dies when the CLI's request names a deprecated model, and not for the default model", () =>
    Effect.gen(function*() {
      buildCli()
      const scratch = yield* Effect.acquireRelease(
        Effect.sync(() => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "memdir-deprecation-cli-")))),
        (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
      )
      const home = path.join(scratch, "home")
      const project = path.join(scratch, "project")
      fs.mkdirSync(project, { recursive: true })
      execFileSync("git", ["init", "-q"], { cwd: project })
      const memoryDir = path.join(home, ".memdir", "projects", project.replace(/[^A-Za-z0-9]/g, "-"), "memory")
      fs.mkdirSync(memoryDir, { recursive: true })
      fs.writeFileSync(
        path.join(memoryDir, "project_release_freeze.md"),
        "---\nname: Release freeze\ndescription: No deploys from 2026-12-18\ntype: project\n---\nNo deploys.\n"
      )
      const server = yield* MessagesApiServer.make({
        handler: () => MessagesApiServer.toolUse("select_memories", { selected_memories: [] })
      })
      const recallWith = (model: string) =>
        runCli(["recall", "--selector", "model", "--json", "can", "I", "deploy?"], {
          cwd: project,
          env: scratchHomeEnv(home, {
            ANTHROPIC_API_KEY: "test",
            ANTHROPIC_BASE_URL: server.url,
            MEMDIR_MODEL_SELECTOR: model
          })
        })
      const deprecated = Object.keys(SdkModels.deprecatedModels())[0]!
      const exit = yield* Effect.exit(recallWith(deprecated))
      assert.isTrue(Exit.isFailure(exit))
      const defect = Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined
      assert.instanceOf(defect, Error)
      assert.include((defect as Error).message, "@anthropic-ai/sdk warned of a deprecated model")
      assert.include((defect as Error).message, `The model '${deprecated}' is deprecated`)
      // the request was sent (the SDK warns and goes on): the warning, not a failure, is what the test catches
      assert.strictEqual((yield* server.requests)[0]?.body.model, deprecated)

      const current = yield* recallWith(ModelCatalog.DEFAULT_MODEL)
      assert.strictEqual(current.status, 0, current.stderr)
      assert.strictEqual(JSON.parse(current.stdout).selector, "model")
    }).pipe(Effect.scoped))
})
