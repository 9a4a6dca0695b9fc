/**
 * The flags every `memdir` command takes, before or after its name: help, version, completions, log level and the
 * project directory (`-C DIR`, git's habit). effect/cli's own `--wizard` is left out: it prompts, and without a
 * terminal it waits forever. This module imports effect/cli alone, so `memdir --version` stays a light start.
 */
import * as Flag from "effect/cli/Flag"
import * as GlobalFlag from "effect/cli/GlobalFlag"

/** `-h`, `--help`: effect/cli's, in memdir's words (the help renderer in `Help.ts` shows this text). */
export const HelpFlag = GlobalFlag.Action({
  flag: Flag.Boolean("help").pipe(
    Flag.withAlias("h"),
    Flag.withDescription("Show this help; `memdir help COMMAND` shows a command's"),
    Flag.withDefault(false)
  ),
  run: GlobalFlag.Help.run
})

/** `-v`, `-V`, `--version`: the version alone (`main` refuses anything given with it). */
export const VersionFlag = GlobalFlag.Action({
  flag: Flag.Boolean("version").pipe(
    Flag.withAlias("v"),
    Flag.withAlias("V"),
    Flag.withDescription("Print memdir's version and exit"),
    Flag.withDefault(false)
  ),
  run: GlobalFlag.Version.run
})

/** `--completions SHELL`: the shell completion script (docs/cli.md#shell-completion). */
export const CompletionsFlag = GlobalFlag.Action({
  flag: GlobalFlag.Completions.flag.pipe(
    Flag.withMetavar("SHELL"),
    Flag.withDescription("Print the completion script for SHELL: bash, zsh, fish or powershell (sh = bash)")
  ),
  run: GlobalFlag.Completions.run
})

/**
 * The built-in global flags memdir keeps, in precedence order: effect/cli's `LogLevel` itself (its runner applies
 * that very flag's value), the others in memdir's words.
 */
export const builtIns = [HelpFlag, VersionFlag, CompletionsFlag, GlobalFlag.LogLevel] as const

/** What `--log-level` says in help (effect/cli's flag, whose own text is not memdir's). */
export const logLevelHelp = {
  metavar: "LEVEL",
  description: "Log (on stderr) what is at LEVEL or above: all, trace, debug, info (the default), warn, error, " +
    "fatal, none"
}

/**
 * `-C DIR` / `--cwd DIR` before the command (`memdir -C ~/app ls`): the project directory, as each command's own
 * `--cwd` (Common.ts), which wins when both are given.
 */
export const ProjectDirFlag = GlobalFlag.Setting("cwd")({
  flag: Flag.Directory("cwd").pipe(
    Flag.withAlias("C"),
    Flag.withMetavar("DIR"),
    Flag.withDescription("Run as if memdir was started in DIR: the project whose memory to use"),
    Flag.optional
  )
})
