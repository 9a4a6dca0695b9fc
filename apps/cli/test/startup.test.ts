/**
 * Start-up: a `memdir` process evaluates only what its command runs. The bundle is built (as build.mjs builds it)
 * into a scratch directory with esbuild's metafile, run under hooks that record every file Node loads (an ES
 * module hook for the launcher, a CommonJS one for the chunks), and the loaded chunks are mapped back to the
 * source modules they hold.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as esbuild from "esbuild"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
// @ts-expect-error build.mjs is plain JavaScript without declarations
import { bundleOptions, bundleTo, lazyCliFileParsers } from "../build.mjs"

const cliRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")

let scratch: string
let outdir: string
let metafile: esbuild.Metafile

/** A hook (registered with --import) that appends each loaded file: URL to $MEMDIR_TEST_LOADED. */
const hooks = `
import { appendFileSync } from "node:fs"
export async function load(url, context, next) {
  if (url.startsWith("file:")) appendFileSync(process.env.MEMDIR_TEST_LOADED, url + "\\n")
  return next(url, context)
}
`

/** A CommonJS preload (--require) that appends each file `require` loads to $MEMDIR_TEST_LOADED. */
const requireHook = `
const { appendFileSync } = require("node:fs")
const { pathToFileURL } = require("node:url")
const Module = require("node:module")
const load = Module.prototype.load
Module.prototype.load = function (filename) {
  appendFileSync(process.env.MEMDIR_TEST_LOADED, pathToFileURL(filename).href + "\\n")
  return load.apply(this, arguments)
}
`

/** The source modules (paths as the metafile names them) a run of the bundle with `args` evaluated. */
const loadedSources = (args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
  const log = path.join(scratch, `loaded-${Math.random().toString(36).slice(2)}.txt`)
  fs.writeFileSync(log, "")
  const result = spawnSync(process.execPath, [
    "--import",
    pathToFileURL(path.join(scratch, "register.mjs")).href,
    "--require",
    path.join(scratch, "require-hook.cjs"),
    path.join(outdir, "memdir.js"),
    ...args
  ], {
    cwd: scratch,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: scratch,
      MEMDIR_HOME: path.join(scratch, "home"),
      ...env,
      MEMDIR_TEST_LOADED: log
    },
    encoding: "utf8"
  })
  const files = fs.readFileSync(log, "utf8").split("\n").filter((line) => line !== "").map((url) =>
    path.relative(cliRoot, fileURLToPath(url)).split(path.sep).join("/")
  )
  const sources = new Set<string>()
  for (const file of files) {
    const output = metafile.outputs[file]
    if (output !== undefined) { for (const input of Object.keys(output.inputs)) sources.add(input) }
  }
  return { status: result.status, stdout: result.stdout, stderr: result.stderr, files, sources: [...sources] }
}

const matching = (sources: ReadonlyArray<string>, pattern: RegExp) => sources.filter((s) => pattern.test(s))

/** The MCP SDK and its schema library: only `memdir mcp` evaluates them. */
const mcpSdk = /node_modules\/(@modelcontextprotocol\/sdk|zod|ajv|zod-to-json-schema)\//

/** effect/cli's file parsers (effect's own yaml, toml and ini): only a file helper that parses a file loads them. */
const fileParsers = /effect\/dist\/encoding\/(Yaml|Toml|Ini)\.js$/

/** What no start of `--version` or `path` may evaluate. */
const heavy = [
  fileParsers,
  /src\/commands\/(dream|extract|team|teamMemory|recall|write|show|ls|prompt|doctor|log|init|mcp)\.ts$/,
  /src\/mcp\//,
  /packages\/core\/src\/(Dream|Extract|Agent|Transcript|TeamSync|TeamSyncTree|MemoryTools)\.ts$/,
  /node_modules\/(yaml|toml|ini|undici|@anthropic-ai\/sdk)\//,
  mcpSdk
]

