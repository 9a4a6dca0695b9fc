/**
 * The `memdir` command line. Every command takes `--cwd DIR` and `--memory-dir DIR`; the memory directory
 * comes from the priority chain of SPEC §1 (MemoryPaths). Machine-readable output with `--json`.
 */
import { Args, Command, Options } from "@effect/cli"
import { FileSystem, Path } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import * as Doctor from "@memdir/core/Doctor"
import {
  InvalidMemoryInputError,
  MemoryDisabledError,
  type MemoryIoError,
  MemoryNotFoundError,
  PathTraversalError
} from "@memdir/core/Errors"
import { parseFrontmatter } from "@memdir/core/Frontmatter"
import * as Memdir from "@memdir/core/Memdir"
import { isMemoryType, type MemoryType, memoryTypes } from "@memdir/core/Memory"
import { INDEX_FILE, MemoryIndex } from "@memdir/core/MemoryIndex"
import { isMemoryPath, type MemoryLocation, MemoryPaths } from "@memdir/core/MemoryPaths"
import { buildMemoryPrompt } from "@memdir/core/Prompt"
import { RecallSession } from "@memdir/core/Recall"
import { Scanner } from "@memdir/core/Scanner"
import { Staleness } from "@memdir/core/Staleness"
import { writeMemory } from "@memdir/core/Write"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { DOCTOR_FINDINGS_EXIT_CODE, printJson, toIoError } from "./Output.js"

// ---------------------------------------------------------------------------------------------------------------
// Options shared by every command
// ---------------------------------------------------------------------------------------------------------------

const cwdOption = Options.directory("cwd").pipe(
  Options.withDescription("Project directory whose memory to use (default: the current directory)"),
  Options.optional
)
const memoryDirOption = Options.text("memory-dir").pipe(
  Options.withDescription("Memory directory to use (a trusted source; the MEMDIR_MEMORY_DIR env var still wins)"),
  Options.optional
)
const jsonOption = Options.boolean("json").pipe(Options.withDescription("Machine-readable JSON output"))

const common = { cwd: cwdOption, memoryDir: memoryDirOption }

/** Provide the live memdir layers, with `--memory-dir` as the trusted flag source of the directory chain. */
const withMemdir = (memoryDir: Option.Option<string>) =>
  Effect.provide(Memdir.layer(Option.isSome(memoryDir) ? { flagMemoryDir: memoryDir.value } : {}))

/** Every handler runs with the live layers built for its own `--memory-dir`. */
const memdirHandler = <A extends { readonly memoryDir: Option.Option<string> }, E, R>(
  handler: (args: A) => Effect.Effect<void, E, R>
) =>
(args: A) => handler(args).pipe(withMemdir(args.memoryDir))

const projectDir = (cwd: Option.Option<string>) =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    return path.resolve(Option.getOrElse(cwd, () => process.cwd()))
  })

const locate = (cwd: Option.Option<string>) =>
  Effect.gen(function*() {
    const paths = yield* MemoryPaths
    return yield* paths.resolve(yield* projectDir(cwd))
  })

const requireEnabled = (location: MemoryLocation) =>
  location.enabled ? Effect.void : Effect.fail(new MemoryDisabledError({ source: location.enabledBy }))

const ensureMemoryDir = (memoryDir: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    yield* fs.makeDirectory(memoryDir, { recursive: true, mode: 0o700 })
    const index = path.join(memoryDir, INDEX_FILE)
    if (!(yield* fs.exists(index))) yield* fs.writeFileString(index, "", { mode: 0o600, flag: "wx" })
  })

// ---------------------------------------------------------------------------------------------------------------
// memdir path / init
// ---------------------------------------------------------------------------------------------------------------

const pathCommand = Command.make(
  "path",
  { ...common, json: jsonOption },
  memdirHandler(({ cwd, json }) =>
    Effect.gen(function*() {
      const location = yield* locate(cwd)
      if (json) {
        return yield* printJson({
          memoryDir: location.memoryDir,
          source: location.source,
          root: location.root.root,
          rootKind: location.root.kind,
          enabled: location.enabled,
          enabledBy: location.enabledBy
        })
      }
      yield* Console.log(location.memoryDir)
    })
  )
).pipe(Command.withDescription("Print the resolved memory directory"))

