/**
 * An `@effect/platform` `FileSystem` over the in-memory tree (`internal/memoryTree.ts`): the services that still
 * use the platform file system (the index, the daily log, doctor, dream, settings, locks) see the very files the
 * in-memory `MemoryFs` writes, so the live services over both make one memdir world with no disk.
 *
 * It answers like Node's: links are followed except by `readLink`/`remove`/`rename`, a missing parent is
 * `NotFound`, `wx` and a non-recursive `makeDirectory` over an existing entry are `AlreadyExists`. Times come from
 * `Clock`. `watch` and `chown` have no meaning here: `watch` fails, `chown` does nothing.
 */
import { Error as PlatformError, FileSystem } from "@effect/platform"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as NodePath from "node:path"
import { isInside } from "./containment/inside.js"
import type { MemoryFsReason } from "./memoryFsCore.js"
import type { Located, MemoryTree, Node, Resolved } from "./memoryTree.js"

const posix = NodePath.posix

const REASONS: Partial<Record<MemoryFsReason, PlatformError.SystemErrorReason>> = {
  NotFound: "NotFound",
  AlreadyExists: "AlreadyExists",
  PermissionDenied: "PermissionDenied"
}

const systemError = (method: string, path: string, reason: PlatformError.SystemErrorReason, description: string) =>
  new PlatformError.SystemError({ module: "FileSystem", method, pathOrDescriptor: path, reason, description })

const fail = (method: string, path: string, reason: PlatformError.SystemErrorReason, description: string) =>
  Effect.fail(systemError(method, path, reason, description))

const failMissing = (
  method: string,
  path: string,
  missing: { readonly reason: MemoryFsReason; readonly detail: string }
) => fail(method, path, REASONS[missing.reason] ?? "BadResource", missing.detail)

/** What `flag` means for an open or a write. */
const flagsOf = (flag: FileSystem.OpenFlag = "r") => ({
  read: flag.startsWith("r") || flag.endsWith("+"),
  write: flag !== "r",
  create: !flag.startsWith("r"),
  exclusive: flag.includes("x"),
  truncate: flag.startsWith("w"),
  append: flag.startsWith("a")
})

