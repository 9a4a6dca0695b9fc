/**
 * `memdir log TEXT`: append a timestamped bullet to today's daily log (`logs/YYYY/MM/YYYY-MM-DD.md`, UTC), for
 * sessions that run for days (docs/dream-and-logs.md#daily-logs). `--prompt` prints the daily-log section of the system
 * prompt.
 */
import { appendLog, renderLogsPrompt } from "@memdir/core/DailyLog"
import * as Argument from "effect/cli/Argument"
import * as CliError from "effect/cli/CliError"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { common, jsonOption, locate, requireEnabled, switchFlag } from "../Common.js"
import { printJson } from "../Output.js"
import { memdirHandler } from "../Services.js"

export const logCommand = Command.make(
  "log",
  {
    ...common,
    json: jsonOption,
    prompt: switchFlag("prompt").pipe(
      Flag.withDescription("Print the daily-log section of the system prompt (the path as a pattern) instead")
    ),
    variant: Flag.String("variant").pipe(
      Flag.withMetavar("NAME"),
      Flag.withDescription("The prompt variant to print (with --prompt)"),
      Flag.optional
    ),
    text: Argument.String("TEXT").pipe(
      Argument.withDescription("The entry to append (several words need no quotes); not with --prompt"),
      Argument.variadic()
    )
  },
  memdirHandler((args) =>
    Effect.gen(function*() {
      const location = yield* locate(args.cwd)
      yield* requireEnabled(location)
      if (args.prompt) {
        const section = yield* Effect.fromResult(renderLogsPrompt({
          memoryDir: location.memoryDir,
          variant: Option.getOrUndefined(args.variant)
        }))
        return yield* args.json ? printJson({ prompt: section }) : Console.log(section.replace(/\n$/, ""))
      }
      const result = yield* appendLog({ memoryDir: location.memoryDir, text: args.text.join(" ") })
      if (args.json) return yield* printJson(result)
      yield* Console.log(`${result.file}: ${result.entry}`)
    })
  )
).pipe(
  // no TEXT is a usage error (exit 64), as a missing argument of any command; an empty one is an input error
  Command.validate(({ prompt, text }) =>
    prompt || text.length > 0 ? Effect.void : Effect.fail(new CliError.MissingArgument({ argument: "TEXT" }))
  ),
  Command.withDescription("Append a timestamped bullet to today's daily log (UTC), never rewriting it")
)