const initCommand = Command.make(
  "init",
  common,
  memdirHandler(({ cwd }) =>
    Effect.gen(function*() {
      const location = yield* locate(cwd)
      yield* requireEnabled(location)
      yield* ensureMemoryDir(location.memoryDir).pipe(Effect.mapError(toIoError("init", location.memoryDir)))
      yield* Console.log(location.memoryDir)
    })
  )
).pipe(Command.withDescription("Create the memory directory and an empty MEMORY.md"))

// ---------------------------------------------------------------------------------------------------------------
// memdir write
// ---------------------------------------------------------------------------------------------------------------

const readStdin: Effect.Effect<string | undefined> = Effect.promise(async () => {
  if (process.stdin.isTTY) return undefined
  const chunks: Array<Buffer> = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString("utf8")
})

const writeCommand = Command.make(
  "write",
  {
    ...common,
    json: jsonOption,
    type: Options.text("type").pipe(Options.withDescription(`Memory type: ${memoryTypes.join(" | ")}`)),
    name: Options.text("name").pipe(Options.withDescription("Short title, e.g. \"Testing policy\"")),
    description: Options.text("description").pipe(
      Options.withDescription("One line: what this memory says; recall decides on it")
    ),
    body: Options.text("body").pipe(
      Options.withDescription("Markdown body (default: read from stdin)"),
      Options.optional
    ),
    file: Options.text("file").pipe(
      Options.withDescription("File name relative to the memory dir (default: <type>_<topic>.md)"),
      Options.optional
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
      if (body === undefined) {
        return yield* new InvalidMemoryInputError({
          field: "body",
          value: "",
          reason: "give --body TEXT or pipe the body on stdin"
        })
      }
      const location = yield* locate(args.cwd)
      yield* requireEnabled(location)
      const result = yield* writeMemory({
        memoryDir: location.memoryDir,
        type: args.type as MemoryType,
        name: args.name,
        description: args.description,
        body,
        ...(Option.isSome(args.file) ? { file: args.file.value } : {})
      })
      if (args.json) return yield* printJson(result)
      yield* Console.log(result.path)
    })
  )
).pipe(Command.withDescription("Write a memory file and its MEMORY.md line (updates an existing memory)"))

// ---------------------------------------------------------------------------------------------------------------
// memdir ls / show
// ---------------------------------------------------------------------------------------------------------------

const lsCommand = Command.make(
  "ls",
  { ...common, json: jsonOption },
  memdirHandler(({ cwd, json }) =>
    Effect.gen(function*() {
      const location = yield* locate(cwd)
      const scanner = yield* Scanner
      const staleness = yield* Staleness
      const scan = yield* scanner.scan(location.memoryDir)
      const memories = yield* Effect.forEach(scan.memories, (m) =>
        Effect.map(staleness.age(m.mtime), (age) => ({
          path: m.path,
          name: m.name,
          description: m.description,
          type: m.type,
          mtime: new Date(m.mtime).toISOString(),
          ageDays: age.ageDays,
          age: age.age,
          ...(m.warning === undefined ? {} : { warning: m.warning })
        })))
      const problems = scan.problems.map((p) => ({
        path: p.path,
        code: p.code,
        message: p.message,
        ...(p.line === undefined ? {} : { line: p.line })
      }))
      if (json) return yield* printJson({ memoryDir: location.memoryDir, memories, problems })
      if (memories.length === 0 && problems.length === 0) {
        return yield* Console.log(`no memories in ${location.memoryDir}`)
      }
      for (const m of memories) {
        yield* Console.log(`${m.path}  [${m.type}] ${m.name} (${m.age}) — ${m.description}`)
      }
      for (const p of problems) yield* Console.error(`problem: ${p.path}: ${p.message}`)
    })
  )
).pipe(Command.withDescription("List memories (newest first) and files that could not be read"))

