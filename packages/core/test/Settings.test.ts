import { FileSystem, Path } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it, layer } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
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

const withConfig = (config: Record<string, string>) =>
  Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(config))))

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
    fs.makeDirectory(path.dirname(file), { recursive: true }).pipe(Effect.zipRight(fs.writeFileString(file, content)))
  return { ...dirs, files, config, write }
})

const loadWith = (config: Record<string, string>, root: string, overrides: Partial<MemdirEnv> = {}) =>
  Effect.flatMap(Settings, (settings) => settings.load(root)).pipe(Effect.provide(liveSettings(config, overrides)))

const envWith = (config: Record<string, string>) =>
  Effect.map(Settings, (settings) => settings.env).pipe(Effect.provide(liveSettings(config)))

layer(NodeContext.layer)("Settings (real files)", (it) => {
  it.scoped("missing files are absent", () =>
    Effect.gen(function*() {
      const { config, root } = yield* sandbox
      assert.deepStrictEqual(yield* loadWith(config, root), { sources: [] })
    }))

  it.scoped("reads policy, flag, local, user and project in that order, keeping unknown keys", () =>
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

  it.scoped("invalid JSON is a SettingsError naming the file", () =>
    Effect.gen(function*() {
      const { config, files, root, write } = yield* sandbox
      yield* write(files.user, "{ \"autoMemoryEnabled\": true, }")
      const error = yield* Effect.flip(loadWith(config, root))
      assert.strictEqual(error._tag, "SettingsError")
      assert.strictEqual(error.path, files.user)
      assert.include(error.message, files.user)
      assert.include(error.detail, "invalid JSON")
    }))

  it.scoped("a file that is not a JSON object is a SettingsError", () =>
    Effect.gen(function*() {
      const { config, files, root, write } = yield* sandbox
      for (const [text, found] of [["[]", "an array"], ["null", "null"], ["42", "number"], ["\"x\"", "string"]]) {
        yield* write(files.project, text)
        const error = yield* Effect.flip(loadWith(config, root))
        assert.strictEqual(error.path, files.project, text)
        assert.include(error.detail, found, text)
      }
    }))

  it.scoped("a known key with the wrong type is a SettingsError naming the key", () =>
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

  it.scoped("an empty file or one with a BOM reads as settings, not as an error", () =>
    Effect.gen(function*() {
      const { config, files, root, write } = yield* sandbox
      yield* write(files.user, "  \n")
      yield* write(files.project, "\uFEFF{\"autoMemoryEnabled\": false}")
      const loaded = yield* loadWith(config, root)
      assert.deepStrictEqual(loaded.sources.map((source) => source.settings), [{}, { autoMemoryEnabled: false }])
    }))

  it.scoped("a settings path that is a directory cannot be read: SettingsError", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const { config, files, root } = yield* sandbox
      yield* fs.makeDirectory(files.project, { recursive: true })
      const error = yield* Effect.flip(loadWith(config, root))
      assert.strictEqual(error.path, files.project)
      assert.include(error.detail, "cannot read")
    }))

  it.scoped("a .memdir that is a file (not a directory) means no local or project settings", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const { config, root } = yield* sandbox
      yield* fs.writeFileString(path.join(root, ".memdir"), "not a directory")
      assert.deepStrictEqual(yield* loadWith(config, root), { sources: [] })
    }))

  it.scoped("with the root at the user's home, the shared file is read once, as user settings", () =>
    Effect.gen(function*() {
      const path = yield* Path.Path
      const { userHome, write } = yield* sandbox
      const config = { HOME: userHome, MEMDIR_POLICY_FILE: path.join(userHome, "no-policy.json") }
      yield* write(path.join(userHome, ".memdir", "settings.json"), "{\"autoMemoryDirectory\": \"~/m\"}")
      const loaded = yield* loadWith(config, userHome)
      assert.deepStrictEqual(loaded.sources.map((source) => source.source), ["user"])
    }))

  it.scoped("the environment: defaults from HOME", () =>
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

  it.scoped("the environment: every variable", () =>
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

  it.scoped("the environment: remote without persistent storage; empty values count as unset", () =>
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

  it.scoped("layerWith overrides parts of the environment (the --memory-dir flag)", () =>
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
    assert.deepStrictEqual(parsed, Either.right({ teamRemote: "git@x:y", nested: { a: [1] } }))
  })

  it("rejects null for a known key", () => {
    const parsed = parseSettingsFile("/s.json", "{\"autoMemoryDirectory\": null}")
    assert.isTrue(Either.isLeft(parsed) && parsed.left.key === "autoMemoryDirectory")
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
