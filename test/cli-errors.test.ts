/**
 * The file system says no, and the CLI says why in one line with the fix: a memory directory that is a file
 * (ENOTDIR), one this user may not write (EACCES), a read-only file system (EROFS) and a full disk (ENOSPC). The
 * bundled CLI as a child process, exit 11 (docs/cli.md#exit-codes), no Effect internals in the line.
 *
 * Root ignores permission bits, so under root the EACCES case runs the CLI as user `nobody`. EROFS and ENOSPC need
 * a file system of their own: a small tmpfs mounted in a private mount namespace (`unshare -rm`, which needs no
 * root where user namespaces are allowed); where that cannot be made, those tests fail saying so.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { execFile, execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import {
  buildCli,
  cliPath,
  type CliRun,
  nodeForPermissionUser,
  parseJson,
  permissionUser,
  runCli,
  scratchHomeEnv
} from "./support/cli.js"

let scratch: string
let home: string
let project: string

const memdir = (args: ReadonlyArray<string>): Effect.Effect<CliRun> =>
  runCli(args, { cwd: project, env: scratchHomeEnv(home) })

/** What must never reach a user: Effect's and the platform's internals, or advice given twice. */
const assertPlain = (run: CliRun) => {
  for (
    const internal of ["FileSystem.", "Unknown:", "BadResource", "NotDirectory", "SystemError", "Check permissions"]
  ) {
    assert.notInclude(run.stderr, internal, run.stderr)
  }
}

/** The one `memdir:` line of a failed run (no hint line: the message says what to do). */
const errorLines = (run: CliRun) => run.stderr.split("\n").filter((line) => line !== "")

const write = ["write", "--type", "user", "--name", "editor", "--description", "Uses Neovim", "--body", "Neovim."]

/** Under root a permission case runs as `permissionUser`, with a home and a memory directory it owns: chown them. */
const ownedBy = (entries: ReadonlyArray<string>) => {
  if (permissionUser !== undefined) {
    for (const entry of entries) fs.chownSync(entry, permissionUser.uid, permissionUser.gid)
  }
}

const memdirAs = (userHome: string, args: ReadonlyArray<string>): Effect.Effect<CliRun> =>
  Effect.callback<CliRun>((resume) => {
    execFile(nodeForPermissionUser(scratch), [cliPath, ...args], {
      cwd: project,
      env: scratchHomeEnv(userHome, { MEMDIR_CODE_CACHE: path.join(userHome, "code-cache") }),
      encoding: "utf8",
      ...permissionUser
    }, (error, stdout, stderr) => {
      resume(Effect.succeed({ status: error === null ? 0 : Number(error.code), stdout, stderr }))
    })
  })

beforeAll(() => {
  buildCli()
  scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "memdir-cli-errors-")))
  fs.chmodSync(scratch, 0o755)
  home = path.join(scratch, "home")
  project = path.join(scratch, "app")
  fs.mkdirSync(project, { recursive: true })
  execFileSync("git", ["init", "-q"], { cwd: project })
})

afterAll(() => {
  fs.rmSync(scratch, { recursive: true, force: true })
})

