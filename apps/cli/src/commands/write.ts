import { InvalidMemoryInputError } from "@memdir/core/Errors"
import { isMemoryType, type MemoryType, memoryTypes, NAME_MAX_LENGTH } from "@memdir/core/Memory"
import { writePrivateMemory, writeTeamMemory } from "@memdir/core/TeamMemory"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { common, jsonOption, requireEnabled, switchFlag } from "../Common.js"
import { printJson } from "../Output.js"
import { memdirHandler } from "../Services.js"
import { locateTeam, requireTeam, warnContradictions } from "./teamMemory.js"

const readStdin: Effect.Effect<string | undefined> = Effect.promise(async () => {
  if (process.stdin.isTTY) return undefined
  const chunks: Array<Buffer> = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString("utf8")
})

export const writeCommand = Command.make(
  "write",
  {
    ...common,
    json: jsonOption,
    type: Flag.String("type").pipe(Flag.withDescription(`Memory type: ${memoryTypes.join(" | ")}`)),
    name: Flag.String("name").pipe(
      Flag.withDescription(
        `Title of its MEMORY.md line, at most ${NAME_MAX_LENGTH} characters, e.g. "Testing policy"`
      )
    ),
    description: Flag.String("description").pipe(
      Flag.withDescription("One line: what this memory says; recall decides on it")
    ),
    body: Flag.String("body").pipe(
      Flag.withDescription("The memory's text, Markdown, not empty (default: read from stdin)"),
      Flag.optional
    ),
    file: Flag.String("file").pipe(
      Flag.withDescription(
        "File name relative to the memory dir, or to team/ with --team (default: <type>_<topic>.md)"
      ),
      Flag.optional
    ),
    team: switchFlag("team").pipe(
      Flag.withDescription("Write a team memory (team/, shared through `memdir team sync`) instead of a private one")
    )
  },
  memdirHandler((args) =>
    Effect.gen(function*() {
      if (!isMemoryType(args.type)) {
        return yield* new InvalidMemoryInputError({
          field: "type",
          value: args.type,
          reason: `must be one of ${memoryTypes.join(", ")}`
        })
      }
      const body = Option.isSome(args.body) ? args.body.value : yield* readStdin
      // no body at all (no --body, stdin a terminal) is a usage mistake (docs/cli.md, exit 2); a blank one is
      // refused by the write itself, in every door (rule empty-body)
      if (body === undefined) {
        return yield* new InvalidMemoryInputError({
          field: "body",
          value: "",
          reason: "give --body TEXT or pipe the body on stdin",
          rule: "empty-body"
        })
      }
      const team = yield* locateTeam(args.cwd)
      yield* requireEnabled(team.memory)
      const input = {
        memoryDir: team.memory.memoryDir,
        layout: team.memory.memoryLayout,
        type: args.type as MemoryType,
        name: args.name,
        description: args.description,
        body,
        ...(Option.isSome(args.file) ? { file: args.file.value } : {})
      }
      if (args.team) {
        yield* requireTeam(team)
        const result = yield* writeTeamMemory(input)
        if (args.json) return yield* printJson(result)
        return yield* Console.log(result.path)
      }
      // Before a private feedback memory is saved: does it contradict team feedback? (docs/team-memory.md)
      const result = yield* writePrivateMemory({ ...input, teamEnabled: team.enabled })
      yield* warnContradictions(result.contradictions)
      if (args.json) return yield* printJson(result)
      yield* Console.log(result.path)
    })
  )
).pipe(Command.withDescription("Write a memory file and its MEMORY.md line (updates an existing memory)"))
