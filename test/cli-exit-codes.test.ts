/**
 * Every exit code docs/cli.md lists, as the table says: each error's code is the one memdir maps it to, and the
 * bundled CLI ends with each code a command can end with, in the situation the table names. The codes no CLI
 * command can produce on demand are named with the tests that cover them.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { exitCodes } from "@memdir/core/Errors"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { buildCli, cliPath, makeScratchProject, repoRoot, scratchHomeEnv } from "./support/cli.js"

let scratch: string
let home: string
let project: string

/** The exit-code table of docs/cli.md: code, and the error's tag when the row names one. */
const documentedCodes = (): ReadonlyArray<{ readonly code: number; readonly tag: string | undefined }> => {
  const doc = fs.readFileSync(path.join(repoRoot, "docs/cli.md"), "utf8")
  const table = doc.slice(doc.indexOf("## Exit codes"))
  return [...table.matchAll(/^\| (\d+) \| (`(\w+)`|—|defect) \|/gm)].map((match) => ({
    code: Number(match[1]),
    tag: match[3]
  }))
}

interface Scenario {
  readonly args: ReadonlyArray<string>
  readonly env?: Record<string, string>
  /** Prepares the situation; gets a fresh memory directory of its own (and the scratch home). */
  readonly setup?: (memoryDir: string) => void
  readonly nodeArgs?: ReadonlyArray<string>
}

const page = (name: string, description: string, type: string, body: string) =>
  `---\nname: ${name}\ndescription: ${description}\ntype: ${type}\n---\n\n${body}\n`

const write = ["write", "--type", "user", "--name", "Role", "--description", "What the user does", "--body", "Dev"]

/** A situation that ends with each code a command can end with (docs/cli.md's "typical cause"). */
const scenarios: Record<number, Scenario> = {
  0: { args: ["path"] },
  // a bug: a process.cwd that throws what no code expects (as a bug would)
  1: { args: ["path"], nodeArgs: ["--require", "BUG_PRELOAD"] },
  2: { args: ["write", "--type", "nonsense", "--name", "x", "--description", "y", "--body", "z"] },
  3: { args: ["team", "write", "reference_ci.md", "--body", "no frontmatter"], env: { MEMDIR_TEAM_MEMORY: "1" } },
  4: { args: ["path"], env: { MEMDIR_MEMORY_DIR: "~" } },
  5: {
    args: ["path"],
    setup: () => fs.writeFileSync(path.join(home, ".memdir", "settings.json"), "{ not json")
  },
  6: {
    args: write,
    setup: (dir) =>
      fs.writeFileSync(
        path.join(dir, "MEMORY.md"),
        Array.from({ length: 200 }, (_, i) => `- [M${i}](user_m${i}.md) — m${i}`).join("\n") + "\n"
      )
  },
  7: { args: ["show", "user_nobody.md"] },
  8: { args: ["show", "../../etc/passwd"] },
  9: { args: write, env: { MEMDIR_DISABLE_AUTO_MEMORY: "1" } },
  11: {
    args: write,
    setup: (dir) => {
      fs.rmSync(dir, { recursive: true })
      fs.writeFileSync(dir, "a file where the memory directory should be")
    }
  },
  12: { args: ["log", "--prompt", "--variant", "nosuch"] },
  13: {
    args: ["extract", "--transcript", "TRANSCRIPT"],
    setup: () => fs.writeFileSync(path.join(scratch, "t.jsonl"), "{\"role\":\"user\",\"content\":\"hi\"}\n")
  },
  14: { args: ["team", "ls"] },
  15: {
    args: [
      "team",
      "write",
      "reference_ci.md",
      `--body=${page("CI", "The CI token", "reference", "token ghp_abcdefghijklmnopqrstuvwxyz0123456789")}`
    ],
    env: { MEMDIR_TEAM_MEMORY: "1" }
  },
  16: { args: ["team", "sync"], env: { MEMDIR_TEAM_MEMORY: "1" } },
  18: {
    args: ["hooks", "install", "--agent", "claude", "--user"],
    setup: () => {
      fs.mkdirSync(path.join(home, ".claude"), { recursive: true })
      fs.writeFileSync(path.join(home, ".claude", "settings.json"), "{ not json")
    }
  },
  20: { args: ["doctor"], setup: (dir) => fs.writeFileSync(path.join(dir, "user_bad.md"), "---\nname: x\n") },
  21: {
    args: ["team", "audit"],
    env: { MEMDIR_TEAM_MEMORY: "1" },
    setup: (dir) => {
      fs.mkdirSync(path.join(dir, "team"))
      fs.symlinkSync("/etc/passwd", path.join(dir, "team", "link.md"))
    }
  },
  64: { args: ["recal", "x"] }
}

