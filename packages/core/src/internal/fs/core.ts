/**
 * The `MemoryFs` service's definition: its operations, file kinds, options and the one typed error. The
 * implementations (`internal/fs/node.ts`, `internal/fs/memory.ts`) import it from here, and
 * `MemoryFs.ts` re-exports it with the layers, so no implementation imports the module that imports it.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/** The one set of modes memdir creates with: every file it writes is private to its owner (0600) … */
export const FILE_MODE = 0o600
/** … and so is every directory it makes (0700). */
export const DIR_MODE = 0o700

export type FileKind =
  | "File"
  | "Directory"
  | "SymbolicLink"
  | "FIFO"
  | "Socket"
  | "CharacterDevice"
  | "BlockDevice"
  | "Unknown"

/** A file kind in words, for messages ("it is a FIFO, not a regular file"). */
export const describeKind = (kind: FileKind): string =>
  ({
    File: "a regular file",
    Directory: "a directory",
    SymbolicLink: "a symbolic link",
    FIFO: "a FIFO",
    Socket: "a socket",
    CharacterDevice: "a character device",
    BlockDevice: "a block device",
    Unknown: "not a regular file"
  })[kind]

export interface FileInfo {
  readonly kind: FileKind
  readonly size: number
  /** Modification time, epoch milliseconds. */
  readonly mtimeMs: number
  readonly ino: number
  readonly dev: number
  readonly nlink: number
  /** The owner's user id (0 where the system has none). */
  readonly uid: number
  /** The permission bits (`0o777` at most). */
  readonly mode: number
}

/** Why a file-system call failed, mapped once from the errno code. */
export const MemoryFsReason = Schema.Literals([
  "NotFound",
  "AlreadyExists",
  "SymbolicLink",
  "SymlinkLoop",
  "DanglingSymlink",
  "NotRegularFile",
  "NotDirectory",
  "TooLarge",
  "Escapes",
  "Changed",
  "PermissionDenied",
  "NoSpace",
  "Unknown"
])
export type MemoryFsReason = typeof MemoryFsReason.Type

export class MemoryFsError extends Schema.TaggedError<MemoryFsError>()("MemoryFsError", {
  op: Schema.String,
  path: Schema.String,
  reason: MemoryFsReason,
  /** The errno code or what exactly was wrong (e.g. "a FIFO", "300000 bytes (limit 250000)"). */
  detail: Schema.String,
  cause: Schema.optional(Schema.Defect())
}) {
  override get message(): string {
    return `${this.op} ${this.path} failed: ${this.reason} (${this.detail}). Check the file and its permissions.`
  }
}

export interface ReadOptions {
  /** Larger files are refused with `TooLarge` (a file that grows past it while read too). */
  readonly maxBytes: number
  /** Refuse a file with more than one hard link (it may alias a file elsewhere). */
  readonly singleLink?: boolean | undefined
  /**
   * A real directory path: after opening, the file's real path must lie inside it and name the very file held
   * open (no parent swapped for a symlink between a check and the open).
   */
  readonly within?: string | undefined
}

/** Test seams for the check-then-use races of a write (never set in production code). */
export interface WriteHooks {
  /** Right before the temp file is created (exclusively, without following a link). */
  readonly beforeTempOpen?: ((temp: string) => void) | undefined
  /** After the temp file is written and synced, right before the parent is re-verified and the rename. */
  readonly beforeRename?: ((target: string, temp: string) => void) | undefined
}

export interface WriteOptions {
  readonly mode?: number | undefined
  /**
   * A real directory path: missing parents are created one level at a time, each verified inside it, and the
   * parent's real path is verified again right before the rename.
   */
  readonly within?: string | undefined
  readonly hooks?: WriteHooks | undefined
  /**
   * Create `path` only if nothing is there (`AlreadyExists` otherwise): the complete file appears at once (a temp
   * file hard-linked into place), so a concurrent creator or reader never sees it half written.
   */
  readonly exclusive?: boolean | undefined
  /**
   * `false` skips the fsyncs (of the file and of its directory): for a file whose loss in a crash costs nothing, such
   * as a lock's owner record, on a path taken on every write. Atomicity is unchanged. Default `true`.
   */
  readonly durable?: boolean | undefined
}

