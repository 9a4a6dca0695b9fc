/**
 * The Git service with real git processes in scratch directories: the environment a caller's git (a hook) sets
 * never reaches memdir's git, the protocol allow-list holds, and a remote that never answers is cut off.
 */
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as Git from "../src/Git.js"
import { inheritedFromHook, silentServer } from "./support/gitAttack.js"

const plainGit = (cwd: string, ...args: Array<string>) =>
  execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...process.env,
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_AUTHOR_NAME: "t",
      GIT_AUTHOR_EMAIL: "t@memdir.invalid",
      GIT_COMMITTER_NAME: "t",
      GIT_COMMITTER_EMAIL: "t@memdir.invalid"
    }
  })

const scratch = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  return yield* fs.realPath(yield* fs.makeTempDirectoryScoped({ prefix: "memdir-git-" }))
})

describe("Git pure parts", () => {
  it("builds the environment from the allow-list: no inherited GIT_*, memdir's settings and the caller's on top", () => {
    const env = Git.gitEnvironment(
      {
        PATH: "/bin",
        HOME: "/home/u",
        LC_CTYPE: "UTF-8",
        SSH_AUTH_SOCK: "/tmp/agent",
        GIT_DIR: "/project/.git",
        GIT_INDEX_FILE: "/project/.git/index",
        GIT_WORK_TREE: "/project",
        GIT_CONFIG_PARAMETERS: "'core.hooksPath'='/evil'",
        GIT_SSH_COMMAND: "evil",
        LD_PRELOAD: "/evil.so",
        NODE_OPTIONS: "--require /evil.js",
        UNSET: undefined
      },
      { GIT_INDEX_FILE: "/memdir/.team.git/merge.index" }
    )
    assert.deepStrictEqual(env, {
      PATH: "/bin",
      HOME: "/home/u",
      LC_CTYPE: "UTF-8",
      SSH_AUTH_SOCK: "/tmp/agent",
      GIT_TERMINAL_PROMPT: "0",
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_ATTR_NOSYSTEM: "1",
      GIT_NO_REPLACE_OBJECTS: "1",
      GIT_OPTIONAL_LOCKS: "0",
      LC_ALL: "C",
      GIT_INDEX_FILE: "/memdir/.team.git/merge.index"
    })
  })

  it("switches off every filter a repository's config names (names with dots included)", () => {
    assert.deepStrictEqual(Git.filterOverrides(""), [])
    const overrides = Git.filterOverrides("filter.lfs.clean\nfilter.lfs.required\nfilter.a.b.process\ncore.bare\n")
    assert.deepStrictEqual(overrides.filter((arg) => arg !== "-c"), [
      "filter.lfs.clean=",
      "filter.lfs.smudge=",
      "filter.lfs.process=",
      "filter.lfs.required=false",
      "filter.a.b.clean=",
      "filter.a.b.smudge=",
      "filter.a.b.process=",
      "filter.a.b.required=false"
    ])
  })

  it("tells local remotes (paths, file://) from network ones, and names hook-free pack programs for them", () => {
    for (const local of ["/srv/team.git", "../team.git", "team.git", "file:///srv/team.git", "C:\\team", "./a:b"]) {
      assert.isTrue(Git.isLocalRemote(local), local)
    }
    for (const network of ["git@github.com:acme/team.git", "ssh://host/x", "https://h/x.git", "git://h/x", "fd::3"]) {
      assert.isFalse(Git.isLocalRemote(network), network)
    }
    assert.deepStrictEqual(Git.localTransportOptions("https://h/x.git", "push"), [])
    const [receive] = Git.localTransportOptions("/srv/team.git", "push")
    assert.match(receive!, /^--receive-pack=git -c 'core\.hooksPath=\/dev\/null' .* receive-pack$/)
    assert.include(receive!, "-c 'receive.autogc=false'")
    const [upload] = Git.localTransportOptions("/srv/team.git", "fetch")
    assert.match(upload!, /^--upload-pack=git -c .* upload-pack$/)
  })
})

