/**
 * The in-memory `MemoryFs`: directories, regular files, symbolic links and FIFOs in a map keyed by absolute
 * POSIX path. It answers like the live one (same reasons, same refusals: a link in the last component is never
 * followed by a read, a FIFO is "not a regular file", `within` is verified), so the live services over it make a
 * memdir world with no disk. Times come from `Clock`, so `TestClock` drives them. The tree itself is
 * `internal/fs/memoryTree.ts`.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as NodePath from "node:path"
import { isInside } from "../containment/inside.js"
import {
  describeKind,
  DIR_MODE,
  type DirectoryEntry,
  FILE_MODE,
  type HeadVisitor,
  type MemoryFs,
  MemoryFsError,
  type MemoryFsReason,
  type ReadOptions,
  type WalkEntry,
  type WalkKindEntry,
  type WalkOptions,
  type WriteOptions
} from "./core.js"
import { makeMemoryTree, type MemoryTree, type Node } from "./memoryTree.js"

/** Absolute path → file content, or a link / FIFO to plant. */
export type MemoryFsSeed = Readonly<Record<string, string | { readonly symlink: string } | { readonly fifo: true }>>

const posix = NodePath.posix
const encoder = new TextEncoder()
const decoder = new TextDecoder("utf-8")

const fail = (op: string, path: string, reason: MemoryFsReason, detail: string) =>
  Effect.fail(new MemoryFsError({ op, path, reason, detail }))

/** `within` checks: `Containment`'s predicate over this file system's `/`-separated paths, the root included. */
const ROOT_INCLUDED = { allowRoot: true, sep: "/" } as const