export interface FileText {
  readonly text: string
  readonly info: FileInfo
}

export interface FileBytes {
  readonly bytes: Uint8Array
  readonly info: FileInfo
}

export interface FileHead extends FileText {
  /** The file is longer than what was read. */
  readonly truncated: boolean
}

export interface DirectoryEntry {
  readonly name: string
  readonly kind: FileKind
}

export interface WalkEntry {
  /** Relative to the walked root, `/`-separated. */
  readonly relative: string
  readonly absolute: string
  /** From lstat: a symbolic link is reported as one, never followed. */
  readonly info: FileInfo
}

/** An entry of `walkKinds`: what `WalkEntry` says of it without its `lstat`. */
export interface WalkKindEntry {
  /** Relative to the walked root, `/`-separated. */
  readonly relative: string
  readonly absolute: string
  /** From the directory entry (an `lstat` only where the file system reports no type): a link is reported as one. */
  readonly kind: FileKind
}

/**
 * Reads from the file `visitHeads` holds open: fills `buffer` at `offset` with the file's bytes from the same file
 * offset and returns how many it read (fewer at the end of the file). A failure throws the `MemoryFsError`,
 * which `visitHeads` hands to `failed`.
 */
export type ReadAt = (buffer: Uint8Array, offset: number, length: number) => number

/** What `visitHeads` tells its caller, file by file (`index` into the paths it was given). */
export interface HeadVisitor {
  /**
   * The file is open and is a regular file (`mtimeMs` and `size` from the fstat of the open file): read as much of
   * its head as needed, synchronously, now.
   */
  readonly file: (index: number, mtimeMs: number, read: ReadAt, size: number) => void
  /** The file could not be opened or read (`NotFound` when gone since it was listed, `NotRegularFile`, …). */
  readonly failed: (index: number, error: MemoryFsError) => void
}

export interface WalkOptions {
  /** Do not enter (nor report) directories for which this answers false; `relative` is `/`-separated. */
  readonly enter?: ((relative: string, name: string) => boolean) | undefined
  /** Stop after this many entries. */
  readonly maxEntries?: number | undefined
  /**
   * Report entries at most this many levels below `root` (1: its own entries); a directory at that depth is
   * reported, not entered. Default: no limit.
   */
  readonly maxDepth?: number | undefined
}

