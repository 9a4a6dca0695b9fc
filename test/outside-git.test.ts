/**
 * A directory outside git is its own root (docs/configuration.md#outside-a-git-repository): `memdir path --json`
 * says `rootKind: "none"`, a subdirectory gets a memory of its own, `git init` at the top makes the tree share one,
 * and the directory's own `.memdir/settings.local.json` is trusted.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { buildCli, parseJson, runCli, scratchHomeEnv } from "./support/cli.js"

let scratch: string
let notes: string
let year: string

const memdir = (cwd: string, args: ReadonlyArray<string>) =>
  runCli(args, { cwd, env: scratchHomeEnv(path.join(scratch, "home")) })

const where = (cwd: string) =>
  Effect.map(memdir(cwd, ["path", "--json"]), (run) => {
    assert.strictEqual(run.status, 0, run.stderr)
    return parseJson(run) as { memoryDir: string; root: string; rootKind: string; source: string }
  })

beforeAll(() => {
  buildCli()
  scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "memdir-outside-git-")))
  notes = path.join(scratch, "notes")
  year = path.join(notes, "2026")
  fs.mkdirSync(year, { recursive: true })
  // the scratch directory must itself be outside any repository for this test to mean anything
  assert.throws(
    () => execFileSync("git", ["rev-parse", "--show-toplevel"], { cwd: year, stdio: "pipe" }),
    undefined,
    undefined,
    `${os.tmpdir()} is inside a git repository: run the tests with TMPDIR outside one`
  )
})

afterAll(() => {
  fs.rmSync(scratch, { recursive: true, force: true })
})

describe("outside a git repository", () => {
  it.live("each directory is its own root with its own memory, until git init at the top joins them", () =>
    Effect.gen(function*() {
      const top = yield* where(notes)
      const sub = yield* where(year)
      assert.deepStrictEqual([top.root, top.rootKind], [notes, "none"])
      assert.deepStrictEqual([sub.root, sub.rootKind], [year, "none"])
      assert.notStrictEqual(sub.memoryDir, top.memoryDir)

      const write = yield* memdir(year, [
        "write",
        "--type",
        "user",
        "--name",
        "Editor",
        "--description",
        "Uses vim",
        "--body",
        "vim, always"
      ])
      assert.strictEqual(write.status, 0, write.stderr)
      assert.deepStrictEqual(parseJson(yield* memdir(notes, ["ls", "--json"])).memories, [])
      assert.strictEqual(parseJson(yield* memdir(year, ["ls", "--json"])).memories.length, 1)

      execFileSync("git", ["init", "-q"], { cwd: notes })
      const joined = yield* where(year)
      assert.deepStrictEqual([joined.root, joined.rootKind, joined.memoryDir], [notes, "repository", top.memoryDir])
      fs.rmSync(path.join(notes, ".git"), { recursive: true, force: true })
    }))

  it.live("the directory's own local settings are trusted", () =>
    Effect.gen(function*() {
      const shared = path.join(scratch, "shared-memory")
      fs.mkdirSync(path.join(year, ".memdir"), { recursive: true })
      fs.writeFileSync(
        path.join(year, ".memdir/settings.local.json"),
        JSON.stringify({ autoMemoryDirectory: shared })
      )
      const resolved = yield* where(year)
      assert.deepStrictEqual([resolved.rootKind, resolved.source, resolved.memoryDir], ["none", "local", `${shared}/`])
    }))
})
