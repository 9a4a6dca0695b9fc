/**
 * The packages as published: `pnpm pack` of @memdir/core, @memdir/cli and @memdir/testing once per run, the CLI
 * installed with plain npm into a scratch prefix (offline: it has no runtime dependencies) and run from there, and
 * the library compiled and run in a scratch consumer project with an ordinary strict tsconfig (no
 * exactOptionalPropertyTypes) and only the dependencies its manifest declares. The installed CLI also serves MCP
 * (initialize + list tools over stdio) and answers a hook. A check of another installed command is one more `it`
 * with `runInstalled(installed, [...])`. See docs/install.md.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { execFile, execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { parseJson, repoRoot, scratchHomeEnv } from "./support/cli.js"
import { codeBlocksIn } from "./support/markdown.js"
import type { InstalledCli, Tarball } from "./support/pack.js"
import { installGlobally, npmEnv, pack, runInstalled, sizeOf } from "./support/pack.js"
import { removeScratch } from "./support/scratch.js"

let scratch: string
let env: Record<string, string>
let core: Tarball
let cli: Tarball
let testing: Tarball
let installed: InstalledCli

beforeAll(async () => {
  scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "memdir-pack-")))
  env = npmEnv(scratch, scratchHomeEnv(path.join(scratch, "home")))
  fs.mkdirSync(path.join(scratch, "home"))
  const tarballs = path.join(scratch, "tarballs")
  fs.mkdirSync(tarballs)
  core = await pack("packages/core", tarballs, env)
  cli = await pack("apps/cli", tarballs, env)
  testing = await pack("packages/testing", tarballs, env)
  installed = await installGlobally(cli, path.join(scratch, "prefix"), env)
}, 600_000)

afterAll(async () => {
  // a hook daemon started by a hook may still run inside it
  await removeScratch(scratch)
})

const repoManifest = (dir: string) => JSON.parse(fs.readFileSync(path.join(repoRoot, dir, "package.json"), "utf8"))

/** A fresh git project for one test, under the scratch directory. */
const gitProject = (name: string): string => {
  const project = path.join(scratch, name)
  fs.mkdirSync(project)
  execFileSync("git", ["init", "-q"], { cwd: project })
  return project
}

/** `memdir write` of one feedback memory into the project's memory, through the installed bin. */
const writeTestingPolicy = async (project: string) => {
  const write = await runInstalled(installed, [
    "write",
    "--type",
    "feedback",
    "--name",
    "Testing policy",
    "--description",
    "Integration tests must hit a real database, never mocks"
  ], { cwd: project, env, input: "**Why:** mocked tests hid a broken migration.\n" })
  assert.strictEqual(write.status, 0, write.stderr)
  return write
}

