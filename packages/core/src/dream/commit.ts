/**
 * One reviewable git commit per dream, where the memory directory is the root of a git repository (a directory
 * inside a project's repository is left to its owner: memdir does not write a project's history). git runs
 * through the `Git` service: the caller's `GIT_DIR`/`GIT_WORK_TREE`/`GIT_INDEX_FILE` never reach it, so the
 * repository is always the one found from the memory directory itself. Hooks are off, and every filter the
 * repository's config defines is switched off for the commit, so a `.gitattributes` naming one runs nothing.
 */
import * as Effect from "effect/Effect"
import { filterOverrides, Git } from "../Git.js"
import { MemoryFs } from "../MemoryFs.js"
import { INDEX_FILE } from "../MemoryIndex.js"
import type { DreamDiff } from "./snapshot.js"

export type DreamCommit =
  | { readonly status: "committed"; readonly sha: string; readonly message: string }
  | { readonly status: "skipped"; readonly reason: string }
  | { readonly status: "failed"; readonly detail: string }

/** memdir's own files are never committed: locks, scan cache, backups, temp files. */
const GIT_EXCLUDES = [":(exclude).*", ":(exclude)*/.*"]

/** The commit message: a summary line, then one line per file. */
export const commitMessage = (diff: DreamDiff, summary: string): string => {
  const counts = [
    `${diff.created.length} created`,
    `${diff.updated.length} updated`,
    `${diff.merged.length} merged`,
    `${diff.deleted.length} deleted`
  ].join(", ")
  const mergedFrom = new Map(diff.merged.map((m) => [m.from, m.into]))
  const body = [
    ...diff.created.map((c) => `created ${c.file}`),
    ...diff.updated.map((u) => `updated ${u.file}`),
    ...diff.deleted.map((d) =>
      mergedFrom.has(d.file) ? `merged  ${d.file} into ${mergedFrom.get(d.file)}` : `deleted ${d.file}`
    ),
    ...(diff.index === undefined ? [] : [`updated ${INDEX_FILE}`])
  ]
  const text = summary.trim()
  return `memdir dream: ${counts}\n\n${body.join("\n")}${text === "" ? "" : `\n\n${text.slice(0, 2000)}`}\n`
}

const skipped = (reason: string): DreamCommit => ({ status: "skipped", reason })
const failed = (detail: string): DreamCommit => ({ status: "failed", detail })

/** Commit the memory directory's files as one commit; the outcome (committed, skipped or why it failed). */
export const commitDream = Effect.fn("Dream.commit")(function*(memoryDir: string, message: string) {
  const fs = yield* MemoryFs
  const git = yield* Git
  const inMemoryDir = { cwd: memoryDir }
  const outcome = Effect.gen(function*() {
    const top = yield* git.run(["rev-parse", "--show-toplevel"], inMemoryDir)
    if (top.exitCode !== 0) return skipped("the memory directory is not a git repository")
    const realMemoryDir = yield* fs.realPath(memoryDir)
    const realTop = yield* fs.realPath(top.stdout.trim())
    if (realTop !== realMemoryDir) {
      return skipped(
        `the memory directory is inside the repository ${realTop}, not its root: memdir does not commit into a ` +
          `project's history`
      )
    }
    const pathspec = ["--", ".", ...GIT_EXCLUDES]
    const filters = filterOverrides(
      (yield* git.run(["config", "--name-only", "--get-regexp", "^filter\\."], inMemoryDir)).stdout
    )
    const added = yield* git.run([...filters, "add", "-A", ...pathspec], inMemoryDir)
    if (added.exitCode !== 0) return failed(`git add: ${added.stderr.trim()}`)
    const staged = yield* git.run(
      [...filters, "diff", "--cached", "--quiet", "--no-ext-diff", "--no-textconv", ...pathspec],
      inMemoryDir
    )
    if (staged.exitCode === 0) return skipped("nothing to commit")
    const email = yield* git.run(["config", "user.email"], inMemoryDir)
    const identity = email.exitCode === 0 && email.stdout.trim() !== ""
      ? []
      : ["-c", "user.name=memdir", "-c", "user.email=memdir@localhost"]
    // What is staged is the memory directory's own: the repository is the memory directory.
    const committed = yield* git.run(
      [...filters, ...identity, "commit", "-q", "--no-verify", "-m", message],
      inMemoryDir
    )
    if (committed.exitCode !== 0) return failed(`git commit: ${(committed.stderr || committed.stdout).trim()}`)
    const head = yield* git.exec(["rev-parse", "HEAD"], inMemoryDir)
    const done: DreamCommit = { status: "committed", sha: head.stdout.trim(), message }
    return done
  })
  // git missing, not runnable or timed out: the dream itself is done; the report says the commit failed, and why.
  return yield* outcome.pipe(Effect.catch((error) => Effect.succeed(failed(error.message))))
})
