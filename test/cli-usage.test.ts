/**
 * Help and usage errors of the bundled `memdir` CLI, as a person meets them: help without escape codes unless
 * stdout is a terminal (a real pseudo-terminal from `script`), wrapped to 100 columns or the terminal's width,
 * `memdir help`, the version alone, `-C DIR`, "did you mean", and usage errors with the usage on stderr, exit 64
 * (docs/cli.md, "Help and usage errors").
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { execFileSync, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { buildCli, cliPath, makeScratchProject, parseJson, repoRoot, scratchHomeEnv } from "./support/cli.js"

let scratch: string
let home: string
let project: string

interface Run {
  readonly status: number
  readonly stdout: string
  readonly stderr: string
}

const memdir = (
  args: ReadonlyArray<string>,
  options: { readonly env?: Record<string, string>; readonly cwd?: string } = {}
): Run => {
  const result = spawnSync(process.execPath, [cliPath, ...args], {
    cwd: options.cwd ?? project,
    env: scratchHomeEnv(home, options.env),
    input: "",
    encoding: "utf8",
    timeout: 60_000
  })
  return { status: result.status ?? -1, stdout: result.stdout, stderr: result.stderr }
}

const shellQuote = (arg: string) => `'${arg.replace(/'/g, "'\\''")}'`

/**
 * `memdir args` on a pseudo-terminal of `columns` columns (util-linux `script`), as a person at a terminal runs
 * it: what it wrote, carriage returns removed.
 */
const onTerminal = (args: ReadonlyArray<string>, columns: number, env: Record<string, string> = {}): string => {
  const command = `stty cols ${columns}; exec ${[process.execPath, cliPath, ...args].map(shellQuote).join(" ")}`
  const output = execFileSync("script", ["-qec", command, "/dev/null"], {
    cwd: project,
    env: scratchHomeEnv(home, env),
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"]
  })
  return output.replace(/\r/g, "")
}

