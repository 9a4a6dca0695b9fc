/**
 * GitAges over real git: a memory directory committed in a project and checked out in a linked worktree, where `.git`
 * is a file (`gitdir: …`) and the refs live in the common git dir its `commondir` names. The commit times must come
 * through that indirection as they do in the main checkout.
 */
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { GitAges, layerLive } from "../src/GitAges.js"

const COMMITTED = Date.UTC(2026, 0, 2, 3, 4, 5)

/** Real git, isolated from the machine's configuration, committing at `COMMITTED`. */
const git = (cwd: string, ...args: Array<string>) =>
  execFileSync("git", ["-c", "user.name=erin", "-c", "user.email=e@memdir.invalid", ...args], {
    cwd,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      PATH: process.env.PATH ?? "",
      HOME: os.tmpdir(),
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_AUTHOR_DATE: `${COMMITTED / 1000} +0000`,
      GIT_COMMITTER_DATE: `${COMMITTED / 1000} +0000`
    }
  })

/** A project with `.claude/memory/project_a.md` committed, and a linked worktree of it; removed with the scope. */
const projectWithWorktree = Effect.acquireRelease(
  Effect.sync(() => {
    const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "memdir-gitages-")))
    const main = path.join(base, "main")
    fs.mkdirSync(path.join(main, ".claude", "memory"), { recursive: true })
    fs.writeFileSync(path.join(main, ".claude", "memory", "project_a.md"), "---\nname: a\n---\n\nA.\n")
    git(main, "init", "-q", "-b", "main")
    git(main, "add", ".")
    git(main, "commit", "-q", "-m", "memory")
    const worktree = path.join(base, "wt")
    git(main, "worktree", "add", "-q", "-b", "wt", worktree)
    return { base, main, worktree }
  }),
  ({ base }) => Effect.sync(() => fs.rmSync(base, { recursive: true, force: true }))
)

const commitTimeOf = (memoryDir: string, relative: string) =>
  Effect.gen(function*() {
    const ages = yield* GitAges
    const times = yield* ages.commitTimes(memoryDir)
    assert.isDefined(times, `${memoryDir} is tracked`)
    return times!(relative, fs.lstatSync(path.join(memoryDir, relative)).mtimeMs)
  })

describe("GitAges.commitTimes", () => {
  it.effect(
    "reads HEAD through a linked worktree's .git file and commondir, as in the main checkout",
    () =>
      Effect.gen(function*() {
        const { main, worktree } = yield* projectWithWorktree
        assert.isTrue(fs.lstatSync(path.join(worktree, ".git")).isFile(), "a worktree's .git is a file")
        assert.strictEqual(yield* commitTimeOf(path.join(main, ".claude", "memory"), "project_a.md"), COMMITTED)
        assert.strictEqual(yield* commitTimeOf(path.join(worktree, ".claude", "memory"), "project_a.md"), COMMITTED)
      }).pipe(Effect.provide(layerLive.pipe(Layer.provideMerge(NodeServices.layer)))),
    60_000
  )

  it.effect("a .git file that names no git dir: not tracked", () =>
    Effect.gen(function*() {
      const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "memdir-gitages-")))
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(base, { recursive: true, force: true })))
      fs.mkdirSync(path.join(base, "memory"))
      fs.writeFileSync(path.join(base, ".git"), "gitdir:\n")
      const ages = yield* GitAges
      assert.isUndefined(yield* ages.commitTimes(path.join(base, "memory")))
    }).pipe(Effect.provide(layerLive.pipe(Layer.provideMerge(NodeServices.layer)))))
})
