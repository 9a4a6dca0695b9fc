/**
 * The `memdir` command line: one module per command under `commands/`. Every command takes `--cwd DIR` (also as
 * `-C DIR` before the command: `GlobalFlags.ts`) and `--memory-dir DIR`; the memory directory comes from the
 * priority chain (flag, environment, settings, project).
 *
 * A process evaluates only the command it runs: each command module is loaded with `import()` (its own chunk in
 * the bundle), and `load` builds the `memdir` command with just the subcommand argv names. Help, completions and
 * anything that names no known command get every subcommand, so their text is unchanged.
 */
import * as Argument from "effect/cli/Argument"
import * as CliError from "effect/cli/CliError"
import * as Command from "effect/cli/Command"
import * as CommandSpec from "effect/cli/CommandSpec"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import type { FileSystem } from "effect/FileSystem"
import * as Option from "effect/Option"
import type { Path } from "effect/Path"
import type { ChildProcessSpawner } from "effect/process/ChildProcessSpawner"
import type { Stdio } from "effect/Stdio"
import type { Terminal } from "effect/Terminal"
import { builtIns, ProjectDirFlag } from "./GlobalFlags.js"
import { renderHelp, styleFor, suggest } from "./Help.js"
import type { InterruptNote } from "./Output.js"

/**
 * What `main` runs a command on: Node's services (`NodeServices.layer`): file system, path, child processes
 * (git), stdio (argv) and terminal (prompts, e.g. `hooks install`). Exactly effect/cli's `Command.Environment`.
 */
export type Platform = ChildProcessSpawner | FileSystem | Path | Stdio | Terminal

/**
 * A subcommand of `memdir`: whatever its config and errors, it needs no more than the `Platform` and the place to
 * say what it kept if a signal stops it (`InterruptNote`).
 */
export type Subcommand = Command.Command<any, any, any, unknown, Platform | InterruptNote>

/** Each subcommand's name and the module that defines it, in help order. */
export const subcommands: ReadonlyArray<readonly [name: string, load: () => Promise<Subcommand>]> = [
  ["path", () => import("./commands/path.js").then((m) => m.pathCommand)],
  ["init", () => import("./commands/init.js").then((m) => m.initCommand)],
  ["write", () => import("./commands/write.js").then((m) => m.writeCommand)],
  ["ls", () => import("./commands/ls.js").then((m) => m.lsCommand)],
  ["show", () => import("./commands/show.js").then((m) => m.showCommand)],
  ["recall", () => import("./commands/recall.js").then((m) => m.recallCommand)],
  ["prompt", () => import("./commands/prompt.js").then((m) => m.promptCommand)],
  ["doctor", () => import("./commands/doctor.js").then((m) => m.doctorCommand)],
  ["dream", () => import("./commands/dream.js").then((m) => m.dreamCommand)],
  ["extract", () => import("./commands/extract.js").then((m) => m.extractCommand)],
  ["log", () => import("./commands/log.js").then((m) => m.logCommand)],
  ["team", () => import("./commands/team.js").then((m) => m.teamCommand)],
  ["mcp", () => import("./commands/mcp.js").then((m) => m.mcpCommand)],
  ["ui", () => import("./commands/ui.js").then((m) => m.uiCommand)],
  ["hook", () => import("./commands/hook.js").then((m) => m.hookCommand)],
  ["hooks", () => import("./commands/hooks.js").then((m) => m.hooksCommand)],
  ["memory-tool", () => import("./commands/memoryTool.js").then((m) => m.memoryToolCommand)]
]

const description = "File-based memory for AI agents: Markdown files per git repository"

/** The spellings of the version flag (`GlobalFlags.VersionFlag`). */
export const versionSpellings: ReadonlyArray<string> = ["--version", "-v", "-V"]

/**
 * `memdir help [COMMAND...]`: the help of memdir or of the command named (`memdir help team sync`), as `--help`
 * prints it; a command that does not exist is a usage error, with the names it was likely meant to be.
 */
const helpCommand = (root: () => Subcommand): Subcommand =>
  Command.make(
    "help",
    {
      command: Argument.String("COMMAND").pipe(
        Argument.withDescription("The command whose help to show, e.g. `recall` or `team sync` (default: memdir's)"),
        Argument.variadic()
      )
    },
    ({ command }) =>
      Effect.flatMap(
        Effect.fromOption(specAt(root(), command)),
        (spec) => Console.log(renderHelp(spec, styleFor(process.stdout, process.env)))
      ).pipe(Effect.orDie)
  ).pipe(
    Command.validate(({ command }) => {
      // the longest known prefix, and the first name after it that is no command there
      let known = 0
      while (known < command.length && Option.isSome(specAt(root(), command.slice(0, known + 1)))) known++
      if (known === command.length) return Effect.void
      const parent = ["memdir", ...command.slice(0, known)]
      return Effect.fail(
        new CliError.UnknownSubcommand({
          subcommand: command[known]!,
          parent,
          suggestions: suggest(command[known]!, subcommandNamesAt(root(), command.slice(0, known)))
        })
      )
    }),
    Command.withDescription("Show the help of memdir or of a command: `memdir help team sync`")
  )

