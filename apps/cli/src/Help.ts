/**
 * memdir's help and usage errors, drawn from effect/cli's description of a command (`CommandSpec`): wrapped to the
 * terminal (at most 100 columns, and 100 when not a terminal), bold headings only on a terminal without `NO_COLOR`,
 * `memdir <command>` in every usage line, each flag with its value's name (`--cwd DIR`, `--agent claude|codex`), and
 * usage errors in memdir's words with "did you mean" (docs/cli.md, "Help and usage errors").
 */
import * as CliError from "effect/cli/CliError"
import type * as CommandSpec from "effect/cli/CommandSpec"
import { logLevelHelp } from "./GlobalFlags.js"

/** How help is drawn: its width in columns, and whether headings may be bold (escape codes). */
export interface Style {
  readonly width: number
  readonly color: boolean
}

/** The widest help memdir prints, also on a wide terminal: longer lines are hard to read. */
export const MAX_WIDTH = 100
const MIN_WIDTH = 40

/**
 * The style for output to `stream`: escape codes only on a terminal, with `NO_COLOR` unset (or empty, as
 * no-color.org says) and a `TERM` other than `dumb`; the terminal's width, at most `MAX_WIDTH`; `MAX_WIDTH` when
 * not a terminal (a pipe, a file).
 */
export const styleFor = (
  stream: { readonly isTTY?: boolean | undefined; readonly columns?: number | undefined },
  env: Readonly<Record<string, string | undefined>>
): Style => {
  const terminal = stream.isTTY === true
  const columns = terminal && stream.columns !== undefined && stream.columns > 0 ? stream.columns : MAX_WIDTH
  return {
    width: Math.max(MIN_WIDTH, Math.min(MAX_WIDTH, columns)),
    color: terminal && (env.NO_COLOR ?? "") === "" && env.TERM !== "dumb"
  }
}

/** The words of `text` in lines of at most `width` characters (a word longer than that is cut). */
export const wrap = (text: string, width: number): ReadonlyArray<string> => {
  const lines: Array<string> = []
  let line = ""
  for (const word of text.split(/\s+/).filter((w) => w !== "")) {
    let rest = word
    while (rest.length > width) {
      if (line !== "") lines.push(line)
      lines.push(rest.slice(0, width))
      rest = rest.slice(width)
      line = ""
    }
    if (line === "") line = rest
    else if (line.length + 1 + rest.length <= width) line += ` ${rest}`
    else {
      lines.push(line)
      line = rest
    }
  }
  if (line !== "") lines.push(line)
  return lines.length === 0 ? [""] : lines
}

/** `text` wrapped to `width`, every line after the first indented by `indent` spaces (and the first by `first`). */
const hanging = (text: string, width: number, first: number, indent: number): ReadonlyArray<string> =>
  wrap(text, width - indent).map((line, i) => `${" ".repeat(i === 0 ? first : indent)}${line}`)

/** The name a flag's or argument's value goes by: its metavar, its choices, else one from its type or name. */
const valueName = (param: CommandSpec.Argument, name: string): string => {
  if (name === "log-level") return logLevelHelp.metavar
  // a metavar memdir set (`DIR`, `SHELL`); effect/cli's own are type names (`directory`, `file`)
  if (param.metavar !== undefined && param.metavar !== param.metavar.toLowerCase()) {
    return param.metavar.replace(/^<(.*)>$/, "$1")
  }
  switch (param.type._tag) {
    case "Choice":
      return param.type.values.join("|")
    case "Int":
    case "Finite":
      return "N"
    case "Path":
      return param.type.pathType === "directory" ? "DIR" : "FILE"
    default:
      return name.toUpperCase().replace(/-/g, "_")
  }
}

/** `-C, --cwd DIR`: a flag's short names first, then its long ones, then its value's name. */
export const flagLabel = (flag: CommandSpec.Flag): string => {
  const names = [flag.name, ...flag.aliases]
  const short = names.filter((n) => n.length === 1).map((n) => `-${n}`)
  const long = names.filter((n) => n.length > 1).map((n) => `--${n}`)
  const label = [...short, ...long].join(", ")
  const padded = short.length === 0 ? `    ${label}` : label
  return flag.type._tag === "Boolean" ? padded : `${padded} ${valueName(flag, flag.name)}`
}

const flagDescription = (flag: CommandSpec.Flag): string =>
  flag.name === "log-level" ? logLevelHelp.description : flag.description ?? ""

/** An argument as usage shows it: `FILE`, `QUERY...`, `[TEXT...]`. */
const argumentLabel = (arg: CommandSpec.Argument): string => {
  const label = `${arg.name}${arg.variadic !== undefined ? "..." : ""}`
  return arg.required ? label : `[${label}]`
}

