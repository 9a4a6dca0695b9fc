/**
 * `TeamGuard.audit`: walks `team/` as it is on disk with `lstat` (never following a link; each directory's entries
 * `lstat`-ed and its files read in synchronous batches, as the scan reads) and reports every
 * violation: links (and where they point), dangling links, loops, FIFOs/sockets/devices, hard links, names the
 * key checks refuse, files over the size limit and likely secrets. Per-entry problems become violations; only a
 * team directory that cannot be listed at all fails the audit.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as NodePath from "node:path"
import { MemoryIoError } from "../../Errors.js"
import { MEMORY_MAX_BYTES } from "../../Memory.js"
import { describeKind, MemoryFs, MemoryFsError } from "../../MemoryFs.js"
import { scanSecrets } from "../../SecretScan.js"
import { isInside } from "../containment/inside.js"
import { guardError } from "./guardFs.js"
import { checkKeyWith } from "./guardKey.js"

export interface AuditViolation {
  /** Relative to the team directory, `/` separators (`.` for the team directory itself). */
  readonly path: string
  /**
   * A `PathTraversalError` reason (a refused name, `symlink-escape`, `dangling-symlink`, `symlink-loop`,
   * `unverifiable`), or `symlink` (a link that stays inside: still refused on read), `special-file` (FIFO,
   * socket, device), `hard-link`, `oversized` (over 250,000 bytes), `secret`.
   */
  readonly reason: string
  readonly detail: string
}

/** Directories the audit does not descend into: git's own bookkeeping when `team/` is a checkout. */
const SKIPPED_TOP_LEVEL = new Set([".git"])

/** Deeper than this is refused rather than walked (a legit memory tree is a few levels deep). */
const MAX_DEPTH = 64

/** The checks that need only a name and the bytes: layers 1 and 2 on the relative path, size, secrets. */
export const inspectText = (teamDir: string, relative: string, content: string): ReadonlyArray<AuditViolation> => {
  const violations: Array<AuditViolation> = []
  const refused = refusedName(teamDir, relative)
  if (refused !== undefined) violations.push(refused)
  const size = new TextEncoder().encode(content).length
  if (size > MEMORY_MAX_BYTES) {
    violations.push({ path: relative, reason: "oversized", detail: `${size} bytes (limit ${MEMORY_MAX_BYTES})` })
  } else {
    violations.push(...secretViolations(relative, content))
  }
  return violations
}

const refusedName = (teamDir: string, relative: string): AuditViolation | undefined => {
  const checked = checkKeyWith(NodePath, teamDir, relative)
  return Result.isFailure(checked) ?
    { path: relative, reason: checked.failure.reason, detail: checked.failure.detail ?? checked.failure.reason } :
    undefined
}

const secretViolations = (relative: string, content: string): ReadonlyArray<AuditViolation> =>
  scanSecrets(content).map((finding) => ({
    path: relative,
    reason: "secret",
    detail: `${finding.description} (${finding.pattern}) at line ${finding.line}: ${finding.excerpt}`
  }))

const byPath = (a: AuditViolation, b: AuditViolation): number =>
  a.path < b.path ? -1 : a.path > b.path ? 1 : a.reason < b.reason ? -1 : a.reason > b.reason ? 1 : 0

export const auditTeamDir = (
  teamDir: string
): Effect.Effect<ReadonlyArray<AuditViolation>, MemoryIoError, MemoryFs> =>
  Effect.gen(function*() {
    const fs = yield* MemoryFs
    const root = NodePath.resolve(teamDir)
    const violations: Array<AuditViolation> = []
    const rootStats = yield* Effect.result(fs.lstat(root))
    if (Result.isFailure(rootStats)) {
      if (rootStats.failure.reason === "NotFound") return violations
      return yield* new MemoryIoError({ op: "audit", path: root, detail: rootStats.failure.detail })
    }
    if (rootStats.success.kind === "SymbolicLink") {
      const target = yield* linkText(fs, root)
      // memdir never makes team/ a link; whoever did may have pointed it anywhere: report, do not walk it
      violations.push({ path: ".", reason: "symlink", detail: `the team directory is a link to ${target}` })
      return violations
    }
    const realTeam = yield* fs.realPathOfDeepestExisting(root).pipe(
      Effect.mapError((e) => new MemoryIoError({ op: "audit", path: root, detail: e.detail }))
    )
    yield* walk(fs, root, realTeam, "", 0, false, violations).pipe(
      Effect.catch((e) => Effect.fail(new MemoryIoError({ op: "audit", path: root, detail: e.detail })))
    )
    return violations.sort(byPath)
  })

/** A link's text for a report; a link that cannot be read says so. */
const linkText = (fs: MemoryFs["Service"], path: string) =>
  fs.readLink(path).pipe(Effect.catch((error) => Effect.succeed(`? (${error.detail})`)))

/** Entries `lstat`-ed, and files read, per synchronous batch (`MemoryFs.lstatMany` / `readFileMany`). */
const AUDIT_BATCH = 256

interface AuditEntry {
  /** Relative to the team directory, `/`-separated. */
  readonly relative: string
  readonly absolute: string
  /** The entry's name is refused (reported), or a parent's was: names below are not reported again. */
  readonly refused: boolean
}

/** A file that could not be read for its secrets, as a violation. */
const unreadFile = (entry: AuditEntry, error: MemoryFsError): AuditViolation => {
  const mapped = guardError(entry.relative, entry.absolute)(error)
  return mapped._tag === "PathTraversalError" ?
    { path: entry.relative, reason: mapped.reason, detail: mapped.detail ?? "changed during the audit" } :
    { path: entry.relative, reason: "unverifiable", detail: mapped.message }
}

