/**
 * `memdir write` refuses what would make a bad memory, with exit 2 and a typed `InvalidMemoryInputError`
 * (docs/cli.md#exit-codes), writing nothing: a name over 100 characters (it is the title of the memory's
 * `MEMORY.md` line) and a missing or empty body.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { buildCli, parseJson, runCli, scratchHomeEnv } from "./support/cli.js"

let scratch: string
let memoryDir: string
let project: string

const memdir = (args: ReadonlyArray<string>) =>
  runCli([...args, "--memory-dir", memoryDir], { cwd: project, env: scratchHomeEnv(path.join(scratch, "home")) })

const write = (name: string, body: ReadonlyArray<string>) =>
  memdir(["write", "--type", "project", "--name", name, "--description", "What it is about", ...body])

/** The memory files and index lines of the memory directory: what a refused write must leave as it was. */
const written = () => ({
  files: fs.existsSync(memoryDir) ? fs.readdirSync(memoryDir).filter((f) => f !== "MEMORY.md").sort() : [],
  index: fs.existsSync(path.join(memoryDir, "MEMORY.md"))
    ? fs.readFileSync(path.join(memoryDir, "MEMORY.md"), "utf8")
    : ""
})

beforeAll(() => {
  buildCli()
  scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "memdir-write-")))
  project = path.join(scratch, "app")
  memoryDir = path.join(scratch, "memory")
  fs.mkdirSync(project)
  execFileSync("git", ["init", "-q"], { cwd: project })
})

afterAll(() => {
  fs.rmSync(scratch, { recursive: true, force: true })
})

describe("memdir write: limits", () => {
  it.live("a name of 100 characters is written; 101 is refused (exit 2), nothing written", () =>
    Effect.gen(function*() {
      const longest = "Pool ".repeat(20).trim().padEnd(100, "x")
      assert.strictEqual(longest.length, 100)
      const ok = yield* write(longest, ["--body", "The pool max is 10."])
      assert.strictEqual(ok.status, 0, ok.stderr)
      const before = written()
      assert.include(before.index, `[${longest}](`)

      const tooLong = "N".repeat(101)
      const run = yield* write(tooLong, ["--body", "b", "--json"])
      assert.strictEqual(run.status, 2, run.stdout)
      const error = parseJson(run).error
      assert.strictEqual(error._tag, "InvalidMemoryInputError")
      assert.strictEqual(error.field, "name")
      assert.strictEqual(error.rule, "name-too-long")
      assert.include(error.message, "name is 101 characters, at most 100")
      // the text form: one line that says what to do, not the whole name
      const text = yield* write("N".repeat(5000), ["--body", "b"])
      assert.strictEqual(text.status, 2)
      const line = text.stderr.split("\n")[0]!
      assert.include(line, "name is 5000 characters, at most 100")
      assert.isBelow(line.length, 300)
      assert.deepStrictEqual(written(), before)
    }))

  it.live("no body, an empty one, a blank one, an empty stdin: refused (exit 2, field body), nothing written", () =>
    Effect.gen(function*() {
      const before = written()
      for (const body of [["--body", ""], ["--body", " \n\t\n"], []]) {
        const run = yield* write("Empty body", [...body, "--json"])
        assert.strictEqual(run.status, 2, `${JSON.stringify(body)}: ${run.stdout}${run.stderr}`)
        const error = parseJson(run).error
        assert.strictEqual(error._tag, "InvalidMemoryInputError")
        assert.strictEqual(error.field, "body")
        assert.strictEqual(error.rule, "empty-body")
        assert.include(error.message, "the body is empty")
      }
      assert.deepStrictEqual(written(), before)
    }))
})
