/**
 * The write program (SPEC §4): step 1 the memory file (frontmatter + body), step 2 its pointer line in MEMORY.md.
 * Both steps run under the index lock, the cap check first, so an over-cap write changes nothing and concurrent
 * writers (other processes included) never lose each other's lines. A second write of the same memory updates
 * its file: no duplicates, unknown frontmatter keys kept.
 */
import { FileSystem, Path } from "@effect/platform"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import {
  type IndexOverCapError,
  InvalidMemoryInputError,
  type LockTimeoutError,
  type MemoryIoError,
  MemoryNotFoundError,
  PathTraversalError
} from "./Errors.js"
import { parseMemoryFile, serializeFrontmatter } from "./Frontmatter.js"
import { ensureDir, isNotFound, toMemoryIoError, writeFileAtomic } from "./internal/atomicFile.js"
import { Frontmatter, type MemoryHeader, type MemoryType } from "./Memory.js"
import {
  checkIndexCaps,
  INDEX_FILE,
  MemoryIndex,
  normalizeIndexLink,
  removeFromIndexText,
  upsertIndexText
} from "./MemoryIndex.js"
import { Scanner } from "./Scanner.js"

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
}

export interface DeleteMemoryResult {
  readonly path: string
  readonly file: string
  readonly fileRemoved: boolean
  readonly indexLinesRemoved: number
}

/** Longest slug (before `.md` and the type prefix). */
export const SLUG_MAX_LENGTH = 60

/** Sub-directories whose memories are not the user's own and are never matched by name (SPEC §8, §9). */
const FOREIGN_DIRS: ReadonlyArray<string> = ["team", "logs"]

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

const decodeFrontmatter = Schema.decodeUnknownEither(Frontmatter)

/** Validate the three fields with the `Frontmatter` schema; the first problem becomes the error. */
export const validateWriteInput = (
  input: Pick<WriteMemoryInput, "type" | "name" | "description">
): Either.Either<Frontmatter, InvalidMemoryInputError> => {
  const fields = { name: input.name, description: input.description, type: input.type }
  if (/[\r\n]/.test(input.name)) {
    return Either.left(
      new InvalidMemoryInputError({ field: "name", value: input.name, reason: "name must be a single line" })
    )
  }
  return Either.mapLeft(decodeFrontmatter(fields), (error) => {
    const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
    const field = String(issue?.path[0] ?? "frontmatter")
    const value = field in fields ? fields[field as keyof typeof fields] : ""
    const reason = field === "type"
      ? "type must be one of user, feedback, project, reference"
      : issue?.message ?? "invalid"
    return new InvalidMemoryInputError({ field, value: String(value), reason })
  })
}

/**
 * Resolve an explicit memory file against the memory directory: a relative `.md` path that stays inside it
 * (resolved, then compared with a trailing separator, so `memory-evil/` never matches `memory/`).
 */
export const resolveMemoryFile = Effect.fn("resolveMemoryFile")(function*(memoryDir: string, file: string) {
  const path = yield* Path.Path
  if (file.includes("\0")) return yield* new PathTraversalError({ key: file, reason: "null-byte" })
  if (file.includes("\\")) return yield* new PathTraversalError({ key: file, reason: "backslash" })
  if (path.isAbsolute(file) || /^[a-zA-Z]:/.test(file)) {
    return yield* new PathTraversalError({ key: file, reason: "absolute" })
  }
  const root = path.resolve(memoryDir)
  const absolute = path.resolve(root, file)
  if (!absolute.startsWith(root.endsWith(path.sep) ? root : root + path.sep)) {
    return yield* new PathTraversalError({ key: file, reason: "escapes-root" })
  }
  const relative = path.relative(root, absolute).split(path.sep).join("/")
  if (!relative.toLowerCase().endsWith(".md")) {
    return yield* new InvalidMemoryInputError({ field: "file", value: file, reason: "a memory file must end in .md" })
  }
  if (relative === INDEX_FILE) {
    return yield* new InvalidMemoryInputError({
      field: "file",
      value: file,
      reason: `${INDEX_FILE} is the index, not a memory`
    })
  }
  return { absolute, relative }
})

/**
 * The memory file's directory must not reach outside the memory directory through a symlink: check the real path
 * of its deepest existing ancestor before creating anything below it.
 */
const checkRealContainment = Effect.fn("checkRealContainment")(function*(memoryDir: string, absolute: string) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const realPath = (at: string) => fs.realPath(at).pipe(Effect.mapError(toMemoryIoError("resolve", at)))
  const exists = (at: string) => fs.exists(at).pipe(Effect.mapError(toMemoryIoError("stat", at)))
  const root = path.resolve(memoryDir)
  let ancestor = path.dirname(absolute)
  while (ancestor !== root && ancestor !== path.dirname(ancestor) && !(yield* exists(ancestor))) {
    ancestor = path.dirname(ancestor)
  }
  const realRoot = yield* realPath(root)
  const realAncestor = yield* realPath(ancestor)
  const inside = realAncestor === realRoot ||
    realAncestor.startsWith(realRoot.endsWith(path.sep) ? realRoot : realRoot + path.sep)
  if (!inside) {
    return yield* new PathTraversalError({ key: path.relative(root, absolute), reason: "symlink-escape" })
  }
})

