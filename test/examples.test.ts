/**
 * The library examples the README and docs/ show must run as documented: each file of packages/core/examples/
 * is executed here with tsx against a scratch MEMDIR_HOME and a real git repository (test/docs-links.test.ts
 * checks that the docs show exactly these files).
 */
import { assert, describe, it } from "@effect/vitest"
import * as MessagesApiServer from "@memdir/testing/MessagesApiServer"
import * as SdkModels from "@memdir/testing/SdkModels"
import * as Effect from "effect/Effect"
import { execFile, execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { repoRoot } from "./support/cli.js"
import { codeBlocksIn, examplePath, markdownFiles, readRepoFile } from "./support/markdown.js"

const examplesDir = path.join(repoRoot, "packages/core/examples")

/** Runs an example with tsx on a fresh git project in a scratch home; `check` sees its output and the home. */
const runExample = (file: string, check: (out: string, memoryDir: string) => void) => {
  const scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "memdir-example-")))
  try {
    const project = path.join(scratch, "project")
    fs.mkdirSync(project)
    execFileSync("git", ["init", "-q"], { cwd: project })
    const env: Record<string, string> = {}
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("MEMDIR_")) env[k] = v
    const out = execFileSync(
      process.execPath,
      ["--import", "tsx", path.join(examplesDir, file), project],
      { cwd: repoRoot, env: { ...env, HOME: scratch, MEMDIR_HOME: path.join(scratch, "home") }, encoding: "utf8" }
    )
    check(out, path.join(scratch, "home/projects", project.replace(/[^A-Za-z0-9]/g, "-"), "memory"))
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true })
  }
}

/**
 * `runExample` for an example that talks to a model: the local Messages API server answers with `replies`
 * (through ANTHROPIC_BASE_URL), and the example runs without blocking the event loop so the server can answer.
 */
const runExampleWithModel = (
  file: string,
  replies: ReadonlyArray<MessagesApiServer.Reply>,
  check: (out: string, memoryDir: string, requests: ReadonlyArray<MessagesApiServer.RecordedRequest>) => void
) =>
  Effect.gen(function*() {
    const scratch = yield* Effect.acquireRelease(
      Effect.sync(() => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "memdir-example-")))),
      (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
    )
    const server = yield* MessagesApiServer.make({ replies })
    const project = path.join(scratch, "project")
    fs.mkdirSync(project)
    execFileSync("git", ["init", "-q"], { cwd: project })
    const env: Record<string, string> = {}
    for (const [k, v] of Object.entries(process.env)) {
      if (v !== undefined && !k.startsWith("MEMDIR_") && !k.startsWith("ANTHROPIC_")) env[k] = v
    }
    const { stderr, stdout: out } = yield* Effect.callback<{ stdout: string; stderr: string }, Error>((resume) => {
      execFile(process.execPath, ["--import", "tsx", path.join(examplesDir, file), project], {
        cwd: repoRoot,
        env: {
          ...env,
          HOME: scratch,
          MEMDIR_HOME: path.join(scratch, "home"),
          ANTHROPIC_API_KEY: "test-key",
          ANTHROPIC_BASE_URL: server.url
        },
        encoding: "utf8"
      }, (error, stdout, stderr) =>
        resume(error === null ? Effect.succeed({ stdout, stderr }) : Effect.fail(new Error(stderr))))
    })
    // the SDK warns on stderr when a request names a model past or near its end of life: the examples name none
    assert.notMatch(stderr, SdkModels.DEPRECATION_WARNING)
    const memoryDir = path.join(scratch, "home/projects", project.replace(/[^A-Za-z0-9]/g, "-"), "memory")
    check(out, memoryDir, yield* server.requests)
  }).pipe(Effect.scoped)

describe("examples", () => {
  it("packages/core/examples/agent-loop.ts writes, prompts and recalls through prefetch", () => {
    runExample("agent-loop.ts", (out, memoryDir) => {
      assert.include(out, "system prompt:")
      assert.include(out, "feedback_testing_policy.md")
      assert.match(out, /recall: 1\/1 selected/)
      assert.include(fs.readFileSync(path.join(memoryDir, "MEMORY.md"), "utf8"), "(feedback_testing_policy.md)")
    })
  })

  it("packages/core/examples/quick-start.ts (the README's snippet) writes, prompts and recalls", () => {
    runExample("quick-start.ts", (out, memoryDir) => {
      assert.match(out, /^system prompt: \d+ characters$/m)
      assert.include(out, "Memory feedback_testing_policy.md (feedback, saved today): Testing policy")
      assert.include(out, "**Why:** mocked tests hid a broken migration.")
      assert.include(fs.readFileSync(path.join(memoryDir, "MEMORY.md"), "utf8"), "(feedback_testing_policy.md)")
    })
  })

  it.live("packages/core/examples/memory-tool.ts runs memdir as the memory tool in the SDK's tool runner", () =>
    runExampleWithModel(
      "memory-tool.ts",
      [
        MessagesApiServer.toolUse("memory", { command: "view", path: "/memories" }),
        MessagesApiServer.toolUse("memory", {
          command: "create",
          path: "/memories/feedback_testing.md",
          file_text: "---\nname: Testing policy\ndescription: Integration tests hit a real database, never mocks\n" +
            "type: feedback\n---\nIntegration tests must hit a real database.\n"
        }),
        MessagesApiServer.text("Saved: integration tests hit a real database.")
      ],
      (out, memoryDir, requests) => {
        assert.include(out, "Saved: integration tests hit a real database.")
        assert.include(out, `memory directory: ${memoryDir}`)
        assert.include(fs.readFileSync(path.join(memoryDir, "feedback_testing.md"), "utf8"), "name: Testing policy")
        assert.include(fs.readFileSync(path.join(memoryDir, "MEMORY.md"), "utf8"), "(feedback_testing.md)")
        assert.deepStrictEqual(requests[0]!.body.tools, [{ type: "memory_20250818", name: "memory" }])
        const lastResult = requests[2]!.body.messages.at(-1).content[0]
        assert.strictEqual(lastResult.content, "File created successfully at: /memories/feedback_testing.md")
      }
    ))

  it("every example file is run above and every one the docs show exists", () => {
    const source = fs.readFileSync(new URL(import.meta.url), "utf8")
    const files = fs.readdirSync(examplesDir).filter((f) => f.endsWith(".ts"))
    const runs = (f: string) => new RegExp(`runExample(WithModel)?\\(\\s*"${f.replace(/\./g, "\\.")}"`).test(source)
    assert.deepStrictEqual(files.filter((f) => !runs(f)), [])
    const shown = markdownFiles().flatMap((page) => codeBlocksIn(readRepoFile(page)).map(examplePath))
      .filter((p): p is string => p?.startsWith("packages/core/examples/") === true)
    assert.isAbove(shown.length, 0)
    for (const p of shown) assert.include(files, path.posix.basename(p))
  })
})