const ESC = "\u001b"
const stripEscapes = (text: string) => text.replace(/\u001b\[[0-9;]*m/g, "")
const longLines = (text: string, width: number) => text.split("\n").filter((line) => line.length > width)

/** Every command path, from `memdir help`'s listing down (a command with commands lists them too). */
let knownPaths: ReadonlyArray<ReadonlyArray<string>> | undefined
const commandPaths = (): ReadonlyArray<ReadonlyArray<string>> => knownPaths ??= listPaths()
const listPaths = (): ReadonlyArray<ReadonlyArray<string>> => {
  const listed = (run: Run) => {
    const lines = run.stdout.split("\n")
    const start = lines.indexOf("COMMANDS")
    if (start < 0) return []
    const names: Array<string> = []
    for (const line of lines.slice(start + 1)) {
      if (line === "") break
      const match = /^ {2}(\S+)/.exec(line)
      if (match !== null) names.push(match[1]!)
    }
    return names
  }
  const paths: Array<ReadonlyArray<string>> = [[]]
  for (const name of listed(memdir(["--help"]))) {
    paths.push([name])
    for (const sub of listed(memdir([name, "--help"]))) paths.push([name, sub])
  }
  return paths
}

beforeAll(() => {
  buildCli()
  ;({ scratch, home, project } = makeScratchProject("memdir-usage-"))
})

afterAll(() => {
  fs.rmSync(scratch, { recursive: true, force: true })
})

describe("help", () => {
  it("every command's help, piped: no escape codes (also with NO_COLOR, TERM=dumb), no line over 100", () => {
    const paths = commandPaths()
    assert.includeDeepMembers([...paths], [[], ["recall"], ["team", "sync"], ["hooks", "install"], ["help"]])
    const runs = [
      ...paths.map((commandPath) => [commandPath, {}] as const),
      ...[{ NO_COLOR: "1" }, { TERM: "dumb" }, { FORCE_COLOR: "1" }].map((env) => [["write"], env] as const)
    ]
    for (const [commandPath, env] of runs) {
      const run = memdir([...commandPath, "--help"], { env })
      assert.strictEqual(run.status, 0, run.stderr)
      assert.notInclude(run.stdout, ESC, `${commandPath.join(" ")} ${JSON.stringify(env)}`)
      assert.deepStrictEqual(longLines(run.stdout, 100), [], commandPath.join(" "))
    }
  })

  it("on a terminal: bold headings, wrapped to its width; NO_COLOR and TERM=dumb turn the escapes off", () => {
    const colored = onTerminal(["write", "--help"], 60)
    assert.include(colored, `${ESC}[1mUSAGE`)
    assert.deepStrictEqual(longLines(stripEscapes(colored), 60), [])
    assert.isNotEmpty(longLines(memdir(["write", "--help"]).stdout, 60), "piped, it is wider than 60")
    assert.notInclude(onTerminal(["write", "--help"], 60, { NO_COLOR: "1" }), ESC)
    assert.notInclude(onTerminal(["write", "--help"], 60, { TERM: "dumb" }), ESC)
    // an empty NO_COLOR is unset (no-color.org)
    assert.include(onTerminal(["write", "--help"], 60, { NO_COLOR: "" }), ESC)
  })

  it("usage lines read `memdir <command>`; every flag has a description in memdir's words, choices listed", () => {
    for (const commandPath of commandPaths()) {
      const help = memdir([...commandPath, "--help"]).stdout
      const lines = help.split("\n")
      const usage = lines[lines.indexOf("USAGE") + 1]!
      assert.match(usage, new RegExp(`^ {2}memdir ${commandPath.map((p) => `${p} `).join("")}`), usage)
      // a flag's line is `  -x, --name VALUE  description` or its description follows on the next line
      lines.forEach((line, i) => {
        if (!/^ {2}(-\w, |\s{4})--[\w-]+/.test(line)) return
        const described = /--[\w-]+( \S+)?\s{2,}\S/.test(line) || /^\s{20,}\S/.test(lines[i + 1] ?? "")
        assert.isTrue(described, `${commandPath.join(" ")}: ${line}`)
      })
      assert.notMatch(help, /A user-defined piece of text|A directory\.|choice|\bstring\b/, commandPath.join(" "))
    }
    assert.include(memdir(["--help"]).stdout, "memdir [-C DIR] <command> [flags]")
    assert.include(memdir(["write", "--help"]).stdout, "user | feedback | project | reference")
    assert.include(memdir(["recall", "--help"]).stdout, "--selector model|offline")
    assert.include(memdir(["hooks", "install", "--help"]).stdout, "memdir hooks install --agent claude|codex [flags]")
    assert.include(memdir(["recall", "--help"]).stdout, "memdir recall [flags] QUERY...")
  })

  it("no --wizard: not offered, and refused at once without a terminal (it used to wait forever)", () => {
    assert.notInclude(memdir(["--help"]).stdout, "wizard")
    const run = memdir(["--wizard"])
    assert.strictEqual(run.status, 64)
    assert.include(run.stderr, "unknown flag --wizard")
  })

  it("`memdir help [command]` prints what `--help` prints; an unknown command is a usage error", () => {
    assert.strictEqual(memdir(["help"]).stdout, memdir(["--help"]).stdout)
    assert.strictEqual(memdir(["help", "recall"]).stdout, memdir(["recall", "--help"]).stdout)
    const teamSync = memdir(["help", "team", "sync"])
    assert.strictEqual(teamSync.status, 0)
    assert.strictEqual(teamSync.stdout, memdir(["team", "sync", "--help"]).stdout)
    assert.include(memdir(["--help"]).stdout, "help ")
    const typo = memdir(["help", "recal"])
    assert.strictEqual(typo.status, 64)
    assert.strictEqual(typo.stdout, "")
    assert.include(typo.stderr, "did you mean `memdir recall`?")
    const nested = memdir(["help", "team", "synk"])
    assert.strictEqual(nested.status, 64)
    assert.include(nested.stderr, "did you mean `memdir team sync`?")
  })

  it("--completions prints a completion script per shell (documented in docs/cli.md)", () => {
    for (const shell of ["bash", "zsh", "fish"]) {
      const run = memdir(["--completions", shell])
      assert.strictEqual(run.status, 0, run.stderr)
      assert.include(run.stdout, "recall", shell)
    }
    assert.include(fs.readFileSync(path.join(repoRoot, "docs/cli.md"), "utf8"), "--completions")
  })

  it("--log-level sets which log lines reach stderr, before or after the command", () => {
    const memoryDir = path.join(scratch, "log-level-memory")
    fs.mkdirSync(memoryDir)
    const quiet = memdir(["recall", "--memory-dir", memoryDir, "pool size"])
    assert.strictEqual(quiet.status, 0, quiet.stderr)
    assert.notInclude(quiet.stderr, "DEBUG")
    for (const args of [["recall", "--log-level", "debug"], ["--log-level", "debug", "recall"]]) {
      const debug = memdir([...args, "--memory-dir", memoryDir, "pool size"])
      assert.strictEqual(debug.status, 0, debug.stderr)
      assert.include(debug.stderr, "DEBUG")
      assert.notInclude(debug.stdout, "DEBUG")
    }
  })
})

describe("the version", () => {
  it("-v, -V and --version print exactly the version; anything given with them is a usage error", () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(path.dirname(cliPath), "../package.json"), "utf8"))
    for (const flag of ["-v", "-V", "--version"]) {
      const run = memdir([flag])
      assert.strictEqual(run.status, 0, run.stderr)
      assert.strictEqual(run.stdout, `${pkg.version}\n`)
      assert.strictEqual(run.stderr, "")
    }
    for (const args of [["--version", "extra"], ["ls", "-v"], ["-V", "--json"]]) {
      const run = memdir(args)
      assert.strictEqual(run.status, 64, args.join(" "))
      assert.include(run.stderr, "prints the version alone")
      assert.include(run.stderr, "usage: memdir")
    }
  })
})