/** The in-memory `MemoryFs` over `tree` (a new one by default), seeded with `seed`. */
export const makeMemoryFsInMemory = (
  seed: MemoryFsSeed = {},
  tree: MemoryTree = makeMemoryTree()
): MemoryFs["Service"] => {
  const { infoOf, newIno, nodes, normalize, resolvePath } = tree

  /** The entry named by `path` itself (the parent resolved, the last component not followed). */
  const entryOf = (
    op: string,
    path: string
  ): Effect.Effect<{ path: string; node: Node | undefined }, MemoryFsError> => {
    const located = tree.locate(path)
    return located._tag === "Missing" ?
      fail(op, path, located.reason, located.detail) :
      Effect.succeed({ path: located.path, node: located.node })
  }

  const lstat = (path: string) =>
    Effect.flatMap(
      entryOf("lstat", path),
      ({ node }) => node === undefined ? fail("lstat", path, "NotFound", "ENOENT") : Effect.succeed(infoOf(node))
    )

  const exists = (path: string) =>
    lstat(path).pipe(
      Effect.as(true),
      Effect.catchIf((error) => error.reason === "NotFound", () => Effect.succeed(false))
    )

  const realPathOfDeepestExisting = (path: string): Effect.Effect<string, MemoryFsError> =>
    Effect.gen(function*() {
      const tail: Array<string> = []
      let current = normalize(path)
      while (true) {
        const resolved = resolvePath(current, true)
        if (resolved._tag === "Found") return posix.join(resolved.path, ...[...tail].reverse())
        if (resolved.reason === "SymlinkLoop") {
          return yield* fail("resolve", current, "SymlinkLoop", "too many levels of symbolic links")
        }
        if (resolved.reason !== "NotFound") return yield* fail("resolve", current, resolved.reason, resolved.detail)
        const entry = yield* Effect.result(entryOf("lstat", current))
        if (entry._tag === "Success" && entry.success.node !== undefined) {
          const node = entry.success.node
          if (node.kind !== "SymbolicLink") return yield* fail("resolve", current, "Changed", "changed while checked")
          return yield* fail("resolve", current, "DanglingSymlink", `-> ${node.target} (missing)`)
        }
        const parent = posix.dirname(current)
        if (parent === current) return yield* fail("resolve", path, "Unknown", "no ancestor exists")
        tail.push(posix.basename(current))
        current = parent
      }
    })

  const regularFile = (op: string, path: string) =>
    Effect.flatMap(entryOf(op, path), ({ node, path: at }) => {
      if (node === undefined) return fail(op, path, "NotFound", "ENOENT")
      if (node.kind === "SymbolicLink") return fail(op, path, "SymbolicLink", "a symbolic link (ELOOP)")
      if (node.kind !== "File") return fail(op, path, "NotRegularFile", describeKind(node.kind))
      return Effect.succeed({ node, at })
    })

  /** The regular file at `path`, checked as the live `readFile` checks it. */
  const readChecked = (path: string, options: ReadOptions) =>
    Effect.gen(function*() {
      const { node } = yield* regularFile("open", path)
      const links = infoOf(node).nlink
      if (options.singleLink === true && links > 1) {
        return yield* fail("open", path, "NotRegularFile", `has ${links} hard links (may alias a file elsewhere)`)
      }
      if (node.data.length > options.maxBytes) {
        return yield* fail("read", path, "TooLarge", `${node.data.length} bytes (limit ${options.maxBytes})`)
      }
      if (options.within !== undefined) {
        const real = yield* realPathOfDeepestExisting(path)
        if (!isInside(options.within, real, ROOT_INCLUDED)) {
          return yield* fail("open", path, "Escapes", `resolves to ${real}, outside ${options.within}`)
        }
      }
      return node
    })

  const readFile = (path: string, options: ReadOptions) =>
    Effect.map(readChecked(path, options), (node) => ({ text: decoder.decode(node.data), info: infoOf(node) }))

  const readBytes = (path: string, options: ReadOptions) =>
    Effect.map(readChecked(path, options), (node) => ({ bytes: Uint8Array.from(node.data), info: infoOf(node) }))

  const readHead = (path: string, maxBytes: number) =>
    Effect.map(regularFile("open", path), ({ node }) => ({
      text: decoder.decode(node.data.subarray(0, maxBytes)),
      info: infoOf(node),
      truncated: node.data.length > maxBytes
    }))

  const readDirectory = (path: string, _options?: { readonly sorted?: boolean | undefined }) =>
    Effect.gen(function*() {
      const resolved = resolvePath(path, true)
      if (resolved._tag === "Missing") return yield* fail("list", path, resolved.reason, resolved.detail)
      if (resolved.node.kind !== "Directory") return yield* fail("list", path, "NotDirectory", "ENOTDIR")
      const entries = tree.childrenOf(resolved.path).map(([name, node]): DirectoryEntry => ({ name, kind: node.kind }))
      return entries.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
    })

  const readDirectoryChunks = (
    path: string,
    chunkSize: number,
    onChunk: (entries: ReadonlyArray<DirectoryEntry>) => Effect.Effect<void>
  ) =>
    Effect.flatMap(readDirectory(path), (entries) =>
      Effect.gen(function*() {
        for (let start = 0; start < entries.length; start += chunkSize) {
          yield* onChunk(entries.slice(start, start + chunkSize))
        }
      }))

  const mtimeMany = (paths: ReadonlyArray<string>) =>
    Effect.forEach(paths, (path) => Effect.catch(Effect.map(lstat(path), (info) => info.mtimeMs), Effect.succeed))

  const lstatMany = (paths: ReadonlyArray<string>) =>
    Effect.forEach(paths, (path) => Effect.catch(lstat(path), Effect.succeed))

  const readFileMany = (paths: ReadonlyArray<string>, options: ReadOptions) =>
    Effect.forEach(paths, (path) => Effect.catch(readFile(path, options), Effect.succeed))

  const visitHeads = (paths: ReadonlyArray<string>, visitor: HeadVisitor) =>
    Effect.forEach(paths, (path, index) =>
      Effect.match(regularFile("open", path), {
        onFailure: (error) => visitor.failed(index, error),
        onSuccess: ({ node }) =>
          visitor.file(index, node.mtimeMs, (buffer, offset, length) => {
            const bytes = node.data.subarray(offset, offset + length)
            buffer.set(bytes, offset)
            return bytes.length
          }, node.data.length)
      }), { discard: true })

  const realPath = (path: string) =>
    Effect.suspend(() => {
      const resolved = resolvePath(path, true)
      return resolved._tag === "Found" ?
        Effect.succeed(resolved.path) :
        fail("resolve", path, resolved.reason, resolved.detail)
    })

  // The tree knows every entry's kind: nothing to look up, as a file system that reports every type.
  const walkKinds = (root: string, options: WalkOptions = {}) =>
    Effect.gen(function*() {
      const out: Array<WalkKindEntry> = []
      const max = options.maxEntries ?? Number.POSITIVE_INFINITY
      const queue: Array<readonly [string, string, number]> = [[normalize(root), "", 0]]
      while (queue.length > 0 && out.length < max) {
        const [directory, prefix, parentDepth] = queue.shift()!
        const depth = parentDepth + 1
        const descend = options.maxDepth === undefined || depth < options.maxDepth
        for (const entry of yield* readDirectory(directory)) {
          const relative = prefix === "" ? entry.name : `${prefix}/${entry.name}`
          const absolute = posix.join(directory, entry.name)
          if (entry.kind === "Directory" && options.enter !== undefined && !options.enter(relative, entry.name)) {
            continue
          }
          out.push({ relative, absolute, kind: entry.kind })
          if (out.length >= max) break
          if (descend && entry.kind === "Directory") queue.push([absolute, relative, depth])
        }
      }
      return out
    })

  // Nothing changes between the listing and the lstat here: the walk is `walkKinds` with each entry's info.
  const walk = (root: string, options: WalkOptions = {}) =>
    Effect.flatMap(
      walkKinds(root, options),
      (entries) =>
        Effect.forEach(entries, (entry): Effect.Effect<WalkEntry, MemoryFsError> =>
          Effect.map(lstat(entry.absolute), (info) => ({ relative: entry.relative, absolute: entry.absolute, info })))
    )

  const makeDirectory = (path: string, options: { readonly within?: string | undefined } = {}) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const segments = normalize(path).split("/").filter((s) => s !== "")
      let current = "/"
      for (const segment of segments) {
        const next = posix.join(current, segment)
        const resolved = resolvePath(next, true)
        if (resolved._tag === "Found") {
          if (resolved.node.kind !== "Directory") {
            return yield* fail("create directory", next, "NotDirectory", describeKind(resolved.node.kind))
          }
          current = resolved.path
          continue
        }
        if (resolved.reason !== "NotFound" || resolved.path !== posix.join(current, segment)) {
          return yield* fail(
            "create directory",
            next,
            resolved.reason === "NotFound" ? "DanglingSymlink" : resolved.reason,
            resolved.detail
          )
        }
        if (options.within !== undefined && !isInside(options.within, current, ROOT_INCLUDED)) {
          return yield* fail("create directory", next, "Escapes", `${current} is outside ${options.within}`)
        }
        nodes.set(resolved.path, { kind: "Directory", mtimeMs: now, ino: newIno(), mode: DIR_MODE })
        current = resolved.path
      }
      if (options.within !== undefined && !isInside(options.within, current, ROOT_INCLUDED)) {
        return yield* fail("create directory", path, "Escapes", `resolves to ${current}, outside ${options.within}`)
      }
    })

  const writeFileAtomic = (path: string, data: string | Uint8Array, options: WriteOptions = {}) =>
    Effect.gen(function*() {
      const absolute = normalize(path)
      yield* makeDirectory(posix.dirname(absolute), { within: options.within })
      const { node, path: at } = yield* entryOf("write", absolute)
      if (node !== undefined && node.kind === "Directory") {
        return yield* fail("write", path, "NotRegularFile", "a directory")
      }
      if (node !== undefined && options.exclusive === true) {
        return yield* fail("create", path, "AlreadyExists", "EEXIST")
      }
      if (options.within !== undefined && !isInside(options.within, posix.dirname(at), ROOT_INCLUDED)) {
        return yield* fail("write", path, "Escapes", `resolves outside ${options.within}`)
      }
      const now = yield* Clock.currentTimeMillis
      nodes.set(at, {
        kind: "File",
        data: typeof data === "string" ? encoder.encode(data) : Uint8Array.from(data),
        mtimeMs: now,
        ino: newIno(),
        mode: options.mode ?? FILE_MODE
      })
    })

  const append = (path: string, data: string) =>
    Effect.gen(function*() {
      const { node, path: at } = yield* entryOf("append", path)
      const now = yield* Clock.currentTimeMillis
      if (node === undefined) {
        nodes.set(at, { kind: "File", data: encoder.encode(data), mtimeMs: now, ino: newIno(), mode: FILE_MODE })
        return
      }
      if (node.kind === "SymbolicLink") return yield* fail("append", path, "SymbolicLink", "ELOOP")
      if (node.kind !== "File") return yield* fail("append", path, "NotRegularFile", describeKind(node.kind))
      const extra = encoder.encode(data)
      const joined = new Uint8Array(node.data.length + extra.length)
      joined.set(node.data)
      joined.set(extra, node.data.length)
      node.data = joined
      node.mtimeMs = now
    })

  /** `at` and, for a directory, everything under it. */
  const subtree = (at: string): Array<readonly [string, Node]> => {
    const found: Array<readonly [string, Node]> = []
    for (const [key, node] of nodes) if (isInside(at, key, ROOT_INCLUDED)) found.push([key, node])
    return found
  }

  const remove = (path: string, options: { readonly recursive?: boolean | undefined } = {}) =>
    Effect.gen(function*() {
      const { node, path: at } = yield* entryOf("remove", path)
      if (node === undefined) return yield* fail("remove", path, "NotFound", "ENOENT")
      if (node.kind !== "Directory") {
        nodes.delete(at)
        return
      }
      if (options.recursive !== true) return yield* fail("remove", path, "NotRegularFile", "a directory")
      if (at === "/") return yield* fail("remove", path, "PermissionDenied", "the root")
      for (const [key] of subtree(at)) nodes.delete(key)
    })

  const setModified = (path: string, mtimeMs: number) =>
    Effect.flatMap(entryOf("set time of", path), ({ node }) => {
      if (node === undefined) return fail("set time of", path, "NotFound", "ENOENT")
      node.mtimeMs = mtimeMs
      return Effect.void
    })

  const rename = (from: string, to: string) =>
    Effect.gen(function*() {
      const source = yield* entryOf("rename", from)
      if (source.node === undefined) return yield* fail("rename", from, "NotFound", "ENOENT")
      const target = yield* entryOf("rename", to)
      if (target.node?.kind === "Directory") {
        // as rename(2): a directory replaces only an empty directory, a file never replaces one
        if (source.node.kind !== "Directory") return yield* fail("rename", to, "NotRegularFile", "a directory")
        if (subtree(target.path).length > 1) return yield* fail("rename", to, "AlreadyExists", "ENOTEMPTY")
        nodes.delete(target.path)
      } else if (target.node !== undefined && source.node.kind === "Directory") {
        return yield* fail("rename", to, "NotDirectory", "ENOTDIR")
      }
      if (source.node.kind === "Directory" && isInside(source.path, target.path, ROOT_INCLUDED)) {
        return yield* fail("rename", to, "Unknown", "EINVAL (into itself)")
      }
      const moved = subtree(source.path)
      for (const [key] of moved) nodes.delete(key)
      for (const [key, node] of moved) nodes.set(target.path + key.slice(source.path.length), node)
    })

  const readLink = (path: string) =>
    Effect.flatMap(entryOf("readlink", path), ({ node }) =>
      node === undefined ?
        fail("readlink", path, "NotFound", "ENOENT") :
        node.kind !== "SymbolicLink" ?
        fail("readlink", path, "Unknown", "EINVAL") :
        Effect.succeed(node.target))

  // seed
  for (const [path, content] of Object.entries(seed)) {
    const absolute = normalize(path)
    Effect.runSync(makeDirectory(posix.dirname(absolute)))
    const node: Node = typeof content === "string" ?
      { kind: "File", data: encoder.encode(content), mtimeMs: 0, ino: newIno(), mode: FILE_MODE } :
      "symlink" in content ?
      { kind: "SymbolicLink", target: content.symlink, mtimeMs: 0, ino: newIno(), mode: 0o777 } :
      { kind: "FIFO", mtimeMs: 0, ino: newIno(), mode: FILE_MODE }
    nodes.set(absolute, node)
  }

  return {
    lstat,
    exists,
    readFile,
    readBytes,
    readHead,
    readDirectory,
    readDirectoryChunks,
    mtimeMany,
    lstatMany,
    readFileMany,
    visitHeads,
    realPath,
    walk,
    walkKinds,
    makeDirectory,
    writeFileAtomic,
    append,
    remove,
    setModified,
    rename,
    readLink,
    realPathOfDeepestExisting
  }
}
