import { NodeServices } from "@effect/platform-node"
import { assert, describe, it, layer } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Path from "effect/Path"
import * as Result from "effect/Result"
import { execFileSync } from "node:child_process"
import {
  DEFAULT_POLICY_FILE,
  layer as settingsLayer,
  layerTest,
  layerWith,
  type MemdirEnv,
  parseSettingsFile,
  Settings,
  testEnv
} from "../src/Settings.js"

/** Runs git in `cwd` with a fixed identity, outside the caller's git environment. */
const git = (cwd: string, ...args: Array<string>) =>
  execFileSync("git", ["-c", "user.email=t@memdir.invalid", "-c", "user.name=t", ...args], {
    cwd,
    stdio: "pipe",
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: cwd, GIT_CONFIG_NOSYSTEM: "1" }
  })

const withConfig = (config: Record<string, string>) =>
  ConfigProvider.layer(ConfigProvider.fromEnvRecord(config, { preserveEmptyStrings: true }))

/** The live Settings layer over a fake environment (never the real HOME). */
const liveSettings = (config: Record<string, string>, overrides: Partial<MemdirEnv> = {}) =>
  (Object.keys(overrides).length === 0 ? settingsLayer : layerWith(overrides)).pipe(
    Layer.provide(withConfig(config)),
    Layer.orDie
  )

/** A temp home, a temp MEMDIR_HOME inside it, a project root and a policy file path, all real directories. */
const sandbox = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const base = yield* fs.realPath(yield* fs.makeTempDirectoryScoped({ prefix: "memdir-settings-" }))
  const dirs = {
    userHome: path.join(base, "home"),
    memdirHome: path.join(base, "home", ".memdir"),
    root: path.join(base, "project"),
    etc: path.join(base, "etc")
  }
  yield* Effect.forEach(Object.values(dirs), (dir) => fs.makeDirectory(dir, { recursive: true }))
  const files = {
    policy: path.join(dirs.etc, "policy.json"),
    local: path.join(dirs.root, ".memdir", "settings.local.json"),
    user: path.join(dirs.memdirHome, "settings.json"),
    project: path.join(dirs.root, ".memdir", "settings.json")
  }
  const config = { HOME: dirs.userHome, MEMDIR_HOME: dirs.memdirHome, MEMDIR_POLICY_FILE: files.policy }
  const write = (file: string, content: string) =>
    fs.makeDirectory(path.dirname(file), { recursive: true }).pipe(Effect.andThen(fs.writeFileString(file, content)))
  return { ...dirs, files, config, write }
})

const loadWith = (config: Record<string, string>, root: string, overrides: Partial<MemdirEnv> = {}) =>
  Effect.flatMap(Settings, (settings) => settings.load(root)).pipe(Effect.provide(liveSettings(config, overrides)))

const envWith = (config: Record<string, string>) =>
  Effect.map(Settings, (settings) => settings.env).pipe(Effect.provide(liveSettings(config)))