/**
 * One batch of a directory's entries: `lstat`-ed together, each judged by what it is; the regular files that may be
 * read are read together and searched for secrets. Returns the sub-directories to walk.
 */
const auditBatch = (
  fs: MemoryFs["Service"],
  realTeam: string,
  depth: number,
  batch: ReadonlyArray<AuditEntry>,
  violations: Array<AuditViolation>
) =>
  Effect.gen(function*() {
    const infos = yield* fs.lstatMany(batch.map((entry) => entry.absolute))
    const directories: Array<AuditEntry> = []
    const files: Array<AuditEntry> = []
    for (let i = 0; i < batch.length; i++) {
      const entry = batch[i]!
      const relative = entry.relative
      const info = infos[i]!
      if (info instanceof MemoryFsError) {
        violations.push({ path: relative, reason: "unverifiable", detail: `lstat: ${info.detail}` })
      } else if (info.kind === "SymbolicLink") {
        violations.push(yield* describeLink(fs, entry.absolute, relative, realTeam))
      } else if (info.kind === "Directory") {
        if (depth + 1 >= MAX_DEPTH) {
          violations.push({ path: relative, reason: "unverifiable", detail: `deeper than ${MAX_DEPTH} levels` })
        } else {
          directories.push(entry)
        }
      } else if (info.kind !== "File") {
        violations.push({ path: relative, reason: "special-file", detail: describeKind(info.kind) })
      } else if (info.nlink > 1) {
        violations.push({
          path: relative,
          reason: "hard-link",
          detail: `${info.nlink} links: may alias a file elsewhere`
        })
      } else if (info.size > MEMORY_MAX_BYTES) {
        violations.push({
          path: relative,
          reason: "oversized",
          detail: `${info.size} bytes (limit ${MEMORY_MAX_BYTES})`
        })
      } else {
        files.push(entry)
      }
    }
    // opened without following a link or blocking, singly linked, size-bounded, inside team/ (as a guarded read)
    const texts = yield* fs.readFileMany(files.map((file) => file.absolute), {
      maxBytes: MEMORY_MAX_BYTES,
      singleLink: true,
      within: realTeam
    })
    for (let i = 0; i < files.length; i++) {
      const text = texts[i]!
      if (text instanceof MemoryFsError) violations.push(unreadFile(files[i]!, text))
      else violations.push(...secretViolations(files[i]!.relative, text.text))
    }
    return directories
  })

const walk = (
  fs: MemoryFs["Service"],
  root: string,
  realTeam: string,
  relativeDir: string,
  depth: number,
  parentRefused: boolean,
  violations: Array<AuditViolation>
): Effect.Effect<void, MemoryFsError> =>
  Effect.gen(function*() {
    const absoluteDir = relativeDir === "" ? root : NodePath.join(root, ...relativeDir.split("/"))
    const listed = yield* Effect.result(fs.readDirectory(absoluteDir))
    if (Result.isFailure(listed)) {
      if (relativeDir === "") return yield* Effect.fail(listed.failure)
      violations.push({ path: relativeDir, reason: "unverifiable", detail: `cannot list: ${listed.failure.detail}` })
      return
    }
    const entries: Array<AuditEntry> = []
    for (const { name } of listed.success) {
      if (relativeDir === "" && SKIPPED_TOP_LEVEL.has(name)) continue
      const relative = relativeDir === "" ? name : `${relativeDir}/${name}`
      // report a refused name once, at the outermost entry that carries it
      const refused = parentRefused ? undefined : refusedName(root, relative)
      if (refused !== undefined) violations.push(refused)
      entries.push({
        relative,
        absolute: NodePath.join(absoluteDir, name),
        refused: parentRefused || refused !== undefined
      })
    }
    const directories: Array<AuditEntry> = []
    for (let start = 0; start < entries.length; start += AUDIT_BATCH) {
      if (start > 0) yield* Effect.yieldNow
      directories.push(
        ...(yield* auditBatch(fs, realTeam, depth, entries.slice(start, start + AUDIT_BATCH), violations))
      )
    }
    for (const directory of directories) {
      yield* walk(fs, root, realTeam, directory.relative, depth + 1, directory.refused, violations)
    }
  })

/** Where a link points, and whether that is inside the team directory (a loop or a dangling link says so). */
const describeLink = (fs: MemoryFs["Service"], absolute: string, relative: string, realTeam: string) =>
  Effect.gen(function*() {
    const target = yield* linkText(fs, absolute)
    const real = yield* Effect.result(fs.realPathOfDeepestExisting(absolute))
    if (Result.isFailure(real)) {
      const reason = real.failure.reason
      if (reason === "SymlinkLoop") return { path: relative, reason: "symlink-loop", detail: `-> ${target} (loops)` }
      if (reason === "DanglingSymlink") {
        return { path: relative, reason: "dangling-symlink", detail: `-> ${target} (missing)` }
      }
      return { path: relative, reason: "unverifiable", detail: `-> ${target} (${real.failure.detail})` }
    }
    return isInside(realTeam, real.success) ?
      { path: relative, reason: "symlink", detail: `-> ${target} (inside team/; links are refused on read)` } :
      { path: relative, reason: "symlink-escape", detail: `-> ${target} (resolves to ${real.success}, outside team/)` }
  })