describe("-C DIR, git's habit", () => {
  it("-C DIR and --cwd DIR work before the command and after it, as one project directory", () => {
    const other = path.join(scratch, "other")
    fs.mkdirSync(path.join(other, "sub"), { recursive: true })
    execFileSync("git", ["init", "-q"], { cwd: other })
    const expected = memdir(["path"], { cwd: other }).stdout
    assert.notStrictEqual(expected, memdir(["path"]).stdout)
    for (
      const args of [["-C", other, "path"], ["--cwd", other, "path"], ["path", "-C", other], [`--cwd=${other}`, "path"]]
    ) {
      const run = memdir(args)
      assert.strictEqual(run.status, 0, run.stderr)
      assert.strictEqual(run.stdout, expected, args.join(" "))
    }
    // the command's own --cwd wins
    assert.notStrictEqual(memdir(["-C", other, "path", "--cwd", project]).stdout, expected)
    assert.include(memdir(["--help"]).stdout, "-C, --cwd DIR")
    assert.include(memdir(["ls", "--help"]).stdout, "-C, --cwd DIR")
  })

  it("-C naming no directory is an input error (exit 2); a file is a usage error (64); a deleted cwd exit 2", () => {
    const missing = memdir(["-C", path.join(scratch, "nowhere"), "ls"])
    assert.strictEqual(missing.status, 2)
    assert.include(missing.stderr, "no such directory")
    const file = path.join(scratch, "a-file")
    fs.writeFileSync(file, "")
    assert.strictEqual(memdir(["-C", file, "ls"]).status, 64)
    // a shell still in a directory removed since: a clear error, not a crash
    const gone = path.join(scratch, "gone")
    fs.mkdirSync(gone)
    const run = spawnSync("sh", [
      "-c",
      `cd ${shellQuote(gone)} && rmdir ${shellQuote(gone)} && exec "$0" "$@"`,
      process.execPath,
      cliPath,
      "path"
    ], {
      env: scratchHomeEnv(home),
      encoding: "utf8"
    })
    assert.strictEqual(run.status, 2, run.stderr)
    assert.include(run.stderr, "the current directory no longer exists")
  })
})

