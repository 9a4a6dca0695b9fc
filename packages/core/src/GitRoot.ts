/**
 * GitRoot: the canonical root that scopes a memory directory (docs/configuration.md). Two shells in `src/` and `tests/`
 * of one repository, and every `git worktree` of it, resolve to one root and so share one memory.
 *
 * Resolution reads the files git writes instead of running `git` (every CLI call resolves the root, and a
 * process spawn costs more than the whole lookup). Walking up from the real path of `cwd`, at each level:
 * - a `.git` directory (with a `HEAD`) → that level is the root, kind "repository";
 * - a `.git` file (`gitdir: <path>`) → a linked worktree: its git dir must sit in `<common>/worktrees/` and its
 *   `gitdir` file must point back at this `.git` file; the root is then the main checkout (kind "worktree"),
 *   or the common dir itself when the repository is bare (kind "bare"). A git dir without `commondir`
 *   (a submodule, `git init --separate-git-dir`) is a plain repository rooted at this level;
 * - the level itself is a bare repository (`HEAD`, `objects/`, `refs/`, `core.bare = true`) → kind "bare".
 * Anything that fails verification or cannot be read falls back to the real path of `cwd` (kind "none"),
 * so a forged `.git` file cannot borrow the memory of another repository. Roots are real paths: a symlinked
 * checkout shares the memory of its target.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Path from "effect/Path"
import { isInside } from "./internal/containment/inside.js"
import { GIT_FILE_MAX_BYTES, parseDotGitFile, parsePointerFile } from "./internal/git/files.js"
import { type FileKind, MemoryFs } from "./MemoryFs.js"

export interface GitRootInfo {
  /** The canonical project root: the main checkout of the repo (shared by all worktrees), or the cwd when no git. */
  readonly root: string
  readonly kind: "repository" | "worktree" | "bare" | "none"
  /** The common git dir when there is one. */
  readonly commonDir?: string | undefined
}

export class GitRoot extends Context.Service<GitRoot, {
  /** Never fails: anything it cannot follow falls back to the no-git root (the given directory). */
  readonly canonicalRoot: (cwd: string) => Effect.Effect<GitRootInfo>
}>()("@memdir/core/GitRoot") {}