export class MemoryFs extends Context.Service<MemoryFs, {
  /** What is at `path` itself (a symbolic link is reported, not followed). */
  readonly lstat: (path: string) => Effect.Effect<FileInfo, MemoryFsError>
  /** Whether anything (a dangling link included) is at `path`. */
  readonly exists: (path: string) => Effect.Effect<boolean, MemoryFsError>
  /** A whole regular file as UTF-8, opened with O_NOFOLLOW | O_NONBLOCK and read with a size bound. */
  readonly readFile: (path: string, options: ReadOptions) => Effect.Effect<FileText, MemoryFsError>
  /** `readFile`'s bytes, undecoded (a binary file: git's index, a copy kept byte for byte). */
  readonly readBytes: (path: string, options: ReadOptions) => Effect.Effect<FileBytes, MemoryFsError>
  /** At most the first `maxBytes` of a regular file, opened like `readFile`. */
  readonly readHead: (path: string, maxBytes: number) => Effect.Effect<FileHead, MemoryFsError>
  /** The entries of a directory with their kinds (a link is reported as one), sorted by name unless `sorted: false`. */
  readonly readDirectory: (
    path: string,
    options?: { readonly sorted?: boolean | undefined }
  ) => Effect.Effect<ReadonlyArray<DirectoryEntry>, MemoryFsError>
  /**
   * The entries of a directory with their kinds, unsorted (as the system lists them), handed to `onChunk` a chunk
   * of at most `chunkSize` at a time as they are read: a walk over a huge directory (the scan) never holds its
   * whole listing. A failure to open the directory fails before any chunk.
   */
  readonly readDirectoryChunks: (
    path: string,
    chunkSize: number,
    onChunk: (entries: ReadonlyArray<DirectoryEntry>) => Effect.Effect<void>
  ) => Effect.Effect<void, MemoryFsError>
  /**
   * The modification times (epoch ms, from `lstat`) of many paths in one synchronous batch (the scan's newest-first
   * selection): per path its mtime or its failure, in order. Never fails as a whole.
   */
  readonly mtimeMany: (paths: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<number | MemoryFsError>>
  /**
   * What is at each of many paths (`lstat`, a link reported not followed) in one synchronous batch (a directory
   * walk's entries): per path its info or its failure, in order. Never fails as a whole.
   */
  readonly lstatMany: (paths: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<FileInfo | MemoryFsError>>
  /**
   * `readFile` of many paths with the same options, in one synchronous batch (an audit reading every file of a
   * directory): per path its text or its failure, in order. Never fails as a whole.
   */
  readonly readFileMany: (
    paths: ReadonlyArray<string>,
    options: ReadOptions
  ) => Effect.Effect<ReadonlyArray<FileText | MemoryFsError>>
  /**
   * The heads of many files in one synchronous batch (the scan): each is opened like `readHead` (never following
   * a link in its last component, never blocking, regular files only), handed to `visitor.file` to read from
   * into the caller's buffer, and closed. Never fails as a whole: a file's failure goes to `visitor.failed`.
   */
  readonly visitHeads: (paths: ReadonlyArray<string>, visitor: HeadVisitor) => Effect.Effect<void>
  /**
   * Every entry under `root`, breadth first, sorted by name per directory, never following symbolic links (each
   * entry's info is its `lstat`; an entry gone since its directory was listed is left out).
   */
  readonly walk: (root: string, options?: WalkOptions) => Effect.Effect<ReadonlyArray<WalkEntry>, MemoryFsError>
  /**
   * `walk`'s entries in `walk`'s order, each with its kind only, taken from the directory listing: no `lstat` per
   * entry (one only for an entry whose type the file system does not report; an entry gone by then is left out).
   * For a listing that needs sizes or times of a few of the files it names (`memory_list`'s page).
   */
  readonly walkKinds: (
    root: string,
    options?: WalkOptions
  ) => Effect.Effect<ReadonlyArray<WalkKindEntry>, MemoryFsError>
  /** Creates `path` and its missing parents (0700). */
  readonly makeDirectory: (path: string, options?: { readonly within?: string | undefined }) => Effect.Effect<
    void,
    MemoryFsError
  >
  /** Replaces `path` atomically (temp + fsync + rename + directory fsync); a link at `path` is replaced. */
  readonly writeFileAtomic: (
    path: string,
    data: string | Uint8Array,
    options?: WriteOptions
  ) => Effect.Effect<void, MemoryFsError>
  /** Appends to a regular file (created 0600 when missing), never following a link, never blocking. */
  readonly append: (path: string, data: string) => Effect.Effect<void, MemoryFsError>
  /**
   * Removes a file or a link (never what it points to); `NotFound` when nothing is there. With `recursive`, a
   * directory and everything in it (links inside are removed, never followed).
   */
  readonly remove: (
    path: string,
    options?: { readonly recursive?: boolean | undefined }
  ) => Effect.Effect<void, MemoryFsError>
  /** Sets the modification (and access) time of what is at `path` itself, a link not followed. */
  readonly setModified: (path: string, mtimeMs: number) => Effect.Effect<void, MemoryFsError>
  /**
   * Renames a file, link or directory; replaces a file at `to`. A directory replaces only an empty directory: onto
   * one with entries it fails with `AlreadyExists` (what a lock directory relies on).
   */
  readonly rename: (from: string, to: string) => Effect.Effect<void, MemoryFsError>
  /** Where a symbolic link points (its text, not resolved): for reports of what a link leads to. */
  readonly readLink: (path: string) => Effect.Effect<string, MemoryFsError>
  /** The real path of an existing `path`, every link followed (`NotFound` when it or a link's target is missing). */
  readonly realPath: (path: string) => Effect.Effect<string, MemoryFsError>
  /**
   * The real path of `path`: realpath of its deepest existing ancestor, the missing tail re-joined. A dangling
   * link (`DanglingSymlink`), a loop (`SymlinkLoop`) or anything else that prevents the answer fails.
   */
  readonly realPathOfDeepestExisting: (path: string) => Effect.Effect<string, MemoryFsError>
}>()("@memdir/core/MemoryFs") {}
