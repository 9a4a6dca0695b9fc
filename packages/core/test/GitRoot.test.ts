import { NodeServices } from "@effect/platform-node"
import { assert, describe, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Path from "effect/Path"
import { execFileSync } from "node:child_process"
import { configSaysBare, GitRoot, type GitRootInfo, layer as gitRootLayer, layerTest } from "../src/GitRoot.js"
import * as MemoryFs from "../src/MemoryFs.js"

/** Real git, isolated from the machine's global and system configuration. */
const git = (cwd: string, ...args: Array<string>) =>
  Effect.sync(() =>
    execFileSync("git", args, {
      cwd,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...process.env,
        GIT_CONFIG_GLOBAL: "/dev/null",
        GIT_CONFIG_NOSYSTEM: "1",
        GIT_AUTHOR_NAME: "memdir test",
        GIT_AUTHOR_EMAIL: "test@memdir.invalid",
        GIT_COMMITTER_NAME: "memdir test",
        GIT_COMMITTER_EMAIL: "test@memdir.invalid",
        GIT_ALLOW_PROTOCOL: "file"
      }
    })
  )

/** A real temp dir, by its real path (the resolver answers real paths). */
const tempDir = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  return yield* fs.realPath(yield* fs.makeTempDirectoryScoped({ prefix: "memdir-gitroot-" }))
})

const mkdirs = (...dirs: Array<string>) =>
  Effect.flatMap(
    FileSystem.FileSystem,
    (fs) => Effect.forEach(dirs, (dir) => fs.makeDirectory(dir, { recursive: true }))
  )

/** A repository with one commit at `<base>/main`. */
const initRepository = Effect.fnUntraced(function*(base: string) {
  const path = yield* Path.Path
  const main = path.join(base, "main")
  yield* mkdirs(path.join(main, "src", "deep", "er"))
  yield* git(main, "init", "-q", "-b", "main")
  yield* git(main, "commit", "-q", "--allow-empty", "-m", "init")
  return main
})

const canonicalRoot = (cwd: string) => Effect.flatMap(GitRoot, (gitRoot) => gitRoot.canonicalRoot(cwd))

