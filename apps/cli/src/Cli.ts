/**
 * The `memdir` command line: one module per command under `commands/`. Every command takes `--cwd DIR` and
 * `--memory-dir DIR`; the memory directory comes from the priority chain of SPEC §1 (MemoryPaths).
 */
import { Command } from "@effect/cli"
import { doctorCommand } from "./commands/doctor.js"
import { dreamCommand } from "./commands/dream.js"
import { extractCommand } from "./commands/extract.js"
import { initCommand } from "./commands/init.js"
import { logCommand } from "./commands/log.js"
import { lsCommand } from "./commands/ls.js"
import { pathCommand } from "./commands/path.js"
import { promptCommand } from "./commands/prompt.js"
import { recallCommand } from "./commands/recall.js"
import { showCommand } from "./commands/show.js"
import { teamCommand } from "./commands/team.js"
import { writeCommand } from "./commands/write.js"

export const memdir = Command.make("memdir").pipe(
  Command.withDescription("File-based memory for AI agents: Markdown files per git repository"),
  Command.withSubcommands([
    pathCommand,
    initCommand,
    writeCommand,
    lsCommand,
    showCommand,
    recallCommand,
    promptCommand,
    doctorCommand,
    dreamCommand,
    extractCommand,
    logCommand,
    teamCommand
  ])
)
