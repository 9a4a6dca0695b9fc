/**
 * The write program (docs/file-format.md): step 1 the memory file (frontmatter + body), step 2 its pointer line in
 * MEMORY.md. Both steps run under the index lock, the cap check first, so an over-cap write changes nothing and
 * concurrent writers (other processes included) never lose each other's lines. A second write of the same memory
 * updates its file: no duplicates, unknown frontmatter keys kept.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import * as NodePath from "node:path"
import { InvalidMemoryInputError, MemoryIoError } from "./Errors.js"
import { FRONTMATTER_MAX_BYTES, parseMemoryFile } from "./Frontmatter.js"
import { Frontmatter, type MemoryHeader, type MemoryType, TEAM_DIR, writeLimitsError } from "./Memory.js"
import { MemoryFs } from "./MemoryFs.js"
import {
  DEFAULT_LAYOUT,
  detectLayout,
  type DirectoryLayout,
  isKebabName,
  layoutOfExtra,
  type LayoutSetting,
  nameFor,
  renderMemory,
  resolveLayout,
  sameMemoryName
} from "./MemoryLayout.js"
import { MemoryStore, type StoreWriteError } from "./MemoryStore.js"
import { Scanner, type ScanResult } from "./Scanner.js"

export interface WriteMemoryInput {
  readonly memoryDir: string
  /** `user | feedback | project | reference`; anything else is refused. */
  readonly type: string
  readonly name: string
  /** One line: recall decides on it. */
  readonly description: string
  readonly body: string
  /** Relative `.md` path inside the memory directory; default `<type>_<slug of name>.md` (or the existing memory). */
  readonly file?: string | undefined
  /** Team memory is on: a `team/…` file is then a team memory (default false: such a file is refused). */
  readonly teamEnabled?: boolean | undefined
  /** The `memoryLayout` setting (default `auto`: the directory's own layout, docs/configuration.md#memory-layout). */
  readonly layout?: LayoutSetting | undefined
  /**
   * Write only while the target file's text still has this version (`memoryVersion`), checked under the index
   * lock: else `VersionConflictError` and nothing is written (a file that is gone counts as changed).
   */
  readonly ifVersion?: string | undefined
}

export interface WriteMemoryResult {
  /** Absolute path of the memory file. */
  readonly path: string
  /** Path relative to the memory directory, `/`-separated (as it appears in MEMORY.md). */
  readonly file: string
  /** The memory file is new (false: an existing memory was updated). */
  readonly created: boolean
  /** A new index line was added (false: the existing line for this file was replaced). */
  readonly indexCreated: boolean
}

export interface DeleteMemoryInput {
  readonly memoryDir: string
  readonly file: string
  readonly teamEnabled?: boolean | undefined
}

export interface DeleteMemoryResult {
  readonly path: string
  readonly file: string
  readonly fileRemoved: boolean
  readonly indexLinesRemoved: number
}

/** The layout a write uses in a scanned directory, with the setting applied. */
export const writeLayout = (scan: Pick<ScanResult, "memories">, setting: LayoutSetting | undefined): WriteLayout => ({
  directory: resolveLayout(detectLayout(scan.memories), setting),
  forced: setting !== undefined && setting !== "auto"
})

/** Longest slug (before `.md` and the type prefix). */
export const SLUG_MAX_LENGTH = 60

/** Longest name a write takes (the title of its `MEMORY.md` line): `Memory.NAME_MAX_LENGTH`. */
export { NAME_MAX_LENGTH } from "./Memory.js"

/**
 * Sub-directories whose memories are not the user's own and are never matched by name (docs/team-memory.md,
 * docs/dream-and-logs.md#daily-logs).
 */
const FOREIGN_DIRS: ReadonlyArray<string> = [TEAM_DIR, "logs"]

/** FNV-1a 32-bit, hex: a short stable hash, the same on every runtime. */
export const shortHash = (text: string): string => {
  let hash = 0x811c9dc5
  for (const byte of new TextEncoder().encode(text)) {
    hash ^= byte
    hash = Math.imul(hash, 0x01000193)
  }
  return (hash >>> 0).toString(16).padStart(8, "0")
}

