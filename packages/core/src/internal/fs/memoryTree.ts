/**
 * The in-memory file tree: directories, regular files, symbolic links and FIFOs in a map keyed by absolute POSIX
 * path, with path resolution like the kernel's (links followed in every component, a loop bound), under the in-memory
 * `MemoryFs` (`internal/fs/memory.ts`).
 */
import * as NodePath from "node:path"
import { isInside, withSeparator } from "../containment/inside.js"
import type { FileInfo, MemoryFsReason } from "./core.js"

export type Node =
  | { readonly kind: "File"; data: Uint8Array; mtimeMs: number; readonly ino: number; mode: number }
  | { readonly kind: "Directory"; mtimeMs: number; readonly ino: number; mode: number }
  | { readonly kind: "SymbolicLink"; readonly target: string; mtimeMs: number; readonly ino: number; mode: number }
  | { readonly kind: "FIFO"; mtimeMs: number; readonly ino: number; mode: number }

export type Resolved =
  | { readonly _tag: "Found"; readonly path: string; readonly node: Node }
  | { readonly _tag: "Missing"; readonly path: string; readonly reason: MemoryFsReason; readonly detail: string }

/** The entry a path names itself (its parent resolved, its last component not followed). */
export type Located =
  | { readonly _tag: "Found"; readonly path: string; readonly node: Node | undefined }
  | { readonly _tag: "Missing"; readonly reason: MemoryFsReason; readonly detail: string }

export interface MemoryTree {
  readonly nodes: Map<string, Node>
  readonly newIno: () => number
  /** Absolute, `/`-separated, `.` and `..` folded. */
  readonly normalize: (path: string) => string
  /** Follows links in every component (and in the last one when `followLast`). */
  readonly resolvePath: (path: string, followLast: boolean) => Resolved
  readonly locate: (path: string) => Located
  /** The entries directly in the directory at the real path `directory`, unsorted. */
  readonly childrenOf: (directory: string) => Array<readonly [string, Node]>
  readonly infoOf: (node: Node) => FileInfo
}

const posix = NodePath.posix
const MAX_LINK_HOPS = 40
/** Every in-memory file belongs to the user running the process, as the files a process creates do. */
const OWNER = typeof process.getuid === "function" ? process.getuid() : 0

export const makeMemoryTree = (): MemoryTree => {
  const nodes = new Map<string, Node>()
  let nextIno = 1
  const newIno = () => nextIno++
  nodes.set("/", { kind: "Directory", mtimeMs: 0, ino: newIno(), mode: 0o755 })

  const normalize = (path: string): string => posix.resolve("/", path.split("\\").join("/"))

  const resolvePath = (path: string, followLast: boolean): Resolved => {
    let pending = normalize(path).split("/").filter((s) => s !== "")
    let current = "/"
    let hops = 0
    while (pending.length > 0) {
      const [name, ...rest] = pending
      pending = rest
      if (name === "..") {
        current = posix.dirname(current)
        continue
      }
      if (name === ".") continue
      const next = current === "/" ? `/${name}` : `${current}/${name}`
      const node = nodes.get(next)
      if (node === undefined) return { _tag: "Missing", path: next, reason: "NotFound", detail: "ENOENT" }
      if (node.kind === "SymbolicLink" && (pending.length > 0 || followLast)) {
        hops++
        if (hops > MAX_LINK_HOPS) return { _tag: "Missing", path: next, reason: "SymlinkLoop", detail: "ELOOP" }
        const target = node.target.startsWith("/") ? node.target : posix.join(current, node.target)
        pending = [...target.split("/").filter((s) => s !== ""), ...pending]
        current = "/"
        continue
      }
      if (pending.length > 0 && node.kind !== "Directory") {
        return { _tag: "Missing", path: next, reason: "NotDirectory", detail: "ENOTDIR" }
      }
      current = next
    }
    return { _tag: "Found", path: current, node: nodes.get(current)! }
  }

  const locate = (path: string): Located => {
    const absolute = normalize(path)
    if (absolute === "/") return { _tag: "Found", path: "/", node: nodes.get("/") }
    const parent = resolvePath(posix.dirname(absolute), true)
    if (parent._tag === "Missing") return parent
    if (parent.node.kind !== "Directory") return { _tag: "Missing", reason: "NotDirectory", detail: "ENOTDIR" }
    const at = posix.join(parent.path, posix.basename(absolute))
    return { _tag: "Found", path: at, node: nodes.get(at) }
  }

  const childrenOf = (directory: string): Array<readonly [string, Node]> => {
    const prefix = withSeparator(directory, "/")
    const children: Array<readonly [string, Node]> = []
    for (const [key, node] of nodes) {
      if (!isInside(directory, key, { sep: "/" })) continue
      const name = key.slice(prefix.length)
      if (!name.includes("/")) children.push([name, node])
    }
    return children
  }

  const infoOf = (node: Node): FileInfo => {
    let nlink = 0
    if (node.kind === "File") { for (const other of nodes.values()) if (other === node) nlink++ }
    return {
      kind: node.kind,
      size: node.kind === "File" ? node.data.length : node.kind === "SymbolicLink" ? node.target.length : 0,
      mtimeMs: node.mtimeMs,
      ino: node.ino,
      dev: 1,
      nlink: Math.max(1, nlink),
      uid: OWNER,
      mode: node.mode & 0o777
    }
  }

  return { nodes, newIno, normalize, resolvePath, locate, childrenOf, infoOf }
}