layer(NodeServices.layer)("Settings (real files)", (it) => {
  it.effect("missing files are absent", () =>
    Effect.gen(function*() {
      const { config, root } = yield* sandbox
      assert.deepStrictEqual(yield* loadWith(config, root), { sources: [] })
    }))

  it.effect("reads policy, flag, local, user and project in that order, keeping unknown keys", () =>
    Effect.gen(function*() {
      const { config, files, root, write } = yield* sandbox
      yield* write(files.project, JSON.stringify({ autoMemoryEnabled: false, teamMemory: { enabled: true } }))
      yield* write(files.user, JSON.stringify({ autoMemoryDirectory: "~/mem-user", model: "fast" }))
      yield* write(files.local, JSON.stringify({ autoMemoryDirectory: "/srv/mem-local" }))
      yield* write(files.policy, JSON.stringify({ autoMemoryEnabled: true }))
      const loaded = yield* loadWith(config, root, { flagMemoryDir: "/flag/dir" })
      assert.deepStrictEqual(loaded.sources, [
        { source: "policy", path: files.policy, settings: { autoMemoryEnabled: true } },
        { source: "flag", path: "--memory-dir", settings: { autoMemoryDirectory: "/flag/dir" } },
        { source: "local", path: files.local, settings: { autoMemoryDirectory: "/srv/mem-local" } },
        { source: "user", path: files.user, settings: { autoMemoryDirectory: "~/mem-user", model: "fast" } },
        {
          source: "project",
          path: files.project,
          settings: { autoMemoryEnabled: false, teamMemory: { enabled: true } }
        }
      ])
    }))

  it.effect("invalid JSON is a SettingsError naming the file", () =>
    Effect.gen(function*() {
      const { config, files, root, write } = yield* sandbox
      yield* write(files.user, "{ \"autoMemoryEnabled\": true, }")
      const error = yield* Effect.flip(loadWith(config, root))
      assert.strictEqual(error._tag, "SettingsError")
      assert.strictEqual(error.path, files.user)
      assert.include(error.message, files.user)
      assert.include(error.detail, "invalid JSON")
    }))

  it.effect("a file that is not a JSON object is a SettingsError", () =>
    Effect.gen(function*() {
      const { config, files, root, write } = yield* sandbox
      for (const [text, found] of [["[]", "an array"], ["null", "null"], ["42", "number"], ["\"x\"", "string"]]) {
        yield* write(files.project, text)
        const error = yield* Effect.flip(loadWith(config, root))
        assert.strictEqual(error.path, files.project, text)
        assert.include(error.detail, found, text)
      }
    }))

  it.effect("a known key with the wrong type is a SettingsError naming the key", () =>
    Effect.gen(function*() {
      const { config, files, root, write } = yield* sandbox
      yield* write(files.local, JSON.stringify({ autoMemoryEnabled: "yes" }))
      const enabled = yield* Effect.flip(loadWith(config, root))
      assert.strictEqual(enabled.path, files.local)
      assert.strictEqual(enabled.key, "autoMemoryEnabled")
      assert.include(enabled.message, "autoMemoryEnabled")
      yield* write(files.local, JSON.stringify({ autoMemoryDirectory: 7 }))
      const directory = yield* Effect.flip(loadWith(config, root))
      assert.strictEqual(directory.key, "autoMemoryDirectory")
    }))

  it.effect("an empty file or one with a BOM reads as settings, not as an error", () =>
    Effect.gen(function*() {
      const { config, files, root, write } = yield* sandbox
      yield* write(files.user, "  \n")
      yield* write(files.project, "\uFEFF{\"autoMemoryEnabled\": false}")
      const loaded = yield* loadWith(config, root)
      assert.deepStrictEqual(loaded.sources.map((source) => source.settings), [{}, { autoMemoryEnabled: false }])
    }))

  it.effect("a settings path that is a directory cannot be read: SettingsError", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const { config, files, root } = yield* sandbox
      yield* fs.makeDirectory(files.project, { recursive: true })
      const error = yield* Effect.flip(loadWith(config, root))
      assert.strictEqual(error.path, files.project)
      assert.include(error.detail, "cannot read")
    }))

  it.effect("a .memdir that is a file (not a directory) means no local or project settings", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const { config, root } = yield* sandbox
      yield* fs.writeFileString(path.join(root, ".memdir"), "not a directory")
      assert.deepStrictEqual(yield* loadWith(config, root), { sources: [] })
    }))

  it.effect("with the root at the user's home, the shared file is read once, as user settings", () =>
    Effect.gen(function*() {
      const path = yield* Path.Path
      const { userHome, write } = yield* sandbox
      const config = { HOME: userHome, MEMDIR_POLICY_FILE: path.join(userHome, "no-policy.json") }
      yield* write(path.join(userHome, ".memdir", "settings.json"), "{\"autoMemoryDirectory\": \"~/m\"}")
      const loaded = yield* loadWith(config, userHome)
      assert.deepStrictEqual(loaded.sources.map((source) => source.source), ["user"])
    }))

  it.effect("a local file that git tracks is ignored for every key, with the reason and the fix", () =>
    Effect.gen(function*() {
      const { config, files, root, write } = yield* sandbox
      git(root, "init", "-q")
      yield* write(files.local, JSON.stringify({ autoMemoryDirectory: "~/.ssh", teamMemory: true }))
      git(root, "add", ".memdir/settings.local.json")
      const loaded = yield* loadWith(config, root)
      assert.deepStrictEqual(loaded.sources, [])
      assert.strictEqual(loaded.refused?.length, 1)
      const refused = loaded.refused?.[0]
      assert.strictEqual(refused?.source, "local")
      assert.strictEqual(refused?.path, files.local)
      assert.include(refused?.reason, "tracked by git")
      assert.include(refused?.fix, "git rm --cached .memdir/settings.local.json")
      assert.include(refused?.fix, ".gitignore")
      // the same with a version 4 (prefix-compressed) index
      git(root, "update-index", "--index-version", "4")
      assert.include((yield* loadWith(config, root)).refused?.[0]?.reason, "tracked by git")
      // untracked again: trusted again
      git(root, "rm", "-q", "--cached", ".memdir/settings.local.json")
      const trusted = yield* loadWith(config, root)
      assert.deepStrictEqual(trusted.sources.map((source) => source.source), ["local"])
      assert.strictEqual(trusted.refused, undefined)
    }))

  it.effect("an untracked local file in a repository that tracks other files is trusted", () =>
    Effect.gen(function*() {
      const path = yield* Path.Path
      const { config, files, root, write } = yield* sandbox
      git(root, "init", "-q")
      for (const name of ["a.txt", ".memdir/settings.json", ".memdir/settings.local.jsonx", "z/deep/file.md"]) {
        yield* write(path.join(root, name), name.endsWith("json") ? "{}" : "x")
      }
      git(root, "add", ".")
      yield* write(files.local, JSON.stringify({ autoMemoryDirectory: "/srv/mem-local" }))
      for (const version of ["2", "3", "4"]) {
        git(root, "update-index", "--index-version", version)
        const loaded = yield* loadWith(config, root)
        assert.deepStrictEqual(loaded.sources.map((source) => source.source), ["local", "project"], version)
        assert.strictEqual(loaded.refused, undefined, version)
      }
    }))

  it.effect("a local file that is a symbolic link (even to a trusted-looking file) or a FIFO is ignored", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const { config, files, root, userHome, write } = yield* sandbox
      const target = path.join(userHome, "mine.json")
      yield* write(target, JSON.stringify({ autoMemoryDirectory: "~/.ssh" }))
      yield* fs.makeDirectory(path.dirname(files.local), { recursive: true })
      yield* fs.symlink(target, files.local)
      const linked = yield* loadWith(config, root)
      assert.deepStrictEqual(linked.sources, [])
      assert.include(linked.refused?.[0]?.reason, "symbolic link")
      assert.include(linked.refused?.[0]?.fix, "replace the link with a file")
      yield* fs.remove(files.local)
      execFileSync("mkfifo", [files.local])
      const fifo = yield* loadWith(config, root)
      assert.deepStrictEqual(fifo.sources, [])
      assert.include(fifo.refused?.[0]?.reason, "not a regular file")
    }))

  it.effect("a FIFO, /dev/zero or /dev/stdin as a settings file fails at once instead of hanging", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const { config, files, root } = yield* sandbox
      yield* fs.makeDirectory(path.dirname(files.project), { recursive: true })
      execFileSync("mkfifo", [files.project])
      const fifo = yield* Effect.flip(loadWith(config, root)).pipe(Effect.timeout("5 seconds"))
      assert.strictEqual(fifo.path, files.project)
      assert.include(fifo.detail, "NotRegularFile")
      yield* fs.remove(files.project)
      yield* fs.symlink("/dev/zero", files.project)
      const zero = yield* Effect.flip(loadWith(config, root)).pipe(Effect.timeout("5 seconds"))
      assert.strictEqual(zero.path, files.project)
      assert.include(zero.detail, "NotRegularFile")
      // stdin is a pipe, a terminal or nothing: never read, whatever it is
      yield* fs.remove(files.project)
      yield* fs.symlink("/dev/stdin", files.project)
      const stdin = yield* Effect.result(loadWith(config, root)).pipe(Effect.timeout("5 seconds"))
      if (stdin._tag === "Success") assert.deepStrictEqual(stdin.success.sources, [])
      else assert.strictEqual(stdin.failure.path, files.project)
    }))

  it.effect("a settings file that links to a secret: the JSON error gives a position, never the content", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const { config, files, root, userHome, write } = yield* sandbox
      const secret = path.join(userHome, "shadow")
      yield* write(secret, "root:$6$s3cretHash:19000:0:99999:7:::\nuser:$6$0therHash:19000:0:99999:7:::\n")
      yield* fs.makeDirectory(path.dirname(files.project), { recursive: true })
      yield* fs.symlink(secret, files.project)
      const error = yield* Effect.flip(loadWith(config, root))
      assert.strictEqual(error.path, files.project)
      assert.include(error.detail, "invalid JSON at line 1, column 1")
      assert.notInclude(error.message, "root")
      assert.notInclude(error.message, "s3cret")
      yield* fs.remove(files.project)
      yield* write(files.project, "{\n  \"autoMemoryEnabled\": true,\n  \"k\": s3cret\n}")
      const later = yield* Effect.flip(loadWith(config, root))
      assert.include(later.detail, "invalid JSON at line 3, column 8")
      assert.notInclude(later.message, "s3cret")
    }))

  it.effect("a settings file over 64 KiB is refused", () =>
    Effect.gen(function*() {
      const { config, files, root, write } = yield* sandbox
      yield* write(files.user, JSON.stringify({ pad: "x".repeat(70 * 1024) }))
      const error = yield* Effect.flip(loadWith(config, root))
      assert.strictEqual(error.path, files.user)
      assert.include(error.detail, "TooLarge")
    }))

  it.effect("the environment: defaults from HOME", () =>
    Effect.gen(function*() {
      const path = yield* Path.Path
      const { userHome } = yield* sandbox
      assert.deepStrictEqual(yield* envWith({ HOME: userHome }), {
        home: path.join(userHome, ".memdir"),
        memoryBase: path.join(userHome, ".memdir"),
        userHome,
        memoryDirOverride: undefined,
        disableAutoMemory: undefined,
        simpleMode: false,
        remoteWithoutStorage: false,
        policyFile: DEFAULT_POLICY_FILE
      })
    }))

  it.effect("the environment: every variable", () =>
    Effect.gen(function*() {
      const path = yield* Path.Path
      const { userHome } = yield* sandbox
      const env = yield* envWith({
        HOME: userHome,
        MEMDIR_HOME: "~/.claude",
        MEMDIR_MEMORY_DIR: "~/notes/memory",
        MEMDIR_DISABLE_AUTO_MEMORY: "",
        MEMDIR_SIMPLE: "Yes",
        MEMDIR_REMOTE: "1",
        MEMDIR_REMOTE_MEMORY_DIR: "/mnt/persist,with-comma",
        MEMDIR_POLICY_FILE: "/opt/memdir/policy.json"
      })
      assert.deepStrictEqual(env, {
        home: path.join(userHome, ".claude"),
        memoryBase: "/mnt/persist,with-comma",
        userHome,
        memoryDirOverride: "~/notes/memory",
        disableAutoMemory: "",
        simpleMode: true,
        remoteWithoutStorage: false,
        policyFile: "/opt/memdir/policy.json"
      })
    }))

  it.effect("the environment: remote without persistent storage; empty values count as unset", () =>
    Effect.gen(function*() {
      const { userHome } = yield* sandbox
      const env = yield* envWith({
        HOME: userHome,
        MEMDIR_REMOTE: "true",
        MEMDIR_REMOTE_MEMORY_DIR: "",
        MEMDIR_MEMORY_DIR: ""
      })
      assert.isTrue(env.remoteWithoutStorage)
      assert.strictEqual(env.memoryBase, env.home)
      assert.isUndefined(env.memoryDirOverride)
      assert.isFalse((yield* envWith({ HOME: userHome, MEMDIR_REMOTE: "0" })).remoteWithoutStorage)
    }))

  it.effect("layerWith overrides parts of the environment (the --memory-dir flag)", () =>
    Effect.gen(function*() {
      const { config } = yield* sandbox
      const env = yield* Effect.map(Settings, (settings) => settings.env).pipe(
        Effect.provide(liveSettings(config, { flagMemoryDir: "/flag/memory" }))
      )
      assert.strictEqual(env.flagMemoryDir, "/flag/memory")
      assert.strictEqual(env.home, config.MEMDIR_HOME)
    }))
})

