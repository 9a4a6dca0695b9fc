/**
 * `memdir team write | ls | sync` (docs/team-memory.md), and what the other commands need to know about team memory:
 * its switch, its directory, its remote. Every path under team/ goes through TeamGuard (in `@memdir/core`).
 */
import { InvalidMemoryInputError, MemoryDisabledError, TeamMemoryDisabledError } from "@memdir/core/Errors"
import { sortNewestWrittenFirst, writtenAtOf } from "@memdir/core/MemoryAge"
import { Staleness } from "@memdir/core/Staleness"
import {
  type Contradiction,
  listTeamMemories,
  type TeamLocation,
  TeamMemory,
  writeTeamFile
} from "@memdir/core/TeamMemory"
import { TeamSync } from "@memdir/core/TeamSync"
import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { common, jsonOption, locate } from "../Common.js"
import { printJson } from "../Output.js"
import { memdirHandler } from "../Services.js"
import { terminalLine } from "../Terminal.js"

/** The memory location of `cwd` and its team switch, directory and remote. */
export const locateTeam = (cwd: Option.Option<string>) =>
  Effect.gen(function*() {
    const location = yield* locate(cwd)
    return yield* (yield* TeamMemory).locate(location)
  })

/** Team memory is usable: auto memory on, team memory on. */
export const requireTeam = (team: TeamLocation) =>
  !team.memory.enabled
    ? Effect.fail(new MemoryDisabledError({ source: team.memory.enabledBy }))
    : !team.enabled
    ? Effect.fail(new TeamMemoryDisabledError({ source: team.enabledBy }))
    : Effect.void

/** Reads stdin when it is not a terminal (the body or file of a write). */
export const readStdin: Effect.Effect<string | undefined> = Effect.promise(async () => {
  if (process.stdin.isTTY) return undefined
  const chunks: Array<Buffer> = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString("utf8")
})

/** One warning line per team feedback memory a private feedback memory seems to contradict (stderr). */
export const warnContradictions = (contradictions: ReadonlyArray<Contradiction>) =>
  Effect.forEach(contradictions, (c) =>
    Console.error(
      `warning: this may contradict team feedback ${c.path} ("${c.name}": ${c.description}) — ${c.reason}; ` +
        `shared topic: ${c.shared.join(", ")}. Check which rule should hold.`
    ), { discard: true })

export const teamWriteCommand = Command.make(
  "write",
  {
    ...common,
    json: jsonOption,
    body: Flag.String("body").pipe(
      Flag.withMetavar("TEXT"),
      Flag.withDescription("The whole file, frontmatter included (default: read from stdin)"),
      Flag.optional
    ),
    key: Argument.String("KEY").pipe(Argument.withDescription("File path relative to team/, e.g. reference_ci.md"))
  },
  memdirHandler((args) =>
    Effect.gen(function*() {
      const content = Option.isSome(args.body) ? args.body.value : yield* readStdin
      if (content === undefined || content.trim() === "") {
        return yield* new InvalidMemoryInputError({
          field: "body",
          value: "",
          reason: "give --body TEXT or pipe the file (frontmatter + body) on stdin"
        })
      }
      const team = yield* locateTeam(args.cwd)
      yield* requireTeam(team)
      const result = yield* writeTeamFile({ memoryDir: team.memory.memoryDir, key: args.key, content })
      if (args.json) return yield* printJson(result)
      yield* Console.log(result.path)
    })
  )
).pipe(Command.withDescription("Write a raw team memory file (frontmatter + body) at team/KEY and its team index line"))

export const teamLsCommand = Command.make(
  "ls",
  { ...common, json: jsonOption },
  memdirHandler(({ cwd, json }) =>
    Effect.gen(function*() {
      const team = yield* locateTeam(cwd)
      yield* requireTeam(team)
      const staleness = yield* Staleness
      const listing = yield* listTeamMemories(team.memory.memoryDir)
      // newest first by the written time each line shows, as `memdir ls` (docs/file-format.md#age-and-staleness)
      const listed = sortNewestWrittenFirst(listing.memories)
      const ages = yield* staleness.ages(listed.map(writtenAtOf))
      const memories = listed.map((m, i) => {
        const age = ages[i]!
        return ({
          path: m.path,
          scope: "team" as const,
          name: m.name,
          description: m.description,
          type: m.type,
          mtime: new Date(m.mtime).toISOString(),
          written: new Date(writtenAtOf(m)).toISOString(),
          ageDays: age.ageDays,
          age: age.age,
          ...(m.warning === undefined ? {} : { warning: m.warning })
        })
      })
      if (json) {
        return yield* printJson({
          teamDir: listing.teamDir,
          enabledBy: team.enabledBy,
          ...(team.remote === undefined ? {} : { remote: team.remote }),
          memories,
          problems: listing.problems,
          conflicts: listing.conflicts
        })
      }
      if (memories.length === 0 && listing.problems.length === 0) {
        yield* Console.log(`no team memories in ${listing.teamDir}`)
      }
      for (const m of memories) {
        yield* Console.log(terminalLine(`${m.path}  [${m.type}] ${m.name} (${m.age}) — ${m.description}`))
      }
      for (const p of listing.problems) {
        // the scan's message names the file (relative to team/) first: say it once, from the memory directory
        const inTeam = p.path.startsWith("team/") ? p.path.slice("team/".length) : p.path
        const located = p.message.startsWith(inTeam)
          ? `${p.path}${p.message.slice(inTeam.length)}`
          : `${p.path}: ${p.message}`
        yield* Console.error(`problem: ${terminalLine(located)}`)
      }
      for (const c of listing.conflicts) {
        yield* Console.error(
          terminalLine(`conflict: ${c.path} is another version of ${c.conflictsWith}: merge them (memdir doctor)`)
        )
      }
    })
  )
).pipe(Command.withDescription("List team memories (newest first), problems and unresolved sync conflicts"))

export const teamSyncCommand = Command.make(
  "sync",
  { ...common, json: jsonOption },
  memdirHandler(({ cwd, json }) =>
    Effect.gen(function*() {
      const team = yield* locateTeam(cwd)
      const sync = yield* TeamSync
      const result = yield* sync.sync(team)
      if (json) return yield* printJson(result)
      const short = (sha: string | undefined) => sha === undefined ? "" : sha.slice(0, 12)
      if (result.committed !== undefined) yield* Console.log(`committed local team changes ${short(result.committed)}`)
      const incoming = {
        none: "the remote has no team memory yet",
        "up-to-date": "nothing new from the remote",
        "fast-forward": `took the remote's changes (${short(result.incoming)})`,
        merged: `merged the remote's changes (${short(result.incoming)})`
      }[result.merge]
      yield* Console.log(incoming)
      yield* Console.log(result.pushed ? `pushed ${short(result.head)} to ${result.remote}` : "nothing to push")
      for (const c of result.conflicts) {
        const what = c.kept === "both"
          ? `both versions kept: ${c.path} (yours) and ${c.copy} (theirs); merge them, then delete ${c.copy}`
          : `${c.path} was deleted on one side and changed on the other: kept the changed version`
        yield* Console.error(`conflict: ${terminalLine(what)}`)
      }
    })
  )
).pipe(
  Command.withDescription(
    "Commit team/ changes, fetch teamRemote, refuse unsafe incoming changes whole, merge (keeping both versions " +
      "of a memory edited on both sides) and push"
  )
)
