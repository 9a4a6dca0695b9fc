/**
 * Yes/no questions on a terminal (`hooks install`): default No unless the question says otherwise. Answers typed
 * ahead (or pasted, `y⏎n⏎`) reach the questions in turn: a line read past the one a question takes is kept for the
 * next. End of input (Ctrl-D) answers that question and every later one with what the caller chose (No unless
 * said); Ctrl-C is an interrupt, as anywhere else in memdir (exit 130). Never a crash, never a hang.
 */
import * as Effect from "effect/Effect"

/** Lines read past the answer of an earlier question, oldest first. */
const typedAhead: Array<string> = []
/** End of input was seen (Ctrl-D): every later question is answered No at once. */
let ended = false

/** One line from the terminal after `question`; undefined at end of input. Interrupted, the reader closes. */
const readAnswer = (question: string): Effect.Effect<string | undefined> =>
  Effect.suspend(() => {
    const early = typedAhead.shift()
    if (early !== undefined || ended) {
      return Effect.sync(() => {
        process.stdout.write(`${question}${early ?? ""}\n`)
        return early
      })
    }
    return Effect.flatMap(
      Effect.promise(() => import("node:readline")),
      (readline) =>
        Effect.callback<string | undefined>((resume) => {
          const rl = readline.createInterface({ input: process.stdin, output: process.stdout })
          let answered = false
          rl.on("line", (line) => {
            if (answered) return typedAhead.push(line)
            answered = true
            resume(Effect.succeed(line))
            // the rest of what arrived with this line is read (into typedAhead) before the reader closes
            setImmediate(() => rl.close())
          })
          rl.on("close", () => {
            if (answered) return
            answered = true
            ended = true
            resume(Effect.succeed(undefined))
          })
          // a terminal in raw mode sends no signal for Ctrl-C: readline reports it here, and memdir is interrupted
          rl.on("SIGINT", () => {
            rl.close()
            process.kill(process.pid, "SIGINT")
          })
          rl.setPrompt(question)
          rl.prompt()
          // interrupted (a SIGINT that came as a signal): the reader lets go of the terminal, so the process can end
          return Effect.sync(() => rl.close())
        })
    )
  })

/**
 * Asks `question`, followed by "[y/N] " (or "[Y/n] " when `yes` is the default): y or yes is true, n or no false, an
 * empty line (or anything else) the default; end of input `ended` (default false: No, whatever the default; a
 * caller for whom Ctrl-D means "change nothing" passes undefined). `undefined` when stdin or stdout is not a terminal.
 */
export const askYesNo = (
  question: string,
  options: { readonly yes?: boolean; readonly ended?: boolean | undefined } = {}
): Effect.Effect<boolean | undefined> =>
  Effect.suspend(() =>
    process.stdin.isTTY !== true || process.stdout.isTTY !== true
      ? Effect.succeed(undefined)
      : Effect.map(readAnswer(`${question} ${options.yes === true ? "[Y/n]" : "[y/N]"} `), (answer) => {
        if (answer === undefined) return "ended" in options ? options.ended : false
        if (/^\s*y(es)?\s*$/i.test(answer)) return true
        if (/^\s*no?\s*$/i.test(answer)) return false
        return options.yes === true
      })
  )