/** Resolve FILE (relative to the memory dir, or absolute inside it) and refuse anything outside it. */
const memoryFile = (memoryDir: string, file: string) =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    if (file.includes("\0")) return yield* new PathTraversalError({ key: file, reason: "null-byte" })
    const absolute = path.resolve(memoryDir, file)
    if (!isMemoryPath(memoryDir, absolute) || absolute === path.resolve(memoryDir)) {
      return yield* new PathTraversalError({ key: file, reason: path.isAbsolute(file) ? "absolute" : "escapes-root" })
    }
    return absolute
  })

const showCommand = Command.make(
  "show",
  {
    ...common,
    json: jsonOption,
    file: Args.text({ name: "FILE" }).pipe(Args.withDescription("Memory file, relative to the memory directory"))
  },
  memdirHandler(({ cwd, file, json }) =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const location = yield* locate(cwd)
      const absolute = yield* memoryFile(location.memoryDir, file)
      const relative = path.relative(location.memoryDir, absolute).split(path.sep).join("/")
      const notFoundOrIo = (e: PlatformError): Effect.Effect<never, MemoryNotFoundError | MemoryIoError> =>
        e._tag === "SystemError" && e.reason === "NotFound" ?
          Effect.fail(new MemoryNotFoundError({ path: relative })) :
          Effect.fail(toIoError("read", absolute)(e))
      const info = yield* fs.stat(absolute).pipe(Effect.catchAll(notFoundOrIo))
      const text = yield* fs.readFileString(absolute).pipe(Effect.catchAll(notFoundOrIo))
      const mtime = Option.getOrElse(info.mtime, () => new Date(0)).getTime()
      const age = yield* (yield* Staleness).age(mtime)
      const parsed = parseFrontmatter(text, relative)
      const header = parsed._tag === "Right" ? parsed.right : undefined
      if (json) {
        return yield* printJson({
          path: relative,
          name: header?.name ?? null,
          type: header?.type ?? null,
          description: header?.description ?? null,
          mtime: new Date(mtime).toISOString(),
          ageDays: age.ageDays,
          age: age.age,
          caveat: age.caveat,
          content: text
        })
      }
      const title = header === undefined ? relative : `${header.name} [${header.type}]`
      yield* Console.log(`# ${title} — ${relative}, saved ${age.age}`)
      if (age.caveat !== null) yield* Console.log(`> ${age.caveat}`)
      yield* Console.log("")
      yield* Console.log(text.replace(/\n$/, ""))
    })
  )
).pipe(
  Command.withDescription("Print one memory with its age and, when it is old, the staleness caveat")
)

// ---------------------------------------------------------------------------------------------------------------
// memdir recall
// ---------------------------------------------------------------------------------------------------------------

const recallCommand = Command.make(
  "recall",
  {
    ...common,
    json: jsonOption,
    max: Options.integer("max").pipe(
      Options.withDescription("At most this many memories (1–5)"),
      Options.withDefault(5)
    ),
    recentTools: Options.text("recent-tools").pipe(
      Options.withDescription("Comma-separated tools the agent is using (their usage docs are skipped)"),
      Options.optional
    ),
    query: Args.text({ name: "QUERY" }).pipe(Args.repeated)
  },
  memdirHandler((args) =>
    Effect.gen(function*() {
      const location = yield* locate(args.cwd)
      yield* requireEnabled(location)
      const session = yield* RecallSession
      const query = args.query.join(" ")
      if (query.trim() === "") {
        return yield* new InvalidMemoryInputError({ field: "QUERY", value: query, reason: "give what the user asked" })
      }
      if (args.max < 1) {
        return yield* new InvalidMemoryInputError({ field: "--max", value: String(args.max), reason: "must be ≥ 1" })
      }
      const result = yield* session.recall({
        memoryDir: location.memoryDir,
        query,
        max: args.max,
        ...(Option.isSome(args.recentTools) ?
          { recentTools: args.recentTools.value.split(",").map((s) => s.trim()).filter((s) => s !== "") } :
          {})
      })
      const selected = result.selected.map((m) => ({
        path: m.path,
        name: m.name,
        type: m.type,
        description: m.description,
        ageDays: m.ageDays,
        age: m.age,
        caveat: m.caveat,
        content: m.content,
        truncated: m.truncated
      }))
      if (args.json) {
        return yield* printJson({
          selected,
          candidates: result.candidates,
          selector: result.selector,
          ...(result.degraded === undefined ? {} : { degraded: result.degraded }),
          ...(result.skipped === undefined ? {} : { skipped: result.skipped })
        })
      }
      if (selected.length === 0) {
        return yield* Console.log(`no relevant memory (${result.candidates} candidates, selector: ${result.selector})`)
      }
      for (const m of selected) {
        yield* Console.log(`## ${m.path} [${m.type}] — saved ${m.age}`)
        if (m.caveat !== null) yield* Console.log(`> ${m.caveat}`)
        yield* Console.log(m.content.replace(/\n$/, ""))
        yield* Console.log("")
      }
      yield* Console.log(`(${selected.length}/${result.candidates} selected by the ${result.selector} selector)`)
    })
  )
).pipe(Command.withDescription("Find the memories relevant to a query (offline selector by default)"))