/** The flags a command's help lists as its own, and the global ones (less those the command has itself). */
const flagsOf = (spec: CommandSpec.Spec) => {
  const visible = spec.flags.filter((f) => !f.hidden)
  const own = visible.filter((f) => f.scope._tag !== "Global")
  const names = new Set(own.map((f) => f.name))
  return { own, global: visible.filter((f) => f.scope._tag === "Global" && !names.has(f.name)) }
}

/**
 * A command's usage, e.g. `memdir write --type TYPE --name NAME --description DESCRIPTION [flags]`: its path, its
 * commands, the flags it requires, then its arguments; the root adds `[-C DIR]`, which goes before the command.
 */
export const usageOf = (spec: CommandSpec.Spec): string => {
  const { own, global } = flagsOf(spec)
  const parts: Array<string> = [...spec.path]
  if (spec.path.length === 1 && global.some((f) => f.name === "cwd")) parts.push("[-C DIR]")
  if (spec.subcommands.some((s) => !s.unlisted)) parts.push("<command>")
  for (const flag of own.filter((f) => f.required)) parts.push(`--${flag.name} ${valueName(flag, flag.name)}`)
  parts.push("[flags]")
  for (const arg of spec.arguments) parts.push(argumentLabel(arg))
  return parts.join(" ")
}

/** Rows of a two-column table: labels padded to one column (at most 30 wide), descriptions wrapped beside them. */
const table = (rows: ReadonlyArray<readonly [label: string, description: string]>, width: number) => {
  const column = Math.min(30, Math.max(...rows.map(([label]) => label.length)) + 4)
  return rows.flatMap(([label, description]) => {
    const left = `  ${label}`
    if (description === "") return [left]
    // a label wider than its column: the description starts on the next line
    if (left.length + 2 > column) return [left, ...hanging(description, width, column, column)]
    const [first, ...rest] = hanging(description, width, column, column)
    return [`${left.padEnd(column)}${first!.trimStart()}`, ...rest]
  })
}

/** The help of the command `spec` describes, as `memdir [command] --help` and `memdir help [command]` print it. */
export const renderHelp = (spec: CommandSpec.Spec, style: Style): string => {
  const heading = (text: string) => style.color ? `\u001b[1m${text}\u001b[22m` : text
  const { own, global } = flagsOf(spec)
  const out: Array<string> = []
  const section = (title: string, lines: ReadonlyArray<string>) => {
    if (lines.length === 0) return
    out.push("", heading(title), ...lines)
  }
  out.push(...wrap(spec.description ?? spec.shortDescription ?? "", style.width))
  section("USAGE", hanging(usageOf(spec), style.width, 2, 4))
  const commands = spec.subcommands.filter((s) => !s.unlisted)
  section("COMMANDS", table(commands.map((c) => [c.name, c.shortDescription ?? c.description ?? ""]), style.width))
  section("ARGUMENTS", table(spec.arguments.map((a) => [a.name, a.description ?? ""]), style.width))
  section("FLAGS", table(own.map((f) => [flagLabel(f), flagDescription(f)]), style.width))
  section("GLOBAL FLAGS", table(global.map((f) => [flagLabel(f), flagDescription(f)]), style.width))
  const name = spec.path.join(" ")
  section(
    "LEARN MORE",
    hanging(
      commands.length > 0
        ? `Run \`${name} help <command>\` (or \`${name} <command> --help\`) for a command's flags. ` +
          "The reference: docs/cli.md"
        : "The reference, exit codes included: docs/cli.md",
      style.width,
      2,
      2
    ).map((line) => line)
  )
  return out.join("\n")
}

/** The candidates closest to `input` (edit distance at most 2, and at most half its length), closest first. */
export const suggest = (input: string, candidates: ReadonlyArray<string>): ReadonlyArray<string> => {
  const distance = (a: string, b: string): number => {
    let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
    for (let i = 1; i <= a.length; i++) {
      const current = [i]
      for (let j = 1; j <= b.length; j++) {
        current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
      }
      previous = current
    }
    return previous[b.length]!
  }
  const scored = candidates
    .map((candidate) => [distance(input, candidate), candidate] as const)
    .filter(([d]) => d <= Math.min(2, Math.max(1, Math.floor(input.length / 2))))
  const best = Math.min(...scored.map(([d]) => d))
  return [...new Set(scored.filter(([d]) => d === best).map(([, c]) => c))]
}

/** One usage error in memdir's words, and what to do about it. */
export interface UsageProblem {
  readonly message: string
  readonly hint: string | undefined
}

const quoteList = (names: ReadonlyArray<string>) => names.map((n) => `'${n}'`).join(", ")

