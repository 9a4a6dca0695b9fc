/**
 * Every hint names a command that exists: each `memdir …` command quoted in a hint, an error message, a source
 * comment or the docs is looked up in the real command tree (its subcommand path, and each `--flag` in that
 * command's usage). A renamed command or flag fails here, not in front of a user.
 */
import { assert, describe, it } from "@effect/vitest"
import type * as CommandSpec from "effect/cli/CommandSpec"
import * as Option from "effect/Option"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as Cli from "../src/Cli.js"
import { allHints } from "../src/Output.js"

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..")

/** The `memdir …` commands quoted (in backticks) in a text; templates and prose (`memdir dream: …`) left out. */
const quotedCommands = (text: string): ReadonlyArray<string> =>
  [...text.matchAll(/`memdir ([^`\n]*)`/g)]
    .map((m) => (m[1] ?? "").replace(/\\"/g, "\"").replace(/\s*…$/, "").trim())
    .filter((c) => c !== "" && !/[$:<@{]/.test(c))

/** `team write | ls | sync` → `team write`, `team ls`, `team sync`. */
const alternatives = (command: string): ReadonlyArray<string> => {
  const [first = "", ...rest] = command.split(/\s+\|\s+/)
  const prefix = first.split(" ").slice(0, -1).join(" ")
  return [first, ...rest.map((alt) => `${prefix} ${alt}`.trim())]
}

interface Parsed {
  readonly path: ReadonlyArray<string>
  readonly flags: ReadonlyArray<string>
}

/** Command words come first; `--flags` are checked; placeholders (`KEY`, `"TEXT"`, `FILE`) and values skipped. */
const parse = (command: string): Parsed => {
  const words = command.split(/\s+/)
  const path: Array<string> = []
  for (const word of words) {
    if (!/^[a-z][a-z-]*$/.test(word)) break
    path.push(word)
  }
  return { path, flags: words.filter((w) => w.startsWith("-")).map((w) => w.split("=")[0] ?? w) }
}

/** Every spelling of a flag the command accepts (`--name`, and `-n` for an alias), its own and the global ones. */
const flagsOf = (spec: CommandSpec.Spec): ReadonlySet<string> =>
  new Set(
    spec.flags.flatMap((flag) => [flag.name, ...flag.aliases].map((n) => n.length === 1 ? `-${n}` : `--${n}`))
  )

const problemsOf = async (commands: ReadonlyArray<string>): Promise<ReadonlyArray<string>> => {
  const root = await Cli.loadAll()
  const problems: Array<string> = []
  for (const command of commands.flatMap(alternatives)) {
    const parsed = parse(command)
    // `memdir help team sync` names `memdir team sync`
    const path = parsed.path[0] === "help" ? parsed.path.slice(1) : parsed.path
    // the global flags (`-C`, `--version`, …) are in every command's spec, memdir's own included
    const flagsToCheck = parsed.flags
    const found = Cli.specAt(root, path)
    if (Option.isNone(found)) {
      problems.push(`memdir ${command}: no command "memdir ${path.join(" ")}"`)
      continue
    }
    const accepted = flagsOf(found.value)
    for (const flag of flagsToCheck) {
      if (!accepted.has(flag)) problems.push(`memdir ${command}: no option ${flag}`)
    }
  }
  return problems
}

const filesUnder = (dir: string, ext: string): ReadonlyArray<string> =>
  fs.readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(ext))
    .map((e) => path.join(e.parentPath, e.name))

describe("hints name the right command", () => {
  it("the check itself catches a wrong command, a wrong subcommand and a wrong flag", async () => {
    const problems = await problemsOf([
      "docter --fix",
      "team synch",
      "doctor --fixx",
      "team write | ls | sink",
      "help team synk",
      "--wizard",
      "-C DIR ls"
    ])
    assert.deepStrictEqual(problems, [
      "memdir docter --fix: no command \"memdir docter\"",
      "memdir team synch: no command \"memdir team synch\"",
      "memdir doctor --fixx: no option --fixx",
      "memdir team sink: no command \"memdir team sink\"",
      "memdir help team synk: no command \"memdir team synk\"",
      "memdir --wizard: no option --wizard"
    ])
  })

  it("every hint the CLI prints (for every command that can fail with an input error) names a real command", async () => {
    const commands = ["write", "recall", "show", "log", "extract", "dream", "team write", "team sync"]
    const quoted = allHints(commands).flatMap(quotedCommands)
    assert.isAbove(quoted.length, 10)
    assert.deepStrictEqual(await problemsOf(quoted), [])
  })

  it("every `memdir …` command quoted in the sources (messages, hints, doc comments) and the docs exists", async () => {
    const files = [
      ...filesUnder(path.join(repoRoot, "packages/core/src"), ".ts"),
      ...filesUnder(path.join(repoRoot, "apps/cli/src"), ".ts"),
      ...filesUnder(path.join(repoRoot, "docs"), ".md"),
      path.join(repoRoot, "README.md")
    ]
    const quoted = files.flatMap((file) => quotedCommands(fs.readFileSync(file, "utf8")).map((c) => ({ file, c })))
    assert.isAbove(quoted.length, 30)
    const problems: Array<string> = []
    for (const { c, file } of quoted) {
      for (const problem of await problemsOf([c])) problems.push(`${path.relative(repoRoot, file)}: ${problem}`)
    }
    assert.deepStrictEqual(problems, [])
  })
})