layer(Layer.provideMerge(gitRootLayer, Layer.merge(NodeServices.layer, MemoryFs.layer)))(
  "GitRoot.canonicalRoot (real git)",
  (it) => {
    it.effect("a repository resolves to its top level from any nested subdirectory", () =>
      Effect.gen(function*() {
        const path = yield* Path.Path
        const main = yield* initRepository(yield* tempDir)
        const fromTop = yield* canonicalRoot(main)
        const fromDeep = yield* canonicalRoot(path.join(main, "src", "deep", "er"))
        assert.deepStrictEqual(fromTop, { root: main, kind: "repository", commonDir: path.join(main, ".git") })
        assert.deepStrictEqual(fromDeep, fromTop)
      }))

    it.effect("a relative cwd resolves like its absolute form", () =>
      Effect.gen(function*() {
        const path = yield* Path.Path
        const main = yield* initRepository(yield* tempDir)
        const relative = path.relative(process.cwd(), path.join(main, "src"))
        assert.strictEqual((yield* canonicalRoot(relative)).root, main)
      }))

    it.effect("two worktrees resolve to the main checkout, from their subdirectories too", () =>
      Effect.gen(function*() {
        const path = yield* Path.Path
        const base = yield* tempDir
        const main = yield* initRepository(base)
        yield* git(main, "worktree", "add", "-q", "-b", "feature-a", path.join(base, "wt-a"))
        yield* git(main, "worktree", "add", "-q", "-b", "feature-b", path.join(base, "wt-b"))
        yield* mkdirs(path.join(base, "wt-b", "nested", "dir"))
        const expected: GitRootInfo = { root: main, kind: "worktree", commonDir: path.join(main, ".git") }
        assert.deepStrictEqual(yield* canonicalRoot(path.join(base, "wt-a")), expected)
        assert.deepStrictEqual(yield* canonicalRoot(path.join(base, "wt-b", "nested", "dir")), expected)
      }))

    it.effect("worktrees of a bare repository resolve to the bare directory", () =>
      Effect.gen(function*() {
        const path = yield* Path.Path
        const base = yield* tempDir
        const main = yield* initRepository(base)
        const bare = path.join(base, "project.git")
        yield* git(base, "clone", "-q", "--bare", main, bare)
        yield* git(bare, "worktree", "add", "-q", "--detach", path.join(base, "bare-wt-1"))
        yield* git(bare, "worktree", "add", "-q", "--detach", path.join(base, "bare-wt-2"))
        yield* mkdirs(path.join(base, "bare-wt-2", "src"))
        const expected: GitRootInfo = { root: bare, kind: "bare", commonDir: bare }
        assert.deepStrictEqual(yield* canonicalRoot(path.join(base, "bare-wt-1")), expected)
        assert.deepStrictEqual(yield* canonicalRoot(path.join(base, "bare-wt-2", "src")), expected)
      }))

    it.effect("a bare repository opened directly is its own root", () =>
      Effect.gen(function*() {
        const path = yield* Path.Path
        const bare = path.join(yield* tempDir, "plain.git")
        yield* mkdirs(bare)
        yield* git(bare, "init", "-q", "--bare")
        const expected: GitRootInfo = { root: bare, kind: "bare", commonDir: bare }
        assert.deepStrictEqual(yield* canonicalRoot(bare), expected)
        assert.deepStrictEqual(yield* canonicalRoot(path.join(bare, "refs", "heads")), expected)
      }))

    it.effect("a .git file pointing at another checkout's worktree dir (no link back) falls back to the cwd", () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const path = yield* Path.Path
        const base = yield* tempDir
        const victim = yield* initRepository(base)
        yield* git(victim, "worktree", "add", "-q", "-b", "victim-wt", path.join(base, "victim-wt"))
        const evil = path.join(base, "evil")
        yield* mkdirs(path.join(evil, "sub"))
        yield* fs.writeFileString(
          path.join(evil, ".git"),
          `gitdir: ${path.join(victim, ".git", "worktrees", "victim-wt")}\n`
        )
        assert.deepStrictEqual(yield* canonicalRoot(path.join(evil, "sub")), {
          root: path.join(evil, "sub"),
          kind: "none"
        })
      }))

    it.effect("a .git file whose git dir is not under <common>/worktrees/ falls back, even if it links back", () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const path = yield* Path.Path
        const base = yield* tempDir
        const victim = yield* initRepository(base)
        const evil = path.join(base, "evil")
        const fake = path.join(base, "fake-gitdir")
        yield* mkdirs(evil, fake)
        yield* fs.writeFileString(path.join(evil, ".git"), `gitdir: ${fake}\n`)
        yield* fs.writeFileString(path.join(fake, "HEAD"), "ref: refs/heads/main\n")
        yield* fs.writeFileString(path.join(fake, "commondir"), `${path.join(victim, ".git")}\n`)
        yield* fs.writeFileString(path.join(fake, "gitdir"), `${path.join(evil, ".git")}\n`)
        assert.deepStrictEqual(yield* canonicalRoot(evil), { root: evil, kind: "none" })
      }))

    it.effect("a .git file that cannot be followed falls back to the cwd", () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const path = yield* Path.Path
        const base = yield* tempDir
        const cases = {
          dangling: `gitdir: ${path.join(base, "does-not-exist")}\n`,
          garbage: "this is not a git pointer\n",
          empty: "",
          emptyPointer: "gitdir:   \n",
          unrelated: `gitdir: ${base}\n`
        }
        for (const [name, content] of Object.entries(cases)) {
          const dir = path.join(base, name)
          yield* mkdirs(dir)
          yield* fs.writeFileString(path.join(dir, ".git"), content)
          assert.deepStrictEqual(yield* canonicalRoot(dir), { root: dir, kind: "none" }, name)
        }
      }))

    it.effect("a .git file pointing at another repository's git dir never yields that repository's root", () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const path = yield* Path.Path
        const base = yield* tempDir
        const victim = yield* initRepository(base)
        const evil = path.join(base, "evil")
        yield* mkdirs(path.join(evil, "src"))
        yield* fs.writeFileString(path.join(evil, ".git"), `gitdir: ${path.join(victim, ".git")}\n`)
        const info = yield* canonicalRoot(path.join(evil, "src"))
        assert.strictEqual(info.root, evil)
        assert.notStrictEqual(info.root, victim)
      }))

    it.effect("a submodule is its own repository, rooted at its checkout", () =>
      Effect.gen(function*() {
        const path = yield* Path.Path
        const base = yield* tempDir
        const library = yield* initRepository(path.join(base, "library"))
        const superproject = yield* initRepository(path.join(base, "super"))
        yield* git(superproject, "-c", "protocol.file.allow=always", "submodule", "add", "-q", library, "vendor/lib")
        const submodule = path.join(superproject, "vendor", "lib")
        yield* mkdirs(path.join(submodule, "src"))
        assert.deepStrictEqual(yield* canonicalRoot(path.join(submodule, "src")), {
          root: submodule,
          kind: "repository",
          commonDir: path.join(superproject, ".git", "modules", "vendor", "lib")
        })
        assert.strictEqual((yield* canonicalRoot(path.join(superproject, "src"))).root, superproject)
      }))

    it.effect("a symlinked checkout resolves to the real root", () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const path = yield* Path.Path
        const base = yield* tempDir
        const main = yield* initRepository(base)
        const link = path.join(base, "link-to-main")
        yield* fs.symlink(main, link)
        assert.strictEqual((yield* canonicalRoot(path.join(link, "src", "deep"))).root, main)
      }))

    it.effect("without git, the root is the cwd given (real path), not an ancestor", () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const path = yield* Path.Path
        const base = yield* tempDir
        const plain = path.join(base, "plain", "sub")
        yield* mkdirs(plain)
        yield* fs.symlink(plain, path.join(base, "alias"))
        assert.deepStrictEqual(yield* canonicalRoot(plain), { root: plain, kind: "none" })
        assert.deepStrictEqual(yield* canonicalRoot(path.join(base, "alias")), { root: plain, kind: "none" })
      }))

    it.effect("a .git directory without HEAD is not a repository; the walk goes on upward", () =>
      Effect.gen(function*() {
        const path = yield* Path.Path
        const main = yield* initRepository(yield* tempDir)
        const nested = path.join(main, "src", "deep")
        yield* mkdirs(path.join(nested, ".git"))
        assert.strictEqual((yield* canonicalRoot(nested)).root, main)
      }))

    it.effect("a cwd that does not exist falls back to its resolved path", () =>
      Effect.gen(function*() {
        const path = yield* Path.Path
        const missing = path.join(yield* tempDir, "gone", "away")
        assert.deepStrictEqual(yield* canonicalRoot(missing), { root: missing, kind: "none" })
      }))

    it.effect("git files that are FIFOs are never waited on: read as unreadable, the lookup goes on", () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const path = yield* Path.Path
        const base = yield* tempDir
        // a .git file whose git dir's commondir is a FIFO: as if it had none (a git dir of its own, rooted here)
        const checkout = path.join(base, "checkout")
        const gitDir = path.join(base, "gitdir")
        yield* mkdirs(checkout, gitDir)
        yield* fs.writeFileString(path.join(checkout, ".git"), `gitdir: ${gitDir}\n`)
        yield* fs.writeFileString(path.join(gitDir, "HEAD"), "ref: refs/heads/main\n")
        execFileSync("mkfifo", [path.join(gitDir, "commondir")])
        assert.deepStrictEqual(yield* canonicalRoot(checkout), {
          root: checkout,
          kind: "repository",
          commonDir: gitDir
        })
        // a bare-looking directory whose config is a FIFO: not known to be bare, so no root
        const bare = path.join(base, "bare")
        yield* mkdirs(path.join(bare, "objects"), path.join(bare, "refs"))
        yield* fs.writeFileString(path.join(bare, "HEAD"), "ref: refs/heads/main\n")
        execFileSync("mkfifo", [path.join(bare, "config")])
        assert.deepStrictEqual(yield* canonicalRoot(bare), { root: bare, kind: "none" })
      }))
  }
)

