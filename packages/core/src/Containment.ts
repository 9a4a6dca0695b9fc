/**
 * Containment: the one check that a key names a path inside a root. A key is what a caller names a file with,
 * relative to the root and `/`-separated. It is refused (typed `PathTraversalError`, fail closed) when it holds a
 * NUL, a backslash, a control or invisible (bidi, zero-width) character, a Unicode look-alike of `/`, `\` or `..`,
 * a percent-encoding that decodes to any of those, or names an absolute or home path (unless `allowAbsolute` and
 * inside the root); then `..` is collapsed and the root plus a trailing separator must prefix the result
 * (`memory-evil/` is not `memory/`); then, when following, the real path of the target (or of its deepest
 * existing ancestor, the missing tail re-joined) must lie inside the root's real path: a link that leads out,
 * a dangling link or a loop refuses.
 *
 * The result is a `ContainedPath`, a branded string made only here: code that receives one does not re-check it.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as NodePath from "node:path"
import { PathTraversalError } from "./Errors.js"
import { isInside, withSeparator } from "./internal/containment/inside.js"
import { sanitizeKey } from "./internal/containment/sanitizeKey.js"
import { type MemoryScope, scopeOf, TEAM_DIR } from "./Memory.js"
import { MemoryFs, type MemoryFsError } from "./MemoryFs.js"

/** An absolute path verified inside its root. */
export const ContainedPath = Schema.String.pipe(Schema.brand("ContainedPath"))
export type ContainedPath = typeof ContainedPath.Type

export interface Contained {
  /** The root, resolved (no trailing separator). */
  readonly root: string
  /** Relative to the root, `/`-separated, `..` collapsed; `""` is the root itself. */
  readonly key: string
  /** Absolute, under the root as given. */
  readonly path: ContainedPath
}

export interface ContainedReal extends Contained {
  /** Real path of the root (or of its deepest existing ancestor, the tail re-joined). */
  readonly realRoot: string
  /** Real path of `path`, verified inside `realRoot`. */
  readonly real: string
}

export interface ContainOptions {
  /** The key may name the root itself (`""`, `.`): listings. Default false. */
  readonly allowRoot?: boolean | undefined
  /** An absolute key is accepted when it lies inside the root (and turned into a relative one). Default false. */
  readonly allowAbsolute?: boolean | undefined
}

/** The one containment predicate and the key sanitizer: every path check of memdir uses these. */
export { type InsideOptions, isInside, withSeparator } from "./internal/containment/inside.js"
export {
  type KeyRefusal,
  percentDecodeFully,
  percentDecodeOnce,
  sanitizeKey
} from "./internal/containment/sanitizeKey.js"

/** What can be decided without the disk: the key's characters, then lexical containment. */
export const lexical = (
  root: string,
  rawKey: string,
  options: ContainOptions = {}
): Result.Result<Contained, PathTraversalError> => {
  const refuse = (reason: PathTraversalError["reason"], detail: string) =>
    Result.fail(new PathTraversalError({ key: rawKey, reason, detail }))
  const resolvedRoot = NodePath.resolve(root)
  let key = rawKey
  if (key.includes("\0")) return refuse("null-byte", "contains a NUL character")
  // the characters of the key are judged by sanitizeKey below (in its order: absolute before backslash…); here
  // only an absolute path inside the root becomes a relative key when the caller allows it
  if (options.allowAbsolute === true && NodePath.isAbsolute(key) && !key.includes("\\")) {
    const absolute = NodePath.resolve(key)
    if (options.allowAbsolute !== true || !isInside(resolvedRoot, absolute, { allowRoot: options.allowRoot })) {
      return refuse("absolute", `an absolute path outside ${resolvedRoot}`)
    }
    key = NodePath.relative(resolvedRoot, absolute).split(NodePath.sep).join("/")
  }
  if (key === "" || key === ".") {
    if (options.allowRoot === true) {
      return Result.succeed({ root: resolvedRoot, key: "", path: ContainedPath.make(resolvedRoot) })
    }
    return refuse("escapes-root", "names the directory itself: give a file path")
  }
  const sane = sanitizeKey(key)
  if (Result.isFailure(sane)) return Result.fail(new PathTraversalError({ ...sane.failure, key: rawKey }))
  const absolute = NodePath.resolve(resolvedRoot, key)
  if (!isInside(resolvedRoot, absolute, { allowRoot: options.allowRoot })) {
    return refuse("escapes-root", `resolves to ${absolute}, outside ${resolvedRoot}`)
  }
  const relative = NodePath.relative(resolvedRoot, absolute).split(NodePath.sep).join("/")
  return Result.succeed({ root: resolvedRoot, key: relative, path: ContainedPath.make(absolute) })
}