/**
 * The codes no command ends with on demand, each with the test that makes it happen: a lock held past its
 * 10-second timeout, a team update refused whole, the edit doors of MCP and the memory tool, a signal.
 */
const coveredElsewhere: Record<number, readonly [file: string, evidence: string]> = {
  10: ["packages/core/test/FileLock.test.ts", "LockTimeoutError"],
  17: ["test/team-sync.test.ts", "TeamSyncRejectedError"],
  19: ["packages/core/test/Operations.test.ts", "VersionConflictError"],
  22: ["packages/core/test/Operations.test.ts", "EditMatchError"],
  23: ["packages/core/test/Operations.test.ts", "PathExistsError"],
  130: ["test/interrupts.test.ts", "130"],
  143: ["test/interrupts.test.ts", "143"]
}

beforeAll(() => {
  buildCli()
  ;({ scratch, home, project } = makeScratchProject("memdir-exit-codes-"))
  fs.mkdirSync(path.join(home, ".memdir"), { recursive: true })
  fs.writeFileSync(
    path.join(scratch, "bug.cjs"),
    "process.cwd = () => { throw new TypeError(\"a bug memdir did not expect\") }\n"
  )
})

afterAll(() => {
  fs.rmSync(scratch, { recursive: true, force: true })
})

describe("exit codes, as docs/cli.md lists them", () => {
  it("the table names every error memdir has, each with the code it exits with", () => {
    const rows = documentedCodes()
    assert.isAbove(rows.length, 25)
    for (const { code, tag } of rows) {
      if (tag !== undefined) assert.strictEqual(exitCodes[tag as keyof typeof exitCodes], code, tag)
    }
    const documented = new Set(rows.map((row) => row.tag).filter((tag) => tag !== undefined))
    for (const tag of Object.keys(exitCodes)) assert.isTrue(documented.has(tag), `${tag} is not in docs/cli.md`)
  })

  it("every code is what the CLI exits with in its situation, or is covered by the test named", () => {
    const rows = documentedCodes()
    assert.deepStrictEqual(
      rows.map((row) => row.code).filter((code) => !(code in scenarios) && !(code in coveredElsewhere)),
      [],
      "a documented exit code with no test"
    )
    for (const [code, [file, evidence]] of Object.entries(coveredElsewhere)) {
      assert.include(fs.readFileSync(path.join(repoRoot, file), "utf8"), evidence, `${code}: ${file}`)
    }
    for (const { code } of rows.filter((row) => row.code in scenarios)) {
      const scenario = scenarios[code]!
      const memoryDir = path.join(scratch, `memory-${code}`)
      fs.mkdirSync(memoryDir)
      scenario.setup?.(memoryDir)
      const args = scenario.args.map((arg) => arg === "TRANSCRIPT" ? path.join(scratch, "t.jsonl") : arg)
      const nodeArgs = (scenario.nodeArgs ?? []).map((arg) =>
        arg === "BUG_PRELOAD" ? path.join(scratch, "bug.cjs") : arg
      )
      const run = spawnSync(process.execPath, [...nodeArgs, cliPath, ...args], {
        cwd: project,
        env: scratchHomeEnv(home, { MEMDIR_MEMORY_DIR: memoryDir, ...scenario.env }),
        input: "",
        encoding: "utf8"
      })
      fs.rmSync(path.join(home, ".memdir", "settings.json"), { force: true })
      assert.strictEqual(run.status, code, `${code} (${args.join(" ")}): ${run.stderr}`)
      // what went wrong is on stderr (a defect too): stdout carries output a script may read
      if (code !== 0 && code !== 20 && code !== 21) assert.match(run.stderr, /^(memdir: |\[.*\] ERROR)/, String(code))
    }
  })
})