describe("configSaysBare", () => {
  it("reads core.bare with git's boolean spellings, sections and comments", () => {
    assert.isTrue(configSaysBare("[core]\n\trepositoryformatversion = 0\n\tbare = true\n"))
    assert.isTrue(configSaysBare("[CORE]\n\tBare = Yes ; comment\n"))
    assert.isTrue(configSaysBare("[core]\n\tbare\n"))
    assert.isFalse(configSaysBare("[core]\n\tbare = false\n"))
    assert.isFalse(configSaysBare("[core]\n\tbare = true\n\tbare = false\n"))
    assert.isFalse(configSaysBare("[remote \"origin\"]\n\tbare = true\n"))
    assert.isFalse(configSaysBare("[core \"sub\"]\n\tbare = true\n"))
    assert.isFalse(configSaysBare("# [core]\n# bare = true\n"))
    assert.isFalse(configSaysBare(""))
  })
})

describe("GitRoot.layerTest", () => {
  const repo: GitRootInfo = { root: "/repo", kind: "repository", commonDir: "/repo/.git" }
  const worktree: GitRootInfo = { root: "/repo", kind: "worktree", commonDir: "/repo/.git" }
  const roots = { "/repo": repo, "/repo/wt": worktree }

  it.effect("answers the deepest configured ancestor, else the cwd itself", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* canonicalRoot("/repo"), repo)
      assert.deepStrictEqual(yield* canonicalRoot("/repo/src/x"), repo)
      assert.deepStrictEqual(yield* canonicalRoot("/repo/wt/src"), worktree)
      assert.deepStrictEqual(yield* canonicalRoot("/repo-other"), { root: "/repo-other", kind: "none" })
    }).pipe(Effect.provide(layerTest(roots))))
})