/** What a command that only asks where the memory lives (`path`, `init`) never evaluates. */
const locationOnly = [
  /packages\/core\/src\/(Scanner|Selector|ModelSelector|Model|Recall|MemoryStore|MemoryIndex|TeamMemory|TeamGuard)\.ts$/,
  /packages\/core\/src\/(Frontmatter|MemoryLayout|MemoryAge|GitAges|Git|Staleness|DreamLock|SecretScan)\.ts$/,
  /packages\/core\/src\/internal\/(layers\/memdirServices|scan\/yaml|text\/analysis|text\/data|text\/language)\.ts$/,
  /node_modules\/(yaml|@orama\/stemmers)\//
]

beforeAll(async () => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), "memdir-startup-"))
  outdir = path.join(scratch, "dist")
  fs.writeFileSync(path.join(scratch, "hooks.mjs"), hooks)
  fs.writeFileSync(path.join(scratch, "require-hook.cjs"), requireHook)
  fs.writeFileSync(
    path.join(scratch, "register.mjs"),
    `import { register } from "node:module"\nregister(${
      JSON.stringify(pathToFileURL(path.join(scratch, "hooks.mjs")).href)
    })\n`
  )
  const result = await bundleTo(outdir, { sourcemap: false })
  for (const file of result.files as ReadonlyArray<{ path: string; contents: Uint8Array }>) {
    fs.mkdirSync(path.dirname(file.path), { recursive: true })
    fs.writeFileSync(file.path, file.contents)
  }
  metafile = result.metafile as esbuild.Metafile
  // metafile outputs are named relative to the working directory (apps/cli); the run's files are too
  metafile = {
    ...metafile,
    outputs: Object.fromEntries(
      Object.entries(metafile.outputs).map(([name, output]) => [
        path.relative(cliRoot, path.resolve(cliRoot, name)).split(path.sep).join("/"),
        output
      ])
    )
  }
  fs.mkdirSync(path.join(scratch, "home"))
})

afterAll(() => {
  fs.rmSync(scratch, { recursive: true, force: true })
})