/** Every spelling of the flags `spec` accepts (`--json`, `-C`, `--cwd`, …). */
const flagSpellings = (spec: CommandSpec.Spec): ReadonlyArray<string> =>
  spec.flags.filter((f) => !f.hidden).flatMap((f) =>
    [f.name, ...f.aliases].map((n) => n.length === 1 ? `-${n}` : `--${n}`)
  )

/** What a value of `flag` must be, in words: `a whole number`, `one of: claude, codex`, `a directory`. */
const expectedValue = (flag: CommandSpec.Argument | undefined, fallback: string): string => {
  switch (flag?.type._tag) {
    case "Int":
      return "a whole number"
    case "Finite":
      return "a number"
    case "Choice":
      return `one of: ${flag.type.values.join(", ")}`
    case "Path":
      return flag.type.pathType === "directory" ? "a directory" : flag.type.pathType === "file" ? "a file" : "a path"
    default:
      return fallback.replace(/^Expected:?\s*/, "")
  }
}

/**
 * A usage error of the command `spec` describes, in memdir's words, with the fix: the unknown command or flag
 * and the ones it was likely meant to be, the flag or argument that is missing, the value that is wrong and what it
 * must be.
 */
export const describeUsageError = (spec: CommandSpec.Spec, error: CliError.CliError): UsageProblem => {
  const command = `\`${spec.path.join(" ")}\``
  switch (error._tag) {
    case "UnknownSubcommand": {
      const names = spec.subcommands.filter((s) => !s.unlisted).map((s) => s.name)
      const close = suggest(error.subcommand, names)
      const where = spec.path.length > 1 ? ` of ${command}` : ""
      return close.length > 0
        ? {
          message: `unknown command '${error.subcommand}'${where}`,
          hint: `did you mean ${close.map((n) => `\`${spec.path.join(" ")} ${n}\``).join(" or ")}?`
        }
        : {
          message: `unknown command '${error.subcommand}'${where}: use one of ${quoteList(names)}`,
          hint: `\`${spec.path.join(" ")} --help\` says what each does`
        }
    }
    case "UnrecognizedOption": {
      const close = suggest(error.option, flagSpellings(spec))
      return {
        message: `unknown flag ${error.option} for ${command}`,
        hint: close.length > 0
          ? `did you mean ${close.join(" or ")}?`
          : `\`${spec.path.join(" ")} --help\` lists its flags`
      }
    }
    case "MissingOption": {
      const flag = spec.flags.find((f) => f.name === error.option)
      const value = flag === undefined ? "" : ` ${valueName(flag, flag.name)}`
      return { message: `${command} needs --${error.option}${value}`, hint: undefined }
    }
    case "MissingArgument":
      return { message: `${command} needs ${error.argument}`, hint: undefined }
    case "UnexpectedArgument":
      return {
        message: `${command} takes no argument ${error.arguments.map((a) => JSON.stringify(a)).join(", ")}`,
        hint: spec.subcommands.length > 0 ? `\`${spec.path.join(" ")} --help\` lists its commands` : undefined
      }
    case "InvalidValue": {
      const param = error.kind === "flag"
        ? spec.flags.find((f) => f.name === error.option)
        : spec.arguments.find((a) => a.name === error.option)
      const name = error.kind === "flag" ? `--${error.option}` : error.option
      const expected = expectedValue(param, error.expected)
      // a text value that starts with `-` (a Markdown bullet) is read as flags unless it follows `=`
      const dashHint = error.kind === "flag" && param?.type._tag === "String"
        ? `a value that starts with \`-\` goes after \`=\`: ${name}='- …'`
        : undefined
      return error.value === ""
        ? { message: `${name} needs a value: ${expected}`, hint: dashHint }
        : { message: `invalid ${name} ${JSON.stringify(error.value)}: expected ${expected}`, hint: undefined }
    }
    default:
      return { message: error.message, hint: undefined }
  }
}

/**
 * A usage error as stderr shows it: each problem (`memdir: …` and its `hint: …`), then the command's usage and
 * where its help is.
 */
export const renderUsageErrors = (
  spec: CommandSpec.Spec,
  problems: ReadonlyArray<UsageProblem>,
  style: Style
): string => {
  const name = spec.path.join(" ")
  return [
    ...problems.flatMap((p) => [
      ...hanging(`memdir: ${p.message}`, style.width, 0, 2),
      ...(p.hint === undefined ? [] : hanging(`hint: ${p.hint}`, style.width, 0, 2))
    ]),
    "",
    ...hanging(`usage: ${usageOf(spec)}`, style.width, 0, 4),
    ...hanging(`Run \`${name} --help\` for more.`, style.width, 0, 2)
  ].join("\n")
}

/** A usage error memdir finds itself (not effect/cli's parser), shown and exiting as any other (64). */
export const usageError = (message: string): CliError.ValidationError => new CliError.ValidationError({ message })
