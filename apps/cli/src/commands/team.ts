/**
 * `memdir team …`: team memory. `audit` inspects `<memdir>/team/` as it is on disk; the other
 * subcommands (write, ls, sync) live beside it in this command.
 */
import { ioErrorOf, switchSourceText } from "@memdir/core/Errors"
import { MemoryFs } from "@memdir/core/MemoryFs"
import * as TeamGuard from "@memdir/core/TeamGuard"
import type { TeamLocation } from "@memdir/core/TeamMemory"
import * as Command from "effect/cli/Command"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { common, jsonOption } from "../Common.js"
import { printJson } from "../Output.js"
import { memdirHandler } from "../Services.js"
import { locateTeam, teamLsCommand, teamSyncCommand, teamWriteCommand } from "./teamMemory.js"

/** Names come from other people: a newline or an escape sequence in one must not forge or garble our output. */
const printable = (text: string): string => /[\p{Cc}\p{Cf}]/u.test(text) ? JSON.stringify(text) : text

/** Why team memory is off, in a sentence: its own switch, or auto memory being off. */
const teamOffText = (team: TeamLocation): string =>
  team.memory.enabled ?
    `team memory is off (${switchSourceText(team.enabledBy)})` :
    `auto memory is disabled (${switchSourceText(team.memory.enabledBy)}), so team memory is off`

export const auditCommand = Command.make(
  "audit",
  { ...common, json: jsonOption },
  memdirHandler(({ cwd, json }) =>
    Effect.gen(function*() {
      const team = yield* locateTeam(cwd)
      const guard = yield* TeamGuard.TeamGuard
      // an inspection, not a use: it runs even while team memory is switched off, and says that it is off
      const teamDir = team.memory.memoryDir + TeamGuard.TEAM_DIR
      const teamEnabled = team.memory.enabled && team.enabled
      const exists = yield* (yield* MemoryFs).exists(teamDir).pipe(Effect.mapError(ioErrorOf("audit", teamDir)))
      const violations = exists ? yield* guard.audit(teamDir) : []
      if (json) {
        yield* printJson({ teamDir, teamEnabled, audited: exists, violations })
      } else if (!exists) {
        yield* Console.log(
          teamEnabled ?
            `ok: ${teamDir} does not exist yet: nothing to audit` :
            `${teamOffText(team)} and ${teamDir} does not exist: nothing was audited`
        )
      } else {
        if (!teamEnabled) yield* Console.log(`${teamOffText(team)}; ${teamDir} audited as it is on disk`)
        if (violations.length === 0) yield* Console.log(`ok: ${teamDir} has no violations`)
        for (const v of violations) yield* Console.log(`${v.reason} ${printable(v.path)}: ${printable(v.detail)}`)
        if (violations.length > 0) {
          yield* Console.log(`${violations.length} violation(s) in ${teamDir}: remove or fix them before syncing`)
        }
      }
      if (violations.length > 0) process.exitCode = TeamGuard.AUDIT_VIOLATIONS_EXIT_CODE
    })
  )
).pipe(
  Command.withDescription(
    `Inspect team/ on disk: links, special files, refused names, files over 250,000 bytes, likely secrets ` +
      `(exit ${TeamGuard.AUDIT_VIOLATIONS_EXIT_CODE} when any)`
  )
)

export const teamCommand = Command.make("team").pipe(
  Command.withDescription("Team memory shared through git: write, ls, sync, audit"),
  Command.withSubcommands([teamWriteCommand, teamLsCommand, teamSyncCommand, auditCommand])
)