layer(NodeServices.layer, { timeout: 60_000, excludeTestServices: true })("Git with real git", (it) => {
  it.effect("GIT_DIR, GIT_WORK_TREE and GIT_INDEX_FILE set by a calling hook never reach memdir's git", () =>
    Effect.gen(function*() {
      const root = yield* scratch
      const project = `${root}/project`
      const memory = `${root}/memory`
      for (const dir of [project, memory]) {
        NodeFs.mkdirSync(dir, { recursive: true })
        plainGit(dir, "init", "-q", "-b", "main")
      }
      NodeFs.writeFileSync(`${project}/README.md`, "project\n")
      plainGit(project, "add", "README.md")
      plainGit(project, "commit", "-qm", "project")
      const projectHead = plainGit(project, "rev-parse", "HEAD")
      NodeFs.writeFileSync(`${memory}/note.md`, "a memory\n")
      yield* inheritedFromHook({
        GIT_DIR: `${project}/.git`,
        GIT_WORK_TREE: project,
        GIT_INDEX_FILE: `${project}/.git/index`,
        GIT_CONFIG_PARAMETERS: `'core.hooksPath'='${root}/hooks'`
      })
      const git = yield* Git.makeWith({})
      const top = yield* git.exec(["rev-parse", "--show-toplevel", "--absolute-git-dir"], { cwd: memory })
      assert.deepStrictEqual(top.stdout.trim().split("\n"), [memory, `${memory}/.git`])
      yield* git.exec(["add", "note.md"], { cwd: memory })
      const staged = yield* git.exec(["diff", "--cached", "--name-only"], { cwd: memory })
      assert.strictEqual(staged.stdout, "note.md\n")
      // The project's repository saw nothing: same HEAD, nothing staged, no note.md in its index.
      delete process.env.GIT_DIR
      delete process.env.GIT_WORK_TREE
      delete process.env.GIT_INDEX_FILE
      assert.strictEqual(plainGit(project, "rev-parse", "HEAD"), projectHead)
      assert.strictEqual(plainGit(project, "ls-files"), "README.md\n")
    }))

  it.effect("refuses ext:: and fd:: remotes: nothing runs, and the typed error names the command", () =>
    Effect.gen(function*() {
      const root = yield* scratch
      const git = yield* Git.makeWith({})
      const marker = `${root}/marker`
      for (const remote of [`ext::sh -c touch% ${marker}`, "fd::3"]) {
        const error = yield* Effect.flip(git.exec(["ls-remote", remote], { cwd: root }))
        assert.strictEqual(error._tag, "GitError", remote)
        if (error._tag !== "GitError") return
        assert.notStrictEqual(error.exitCode, 0)
        assert.deepStrictEqual(error.args, ["ls-remote", remote])
        assert.match(error.stderr, /not allowed|unable to find remote helper/, remote)
        assert.include(error.message, "git ls-remote")
      }
      assert.isFalse(NodeFs.existsSync(marker))
    }))

  it.effect("a remote that never answers is cut off at the timeout with GitTimeoutError", () =>
    Effect.gen(function*() {
      const root = yield* scratch
      const { port } = yield* silentServer
      const git = yield* Git.makeWith({ timeout: "1500 millis" })
      const started = Date.now()
      const error = yield* Effect.flip(git.run(["ls-remote", `git://127.0.0.1:${port}/team.git`], { cwd: root }))
      const elapsed = Date.now() - started
      assert.strictEqual(error._tag, "GitTimeoutError")
      assert.strictEqual(error.message.includes("did not finish within 2 s"), true, error.message)
      assert.isAtLeast(elapsed, 1400)
      assert.isBelow(elapsed, 10_000)
    }))

  it.effect("a git that cannot start is a GitError with exit code -1 that says to install git", () =>
    Effect.gen(function*() {
      const root = yield* scratch
      const git = yield* Git.makeWith({ parentEnv: () => ({ PATH: `${root}/nowhere`, HOME: root }) })
      const error = yield* Effect.flip(git.exec(["version"], { cwd: root }))
      assert.strictEqual(error._tag, "GitError")
      if (error._tag !== "GitError") return
      assert.strictEqual(error.exitCode, -1)
      assert.include(error.message, "is git installed")
    }))
})

describe("Git.layerTest", () => {
  it.effect("answers scripted calls; exec fails on a non-zero answer", () =>
    Effect.gen(function*() {
      const git = yield* Git.Git
      assert.strictEqual((yield* git.run(["rev-parse", "HEAD"])).stdout, "abc\n")
      const error = yield* Effect.flip(git.exec(["push"]))
      assert.strictEqual(error._tag, "GitError")
    }).pipe(
      Effect.provide(
        Layer.fresh(
          Git.layerTest((args) => args[0] === "push" ? { exitCode: 1, stderr: "rejected" } : { stdout: "abc\n" })
        )
      )
    ))
})