/**
 * A topic name as a file-name slug: lowercase ASCII letters and digits, runs of anything else joined by `_`,
 * accents folded (`Café` → `cafe`), at most 60 characters (cut at a `_` when possible), never empty (a name
 * with no ASCII letters or digits, e.g. `测试策略`, becomes `m` + a short hash of it).
 */
export const slugifyTopic = (name: string): string => {
  const ascii = name.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLowerCase()
  let slug = ascii.replace(/[^a-z0-9]+/g, "_").replace(/^_+|_+$/g, "")
  if (slug.length > SLUG_MAX_LENGTH) {
    const cut = slug.slice(0, SLUG_MAX_LENGTH)
    const boundary = cut.lastIndexOf("_")
    slug = (boundary >= SLUG_MAX_LENGTH / 2 ? cut.slice(0, boundary) : cut).replace(/_+$/, "")
  }
  return slug.length > 0 ? slug : `m${shortHash(name)}`
}

/** `<type>_<slug>.md`, without repeating the type when the name already starts with it. */
export const memoryFileName = (type: MemoryType, name: string): string => {
  const slug = slugifyTopic(name)
  return slug === type || slug.startsWith(`${type}_`) ? `${slug}.md` : `${type}_${slug}.md`
}

const decodeFrontmatter = Schema.decodeUnknownResult(Frontmatter)

/**
 * Validate a write's fields: the three of the frontmatter with the `Frontmatter` schema, then the limits every write
 * keeps (`writeLimitsError`: a name of at most `NAME_MAX_LENGTH` characters, a body that is not blank). The first
 * problem becomes the error.
 */
export const validateWriteInput = (
  input: Pick<WriteMemoryInput, "type" | "name" | "description" | "body">
): Result.Result<Frontmatter, InvalidMemoryInputError> => {
  const fields = { name: input.name, description: input.description, type: input.type }
  if (/[\r\n]/.test(input.name)) {
    return Result.fail(
      new InvalidMemoryInputError({ field: "name", value: input.name, reason: "name must be a single line" })
    )
  }
  const decoded = Result.mapError(decodeFrontmatter(fields), (error) => {
    const issue = SchemaIssue.makeFormatterStandardSchemaV1()(error.issue).issues[0]
    const field = String(issue?.path?.[0] ?? "frontmatter")
    const value = field in fields ? fields[field as keyof typeof fields] : ""
    const reason = field === "type"
      ? "type must be one of user, feedback, project, reference"
      : issue?.message ?? "invalid"
    return new InvalidMemoryInputError({ field, value: String(value), reason })
  })
  return Result.flatMap(decoded, (frontmatter) => {
    const overLimit = writeLimitsError({ name: input.name, body: input.body })
    return overLimit === undefined ? Result.succeed(frontmatter) : Result.fail(overLimit)
  })
}

/** The existing memory's header, when it parses (its keys are kept when it is rewritten). */
const existingHeader = (existing: string | undefined, file: string) =>
  existing === undefined ? undefined : Result.match(parseMemoryFile(existing, file), {
    onFailure: () => undefined,
    onSuccess: (parsed) => parsed.frontmatter
  })

/** How a write lays out its header: the directory's layout and name style; `forced` (a setting) also rewrites. */
export interface WriteLayout {
  readonly directory: DirectoryLayout
  /** The `memoryLayout` setting named a layout: an existing file is rewritten in it too. */
  readonly forced: boolean
}

/**
 * The text of a memory written from its fields, in the layout of the existing file (else the directory's, or the
 * forced one): every other frontmatter key of the existing file is kept, and its slug name when it is the same
 * memory (`testing-policy` stays, updated as "Testing policy"). A new memory's name follows the directory's style.
 */
export const memoryText = (
  frontmatter: Frontmatter,
  body: string,
  existing: string | undefined,
  file: string,
  target: WriteLayout = { directory: DEFAULT_LAYOUT, forced: false }
): string => {
  const ended = body.length === 0 || body.endsWith("\n") ? body : `${body}\n`
  const header = existingHeader(existing, file)
  const extra = header?.extra ?? {}
  const layout = header === undefined || target.forced ? target.directory.layout : layoutOfExtra(extra)
  const name = header !== undefined && isKebabName(header.name) && sameMemoryName(header.name, frontmatter.name) ?
    header.name :
    nameFor(frontmatter.name, target.directory.nameStyle)
  return renderMemory({ ...frontmatter, name }, extra, ended, layout)
}