describe("usage errors: memdir's words, did you mean, the usage on stderr, exit 64", () => {
  it("a mistyped command or flag suggests the one meant", () => {
    const command = memdir(["recal", "x"])
    assert.strictEqual(command.status, 64)
    assert.strictEqual(command.stdout, "")
    assert.include(command.stderr, "memdir: unknown command 'recal'")
    assert.include(command.stderr, "hint: did you mean `memdir recall`?")
    assert.include(command.stderr, "usage: memdir [-C DIR] <command> [flags]")
    const nested = memdir(["team", "snyc"])
    assert.strictEqual(nested.status, 64)
    assert.include(nested.stderr, "did you mean `memdir team sync`?")
    const flag = memdir(["ls", "--jsn"])
    assert.strictEqual(flag.status, 64)
    assert.include(flag.stderr, "unknown flag --jsn for `memdir ls`")
    assert.include(flag.stderr, "did you mean --json?")
    assert.include(flag.stderr, "usage: memdir ls [flags]")
    const global = memdir(["--verison"])
    assert.strictEqual(global.status, 64)
    assert.include(global.stderr, "did you mean --version?")
  })

  it("a missing argument or flag, a wrong value: what is needed, then the command's usage", () => {
    const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string, string]> = [
      [["recall"], "`memdir recall` needs QUERY", "usage: memdir recall [flags] QUERY..."],
      [["log"], "`memdir log` needs TEXT", "usage: memdir log [flags] [TEXT...]"],
      [["show"], "`memdir show` needs FILE", "usage: memdir show [flags] FILE"],
      [["write", "--type", "user"], "`memdir write` needs --name NAME", "usage: memdir write --type TYPE --name NAME"],
      [["recall", "--max", "abc", "q"], "invalid --max \"abc\": expected a whole number", "usage: memdir recall"],
      [
        ["hooks", "install", "--agent", "vim"],
        "invalid --agent \"vim\": expected one of: claude, codex",
        "usage: memdir hooks install"
      ],
      [["ls", "--cwd"], "--cwd needs a value: a directory", "usage: memdir ls [flags]"],
      [["ls", "extra"], "`memdir ls` takes no argument \"extra\"", "usage: memdir ls [flags]"]
    ]
    for (const [args, problem, usage] of cases) {
      const run = memdir(args)
      assert.strictEqual(run.status, 64, `${args.join(" ")}: ${run.stderr}`)
      assert.strictEqual(run.stdout, "", args.join(" "))
      assert.include(run.stderr, `memdir: ${problem}`, args.join(" "))
      assert.include(run.stderr, usage, args.join(" "))
      assert.include(run.stderr, "--help` for more.", args.join(" "))
    }
    // a value starting with `-` (a Markdown bullet) is read as flags: one problem, and how to give it
    const bullet = memdir(["write", "--type", "user", "--name", "a", "--description", "d", "--body", "- a bullet"])
    assert.strictEqual(bullet.status, 64)
    assert.include(bullet.stderr, "memdir: --body needs a value")
    assert.include(bullet.stderr, "hint: a value that starts with `-` goes after `=`: --body='- …'")
    assert.notInclude(bullet.stderr, "unknown flag")
    // an empty query is given, but says nothing: an input error (2), as before
    assert.strictEqual(memdir(["recall", ""]).status, 2)
  })

  it("--json: the usage error as a document on stdout, with its hint and the usage", () => {
    const run = memdir(["recal", "x", "--json"])
    assert.strictEqual(run.status, 64)
    const error = parseJson(run).error
    assert.deepInclude(error, { _tag: "UsageError", kind: "UnknownSubcommand", exitCode: 64 })
    assert.strictEqual(error.message, "unknown command 'recal'")
    assert.strictEqual(error.hint, "did you mean `memdir recall`?")
    assert.strictEqual(error.usage, "memdir [-C DIR] <command> [flags]")
    const missing = parseJson(memdir(["recall", "--json"])).error
    assert.deepInclude(missing, { kind: "MissingArgument", usage: "memdir recall [flags] QUERY..." })
  })
})
