/**
 * `TeamGuard.audit`: walks `team/` as it is on disk with `lstat` (never following a link) and reports every
 * violation: links (and where they point), dangling links, loops, FIFOs/sockets/devices, hard links, names the
 * key checks refuse, files over the size limit and likely secrets. Per-entry problems become violations; only a
 * team directory that cannot be listed at all fails the audit.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as NodePath from "node:path"
import { MemoryIoError } from "../Errors.js"
import { describeKind, MemoryFs, type MemoryFsError } from "../MemoryFs.js"
import { scanSecrets } from "../SecretScan.js"
import { readRegularFileNoFollow, TEAM_FILE_MAX_BYTES } from "./teamGuardFs.js"
import { checkKeyWith } from "./teamGuardKey.js"

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
  if (size > TEAM_FILE_MAX_BYTES) {
    violations.push({ path: relative, reason: "oversized", detail: `${size} bytes (limit ${TEAM_FILE_MAX_BYTES})` })
  } else {
    violations.push(...secretViolations(relative, content))
  }
  return violations
}

const refusedName = (teamDir: string, relative: string): AuditViolation | undefined => {
  const checked = checkKeyWith(NodePath, teamDir, relative)
  return Either.isLeft(checked) ?
    { path: relative, reason: checked.left.reason, detail: checked.left.detail ?? checked.left.reason } :
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
    const rootStats = yield* Effect.either(fs.lstat(root))
    if (Either.isLeft(rootStats)) {
      if (rootStats.left.reason === "NotFound") return violations
      return yield* new MemoryIoError({ op: "audit", path: root, detail: rootStats.left.detail })
    }
    if (rootStats.right.kind === "SymbolicLink") {
      const target = yield* linkText(fs, root)
      // memdir never makes team/ a link; whoever did may have pointed it anywhere: report, do not walk it
      violations.push({ path: ".", reason: "symlink", detail: `the team directory is a link to ${target}` })
      return violations
    }
    const realTeam = yield* fs.realPathOfDeepestExisting(root).pipe(
      Effect.mapError((e) => new MemoryIoError({ op: "audit", path: root, detail: e.detail }))
    )
    yield* walk(fs, root, realTeam, "", 0, false, violations).pipe(
      Effect.catchAll((e) => Effect.fail(new MemoryIoError({ op: "audit", path: root, detail: e.detail })))
    )
    return violations.sort(byPath)
  })

/** A link's text for a report; a link that cannot be read says so. */
const linkText = (fs: MemoryFs["Type"], path: string) =>
  fs.readLink(path).pipe(Effect.catchAll((error) => Effect.succeed(`? (${error.detail})`)))

const walk = (
  fs: MemoryFs["Type"],
  root: string,
  realTeam: string,
  relativeDir: string,
  depth: number,
  parentRefused: boolean,
  violations: Array<AuditViolation>
): Effect.Effect<void, MemoryFsError, MemoryFs> =>
  Effect.gen(function*() {
    const absoluteDir = relativeDir === "" ? root : NodePath.join(root, ...relativeDir.split("/"))
    const listed = yield* Effect.either(fs.readDirectory(absoluteDir))
    if (Either.isLeft(listed)) {
      if (relativeDir === "") return yield* Effect.fail(listed.left)
      violations.push({ path: relativeDir, reason: "unverifiable", detail: `cannot list: ${listed.left.detail}` })
      return
    }
    for (const { name } of listed.right) {
      if (relativeDir === "" && SKIPPED_TOP_LEVEL.has(name)) continue
      const relative = relativeDir === "" ? name : `${relativeDir}/${name}`
      const absolute = NodePath.join(absoluteDir, name)
      // report a refused name once, at the outermost entry that carries it
      const refused = parentRefused ? undefined : refusedName(root, relative)
      if (refused !== undefined) violations.push(refused)
      const stats = yield* Effect.either(fs.lstat(absolute))
      if (Either.isLeft(stats)) {
        violations.push({ path: relative, reason: "unverifiable", detail: `lstat: ${stats.left.detail}` })
        continue
      }
      const entry = stats.right
      if (entry.kind === "SymbolicLink") {
        violations.push(yield* describeLink(fs, absolute, relative, realTeam))
      } else if (entry.kind === "Directory") {
        if (depth + 1 >= MAX_DEPTH) {
          violations.push({ path: relative, reason: "unverifiable", detail: `deeper than ${MAX_DEPTH} levels` })
        } else {
          yield* walk(fs, root, realTeam, relative, depth + 1, parentRefused || refused !== undefined, violations)
        }
      } else if (entry.kind !== "File") {
        violations.push({ path: relative, reason: "special-file", detail: describeKind(entry.kind) })
      } else if (entry.nlink > 1) {
        violations.push({
          path: relative,
          reason: "hard-link",
          detail: `${entry.nlink} links: may alias a file elsewhere`
        })
      } else if (entry.size > TEAM_FILE_MAX_BYTES) {
        violations.push({
          path: relative,
          reason: "oversized",
          detail: `${entry.size} bytes (limit ${TEAM_FILE_MAX_BYTES})`
        })
      } else {
        const text = yield* Effect.either(readRegularFileNoFollow(relative, absolute, TEAM_FILE_MAX_BYTES, realTeam))
        if (Either.isLeft(text)) {
          const error = text.left
          violations.push(
            error._tag === "PathTraversalError" ?
              { path: relative, reason: error.reason, detail: error.detail ?? "changed during the audit" } :
              { path: relative, reason: "unverifiable", detail: error.message }
          )
        } else {
          violations.push(...secretViolations(relative, text.right))
        }
      }
    }
  })

/** Where a link points, and whether that is inside the team directory (a loop or a dangling link says so). */
const describeLink = (fs: MemoryFs["Type"], absolute: string, relative: string, realTeam: string) =>
  Effect.gen(function*() {
    const target = yield* linkText(fs, absolute)
    const real = yield* Effect.either(fs.realPathOfDeepestExisting(absolute))
    if (Either.isLeft(real)) {
      const reason = real.left.reason
      if (reason === "SymlinkLoop") return { path: relative, reason: "symlink-loop", detail: `-> ${target} (loops)` }
      if (reason === "DanglingSymlink") {
        return { path: relative, reason: "dangling-symlink", detail: `-> ${target} (missing)` }
      }
      return { path: relative, reason: "unverifiable", detail: `-> ${target} (${real.left.detail})` }
    }
    const inside = real.right.startsWith(realTeam + NodePath.sep)
    return inside ?
      { path: relative, reason: "symlink", detail: `-> ${target} (inside team/; links are refused on read)` } :
      { path: relative, reason: "symlink-escape", detail: `-> ${target} (resolves to ${real.right}, outside team/)` }
  })