describe("@memdir/cli tarball", () => {
  it("holds the bin, the bundle's JavaScript and data, README and LICENSE, and declares no runtime dependency", () => {
    const unexpected = cli.entries.filter((entry) =>
      ![
        "bin/memdir.cjs",
        "bin/memdir-hook",
        "dist/memdir.js",
        "dist/main.cjs",
        "dist/package.json",
        "README.md",
        "LICENSE",
        "package.json"
      ].includes(entry) &&
      !/^dist\/chunks\/[^/]+\.(cjs|data\.txt)$/.test(entry)
    )
    assert.deepStrictEqual(unexpected, [])
    assert.include(cli.entries, "README.md")
    assert.include(cli.entries, "LICENSE")
    assert.isAbove(cli.entries.filter((entry) => entry.startsWith("dist/chunks/")).length, 0)
    // the glossary, read beside the chunk that holds the translation (apps/cli/build.mjs)
    assert.include(cli.entries, "dist/chunks/glossary.data.txt")
    assert.deepStrictEqual(cli.manifest.dependencies ?? {}, {})
    assert.deepStrictEqual(cli.manifest.bin, { memdir: "./bin/memdir.cjs", "memdir-hook": "./bin/memdir-hook" })
    // exactly the current build's chunks: none left over from an earlier build
    const stamp = JSON.parse(fs.readFileSync(path.join(repoRoot, "apps/cli/dist/bundle-stamp.json"), "utf8"))
    const built = stamp.outputs.filter((output: string) => /\.c?js$|\.data\.txt$|^package\.json$/.test(output)).map((
      o: string
    ) => `dist/${o}`)
    assert.deepStrictEqual(cli.entries.filter((entry) => entry.startsWith("dist/")), [...built].sort())
  })

  it("installs with plain npm, offline, into a prefix of the bundle's size", () => {
    assert.isTrue(fs.existsSync(installed.bin))
    const size = sizeOf(path.join(installed.prefix, "lib", "node_modules"))
    assert.isBelow(size, 20 * 1024 * 1024, `installed prefix holds ${size} bytes`)
    assert.deepStrictEqual(fs.readdirSync(path.join(installed.prefix, "lib", "node_modules")), ["@memdir"])
  })

  it("the installed memdir prints its version", async () => {
    const run = await runInstalled(installed, ["--version"], { cwd: scratch, env })
    assert.strictEqual(run.status, 0, run.stderr)
    assert.strictEqual(run.stdout.trim(), repoManifest("apps/cli").version)
  })

  it("the installed memdir resolves, writes and recalls a project's memory", async () => {
    const project = gitProject("cli-project")
    const memoryDir = path.join(env.MEMDIR_HOME!, "projects", project.replace(/[^A-Za-z0-9]/g, "-"), "memory")
    const where = await runInstalled(installed, ["path"], { cwd: project, env })
    assert.strictEqual(where.status, 0, where.stderr)
    assert.strictEqual(where.stdout.trim(), memoryDir + "/")

    const write = await writeTestingPolicy(project)
    assert.strictEqual(write.stdout.trim(), path.join(memoryDir, "feedback_testing_policy.md"))

    const recall = parseJson(
      await runInstalled(installed, ["recall", "should integration tests mock the database?", "--json"], {
        cwd: project,
        env
      })
    )
    assert.deepStrictEqual(recall.selected.map((m: any) => m.path), ["feedback_testing_policy.md"])
    assert.include(recall.selected[0].content, "mocked tests hid a broken migration")
  })
  it("the installed memdir translates a request in another language: its glossary ships and is found", async () => {
    const project = gitProject("translation-project")
    await writeTestingPolicy(project)
    // "Datenbank" is in no memory: only the glossary (dist/chunks/glossary.data.txt) makes it "database"
    const recall = await runInstalled(
      installed,
      ["recall", "Wie testen wir die Datenbank?", "--selector", "offline", "--explain"],
      { cwd: project, env }
    )
    assert.strictEqual(recall.status, 0, recall.stderr)
    assert.notInclude(recall.stderr, "glossary")
    assert.include(recall.stdout, "mocked tests hid a broken migration")
    assert.include(recall.stdout, "datenbank as databas")
  })

  it("the installed memdir serves MCP over stdio: initialize, then the memory tools", async () => {
    const project = gitProject("mcp-project")
    const transport = new StdioClientTransport({
      command: installed.bin,
      args: ["mcp"],
      cwd: project,
      env,
      stderr: "pipe"
    })
    const client = new Client({ name: "memdir-pack-test", version: "0" })
    await client.connect(transport)
    try {
      assert.strictEqual(client.getServerVersion()?.name, "memdir")
      const tools = (await client.listTools()).tools.map((tool) => tool.name).sort()
      assert.includeMembers(tools, ["memory_recall", "memory_write", "memory_read", "memory_delete"])
    } finally {
      await client.close()
    }
  })

  it("the installed memdir answers a UserPromptSubmit hook with the relevant memory", async () => {
    const project = gitProject("hook-project")
    await writeTestingPolicy(project)
    const input = JSON.stringify({
      session_id: "pack-session",
      transcript_path: path.join(scratch, "transcript.jsonl"),
      cwd: project,
      hook_event_name: "UserPromptSubmit",
      prompt: "should integration tests mock the database?"
    })
    const hook = await runInstalled(installed, ["hook"], { cwd: project, env, input })
    assert.strictEqual(hook.status, 0, hook.stderr)
    const answer = JSON.parse(hook.stdout)
    assert.strictEqual(answer.hookSpecificOutput.hookEventName, "UserPromptSubmit")
    assert.include(answer.hookSpecificOutput.additionalContext, "mocked tests hid a broken migration")
  })

  it("the installed memdir-hook starts the hook daemon and answers every hook through it, starting no other Node", async () => {
    const project = gitProject("hook-script-project")
    await writeTestingPolicy(project)
    // npm links the bin into the prefix; a `node` first on PATH logs each start of Node
    const script = path.join(path.dirname(installed.bin), "memdir-hook")
    assert.isTrue(fs.lstatSync(script).isSymbolicLink(), "npm links the bin")
    const logDir = path.join(scratch, "logging-node")
    const log = path.join(logDir, "log")
    fs.mkdirSync(logDir)
    fs.writeFileSync(
      path.join(logDir, "node"),
      `#!/bin/sh\necho "$*" >> ${JSON.stringify(log)}\nexec ${JSON.stringify(process.execPath)} "$@"\n`,
      { mode: 0o755 }
    )
    const hookEnv = { ...env, PATH: [logDir, env.PATH].join(path.delimiter), MEMDIR_HOOKD_LINGER_MS: "0" }
    const hook = (event: string, extra: Record<string, string>) =>
      new Promise<{ status: number; stdout: string; stderr: string }>((resolve) => {
        execFile(
          script,
          [],
          { cwd: project, env: hookEnv, encoding: "utf8" },
          (error, stdout, stderr) => resolve({ status: error === null ? 0 : -1, stdout, stderr })
        ).stdin?.end(
          JSON.stringify({ session_id: "script-session", cwd: project, hook_event_name: event, ...extra })
        )
      })
    const starts = () => fs.readFileSync(log, "utf8").split("\n").filter(Boolean).length
    const start = await hook("SessionStart", { source: "startup" })
    assert.strictEqual(start.status, 0, start.stderr)
    assert.include(start.stdout, "Testing policy")
    assert.strictEqual(starts(), 1, "the first hook starts the daemon")
    const hookd = path.join(env.MEMDIR_HOME!, "hookd")
    const deadline = Date.now() + 60_000
    while (!fs.readdirSync(hookd).some((file) => file.endsWith(".sock"))) {
      if (Date.now() > deadline) throw new Error("no hook daemon after a minute")
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
    const prompt = await hook("UserPromptSubmit", { prompt: "should integration tests mock the database?" })
    assert.strictEqual(prompt.status, 0, prompt.stderr)
    assert.include(
      JSON.parse(prompt.stdout).hookSpecificOutput.additionalContext,
      "mocked tests hid a broken migration"
    )
    assert.strictEqual(starts(), 1, "the prompt's hook was answered by the daemon: no Node started")
    const end = await hook("SessionEnd", { reason: "other" })
    assert.strictEqual(end.status, 0, end.stderr)
    assert.strictEqual(starts(), 1)
  })
})

/** Every module of a package's src, as a path without extension ("Recall", "internal/location/paths"). */
const modulesOf = (dir: string): ReadonlyArray<string> =>
  fs.readdirSync(path.join(repoRoot, dir, "src"), { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts") && !file.endsWith(".d.ts"))
    .map((file) => file.slice(0, -".ts".length).split(path.sep).join("/"))
    .sort()

const coreModules = (): ReadonlyArray<string> => modulesOf("packages/core")

/** The data files of a package's src (every file but TypeScript), which its modules read beside themselves. */
const dataFilesOf = (dir: string): ReadonlyArray<string> =>
  fs.readdirSync(path.join(repoRoot, dir, "src"), { recursive: true, encoding: "utf8", withFileTypes: true })
    .filter((entry) => entry.isFile() && !entry.name.endsWith(".ts"))
    .map((entry) => path.relative(path.join(repoRoot, dir, "src"), path.join(entry.parentPath, entry.name)))
    .map((file) => file.split(path.sep).join("/"))

describe("@memdir/core tarball", () => {
  it("holds JavaScript and declarations of every module, its data files, README and LICENSE, nothing else", () => {
    const expected = coreModules().flatMap((m) => [`dist/${m}.d.ts`, `dist/${m}.js`])
    const data = dataFilesOf("packages/core").map((file) => `dist/${file}`)
    assert.include(data, "dist/internal/text/glossary.data.txt")
    assert.deepStrictEqual(
      core.entries,
      [...expected, ...data, "LICENSE", "README.md", "package.json"].sort()
    )
  })

  it("has effect and @effect/platform-node as peer dependencies, exports pointing at dist", () => {
    assert.deepStrictEqual(Object.keys(core.manifest.peerDependencies ?? {}).sort(), [
      "@effect/platform-node",
      "effect"
    ])
    const dependencies = Object.keys(core.manifest.dependencies ?? {})
    assert.notInclude(dependencies, "effect")
    assert.notInclude(dependencies, "@effect/platform-node")
    for (const [name, spec] of Object.entries(core.manifest.dependencies ?? {})) {
      assert.notMatch(spec, /^(workspace|catalog):/, `${name}: ${spec}`)
    }
    assert.deepStrictEqual(core.manifest.exports, {
      ".": { types: "./dist/index.d.ts", default: "./dist/index.js" },
      "./*": { types: "./dist/*.d.ts", default: "./dist/*.js" }
    })
  })

  it("compiles in a strict consumer without exactOptionalPropertyTypes, and runs the quick start", async () => {
    const consumer = consumerProject()
    const compiled = await compileConsumer(consumer)
    assert.isAbove(compiled.declarations, 10)
    assert.strictEqual(compiled.diagnostics, "", compiled.diagnostics)
    const project = gitProject("library-project")
    const out = await runNode([path.join(consumer, "dist/quick-start.js"), project], consumer)
    assert.include(out, "Memory feedback_testing_policy.md (feedback, saved today): Testing policy")
    const subpaths = await runNode([path.join(consumer, "dist/subpaths.js")], consumer)
    assert.strictEqual(subpaths.trim(), "function function")
    // a German request over an English memory: only the glossary, read beside the packed module, bridges them
    const translated = await runNode([path.join(consumer, "dist/translation.js")], consumer)
    assert.strictEqual(
      translated.trim(),
      "folder-layout.md: ordn as folder (name, description, path), ausgab as output (description)"
    )
  }, 600_000)
})

describe("@memdir/testing tarball", () => {
  it("holds JavaScript and declarations of every module and LICENSE, nothing else", () => {
    const expected = modulesOf("packages/testing").flatMap((m) => [`dist/${m}.d.ts`, `dist/${m}.js`])
    assert.deepStrictEqual(testing.entries, [...expected, "LICENSE", "package.json"].sort())
  })

  it("has effect and @effect/platform-node as peer dependencies, the core at its version, exports at dist", () => {
    assert.deepStrictEqual(Object.keys(testing.manifest.peerDependencies ?? {}).sort(), [
      "@effect/platform-node",
      "effect"
    ])
    assert.deepStrictEqual(testing.manifest.dependencies, { "@memdir/core": repoManifest("packages/core").version })
    assert.deepStrictEqual(testing.manifest.exports, {
      ".": { types: "./dist/index.d.ts", default: "./dist/index.js" },
      "./*": { types: "./dist/*.d.ts", default: "./dist/*.js" }
    })
  })
})

/** What a consumer installs next to @memdir/core beyond its manifest: Node's types. */
const CONSUMER_OWN = ["@types/node"]

/**
 * A scratch project with the packed core extracted into node_modules and, beside it, links to the workspace's
 * copies of exactly the packages its manifest declares (dependencies and peers) plus CONSUMER_OWN: a module
 * imported but not declared fails to resolve. Its sources are the library examples, the TypeScript of the
 * package README and a file importing modules by subpath.
 */
const consumerProject = (): string => {
  const dir = path.join(scratch, "consumer")
  const installedCore = path.join(dir, "node_modules/@memdir/core")
  fs.mkdirSync(installedCore, { recursive: true })
  execFileSync("tar", ["-xzf", core.file, "-C", installedCore, "--strip-components=1"])
  const declared = [
    ...Object.keys(core.manifest.dependencies ?? {}),
    ...Object.keys(core.manifest.peerDependencies ?? {}),
    ...CONSUMER_OWN
  ]
  for (const name of declared) {
    const link = path.join(dir, "node_modules", name)
    fs.mkdirSync(path.dirname(link), { recursive: true })
    fs.symlinkSync(fs.realpathSync(path.join(repoRoot, "packages/core/node_modules", name)), link, "dir")
  }
  fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }))
  const src = path.join(dir, "src")
  fs.mkdirSync(src)
  const examples = path.join(repoRoot, "packages/core/examples")
  for (const file of fs.readdirSync(examples)) fs.copyFileSync(path.join(examples, file), path.join(src, file))
  const readme = codeBlocksIn(fs.readFileSync(path.join(installedCore, "README.md"), "utf8"))
    .filter((block) => block.lang === "ts")
  assert.lengthOf(readme, 1)
  fs.writeFileSync(path.join(src, "readme.ts"), readme[0]!.code)
  fs.writeFileSync(
    path.join(src, "subpaths.ts"),
    [
      "import { renderRecalledMemory } from \"@memdir/core/Recall\"",
      "import * as Write from \"@memdir/core/Write\"",
      "console.log(typeof renderRecalledMemory, typeof Write.writeMemory)",
      ""
    ].join("\n")
  )
  fs.writeFileSync(
    path.join(src, "translation.ts"),
    [
      "import type { MemoryHeader } from \"@memdir/core/Memory\"",
      "import { explainSelection, matchedTermText } from \"@memdir/core/Selector\"",
      "const note = (path: string, name: string, description: string): MemoryHeader =>",
      "  ({ path, absolutePath: `/m/${path}`, name, description, type: \"project\", mtime: 1, extra: {},",
      "    bodyHead: \"\" })",
      "const candidates = [",
      "  note(\"folder-layout.md\", \"Folder layout\", \"Generated output goes in the build folder\"),",
      "  note(\"release-steps.md\", \"Release steps\", \"Tag, publish, announce\")",
      "]",
      "const explanation = explainSelection({ query: \"Wo liegt der Ordner für die Ausgabe?\", candidates })",
      "for (const c of explanation.considered) {",
      "  const translated = c.matched.filter((m) => m.translatedAs !== undefined).map(matchedTermText)",
      "  console.log(`${c.path}: ${translated.join(\", \")}`)",
      "}",
      ""
    ].join("\n")
  )
  return dir
}

/** test/support/compileConsumer.ts in a child process (a type check of this size would block the worker). */
const compileConsumer = (dir: string): Promise<{ declarations: number; diagnostics: string }> =>
  new Promise((resolve, reject) => {
    const script = path.join(repoRoot, "test/support/compileConsumer.ts")
    execFile(
      process.execPath,
      ["--import", "tsx", script, dir],
      { cwd: repoRoot, encoding: "utf8" },
      (error, out, err) => {
        if (error !== null) reject(new Error(`${script} failed: ${error.message}\n${err}`))
        else resolve(JSON.parse(out))
      }
    )
  })

/** node with the test's environment, without blocking the worker; its stdout. */
const runNode = (args: ReadonlyArray<string>, cwd: string): Promise<string> =>
  new Promise((resolve, reject) => {
    execFile(process.execPath, [...args], { cwd, env, encoding: "utf8" }, (error, out, err) => {
      if (error !== null) reject(new Error(`node ${args.join(" ")} failed: ${error.message}\n${err}`))
      else resolve(out)
    })
  })