/**
 * What a key names below `team/` when it asks for team memory, read from the key as written, before anything is
 * collapsed: its first segment that is not `.` is `team` (`team/x.md`, `./team/x.md`, `team/../x.md`; an absolute
 * key inside `root` is read from its part below the root). `undefined`: the key asks for private memory.
 */
const teamPartOf = (rawKey: string, root?: string): string | undefined => {
  const resolvedRoot = root === undefined ? undefined : NodePath.resolve(root)
  let rest = resolvedRoot !== undefined && isInside(resolvedRoot, rawKey) ?
    rawKey.slice(withSeparator(resolvedRoot).length) :
    rawKey
  while (rest.startsWith("./")) rest = rest.slice(2)
  if (rest === TEAM_DIR) return ""
  return rest.startsWith(`${TEAM_DIR}/`) ? rest.slice(TEAM_DIR.length + 1) : undefined
}

/**
 * The scope a key asks for, decided on the key as written (`teamPartOf`), never on its collapsed form: every door
 * that builds a team key by joining (`team/${key}`) is decided by it, so no join turns a team request private.
 */
export const requestedScope = (rawKey: string, root?: string): MemoryScope =>
  teamPartOf(rawKey, root) === undefined ? "private" : "team"

/**
 * `lexical`, with the scope decided before normalization. A key that asks for `team/` is resolved inside `team/`:
 * its part below `team/` must pass `lexical` against `team/` itself (relative, no `..` out of it, no absolute, home
 * or drive path: `team//tmp/x.md` is refused), else `leaves-team`. A key that asks for private memory and
 * collapses into `team/` is a team key (the caller gives it the team rules).
 */
export const lexicalScoped = (
  root: string,
  rawKey: string,
  options: ContainOptions = {}
): Result.Result<Contained & { readonly scope: MemoryScope }, PathTraversalError> => {
  const contained = lexical(root, rawKey, options)
  if (Result.isFailure(contained)) return Result.fail(contained.failure)
  const teamPart = teamPartOf(rawKey, root)
  if (teamPart === undefined) return Result.succeed({ ...contained.success, scope: scopeOf(contained.success.key) })
  const inTeam = lexical(NodePath.join(contained.success.root, TEAM_DIR), teamPart, { allowRoot: true })
  if (Result.isFailure(inTeam) || scopeOf(contained.success.key) !== "team") {
    const why = Result.isFailure(inTeam) ?
      `${inTeam.failure.reason}${inTeam.failure.detail ? `: ${inTeam.failure.detail}` : ""}` :
      `resolves to ${contained.success.key || "the memory directory"}`
    return Result.fail(
      new PathTraversalError({
        key: rawKey,
        reason: "leaves-team",
        detail: `a team key must name a file inside ${TEAM_DIR}/, relative to it (${why})`
      })
    )
  }
  return Result.succeed({ ...contained.success, scope: "team" })
}

const fromFsError = (key: string) => (error: MemoryFsError): PathTraversalError =>
  new PathTraversalError({
    key,
    reason: error.reason === "SymlinkLoop" ?
      "symlink-loop" :
      error.reason === "DanglingSymlink" ?
      "dangling-symlink" :
      "unverifiable",
    detail: `${error.path}: ${error.detail}`
  })

export class Containment extends Context.Service<Containment, {
  /** The key checked by its characters and lexically only (no disk access). */
  readonly lexical: (
    root: string,
    key: string,
    options?: ContainOptions
  ) => Effect.Effect<Contained, PathTraversalError>
  /** The key checked lexically, then through links: its real path must stay inside the root's real path. */
  readonly resolve: (
    root: string,
    key: string,
    options?: ContainOptions
  ) => Effect.Effect<ContainedReal, PathTraversalError>
}>()("@memdir/core/Containment") {}

export const make = Effect.gen(function*() {
  const fs = yield* MemoryFs
  const resolve = Effect.fn("Containment.resolve")(function*(root: string, key: string, options?: ContainOptions) {
    const contained = yield* Effect.fromResult(lexical(root, key, options))
    const realRoot = yield* fs.realPathOfDeepestExisting(contained.root).pipe(Effect.mapError(fromFsError(key)))
    // The root itself (a listing of the whole directory): its real path is the one just resolved.
    const real = contained.key === "" ?
      realRoot :
      yield* fs.realPathOfDeepestExisting(contained.path).pipe(Effect.mapError(fromFsError(key)))
    if (!isInside(realRoot, real, { allowRoot: contained.key === "" })) {
      return yield* new PathTraversalError({
        key,
        reason: "symlink-escape",
        detail: `resolves to ${real}, outside ${realRoot}`
      })
    }
    const result: ContainedReal = { ...contained, realRoot, real }
    return result
  })
  return Containment.of({
    lexical: (root, key, options) => Effect.fromResult(lexical(root, key, options)),
    resolve
  })
})

export const layer: Layer.Layer<Containment, never, MemoryFs> = Layer.effect(Containment, make)