// ---------------------------------------------------------------------------------------------------------------
// memdir prompt
// ---------------------------------------------------------------------------------------------------------------

const promptCommand = Command.make(
  "prompt",
  common,
  memdirHandler(({ cwd }) =>
    Effect.gen(function*() {
      const location = yield* locate(cwd)
      if (!location.enabled) {
        // Disabled memory means no memory section at all (SPEC §1): print nothing, say why on stderr.
        return yield* Console.error(`memdir: auto memory is disabled (${location.enabledBy}); no prompt section`)
      }
      // The directory exists before the prompt says so (SPEC §1).
      yield* ensureMemoryDir(location.memoryDir).pipe(Effect.mapError(toIoError("init", location.memoryDir)))
      const index = yield* (yield* MemoryIndex).load(location.memoryDir)
      const prompt = yield* buildMemoryPrompt({ memoryDir: location.memoryDir, index })
      yield* Console.log(prompt)
    })
  )
).pipe(Command.withDescription("Print the memory section of the system prompt, index included"))

// ---------------------------------------------------------------------------------------------------------------
// memdir doctor
// ---------------------------------------------------------------------------------------------------------------

const doctorCommand = Command.make(
  "doctor",
  {
    ...common,
    json: jsonOption,
    fix: Options.boolean("fix").pipe(Options.withDescription("Repair what is safe (never deletes a memory)"))
  },
  memdirHandler(({ cwd, fix, json }) =>
    Effect.gen(function*() {
      const location = yield* locate(cwd)
      const fixed = fix ? yield* Doctor.fix(location.memoryDir) : undefined
      const report = yield* Doctor.diagnose(location.memoryDir)
      const errors = report.findings.filter((f) => f.severity === "error").length
      if (json) {
        yield* printJson({ memoryDir: location.memoryDir, findings: report.findings, ...(fixed ? { fixed } : {}) })
      } else {
        if (fixed !== undefined) {
          for (const change of fixed.changes) yield* Console.log(`fixed: ${change}`)
        }
        if (report.findings.length === 0) yield* Console.log(`ok: ${location.memoryDir} is healthy`)
        for (const f of report.findings) {
          const where = f.path === undefined ? "" : ` ${f.path}${f.line === undefined ? "" : `:${f.line}`}`
          yield* Console.log(`${f.severity} ${f.code}${where}: ${f.message}`)
          yield* Console.log(`  fix: ${f.fix}${f.fixable ? " (memdir doctor --fix)" : ""}`)
        }
      }
      if (errors > 0) process.exitCode = DOCTOR_FINDINGS_EXIT_CODE
    })
  )
).pipe(Command.withDescription("Check the memory directory: index caps, dead links, bad frontmatter, duplicates"))

// ---------------------------------------------------------------------------------------------------------------

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
    doctorCommand
  ])
)