/**
 * Where a memory without an explicit file goes: the existing memory with the same name and type (the one at the
 * conventional file name if there are several, else the newest), else `<type>_<slug>.md`, else — when that file
 * belongs to another memory — the same name with a short hash of the name.
 */
export const chooseTarget = Effect.fn("chooseTarget")(function*(
  memoryDir: string,
  frontmatter: Frontmatter,
  scanned?: ScanResult
) {
  const scan = scanned ?? (yield* (yield* Scanner).scan(memoryDir, { skipDirs: FOREIGN_DIRS }))
  const fs = yield* MemoryFs
  const conventional = memoryFileName(frontmatter.type, frontmatter.name)
  const matches = scan.memories.filter((m: MemoryHeader) =>
    m.type === frontmatter.type && sameMemoryName(m.name, frontmatter.name)
  )
  const match = matches.find((m) => m.path === conventional) ?? matches[0]
  if (match !== undefined) return match.path
  // A file is free, or holds this memory (written since the scan, by another writer: update it, never add a
  // second copy), or holds another one.
  const holder = (file: string) =>
    Effect.gen(function*() {
      const path = NodePath.join(memoryDir, file)
      const toIo = (error: { readonly message: string }) =>
        new MemoryIoError({ op: "stat", path: file, detail: error.message })
      if (!(yield* fs.exists(path).pipe(Effect.mapError(toIo)))) return "free" as const
      const head = yield* fs.readHead(path, FRONTMATTER_MAX_BYTES).pipe(Effect.option)
      if (head._tag === "None") return "other" as const
      const parsed = parseMemoryFile(head.value.text, file)
      return Result.isSuccess(parsed) && parsed.success.frontmatter.type === frontmatter.type &&
          sameMemoryName(parsed.success.frontmatter.name, frontmatter.name) ?
        "same" as const :
        "other" as const
    })
  const stem = conventional.slice(0, -".md".length)
  for (let attempt = -1;; attempt++) {
    const candidate = attempt < 0 ?
      conventional :
      `${stem}_${shortHash(attempt === 0 ? frontmatter.name : `${frontmatter.name}#${attempt}`)}.md`
    if ((yield* holder(candidate)) !== "other") return candidate
  }
})

/**
 * Write (create or update) one memory and its index line, through the `MemoryStore` (its rules hold: a `team/…`
 * file is a team memory, refused while team memory is off). Fails with `InvalidMemoryInputError`,
 * `PathTraversalError`, `IndexOverCapError` (nothing written), `LockTimeoutError`, `MemoryIoError`, or for team
 * files `TeamMemoryDisabledError` / `SecretDetectedError`.
 */
export const writeMemory = Effect.fn("writeMemory")(function*(input: WriteMemoryInput) {
  const store = yield* MemoryStore
  const frontmatter = yield* Effect.fromResult(validateWriteInput(input))
  const root = { memoryDir: input.memoryDir, teamEnabled: input.teamEnabled ?? false }
  // One scan: the memory to update (same name and type) and the directory's layout.
  const scan = yield* (yield* Scanner).scan(input.memoryDir, { skipDirs: FOREIGN_DIRS })
  const target = writeLayout(scan, input.layout)
  const file = input.file === undefined ? yield* chooseTarget(input.memoryDir, frontmatter, scan) : input.file
  const written = yield* store.write(
    root,
    file,
    (existing) => memoryText(frontmatter, input.body, existing, file, target),
    { ifVersion: input.ifVersion }
  )
  const result: WriteMemoryResult = {
    path: written.path,
    file: written.key,
    created: written.created,
    indexCreated: written.indexCreated
  }
  return result
})

/** Remove a memory file and its index line(s) ("forget X"). Fails with `MemoryNotFoundError` if neither exists. */
export const deleteMemory = Effect.fn("deleteMemory")(function*(input: DeleteMemoryInput) {
  const store = yield* MemoryStore
  const removed = yield* store.remove(
    { memoryDir: input.memoryDir, teamEnabled: input.teamEnabled ?? false },
    input.file
  )
  const result: DeleteMemoryResult = {
    path: removed.path,
    file: removed.key,
    fileRemoved: removed.fileRemoved,
    indexLinesRemoved: removed.indexLinesRemoved
  }
  return result
})

export type WriteMemoryError = StoreWriteError