export const makeFileSystemInMemory = (tree: MemoryTree): FileSystem.FileSystem => {
  const { nodes, normalize, resolvePath } = tree
  let nextFd = 3

  const followed = (
    method: string,
    path: string
  ): Effect.Effect<Resolved & { _tag: "Found" }, PlatformError.PlatformError> => {
    const resolved = resolvePath(path, true)
    return resolved._tag === "Missing" ? failMissing(method, path, resolved) : Effect.succeed(resolved)
  }

  const located = (
    method: string,
    path: string
  ): Effect.Effect<Located & { _tag: "Found" }, PlatformError.PlatformError> => {
    const entry = tree.locate(path)
    return entry._tag === "Missing" ? failMissing(method, path, entry) : Effect.succeed(entry)
  }

  const infoOf = (node: Node): FileSystem.File.Info => {
    const info = tree.infoOf(node)
    return {
      type: info.kind,
      mtime: Option.some(new Date(info.mtimeMs)),
      atime: Option.some(new Date(info.mtimeMs)),
      birthtime: Option.none(),
      dev: info.dev,
      ino: Option.some(info.ino),
      mode: node.mode,
      nlink: Option.some(info.nlink),
      uid: Option.none(),
      gid: Option.none(),
      rdev: Option.none(),
      size: FileSystem.Size(info.size),
      blksize: Option.none(),
      blocks: Option.none()
    }
  }

  /** The regular file at `path` (following links), created empty when `create` and missing. */
  const fileFor = (method: string, path: string, flag: FileSystem.OpenFlag, mode: number) =>
    Effect.gen(function*() {
      const flags = flagsOf(flag)
      const resolved = resolvePath(path, true)
      if (resolved._tag === "Found") {
        if (flags.exclusive) return yield* fail(method, path, "AlreadyExists", "EEXIST")
        const node = resolved.node
        if (node.kind === "Directory" && !flags.write) return node
        if (node.kind !== "File") return yield* fail(method, path, "BadResource", `not a regular file (${node.kind})`)
        if (flags.truncate) node.data = new Uint8Array(0)
        return node
      }
      if (!flags.create || resolved.reason !== "NotFound") return yield* failMissing(method, path, resolved)
      // The last component missing: create it (a dangling link's target included) if its parent is a directory.
      const parent = resolvePath(posix.dirname(resolved.path), true)
      if (parent._tag === "Missing" || parent.node.kind !== "Directory") {
        return yield* fail(method, path, "NotFound", "ENOENT")
      }
      const node: Node = {
        kind: "File",
        data: new Uint8Array(0),
        mtimeMs: yield* Clock.currentTimeMillis,
        ino: tree.newIno(),
        mode
      }
      nodes.set(resolved.path, node)
      return node
    })

  const concat = (a: Uint8Array, b: Uint8Array) => {
    const joined = new Uint8Array(a.length + b.length)
    joined.set(a)
    joined.set(b, a.length)
    return joined
  }

  const touch = (node: Node) => Effect.map(Clock.currentTimeMillis, (now) => void (node.mtimeMs = now))

  const handleFor = (path: string, node: Node, flag: FileSystem.OpenFlag): FileSystem.File => {
    const flags = flagsOf(flag)
    let position = 0
    const data = () => node.kind === "File" ? node.data : new Uint8Array(0)
    const writeBytes = (buffer: Uint8Array) =>
      Effect.gen(function*() {
        if (!flags.write || node.kind !== "File") return yield* fail("write", path, "BadResource", "EBADF")
        const at = flags.append ? node.data.length : position
        const end = at + buffer.length
        const next = end > node.data.length ? concat(node.data.subarray(0, at), new Uint8Array(end - at)) : node.data
        if (next !== node.data) next.set(node.data.subarray(0, Math.min(at, node.data.length)))
        next.set(buffer, at)
        node.data = next
        position = end
        yield* touch(node)
        return FileSystem.Size(buffer.length)
      })
    const readBytes = (buffer: Uint8Array) =>
      Effect.suspend(() => {
        if (!flags.read) return fail("read", path, "BadResource", "EBADF")
        const bytes = data().subarray(position, position + buffer.length)
        buffer.set(bytes)
        position += bytes.length
        return Effect.succeed(FileSystem.Size(bytes.length))
      })
    return {
      [FileSystem.FileTypeId]: FileSystem.FileTypeId,
      fd: FileSystem.FileDescriptor(nextFd++),
      stat: Effect.sync(() => infoOf(node)),
      seek: (offset, from) =>
        Effect.sync(() => {
          position = (from === "start" ? 0 : position) + Number(offset)
        }),
      sync: Effect.void,
      read: readBytes,
      readAlloc: (size) =>
        Effect.map(readBytes(new Uint8Array(Number(size))), (read) => {
          const count = Number(read)
          return count === 0 ? Option.none() : Option.some(data().slice(position - count, position))
        }),
      truncate: (length) =>
        Effect.suspend(() => {
          if (node.kind !== "File") return fail("truncate", path, "BadResource", "EBADF")
          const size = Number(length ?? 0)
          node.data = size <= node.data.length
            ? node.data.slice(0, size)
            : concat(node.data, new Uint8Array(size - node.data.length))
          return touch(node)
        }),
      write: writeBytes,
      writeAll: (buffer) => Effect.asVoid(writeBytes(buffer))
    }
  }

  const makeDirectory = (
    path: string,
    options: FileSystem.MakeDirectoryOptions = {}
  ): Effect.Effect<void, PlatformError.PlatformError> =>
    Effect.gen(function*() {
      const absolute = normalize(path)
      const resolved = resolvePath(absolute, true)
      if (resolved._tag === "Found") {
        if (options.recursive === true && resolved.node.kind === "Directory") return
        return yield* fail("makeDirectory", path, "AlreadyExists", "EEXIST")
      }
      const parent = posix.dirname(absolute)
      if (options.recursive === true && parent !== absolute) yield* makeDirectory(parent, options)
      const entry = yield* located("makeDirectory", absolute)
      if (entry.node !== undefined) return yield* fail("makeDirectory", path, "AlreadyExists", "EEXIST")
      const now = yield* Clock.currentTimeMillis
      nodes.set(entry.path, { kind: "Directory", mtimeMs: now, ino: tree.newIno(), mode: options.mode ?? 0o777 })
    })

  const readDirectory = (path: string, options: FileSystem.ReadDirectoryOptions = {}) =>
    Effect.gen(function*() {
      const { node, path: real } = yield* followed("readDirectory", path)
      if (node.kind !== "Directory") return yield* fail("readDirectory", path, "BadResource", "ENOTDIR")
      const names: Array<string> = []
      const visit = (directory: string, prefix: string) => {
        for (const [name, child] of tree.childrenOf(directory)) {
          names.push(prefix + name)
          if (options.recursive === true && child.kind === "Directory") {
            visit(posix.join(directory, name), `${prefix}${name}/`)
          }
        }
      }
      visit(real, "")
      return names
    })

  const remove = (path: string, options: FileSystem.RemoveOptions = {}) =>
    Effect.gen(function*() {
      const entry = tree.locate(path)
      if (entry._tag === "Missing" || entry.node === undefined) {
        if (options.force === true) return
        return yield* fail("remove", path, "NotFound", "ENOENT")
      }
      if (entry.node.kind === "Directory") {
        const children = tree.childrenOf(entry.path)
        if (children.length > 0 && options.recursive !== true) {
          return yield* fail("remove", path, "BadResource", "ENOTEMPTY")
        }
        for (const key of [...nodes.keys()]) {
          if (isInside(entry.path, key, { sep: "/" })) {
            nodes.delete(key)
          }
        }
      }
      nodes.delete(entry.path)
    })

  const rename = (from: string, to: string) =>
    Effect.gen(function*() {
      const source = yield* located("rename", from)
      if (source.node === undefined) return yield* fail("rename", from, "NotFound", "ENOENT")
      const target = yield* located("rename", to)
      if (target.node?.kind === "Directory" && tree.childrenOf(target.path).length > 0) {
        return yield* fail("rename", to, "BadResource", "ENOTEMPTY")
      }
      const moved: Array<readonly [string, Node]> = []
      for (const [key, node] of nodes) {
        if (isInside(source.path, key, { allowRoot: true, sep: "/" })) moved.push([key, node])
      }
      for (const [key] of moved) nodes.delete(key)
      for (const [key, node] of moved) nodes.set(target.path + key.slice(source.path.length), node)
    })

  const copyFile = (from: string, to: string) =>
    Effect.gen(function*() {
      const { node } = yield* followed("copyFile", from)
      if (node.kind !== "File") return yield* fail("copyFile", from, "BadResource", "not a regular file")
      const copy = yield* fileFor("copyFile", to, "w", 0o666)
      if (copy.kind === "File") copy.data = node.data.slice()
    })

  const tempName = (options: { readonly directory?: string; readonly prefix?: string } | undefined) =>
    posix.join(options?.directory ?? "/tmp", `${options?.prefix ?? ""}${(nextFd++).toString(36)}${tree.newIno()}`)

  const makeTempDirectory = (options?: FileSystem.MakeTempDirectoryOptions) =>
    Effect.gen(function*() {
      yield* makeDirectory(options?.directory ?? "/tmp", { recursive: true })
      const path = tempName(options)
      yield* makeDirectory(path, { mode: 0o700 })
      return path
    })

  const makeTempFile = (options?: FileSystem.MakeTempFileOptions) =>
    Effect.gen(function*() {
      const directory = yield* makeTempDirectory(options)
      const path = posix.join(directory, `${options?.prefix ?? ""}file${options?.suffix ?? ""}`)
      yield* fileFor("makeTempFile", path, "wx", 0o600)
      return path
    })

  return FileSystem.make({
    access: (path) => Effect.asVoid(followed("access", path)),
    copy: (from, to) => copyFile(from, to),
    copyFile,
    chmod: (path, mode) => Effect.map(followed("chmod", path), ({ node }) => void (node.mode = mode)),
    chown: (path) => Effect.asVoid(followed("chown", path)),
    link: (from, to) =>
      Effect.gen(function*() {
        const { node } = yield* followed("link", from)
        if (node.kind !== "File") return yield* fail("link", from, "PermissionDenied", "EPERM")
        const target = yield* located("link", to)
        if (target.node !== undefined) return yield* fail("link", to, "AlreadyExists", "EEXIST")
        nodes.set(target.path, node)
      }),
    makeDirectory,
    makeTempDirectory,
    makeTempDirectoryScoped: (options) =>
      Effect.acquireRelease(makeTempDirectory(options), (path) => Effect.ignore(remove(path, { recursive: true }))),
    makeTempFile,
    makeTempFileScoped: (options) =>
      Effect.acquireRelease(
        makeTempFile(options),
        (path) => Effect.ignore(remove(posix.dirname(path), { recursive: true }))
      ),
    open: (path, options) =>
      Effect.map(
        fileFor("open", path, options?.flag ?? "r", options?.mode ?? 0o666),
        (node) => handleFor(path, node, options?.flag ?? "r")
      ),
    readDirectory,
    readFile: (path) =>
      Effect.flatMap(followed("readFile", path), ({ node }) =>
        node.kind === "File" ?
          Effect.succeed(node.data.slice()) :
          fail("readFile", path, "BadResource", node.kind === "Directory" ? "EISDIR" : "not a regular file")),
    readLink: (path) =>
      Effect.flatMap(located("readLink", path), ({ node }) =>
        node === undefined ?
          fail("readLink", path, "NotFound", "ENOENT") :
          node.kind === "SymbolicLink" ?
          Effect.succeed(node.target) :
          fail("readLink", path, "InvalidData", "EINVAL")),
    realPath: (path) => Effect.map(followed("realPath", path), ({ path: real }) => real),
    remove,
    rename,
    stat: (path) => Effect.map(followed("stat", path), ({ node }) => infoOf(node)),
    symlink: (target, path) =>
      Effect.gen(function*() {
        const entry = yield* located("symlink", path)
        if (entry.node !== undefined) return yield* fail("symlink", path, "AlreadyExists", "EEXIST")
        const now = yield* Clock.currentTimeMillis
        nodes.set(entry.path, { kind: "SymbolicLink", target, mtimeMs: now, ino: tree.newIno(), mode: 0o777 })
      }),
    truncate: (path, length) =>
      Effect.scoped(
        Effect.flatMap(fileFor("truncate", path, "r+", 0o666), (node) => handleFor(path, node, "r+").truncate(length))
      ),
    utimes: (path, _atime, mtime) =>
      Effect.map(followed("utimes", path), ({ node }) => void (node.mtimeMs = new Date(mtime).getTime())),
    watch: (path) => Stream.fail(systemError("watch", path, "BadResource", "not supported in memory")),
    writeFile: (path, data, options) =>
      Effect.gen(function*() {
        const flag = options?.flag ?? "w"
        const node = yield* fileFor("writeFile", path, flag, options?.mode ?? 0o666)
        if (node.kind !== "File") return yield* fail("writeFile", path, "BadResource", "EISDIR")
        node.data = flagsOf(flag).append ? concat(node.data, data) : data.slice()
        yield* touch(node)
      })
  })
}