describe("start-up", () => {
  it("the hook sees the bundle: --version loads the entry and prints the version", () => {
    const run = loadedSources(["--version"])
    assert.strictEqual(run.status, 0, run.stderr)
    assert.match(run.stdout, /^\d+\.\d+\.\d+/)
    assert.include(run.files.map((f) => path.basename(f)), "memdir.js")
    assert.isNotEmpty(matching(run.sources, /src\/main\.ts$/))
  })

  it("--version (-v, -V) evaluates no command module, no core service, no parser of effect/cli's file helpers, no SDK", () => {
    for (const flag of ["--version", "-v", "-V"]) {
      const run = loadedSources([flag])
      assert.strictEqual(run.status, 0, run.stderr)
      assert.deepStrictEqual(matching(run.sources, /src\/commands\//), [], flag)
      // the error types main renders are the only core module a start needs
      assert.deepStrictEqual(matching(run.sources, /packages\/core\/src\//), ["../../packages/core/src/Errors.ts"])
      for (const pattern of heavy) assert.deepStrictEqual(matching(run.sources, pattern), [], String(pattern))
    }
  })

  it("path evaluates its own module and none of the other commands, model, team or dream code", () => {
    const memoryDir = path.join(scratch, "memory")
    const run = loadedSources(["path", "--json"], { MEMDIR_MEMORY_DIR: memoryDir })
    assert.strictEqual(run.status, 0, run.stderr)
    assert.strictEqual(JSON.parse(run.stdout).memoryDir, `${memoryDir}/`)
    assert.isNotEmpty(matching(run.sources, /src\/commands\/path\.ts$/))
    for (const pattern of heavy) assert.deepStrictEqual(matching(run.sources, pattern), [], String(pattern))
  })

  it("path, init and hooks install evaluate the location services only: no scanner, selector, YAML, team or model", () => {
    const memoryDir = path.join(scratch, "memory-location")
    for (const args of [["path", "--json"], ["init"], ["hooks", "install", "--agent", "claude", "--dry-run"]]) {
      const run = loadedSources(args, { MEMDIR_MEMORY_DIR: memoryDir })
      assert.strictEqual(run.status, 0, run.stderr)
      assert.isNotEmpty(matching(run.sources, /packages\/core\/src\/MemoryPaths\.ts$/), args.join(" "))
      // its own module, and for init the index file's name (`MemoryIndex`, which it creates)
      const own = [
        `src/commands/${args[0]}.ts`,
        ...(args[0] === "init" ? ["../../packages/core/src/MemoryIndex.ts"] : [])
      ]
      for (const pattern of [...heavy, ...locationOnly]) {
        const loaded = matching(run.sources, pattern).filter((source) => !own.includes(source))
        assert.deepStrictEqual(loaded, [], `${args.join(" ")}: ${pattern}`)
      }
    }
    assert.isTrue(fs.existsSync(path.join(memoryDir, "MEMORY.md")))
  })

  it("recall evaluates the selector but no SDK, extraction, dream, MCP or other command code (no key set)", () => {
    const memoryDir = path.join(scratch, "memory-recall")
    fs.mkdirSync(memoryDir, { recursive: true })
    fs.writeFileSync(
      path.join(memoryDir, "project_pool.md"),
      "---\nname: Connection pool\ndescription: The database pool is capped at 10\ntype: project\n---\n\nCapped.\n"
    )
    fs.writeFileSync(path.join(memoryDir, "MEMORY.md"), "- [Connection pool](project_pool.md) — capped at 10\n")
    const run = loadedSources(["recall", "--json", "how big is the database pool?"], { MEMDIR_MEMORY_DIR: memoryDir })
    assert.strictEqual(run.status, 0, run.stderr)
    assert.deepStrictEqual(JSON.parse(run.stdout).selected.map((m: { path: string }) => m.path), ["project_pool.md"])
    // the modules it does run: the scan and the offline selector
    for (const module of [/core\/src\/Scanner\.ts$/, /core\/src\/Selector\.ts$/, /internal\/text\/analysis\.ts$/]) {
      assert.isNotEmpty(matching(run.sources, module), String(module))
    }
    for (
      const pattern of [
        /src\/commands\/(dream|extract|team|ls|show|write|doctor|log|init|mcp|hook|hooks|memoryTool)\.ts$/,
        /src\/mcp\//,
        // (Operations and Browse, ~10 KB, are loaded: the memory-tool backend of every Memdir layer edits through them)
        /packages\/core\/src\/(Dream|Extract|Agent|Transcript|MemoryTools|DailyLog|Doctor)\.ts$/,
        /packages\/core\/src\/dream\//,
        // `yaml` reads the headers the fast path does not (internal/scan/yaml.ts): a recall may load it
        /node_modules\/(toml|ini|undici|diff|@anthropic-ai\/sdk)\//,
        fileParsers,
        mcpSdk
      ]
    ) assert.deepStrictEqual(matching(run.sources, pattern), [], String(pattern))
  })

  it("help lists every command, so it loads every command module", () => {
    const run = loadedSources(["--help"])
    assert.strictEqual(run.status, 0, run.stderr)
    for (
      const name of [
        "path",
        "init",
        "write",
        "ls",
        "show",
        "recall",
        "prompt",
        "doctor",
        "dream",
        "extract",
        "log",
        "team",
        "mcp"
      ]
    ) {
      assert.isNotEmpty(matching(run.sources, new RegExp(`src/commands/${name}\\.ts$`)), name)
      assert.include(run.stdout, name)
    }
    // …but not the MCP server and its SDK: the mcp command imports them when it runs (only the constants of its
    // --structured-content flag, which import nothing, come with the command)
    assert.deepStrictEqual(matching(run.sources, mcpSdk), [])
    assert.deepStrictEqual(matching(run.sources, /src\/mcp\/(?!StructuredContent\.ts$)/), [])
  })

  it("only mcp evaluates the MCP server and its SDK (a start with stdin closed serves nothing and exits)", () => {
    const run = loadedSources(["mcp"], { MEMDIR_MEMORY_DIR: path.join(scratch, "memory") })
    assert.strictEqual(run.status, 0, run.stderr)
    assert.strictEqual(run.stdout, "")
    assert.isNotEmpty(matching(run.sources, /src\/mcp\/McpServer\.ts$/))
    assert.isNotEmpty(matching(run.sources, /node_modules\/@modelcontextprotocol\/sdk\//))
    for (const args of [["path", "--json"], ["ls", "--json"], ["recall", "a query here"]]) {
      const other = loadedSources(args, { MEMDIR_MEMORY_DIR: path.join(scratch, "memory") })
      assert.strictEqual(other.status, 0, other.stderr)
      assert.deepStrictEqual(matching(other.sources, mcpSdk), [], args.join(" "))
      assert.deepStrictEqual(matching(other.sources, /src\/mcp\//), [], args.join(" "))
    }
  })

  it("every CommonJS output is strict code, as the ES modules it was made from", () => {
    const outputs = Object.keys(metafile.outputs).filter((name) => name.endsWith(".cjs"))
    assert.isAbove(outputs.length, 10)
    for (const name of outputs) {
      assert.isTrue(fs.readFileSync(path.join(cliRoot, name), "utf8").startsWith("\"use strict\";"), name)
    }
  })

  it("no static import pulls undici, yaml, toml or ini into the entry: they are never in a start", () => {
    const entry = Object.entries(metafile.outputs).find(([name]) => name.endsWith("dist/main.cjs"))!
    const staticGraph = new Set<string>()
    const visit = (name: string) => {
      if (staticGraph.has(name)) return
      staticGraph.add(name)
      for (const imported of metafile.outputs[name]!.imports) {
        if (imported.kind === "import-statement" && !imported.external) visit(imported.path)
      }
    }
    visit(entry[0])
    const inputs = [...staticGraph].flatMap((name) => Object.keys(metafile.outputs[name]!.inputs))
    assert.deepStrictEqual(matching(inputs, /node_modules\/(undici|yaml|toml|ini|@anthropic-ai\/sdk)\//), [])
    assert.deepStrictEqual(matching(inputs, fileParsers), [])
    assert.deepStrictEqual(matching(inputs, mcpSdk), [])
  })

  it("effect/cli's file helpers still parse yaml, toml, ini and json once their parsers are loaded on use", async () => {
    // memdir has no file option today; the rewrite must not break one added later
    const dir = path.join(scratch, "file-helpers")
    fs.mkdirSync(dir)
    fs.writeFileSync(
      path.join(dir, "entry.ts"),
      `import * as NodeServices from "@effect/platform-node/NodeServices"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
const command = Command.make("probe", { config: Flag.FileParse("config") }, ({ config }) =>
  Console.log(JSON.stringify(config)))
Command.run(command, { version: "0" }).pipe(
  Effect.provide(NodeServices.layer),
  Effect.runPromise
)
`
    )
    await esbuild.build({
      ...bundleOptions(path.join(dir, "out")),
      entryPoints: { probe: path.join(dir, "entry.ts") },
      nodePaths: [path.join(cliRoot, "node_modules")],
      plugins: [lazyCliFileParsers],
      sourcemap: false,
      // an ES module probe (the CLI's own bundle is turned into CommonJS after this step)
      outExtension: { ".js": ".mjs" },
      banner: { js: "import { createRequire as __cr } from \"node:module\"; const require = __cr(import.meta.url);" }
    })
    const files = {
      "a.yaml": "name: memdir\nlimit: 3\n",
      "a.toml": "name = \"memdir\"\nlimit = 3\n",
      "a.ini": "name=memdir\nlimit=3\n",
      "a.json": "{\"name\":\"memdir\",\"limit\":3}"
    }
    for (const [name, text] of Object.entries(files)) {
      fs.writeFileSync(path.join(dir, name), text)
      const run = spawnSync(process.execPath, [path.join(dir, "out", "probe.mjs"), "--config", path.join(dir, name)], {
        encoding: "utf8"
      })
      assert.strictEqual(run.status, 0, `${name}: ${run.stderr}`)
      const parsed = JSON.parse(run.stdout)
      assert.strictEqual(parsed.name, "memdir", name)
      assert.strictEqual(String(parsed.limit), "3", name)
    }
    const entry = fs.readFileSync(path.join(dir, "out", "probe.mjs"), "utf8")
    // the parsers are chunks of their own, imported by the helper only
    assert.notInclude(entry, "Tabs cannot be used for YAML indentation")
  })
})