const readIfExists = (absolute: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    return yield* fs.readFileString(absolute).pipe(
      Effect.map((text): string | undefined => text),
      Effect.catchIf(isNotFound, () => Effect.succeed(undefined)),
      Effect.mapError(toMemoryIoError("read", absolute))
    )
  })

const sameName = (a: string, b: string): boolean => a.trim().toLowerCase() === b.trim().toLowerCase()

/**
 * Where a memory without an explicit file goes: the existing memory with the same name and type (the one at the
 * conventional file name if there are several, else the newest), else `<type>_<slug>.md`, else — when that file
 * belongs to another memory — the same name with a short hash of the name.
 */
const chooseTarget = Effect.fn("chooseTarget")(function*(memoryDir: string, frontmatter: Frontmatter) {
  const scanner = yield* Scanner
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const scan = yield* scanner.scan(memoryDir, { skipDirs: FOREIGN_DIRS })
  const conventional = memoryFileName(frontmatter.type, frontmatter.name)
  const matches = scan.memories.filter((m: MemoryHeader) =>
    m.type === frontmatter.type && sameName(m.name, frontmatter.name)
  )
  const match = matches.find((m) => m.path === conventional) ?? matches[0]
  if (match !== undefined) return match.path
  const taken = (file: string) =>
    fs.exists(path.join(memoryDir, file)).pipe(Effect.mapError(toMemoryIoError("stat", file)))
  if (!(yield* taken(conventional))) return conventional
  const stem = conventional.slice(0, -".md".length)
  for (let attempt = 0;; attempt++) {
    const candidate = `${stem}_${shortHash(attempt === 0 ? frontmatter.name : `${frontmatter.name}#${attempt}`)}.md`
    if (!(yield* taken(candidate))) return candidate
  }
})

/**
 * Write (create or update) one memory and its index line. Fails with `InvalidMemoryInputError`,
 * `PathTraversalError`, `IndexOverCapError` (nothing written), `LockTimeoutError` or `MemoryIoError`.
 */
export const writeMemory = Effect.fn("writeMemory")(function*(input: WriteMemoryInput) {
  const index = yield* MemoryIndex
  const path = yield* Path.Path
  const frontmatter = yield* validateWriteInput(input)
  const explicit = input.file === undefined ? undefined : yield* resolveMemoryFile(input.memoryDir, input.file)

  return yield* index.modify(input.memoryDir, (current) =>
    Effect.gen(function*() {
      const file = explicit?.relative ?? (yield* chooseTarget(input.memoryDir, frontmatter))
      const absolute = explicit?.absolute ?? path.join(path.resolve(input.memoryDir), file)

      // Cap check first: an over-cap write changes nothing, not even the memory file.
      const planned = upsertIndexText(current.text, { title: frontmatter.name, file, hook: frontmatter.description })
      const overCap = checkIndexCaps(current.path, current.text, planned.text)
      if (overCap !== undefined) return yield* overCap

      yield* checkRealContainment(input.memoryDir, absolute)
      yield* ensureDir(path.dirname(absolute))
      const existing = yield* readIfExists(absolute)
      const extra = existing === undefined ? {} : Either.match(parseMemoryFile(existing, file), {
        onLeft: () => ({}),
        onRight: (parsed) => parsed.frontmatter.extra
      })
      const body = input.body.length === 0 || input.body.endsWith("\n") ? input.body : `${input.body}\n`
      yield* writeFileAtomic(absolute, serializeFrontmatter({ ...extra, ...frontmatter }, body))

      const result: WriteMemoryResult = {
        path: absolute,
        file,
        created: existing === undefined,
        indexCreated: planned.created
      }
      return { text: planned.text, result }
    }))
})

/** Remove a memory file and its index line(s) ("forget X"). Fails with `MemoryNotFoundError` if neither exists. */
export const deleteMemory = Effect.fn("deleteMemory")(function*(input: DeleteMemoryInput) {
  const index = yield* MemoryIndex
  const fs = yield* FileSystem.FileSystem
  const target = yield* resolveMemoryFile(input.memoryDir, input.file)
  const dirExists = yield* fs.exists(input.memoryDir).pipe(Effect.mapError(toMemoryIoError("stat", input.memoryDir)))
  if (!dirExists) return yield* new MemoryNotFoundError({ path: target.absolute })
  yield* checkRealContainment(input.memoryDir, target.absolute)

  return yield* index.modify(input.memoryDir, (current) =>
    Effect.gen(function*() {
      const planned = removeFromIndexText(current.text, normalizeIndexLink(target.relative) ?? target.relative)
      const fileRemoved = yield* fs.remove(target.absolute).pipe(
        Effect.as(true),
        Effect.catchIf(isNotFound, () => Effect.succeed(false)),
        Effect.mapError(toMemoryIoError("remove", target.absolute))
      )
      if (!fileRemoved && planned.removed === 0) {
        return yield* new MemoryNotFoundError({ path: target.absolute })
      }
      const result: DeleteMemoryResult = {
        path: target.absolute,
        file: target.relative,
        fileRemoved,
        indexLinesRemoved: planned.removed
      }
      return { text: planned.text, result }
    }))
})

export type WriteMemoryError =
  | InvalidMemoryInputError
  | PathTraversalError
  | IndexOverCapError
  | LockTimeoutError
  | MemoryIoError
