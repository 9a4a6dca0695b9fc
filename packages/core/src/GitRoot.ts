/**
 * GitRoot: the canonical root that scopes a memory directory (SPEC §1).
 * CONTRACT (owned by the paths helper; implementation to be filled in).
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"

export interface GitRootInfo {
  /** The canonical project root: the main checkout of the repo (shared by all worktrees), or the cwd when no git. */
  readonly root: string
  readonly kind: "repository" | "worktree" | "bare" | "none"
  /** The common git dir when there is one. */
  readonly commonDir?: string | undefined
}

export class GitRoot extends Context.Tag("@memdir/core/GitRoot")<GitRoot, {
  /** Never fails: anything it cannot follow falls back to the no-git root (the given directory). */
  readonly canonicalRoot: (cwd: string) => Effect.Effect<GitRootInfo>
}>() {}
