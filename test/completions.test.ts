/**
 * Shell completion as docs/install.md#shell-completion installs it: the script `memdir --completions SHELL` prints,
 * saved where the shell looks. Bash (which the demo needs anyway) is driven for real: the saved script sourced in a
 * bare shell, its completion function asked what follows `memdir rec` and `memdir recall --`. For zsh and fish,
 * which a machine may not have, the parts their documented install depends on: zsh loads a file from `fpath` by
 * its `#compdef memdir` first line, fish a file that declares `complete -c memdir`.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { buildCli, runCli, scratchHomeEnv } from "./support/cli.js"

let scratch: string

beforeAll(() => {
  buildCli()
  scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "memdir-completions-")))
})

afterAll(() => {
  fs.rmSync(scratch, { recursive: true, force: true })
})

const completionScript = (shell: string) =>
  Effect.gen(function*() {
    const run = yield* runCli(["--completions", shell], { cwd: scratch, env: scratchHomeEnv(scratch) })
    assert.strictEqual(run.status, 0, run.stderr)
    assert.strictEqual(run.stderr, "")
    return run.stdout
  })

/**
 * What bash offers after `line` (the word being completed is the text after the last space): the script sourced
 * in a shell without startup files, its function found through `complete -p memdir`, called as readline would.
 */
const bashCompletions = (script: string, line: string): Effect.Effect<ReadonlyArray<string>> =>
  Effect.callback<ReadonlyArray<string>>((resume) => {
    const driver = [
      "source \"$1\"",
      "fn=$(complete -p memdir | sed -E 's/.* -F ([^ ]+) .*/\\1/')",
      "COMP_LINE=\"$2\"; COMP_POINT=${#COMP_LINE}; read -r -a COMP_WORDS <<< \"$2\"",
      "[[ \"$2\" == *' ' ]] && COMP_WORDS+=(\"\")",
      "COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))",
      "\"$fn\" memdir \"${COMP_WORDS[COMP_CWORD]}\" \"${COMP_WORDS[COMP_CWORD-1]}\"",
      "printf '%s\\n' \"${COMPREPLY[@]}\""
    ].join("\n")
    execFile(
      "bash",
      ["--norc", "--noprofile", "-c", driver, "bash", script, line],
      { encoding: "utf8" },
      (error, stdout, stderr) =>
        resume(Effect.sync(() => {
          assert.isNull(error, `bash failed completing ${JSON.stringify(line)}: ${stderr}`)
          return stdout.split("\n").map((word) => word.trim()).filter((word) => word !== "")
        }))
    )
  })

describe("memdir --completions", () => {
  it.live("bash: the saved script completes a command name and a command's options", () =>
    Effect.gen(function*() {
      const script = path.join(scratch, "memdir.bash")
      fs.writeFileSync(script, yield* completionScript("bash"))
      assert.deepStrictEqual(yield* bashCompletions(script, "memdir rec"), ["recall"])
      const options = yield* bashCompletions(script, "memdir recall --")
      for (const option of ["--json", "--max", "--cwd", "--memory-dir"]) assert.include(options, option)
      assert.includeMembers([...(yield* bashCompletions(script, "memdir "))], ["recall", "write", "ls", "doctor"])
    }))

  it.live("zsh: a file for `fpath`, loaded by its #compdef line", () =>
    Effect.gen(function*() {
      const script = yield* completionScript("zsh")
      assert.strictEqual(script.split("\n")[0], "#compdef memdir")
    }))

  it.live("fish: completions declared for the memdir command", () =>
    Effect.gen(function*() {
      const script = yield* completionScript("fish")
      assert.match(script, /^complete -c memdir /m)
      assert.include(script, "recall")
    }))
})
