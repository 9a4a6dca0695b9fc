/**
 * A write whose index line cannot be written, through the bundled CLI on the real disk: the child runs under a
 * file-size limit (`ulimit -f`, RLIMIT_FSIZE) that a small memory file fits and the index does not, so only the
 * MEMORY.md write fails (EFBIG, reported as no space, as a full disk or a quota is). The command must not exit 0,
 * the memory must be taken back (nothing changed) and no temp file may be left in the memory directory.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { buildCli, cliPath, type CliRun, scratchHomeEnv } from "./support/cli.js"

let scratch: string

beforeAll(() => {
  buildCli()
  scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "memdir-full-disk-")))
})

afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }))

/**
 * `memdir …` with every file it writes limited to 16 blocks (8 KiB where `ulimit -f` counts 512-byte blocks, 16 KiB
 * where it counts 1024): Node ignores SIGXFSZ, so a write past the limit fails with EFBIG instead of killing it.
 */
const memdirLimited = (memoryDir: string, args: ReadonlyArray<string>): Effect.Effect<CliRun> =>
  Effect.callback<CliRun>((resume) => {
    const child = execFile(
      "/bin/sh",
      ["-c", "ulimit -f 16 && exec \"$0\" \"$@\"", process.execPath, cliPath, ...args],
      {
        cwd: scratch,
        env: scratchHomeEnv(path.join(scratch, "home"), { MEMDIR_MEMORY_DIR: memoryDir }),
        encoding: "utf8"
      },
      (error, stdout, stderr) => {
        const status = error === null ? 0 : typeof error.code === "number" ? error.code : -1
        resume(Effect.succeed({ status, stdout, stderr }))
      }
    )
    child.stdin?.end()
  })

/** A memory directory whose index is ~20 KB (under its 25,000-byte cap, over the child's file-size limit). */
const bigIndexDir = (name: string): string => {
  const memoryDir = path.join(scratch, name, "memory")
  fs.mkdirSync(memoryDir, { recursive: true, mode: 0o700 })
  const lines = Array.from(
    { length: 180 },
    (_, i) =>
      `- [Note ${i}](user_note_${i}.md) — a hook long enough to make the index about twenty KB, well over the limit xxxxxxxxxxxxxxxxxxx`
  )
  fs.writeFileSync(path.join(memoryDir, "MEMORY.md"), lines.join("\n") + "\n")
  return memoryDir
}

const tempFilesIn = (dir: string): Array<string> => fs.readdirSync(dir).filter((name) => name.endsWith(".tmp"))

const write = (memoryDir: string, description: string) =>
  memdirLimited(memoryDir, [
    "write",
    "--type",
    "user",
    "--name",
    "Editor",
    "--description",
    description,
    "--body",
    "Uses vim."
  ])

describe("memdir write when only the index write fails (no room for MEMORY.md)", () => {
  it.effect("a new memory: non-zero exit, the file taken back, MEMORY.md unchanged, no temp file left", () =>
    Effect.gen(function*() {
      const memoryDir = bigIndexDir("new")
      const indexBefore = fs.readFileSync(path.join(memoryDir, "MEMORY.md"), "utf8")
      assert.isAbove(indexBefore.length, 16 * 1024)
      const run = yield* write(memoryDir, "prefers vim")
      assert.notStrictEqual(run.status, 0, run.stdout)
      assert.strictEqual(run.status, 11, run.stderr)
      assert.include(run.stderr, "NoSpace")
      assert.include(run.stderr, "the memory file user_editor.md was put back as it was, so nothing changed")
      assert.isFalse(fs.existsSync(path.join(memoryDir, "user_editor.md")))
      assert.strictEqual(fs.readFileSync(path.join(memoryDir, "MEMORY.md"), "utf8"), indexBefore)
      assert.deepStrictEqual(tempFilesIn(memoryDir), [])
    }))

  it.effect("an update whose line changes: the old text is back, no temp file left", () =>
    Effect.gen(function*() {
      const memoryDir = bigIndexDir("update")
      const memory = path.join(memoryDir, "user_editor.md")
      const old = "---\nname: Editor\ndescription: prefers emacs\ntype: user\n---\n\nUses emacs.\n"
      fs.writeFileSync(memory, old)
      const indexBefore = fs.readFileSync(path.join(memoryDir, "MEMORY.md"), "utf8")
      const run = yield* write(memoryDir, "prefers vim")
      assert.strictEqual(run.status, 11, run.stderr)
      assert.include(run.stderr, "put back as it was, so nothing changed")
      assert.strictEqual(fs.readFileSync(memory, "utf8"), old)
      assert.strictEqual(fs.readFileSync(path.join(memoryDir, "MEMORY.md"), "utf8"), indexBefore)
      assert.deepStrictEqual(tempFilesIn(memoryDir), [])
    }))
})
