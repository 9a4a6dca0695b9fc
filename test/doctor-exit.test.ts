/**
 * `memdir doctor`'s exit codes as docs/cli.md gives them: 0 with warnings only, 20 with an error; `--fix` 0 once it
 * has done what it safely can, whatever is left, and 11 when it has a repair to make but may not write `MEMORY.md`
 * (left as it was). The bundled CLI as a child process; root ignores permission bits, so under root the refused
 * case runs as `nobody` (uid/gid 65534), on a directory it owns.
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
  permissionUser,
  runCli,
  scratchHomeEnv
} from "./support/cli.js"

let scratch: string
let project: string

const home = () => path.join(scratch, "home")

const memdir = (memoryDir: string, args: ReadonlyArray<string>) =>
  runCli([...args, "--memory-dir", memoryDir], { cwd: project, env: scratchHomeEnv(home()) })

/** `memdir` as the user who owns `memoryDir` (`nobody` under root). */
const memdirAsOwner = (memoryDir: string, args: ReadonlyArray<string>): Effect.Effect<CliRun> =>
  Effect.callback<CliRun>((resume) => {
    execFile(nodeForPermissionUser(scratch), [cliPath, ...args, "--memory-dir", memoryDir], {
      cwd: project,
      env: scratchHomeEnv(home(), { MEMDIR_CODE_CACHE: path.join(home(), "code-cache") }),
      encoding: "utf8",
      ...permissionUser
    }, (error, stdout, stderr) => {
      resume(Effect.succeed({ status: error === null ? 0 : Number(error.code), stdout, stderr }))
    })
  })

const memory = (name: string) =>
  `---\nname: ${name}\ndescription: about ${name}\ntype: project\n---\n\nBody of ${name}.\n`

/** A fresh memory directory holding `files`. */
const directory = (label: string, files: Record<string, string>): string => {
  const dir = path.join(scratch, label)
  fs.mkdirSync(dir, { recursive: true })
  for (const [name, content] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), content)
  return dir
}

beforeAll(() => {
  buildCli()
  scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "memdir-doctor-exit-")))
  fs.chmodSync(scratch, 0o755)
  project = path.join(scratch, "app")
  fs.mkdirSync(project)
  fs.mkdirSync(home())
  execFileSync("git", ["init", "-q"], { cwd: project })
})

afterAll(() => {
  fs.rmSync(scratch, { recursive: true, force: true })
})

describe("memdir doctor: exit codes", () => {
  it.live("warnings only: 0; an error: 20; --fix with an error left for you: 0", () =>
    Effect.gen(function*() {
      const warned = directory("warned", { "MEMORY.md": "", "project_a.md": memory("A") })
      assert.strictEqual((yield* memdir(warned, ["doctor"])).status, 0)
      const broken = directory("broken", { "MEMORY.md": "- [Gone](gone.md) — gone\n", "broken.md": "no header\n" })
      const found = yield* memdir(broken, ["doctor"])
      assert.strictEqual(found.status, 20, found.stderr)
      assert.strictEqual((yield* memdir(broken, ["doctor", "--json"])).status, 20)
      const fixed = yield* memdir(broken, ["doctor", "--fix"])
      assert.strictEqual(fixed.status, 0, fixed.stderr)
      assert.strictEqual(
        fixed.stdout.trimEnd().split("\n").at(-1),
        "fixed: MEMORY.md: removed 1 line; 1 finding above needs you"
      )
    }))

  it.live("--fix with a repair to make in a directory it may not write: 11, MEMORY.md as it was", () =>
    Effect.gen(function*() {
      const index = "- [Gone](gone.md) — gone\n"
      const dir = directory("read-only", { "MEMORY.md": index })
      if (permissionUser !== undefined) {
        for (const entry of [home(), dir, path.join(dir, "MEMORY.md")]) {
          fs.chownSync(entry, permissionUser.uid, permissionUser.gid)
        }
      }
      fs.chmodSync(dir, 0o500)
      const run = yield* memdirAsOwner(dir, ["doctor", "--fix"])
      fs.chmodSync(dir, 0o700)
      assert.strictEqual(run.status, 11, run.stdout + run.stderr)
      assert.include(run.stderr, "permission denied (EACCES)")
      assert.strictEqual(fs.readFileSync(path.join(dir, "MEMORY.md"), "utf8"), index)
    }))
})