const withSubcommands = (loaded: ReadonlyArray<Subcommand>): Subcommand => {
  let root: Subcommand = Command.make("memdir").pipe(
    Command.withDescription(description),
    Command.withGlobalFlags([ProjectDirFlag])
  )
  if (loaded.length > 0) root = root.pipe(Command.withSubcommands([...loaded, helpCommand(() => root)]))
  return root
}

/** Options that may come before the command (`-C DIR`, `--log-level LEVEL`), with the values they take. */
const leadingOptionsWithValue = new Set(["-C", "--cwd", "--log-level"])

/**
 * memdir's arguments (argv without `node` and the script) from the command's name on: the global options before
 * it (`memdir -C ~/app ls`, `memdir --log-level debug recall …`) skipped.
 */
const fromCommandName = (argv: ReadonlyArray<string>): ReadonlyArray<string> => {
  const args = argv.slice(2)
  let i = 0
  while (i < args.length) {
    const arg = args[i]!
    if (leadingOptionsWithValue.has(arg)) i += 2
    else if (/^(--cwd|--log-level)=/.test(arg) || /^-C./.test(arg)) i += 1
    else break
  }
  return args.slice(i)
}

/**
 * Which subcommands a run needs, from its argv (`node`, the script, then memdir's arguments): the one named by
 * the first argument after the global options, none for a bare `memdir --version` (`-v`, `-V`), every one otherwise
 * (help, completions, a typo).
 */
export const neededSubcommands = (argv: ReadonlyArray<string>): ReadonlyArray<string> => {
  const args = argv.slice(2)
  if (args.length === 1 && versionSpellings.includes(args[0]!)) return []
  const named = subcommands.find(([name]) => name === fromCommandName(argv)[0])
  return named !== undefined ? [named[0]] : subcommands.map(([name]) => name)
}

/** The `memdir` command with the subcommands argv needs, their modules loaded (and evaluated) now. */
export const load = async (argv: ReadonlyArray<string>): Promise<Subcommand> => {
  const needed = new Set(neededSubcommands(argv))
  const loaded = await Promise.all(subcommands.filter(([name]) => needed.has(name)).map(([, load]) => load()))
  return withSubcommands(loaded)
}

/** Every subcommand loaded: what tests and tools that inspect the whole command tree use. */
export const loadAll = (): Promise<Subcommand> => load(["node", "memdir", "--help"])

/** The subcommands of a command, in help order (effect/cli keeps them in groups). */
const childrenOf = (command: Command.Command.Any): ReadonlyArray<Command.Command.Any> =>
  command.subcommands.flatMap((group) => group.commands)

/**
 * The (sub)command names argv runs, e.g. `["team", "sync"]` for `memdir team sync --json`: the leading arguments
 * that name a subcommand of the one before. Empty when argv names none.
 */
export const commandPathOf = (root: Subcommand, argv: ReadonlyArray<string>): ReadonlyArray<string> => {
  const path: Array<string> = []
  let command: Command.Command.Any = root
  for (const arg of fromCommandName(argv)) {
    const child = childrenOf(command).find((c) => c.name === arg)
    if (child === undefined) break
    path.push(arg)
    command = child
  }
  return path
}

/**
 * What the (sub)command at `path` (`["team", "sync"]`) accepts, if there is one: its flags (its own, then the
 * built-in global ones), arguments and subcommands (effect/cli's `CommandSpec`).
 */
export const specAt = (root: Subcommand, path: ReadonlyArray<string>): Option.Option<CommandSpec.Spec> =>
  CommandSpec.resolve(root, [root.name, ...path], { builtIns })

/** The names of the subcommands of the (sub)command at `path`, in help order; empty when there is none. */
export const subcommandNamesAt = (root: Subcommand, path: ReadonlyArray<string>): ReadonlyArray<string> => {
  let command: Command.Command.Any | undefined = root
  for (const name of path) {
    if (command === undefined) break
    command = childrenOf(command).find((c) => c.name === name)
  }
  return command === undefined ? [] : childrenOf(command).map((c) => c.name)
}