/** Whether a git config text sets `core.bare` to true (git's boolean spellings; a bare key means true). */
export const configSaysBare = (config: string): boolean => {
  let inCore = false
  let bare = false
  for (const rawLine of config.split(/\r?\n/)) {
    const line = rawLine.replace(/(^|\s)[#;].*$/, "").trim()
    const section = /^\[\s*([A-Za-z0-9.-]+)(\s+"[^"]*")?\s*\]/.exec(line)
    if (section !== null) {
      inCore = section[1]!.toLowerCase() === "core" && section[2] === undefined
      continue
    }
    const entry = /^bare\s*(?:=\s*(.*))?$/i.exec(line)
    if (inCore && entry !== null) {
      const value = (entry[1] ?? "true").trim().replace(/^"(.*)"$/, "$1").toLowerCase()
      bare = value === "true" || value === "yes" || value === "on" || value === "1"
    }
  }
  return bare
}

export const make = Effect.gen(function*() {
  const fs = yield* MemoryFs
  const path = yield* Path.Path

  // Each probe answers "absent" for anything it cannot read: the caller then falls back, by design. A link is
  // followed to where it leads (a symlinked checkout or `.git`); what is there is then looked at without following
  // a link, and opened without blocking and read with a size bound: a forged `.git` (a FIFO, `/dev/zero`) can
  // neither hang nor flood the lookup every command makes.
  const realPath = (file: string) => fs.realPath(file).pipe(Effect.option)
  const typeOf = (file: string) =>
    realPath(file).pipe(
      Effect.flatMap(Option.match({
        onNone: () => Effect.succeedNone,
        onSome: (real) => fs.lstat(real).pipe(Effect.map((info) => info.kind), Effect.option)
      }))
    )
  const readText = (file: string) =>
    realPath(file).pipe(
      Effect.flatMap(Option.match({
        onNone: () => Effect.succeedNone,
        onSome: (real) =>
          fs.readFile(real, { maxBytes: GIT_FILE_MAX_BYTES }).pipe(Effect.map((read) => read.text), Effect.option)
      }))
    )
  const isFile = (file: string) => typeOf(file).pipe(Effect.map(Option.contains<FileKind>("File")))
  const isDirectory = (file: string) => typeOf(file).pipe(Effect.map(Option.contains<FileKind>("Directory")))

  const isBare = (commonDir: string) =>
    readText(path.join(commonDir, "config")).pipe(Effect.map(Option.exists(configSaysBare)))

  const isBareRepository = Effect.fnUntraced(function*(dir: string) {
    if (!(yield* isFile(path.join(dir, "HEAD")))) return false
    return (yield* isDirectory(path.join(dir, "objects"))) && (yield* isDirectory(path.join(dir, "refs"))) &&
      (yield* isBare(dir))
  })

  /** Follows a `.git` file at `dir`; `None` means verification failed. */
  const followGitFile = Effect.fnUntraced(function*(dir: string, dotGit: string) {
    const pointer = (yield* readText(dotGit)).pipe(Option.flatMapNullishOr(parseDotGitFile))
    if (Option.isNone(pointer)) return Option.none<GitRootInfo>()
    const gitDir = yield* realPath(path.resolve(dir, pointer.value))
    if (Option.isNone(gitDir)) return Option.none<GitRootInfo>()
    const commonDirPointer = yield* readText(path.join(gitDir.value, "commondir"))
    if (Option.isNone(commonDirPointer)) {
      // A submodule or separate git dir: its own repository, rooted here (never elsewhere, so nothing to forge).
      return (yield* isFile(path.join(gitDir.value, "HEAD")))
        ? Option.some<GitRootInfo>({ root: dir, kind: "repository", commonDir: gitDir.value })
        : Option.none<GitRootInfo>()
    }
    const commonDirPath = parsePointerFile(commonDirPointer.value)
    if (commonDirPath === undefined) return Option.none<GitRootInfo>()
    const commonDir = yield* realPath(path.resolve(gitDir.value, commonDirPath))
    if (Option.isNone(commonDir) || path.dirname(gitDir.value) !== path.join(commonDir.value, "worktrees")) {
      return Option.none<GitRootInfo>()
    }
    const backLink = (yield* readText(path.join(gitDir.value, "gitdir"))).pipe(
      Option.flatMapNullishOr(parsePointerFile)
    )
    if (Option.isNone(backLink)) return Option.none<GitRootInfo>()
    const linkedCheckout = yield* realPath(path.resolve(gitDir.value, backLink.value))
    const thisCheckout = yield* realPath(dotGit)
    if (Option.isNone(linkedCheckout) || !Option.contains(thisCheckout, linkedCheckout.value)) {
      return Option.none<GitRootInfo>()
    }
    const bare = path.basename(commonDir.value) !== ".git" || (yield* isBare(commonDir.value))
    return Option.some<GitRootInfo>(
      bare
        ? { root: commonDir.value, kind: "bare", commonDir: commonDir.value }
        : { root: path.dirname(commonDir.value), kind: "worktree", commonDir: commonDir.value }
    )
  })

  const canonicalRoot = Effect.fn("GitRoot.canonicalRoot")(function*(cwd: string) {
    const start = path.resolve(cwd)
    const realStart = Option.getOrElse(yield* realPath(start), () => start)
    const fallback: GitRootInfo = { root: realStart, kind: "none" }
    let dir = realStart
    while (true) {
      const dotGit = path.join(dir, ".git")
      const dotGitType = yield* typeOf(dotGit)
      if (Option.contains(dotGitType, "Directory") && (yield* isFile(path.join(dotGit, "HEAD")))) {
        const commonDir = yield* realPath(dotGit)
        return {
          root: dir,
          kind: "repository",
          commonDir: Option.getOrElse(commonDir, () => dotGit)
        } satisfies GitRootInfo
      }
      if (Option.contains(dotGitType, "File")) {
        return Option.getOrElse(yield* followGitFile(dir, dotGit), () => fallback)
      }
      if (yield* isBareRepository(dir)) {
        return { root: dir, kind: "bare", commonDir: dir } satisfies GitRootInfo
      }
      const parent = path.dirname(dir)
      if (parent === dir) return fallback
      dir = parent
    }
  })

  return GitRoot.of({ canonicalRoot })
})

/** Reads the repository layout from the file system (through `MemoryFs`). */
export const layer: Layer.Layer<GitRoot, never, MemoryFs | Path.Path> = Layer.effect(GitRoot, make)

/**
 * Fixed answers for tests: a cwd equal to or below a key resolves to that key's info (the deepest key wins);
 * any other cwd resolves to itself with kind "none".
 */
export const layerTest = (roots: Readonly<Record<string, GitRootInfo>>): Layer.Layer<GitRoot> =>
  Layer.succeed(
    GitRoot,
    GitRoot.of({
      canonicalRoot: (cwd) => {
        const match = Object.keys(roots)
          .filter((key) => isInside(key, cwd, { allowRoot: true, sep: "/" }))
          .sort((a, b) => b.length - a.length)[0]
        return Effect.succeed(match === undefined ? { root: cwd, kind: "none" } : roots[match]!)
      }
    })
  )