describe("parseSettingsFile", () => {
  it("keeps unknown keys of any shape", () => {
    const parsed = parseSettingsFile("/s.json", "{\"teamRemote\": \"git@x:y\", \"nested\": {\"a\": [1]}}")
    assert.deepStrictEqual(parsed, Result.succeed({ teamRemote: "git@x:y", nested: { a: [1] } }))
  })

  it("rejects null for a known key", () => {
    const parsed = parseSettingsFile("/s.json", "{\"autoMemoryDirectory\": null}")
    assert.isTrue(Result.isFailure(parsed) && parsed.failure.key === "autoMemoryDirectory")
  })
})

describe("Settings.layerTest", () => {
  const load = (root: string) => Effect.flatMap(Settings, (settings) => settings.load(root))

  it.effect("reads its files map, parsing strings like real files", () =>
    Effect.gen(function*() {
      const loaded = yield* load("/repo")
      assert.deepStrictEqual(loaded.sources, [
        { source: "user", path: "/home/memdir-test/.memdir/settings.json", settings: { autoMemoryEnabled: false } },
        { source: "project", path: "/repo/.memdir/settings.json", settings: { x: 1 } }
      ])
      const error = yield* Effect.flip(load("/broken"))
      assert.strictEqual(error.path, "/broken/.memdir/settings.local.json")
    }).pipe(Effect.provide(layerTest({}, {
      "/home/memdir-test/.memdir/settings.json": { autoMemoryEnabled: false },
      "/repo/.memdir/settings.json": "{\"x\": 1}",
      "/broken/.memdir/settings.local.json": "{"
    }))))

  it.effect("env overrides testEnv, and memoryBase follows home", () =>
    Effect.gen(function*() {
      const settings = yield* Settings
      assert.deepStrictEqual(settings.env, { ...testEnv, home: "/base", memoryBase: "/base", simpleMode: true })
    }).pipe(Effect.provide(layerTest({ home: "/base", simpleMode: true }))))
})