describe("file-system refusals: one line, the cause, the fix", () => {
  it.live("a memory directory that is a file: every command names it once (ENOTDIR), exit 11", () =>
    Effect.gen(function*() {
      const file = path.join(scratch, "not-a-dir")
      fs.writeFileSync(file, "a file\n")
      for (const args of [["init"], write, ["ls"], ["doctor"], ["show", "user_editor.md"]]) {
        const run = yield* memdir([...args, "--memory-dir", file])
        assert.strictEqual(run.status, 11, `${args[0]}: ${run.stderr}`)
        assertPlain(run)
        assert.deepStrictEqual(errorLines(run), [
          `memdir: use memory directory ${file}/ failed: a file is where a directory should be (ENOTDIR); the memory ` +
          "directory and the directories above it must be directories: move the file away, or give another memory " +
          "directory (--memory-dir or MEMDIR_MEMORY_DIR)."
        ])
      }
      // below a file, too; and the JSON document names the code
      const below = parseJson(yield* memdir([...write, "--memory-dir", path.join(file, "memory"), "--json"])).error
      assert.strictEqual(below._tag, "MemoryIoError")
      assert.strictEqual(below.code, "ENOTDIR")
      assert.strictEqual(below.exitCode, 11)
      assert.strictEqual(fs.readFileSync(file, "utf8"), "a file\n")
    }))

  it.live("a memory directory this user may not write (0500): permission denied (EACCES); doctor --fix exits 0", () =>
    Effect.gen(function*() {
      const userHome = path.join(scratch, "nobody-home")
      const memoryDir = path.join(scratch, "read-only-memory")
      fs.mkdirSync(userHome, { recursive: true })
      fs.mkdirSync(memoryDir)
      fs.writeFileSync(path.join(memoryDir, "MEMORY.md"), "")
      ownedBy([userHome, memoryDir, path.join(memoryDir, "MEMORY.md")])
      fs.chmodSync(memoryDir, 0o500)
      const run = (args: ReadonlyArray<string>) => memdirAs(userHome, [...args, "--memory-dir", memoryDir])
      const refused = yield* run(write)
      assert.strictEqual(refused.status, 11, refused.stderr)
      assertPlain(refused)
      const lines = errorLines(refused)
      assert.strictEqual(lines.length, 1, refused.stderr)
      assert.match(
        lines[0]!,
        /^memdir: .+ failed: permission denied \(EACCES\); this user may not write there: fix the owner or mode of the memory directory \(it should be yours, 0700\)\.$/
      )
      assert.isFalse(fs.existsSync(path.join(memoryDir, "user_editor.md")))
      // nothing to repair needs no write: exit 0, not the refusal of a lock it did not need
      const doctor = yield* run(["doctor", "--fix"])
      assert.strictEqual(doctor.status, 0, doctor.stderr)
      assert.include(doctor.stdout, "fixed: nothing to repair")
    }))

  /**
   * Runs `script` (sh) in a private mount namespace with a 64 KiB tmpfs at `$MNT`, `$MEMDIR` the CLI; fails the
   * test loudly when the namespace or the mount cannot be made here.
   */
  const inTmpfs = (script: string): Effect.Effect<string> =>
    Effect.sync(() => {
      const mnt = fs.mkdtempSync(path.join(scratch, "mnt-"))
      const memdirCli = `${process.execPath} ${cliPath}`
      try {
        return execFileSync("unshare", ["-rm", "sh", "-c", `mount -t tmpfs -o size=64k tmpfs "$MNT" && ${script}`], {
          cwd: project,
          env: { ...scratchHomeEnv(home), MNT: mnt, MEMDIR: memdirCli },
          encoding: "utf8"
        })
      } catch (error) {
        // the script itself always ends with status 0 (each command's status is printed): this is the set-up
        throw new Error(
          "this test needs a tmpfs in a private mount namespace (`unshare -rm`, `mount -t tmpfs`), which could not " +
            `be made here: ${(error as { stderr?: string }).stderr ?? String(error)}`
        )
      }
    })

  const script = (prepare: string) =>
    `$MEMDIR init --memory-dir "$MNT/memory" >/dev/null && ${prepare} && ` +
    `{ $MEMDIR ${write.map((a) => `'${a}'`).join(" ")} --memory-dir "$MNT/memory" 2>&1; echo "status=$?"; ` +
    `$MEMDIR init --memory-dir "$MNT/new" 2>&1; echo "status=$?"; ` +
    `$MEMDIR doctor --fix --memory-dir "$MNT/memory" 2>&1; echo "status=$?"; }`

  it.live("a memory file this user may not read (0000): ls lists the others and names it unreadable (EACCES)", () =>
    Effect.gen(function*() {
      const userHome = path.join(scratch, "unreadable-home")
      const memoryDir = path.join(scratch, "unreadable-memory")
      fs.mkdirSync(userHome, { recursive: true })
      fs.mkdirSync(memoryDir, { mode: 0o700 })
      const memory = (name: string) => `---\nname: ${name}\ndescription: ${name} memory\ntype: user\n---\nBody.\n`
      fs.writeFileSync(path.join(memoryDir, "open.md"), memory("Open"))
      fs.writeFileSync(path.join(memoryDir, "locked.md"), memory("Locked"))
      ownedBy([userHome, memoryDir, ...["open.md", "locked.md"].map((f) => path.join(memoryDir, f))])
      fs.chmodSync(path.join(memoryDir, "locked.md"), 0o000)
      const listed = yield* memdirAs(userHome, ["ls", "--json", "--memory-dir", memoryDir])
      assert.strictEqual(listed.status, 0, listed.stderr)
      const document = parseJson(listed)
      assert.deepStrictEqual(document.memories.map((m: { path: string }) => m.path), ["open.md"])
      assert.deepStrictEqual(
        document.problems.map((p: { path: string; code: string }) => [p.path, p.code]),
        [["locked.md", "unreadable"]]
      )
      assert.include(document.problems[0].message, "EACCES")
    }))

  it.live("a read-only file system: read-only (EROFS) with the fix; init names it too; doctor --fix exits 0", () =>
    Effect.gen(function*() {
      const out = yield* inTmpfs(script(`mount -o remount,ro "$MNT"`))
      const [writeOut, initOut, doctorOut] = out.split(/^status=.*$/m)
      assert.deepStrictEqual([...out.matchAll(/^status=(\d+)$/gm)].map((m) => m[1]), ["11", "11", "0"], out)
      const fix = "the file system is read-only (EROFS); remount it read-write, or give memdir a writable memory " +
        "directory (--memory-dir or MEMDIR_MEMORY_DIR)."
      assert.match(writeOut!.trim(), new RegExp(`^memdir: prepare lock \\S+ failed: ${escape(fix)}$`))
      assert.strictEqual(initOut!.trim(), `memdir: init ${out.match(/\S+\/new\//)![0]} failed: ${fix}`)
      assert.include(doctorOut!, "fixed: nothing to repair")
      for (const internal of ["FileSystem.", "Unknown:", "ENOENT", "Check permissions"]) {
        assert.notInclude(out, internal)
      }
    }))

  it.live("a full disk: the disk is full (ENOSPC) with the fix, in one line", () =>
    Effect.gen(function*() {
      const out = yield* inTmpfs(script(`{ head -c 200000 /dev/zero > "$MNT/filler" 2>/dev/null; true; }`))
      const [writeOut] = out.split(/^status=.*$/m)
      assert.match(out, /^status=11$/m)
      assert.match(
        writeOut!.trim(),
        /^memdir: \S.* failed: the disk is full \(ENOSPC\); free space on it, then run the command again\.$/
      )
      for (const internal of ["FileSystem.", "Unknown:", "Check permissions"]) assert.notInclude(out, internal)
    }))
})

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
