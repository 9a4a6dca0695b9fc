import { NodeServices } from "@effect/platform-node"
import { assert, describe, it, layer } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Path from "effect/Path"
import * as Result from "effect/Result"
import * as FastCheck from "fast-check"
import { execFileSync } from "node:child_process"
import * as NodePath from "node:path"
import type { InvalidMemoryDirError } from "../src/Errors.js"
import * as GitRoot from "../src/GitRoot.js"
import { isMemoryPathWith, validateMemoryDirOverrideWith } from "../src/internal/location/paths.js"
import * as MemoryFs from "../src/MemoryFs.js"
import {
  AUTOMATIC_MODEL_CALLS_ENV,
  defaultMemoryDir,
  isMemoryPath,
  layer as memoryPathsLayer,
  layerTest,
  type MemoryLocation,
  MemoryPaths,
  resolveEnabled,
  resolveModelCallsEnabled,
  sanitizeProjectName,
  validateMemoryDirOverride
} from "../src/MemoryPaths.js"
import { layerWith as settingsLayerWith, type LoadedSettings, type MemdirEnv, testEnv } from "../src/Settings.js"

describe("sanitizeProjectName", () => {
  it("replaces every character outside [A-Za-z0-9] with '-', like the reference", () => {
    assert.strictEqual(sanitizeProjectName("/Users/alex/code/myapp"), "-Users-alex-code-myapp")
    assert.strictEqual(sanitizeProjectName("/home/alex/my_app.v2"), "-home-alex-my-app-v2")
    assert.strictEqual(sanitizeProjectName("C:\\Users\\alex\\My App"), "C--Users-alex-My-App")
    assert.strictEqual(sanitizeProjectName("/tmp/café"), "-tmp-caf-")
  })

  it("counts UTF-16 code units: an astral character becomes two dashes", () => {
    assert.strictEqual(sanitizeProjectName("/a/😀"), "-a---")
  })

  it("names NFC and NFD spellings of one path the same", () => {
    assert.strictEqual(sanitizeProjectName("/tmp/cafe\u0301"), sanitizeProjectName("/tmp/caf\u00e9"))
  })

  it("keeps 200 characters verbatim, then appends '-' and 8 hex of SHA-256 of the full path", () => {
    const exactly200 = `/${"a".repeat(199)}`
    assert.strictEqual(sanitizeProjectName(exactly200), `-${"a".repeat(199)}`)
    const long = `/${Array.from({ length: 10 }, (_, i) => `very-long-directory-name-0${i}`).join("/")}`
    const name = sanitizeProjectName(long)
    assert.strictEqual(name, `${long.replace(/[^A-Za-z0-9]/g, "-").slice(0, 200)}-6b95ad04`)
    assert.strictEqual(name.length, 209)
  })

  const anyPath = FastCheck.oneof(
    FastCheck.string({ unit: "binary", maxLength: 300 }),
    FastCheck.string({ unit: "grapheme-ascii", minLength: 190, maxLength: 400 })
  )

  it("outputs only [A-Za-z0-9-], at most 200 + 1 + 8 characters", () => {
    FastCheck.assert(FastCheck.property(anyPath, (root) => {
      const name = sanitizeProjectName(root)
      assert.match(name, /^[A-Za-z0-9-]*$/)
      assert.isAtMost(name.length, 209)
      const units = root.normalize("NFC").length
      assert.strictEqual(name.length, units <= 200 ? units : 209)
    }))
  })

  it("is stable and ignores the Unicode normalisation form", () => {
    FastCheck.assert(FastCheck.property(anyPath, (root) => {
      assert.strictEqual(sanitizeProjectName(root), sanitizeProjectName(root))
      assert.strictEqual(sanitizeProjectName(root.normalize("NFD")), sanitizeProjectName(root.normalize("NFC")))
    }))
  })

  it("distinct long paths sharing a 200-character prefix get distinct names", () => {
    FastCheck.assert(FastCheck.property(
      FastCheck.string({ unit: "grapheme-ascii", minLength: 200, maxLength: 260 }),
      FastCheck.string({ unit: "grapheme-ascii", minLength: 1, maxLength: 40 }),
      FastCheck.string({ unit: "grapheme-ascii", minLength: 1, maxLength: 40 }),
      (prefix, a, b) => {
        FastCheck.pre(a !== b)
        const nameA = sanitizeProjectName(prefix + a)
        const nameB = sanitizeProjectName(prefix + b)
        assert.notStrictEqual(nameA, nameB)
        assert.strictEqual(nameA.slice(0, 201), nameB.slice(0, 201))
      }
    ))
  })
})

describe("validateMemoryDirOverride", () => {
  const home = "/home/alex"
  const accepted: ReadonlyArray<readonly [string, string]> = [
    ["/srv/memdir/memory", "/srv/memdir/memory/"],
    ["/srv/memdir/memory/", "/srv/memdir/memory/"],
    ["/srv/a/../memdir//memory/.", "/srv/memdir/memory/"],
    ["~/notes/memory", "/home/alex/notes/memory/"],
    ["~/a/../notes", "/home/alex/notes/"],
    ["~//notes", "/home/alex/notes/"],
    ["/home/alex/notes", "/home/alex/notes/"],
    ["/home/alexandra/mem", "/home/alexandra/mem/"],
    ["/srv/cafe\u0301", "/srv/caf\u00e9/"],
    ["/ab", "/ab/"]
  ]
  for (const [value, expected] of accepted) {
    it(`accepts ${JSON.stringify(value)}`, () => {
      assert.deepStrictEqual(validateMemoryDirOverride(value, "test", home), Result.succeed(expected))
    })
  }

  const refused: ReadonlyArray<readonly [string, string]> = [
    ["/srv/mem\0ory", "null-byte"],
    ["~", "bare-tilde"],
    ["/", "filesystem-root"],
    ["//", "filesystem-root"],
    ["/../..", "filesystem-root"],
    ["", "too-short"],
    ["/a", "too-short"],
    ["~/", "too-short"],
    ["~/..", "escapes-home"],
    ["~/../bob/memory", "escapes-home"],
    ["~/notes/../../bob", "escapes-home"],
    ["memory", "relative"],
    ["./memory", "relative"],
    ["../memory", "relative"],
    ["~bob/memory", "relative"],
    ["~/.", "contains-home"],
    ["~//", "contains-home"],
    ["/home/alex", "contains-home"],
    ["/home/alex/", "contains-home"],
    ["/home", "contains-home"]
  ]
  for (const [value, reason] of refused) {
    it(`refuses ${JSON.stringify(value)}: ${reason}`, () => {
      const result = validateMemoryDirOverride(value, "env MEMDIR_MEMORY_DIR", home)
      assert.isTrue(Result.isFailure(result), `accepted ${JSON.stringify(value)}`)
      const error = Result.getFailure(result).pipe((left) => left._tag === "Some" ? left.value : undefined)!
      assert.strictEqual(error._tag, "InvalidMemoryDirError")
      assert.deepStrictEqual([error.reason, error.source, error.value], [reason, "env MEMDIR_MEMORY_DIR", value])
    })
  }

  it("on Windows: refuses drive and UNC roots and drive-relative paths; accepts and expands the rest", () => {
    const win = (value: string) => validateMemoryDirOverrideWith(NodePath.win32, value, "test", "C:\\Users\\alex")
    const reason = (value: string) =>
      Result.match(win(value), { onFailure: (e) => e.reason, onSuccess: () => "accepted" })
    assert.strictEqual(reason("C:\\"), "filesystem-root")
    assert.strictEqual(reason("\\\\server\\share\\"), "filesystem-root")
    assert.strictEqual(reason("C:memory"), "relative")
    assert.strictEqual(reason("C:\\Users"), "contains-home")
    assert.strictEqual(reason("~\\..\\bob"), "escapes-home")
    assert.deepStrictEqual(win("D:\\memdir\\memory"), Result.succeed("D:\\memdir\\memory\\"))
    assert.deepStrictEqual(win("~\\notes"), Result.succeed("C:\\Users\\alex\\notes\\"))
  })
})

describe("isMemoryPath", () => {
  const memoryDir = "/base/projects/-repo/memory/"
  const cases: ReadonlyArray<readonly [string, boolean]> = [
    ["/base/projects/-repo/memory/feedback_testing.md", true],
    ["/base/projects/-repo/memory/team/reference_x.md", true],
    ["/base/projects/-repo/memory", true],
    ["/base/projects/-repo/memory/", true],
    ["/base/projects/-repo/memory/sub/../user_role.md", true],
    ["/base/projects/-repo/memory-evil/x.md", false],
    ["/base/projects/-repo/memoryx", false],
    ["/base/projects/-repo/memory/../secrets.md", false],
    ["/base/projects/-repo", false],
    ["/etc/passwd", false]
  ]
  for (const [candidate, inside] of cases) {
    it(`${candidate} → ${inside}`, () => {
      assert.strictEqual(isMemoryPath(memoryDir, candidate), inside)
      assert.strictEqual(isMemoryPath(memoryDir.slice(0, -1), candidate), inside, "without trailing separator")
    })
  }

  it("compares NFC forms", () => {
    assert.isTrue(isMemoryPath("/base/cafe\u0301/memory/", "/base/caf\u00e9/memory/x.md"))
  })

  it("on Windows paths too", () => {
    assert.isTrue(isMemoryPathWith(NodePath.win32, "C:\\b\\memory\\", "C:\\b\\memory\\x.md"))
    assert.isFalse(isMemoryPathWith(NodePath.win32, "C:\\b\\memory\\", "C:\\b\\memory-evil\\x.md"))
  })
})

describe("defaultMemoryDir", () => {
  it("is <base>/projects/<sanitized root>/memory/", () => {
    assert.strictEqual(
      defaultMemoryDir("/home/alex/.claude", "/Users/alex/code/myapp"),
      "/home/alex/.claude/projects/-Users-alex-code-myapp/memory/"
    )
  })
})

describe("resolveEnabled (the enable chain)", () => {
  const source = (
    name: LoadedSettings["sources"][number]["source"],
    autoMemoryEnabled: boolean
  ): LoadedSettings["sources"][number] => ({ source: name, path: `/${name}.json`, settings: { autoMemoryEnabled } })
  const projectOptOut = [source("project", false)]
  const table: ReadonlyArray<
    readonly [string, Partial<MemdirEnv>, LoadedSettings["sources"], boolean, string]
  > = [
    ["nothing speaks", {}, [], true, "default"],
    ["a project may opt out", {}, projectOptOut, false, "project settings /project.json"],
    ["user beats project", {}, [source("user", true), source("project", false)], true, "user settings /user.json"],
    ["policy beats local", {}, [source("policy", false), source("local", true)], false, "policy settings /policy.json"],
    [
      "remote without storage",
      { remoteWithoutStorage: true },
      [source("user", true)],
      false,
      "env MEMDIR_REMOTE without MEMDIR_REMOTE_MEMORY_DIR"
    ],
    ["simple mode", { simpleMode: true }, [source("policy", true)], false, "env MEMDIR_SIMPLE"],
    ["env truthy disables", { disableAutoMemory: "1" }, [], false, "env MEMDIR_DISABLE_AUTO_MEMORY"],
    ["env TRUE disables", { disableAutoMemory: " TRUE " }, [], false, "env MEMDIR_DISABLE_AUTO_MEMORY"],
    ["env 'yes' disables", { disableAutoMemory: "yes" }, [], false, "env MEMDIR_DISABLE_AUTO_MEMORY"],
    ["env 'on' disables", { disableAutoMemory: "on" }, [], false, "env MEMDIR_DISABLE_AUTO_MEMORY"],
    [
      "env '' forces on over a project opt-out",
      { disableAutoMemory: "" },
      projectOptOut,
      true,
      "env MEMDIR_DISABLE_AUTO_MEMORY"
    ],
    [
      "env '0' forces on over simple mode",
      { disableAutoMemory: "0", simpleMode: true },
      [],
      true,
      "env MEMDIR_DISABLE_AUTO_MEMORY"
    ],
    [
      "env 'false' forces on over remote",
      { disableAutoMemory: "false", remoteWithoutStorage: true },
      [],
      true,
      "env MEMDIR_DISABLE_AUTO_MEMORY"
    ],
    [
      "env 'no'/'off' force on",
      { disableAutoMemory: "off" },
      [source("policy", false)],
      true,
      "env MEMDIR_DISABLE_AUTO_MEMORY"
    ],
    [
      "an unrecognised env value does not speak",
      { disableAutoMemory: "maybe" },
      projectOptOut,
      false,
      "project settings /project.json"
    ]
  ]
  for (const [name, env, sources, enabled, enabledBy] of table) {
    it(name, () => {
      assert.deepStrictEqual(resolveEnabled({ ...testEnv, ...env }, sources), { enabled, enabledBy })
    })
  }
})

/** Real git, isolated from the machine's global and system configuration. */
const git = (cwd: string, ...args: Array<string>) =>
  Effect.sync(() =>
    execFileSync("git", args, {
      cwd,
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...process.env,
        GIT_CONFIG_GLOBAL: "/dev/null",
        GIT_CONFIG_NOSYSTEM: "1",
        GIT_AUTHOR_NAME: "memdir test",
        GIT_AUTHOR_EMAIL: "test@memdir.invalid",
        GIT_COMMITTER_NAME: "memdir test",
        GIT_COMMITTER_EMAIL: "test@memdir.invalid"
      }
    })
  )

/** A temp world: HOME, MEMDIR_HOME, a policy path and a real repository with one commit and two worktrees. */
const world = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const base = yield* fs.realPath(yield* fs.makeTempDirectoryScoped({ prefix: "memdir-paths-" }))
  const userHome = path.join(base, "home")
  const memdirHome = path.join(userHome, ".memdir")
  const repo = path.join(base, "code", "my repo")
  yield* fs.makeDirectory(path.join(repo, "src", "deep"), { recursive: true })
  yield* fs.makeDirectory(memdirHome, { recursive: true })
  yield* git(repo, "init", "-q", "-b", "main")
  yield* git(repo, "commit", "-q", "--allow-empty", "-m", "init")
  const files = {
    policy: path.join(base, "etc", "policy.json"),
    local: path.join(repo, ".memdir", "settings.local.json"),
    user: path.join(memdirHome, "settings.json"),
    project: path.join(repo, ".memdir", "settings.json")
  }
  const config: Record<string, string> = { HOME: userHome, MEMDIR_HOME: memdirHome, MEMDIR_POLICY_FILE: files.policy }
  const writeJson = (file: string, json: unknown) =>
    fs.makeDirectory(path.dirname(file), { recursive: true }).pipe(
      Effect.andThen(fs.writeFileString(file, JSON.stringify(json)))
    )
  const defaultDir = `${path.join(memdirHome, "projects", sanitizeProjectName(repo), "memory")}/`
  return { base, userHome, memdirHome, repo, files, config, writeJson, defaultDir }
})

/** MemoryPaths on the live GitRoot, Settings and MemoryFs layers, with `config` as the environment. */
const resolveIn = (config: Record<string, string>, cwd: string, overrides: Partial<MemdirEnv> = {}) =>
  Effect.flatMap(MemoryPaths, (paths) => paths.resolve(cwd)).pipe(
    Effect.provide(
      memoryPathsLayer.pipe(
        Layer.provide(Layer.merge(GitRoot.layer, settingsLayerWith(overrides))),
        Layer.provide(MemoryFs.layer),
        Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord(config, { preserveEmptyStrings: true }))),
        Layer.orDie
      )
    )
  )

layer(NodeServices.layer)("MemoryPaths.resolve (real git, real files)", (it) => {
  it.effect("defaults to <MEMDIR_HOME>/projects/<sanitized git root>/memory/ from a nested subdirectory", () =>
    Effect.gen(function*() {
      const path = yield* Path.Path
      const { config, defaultDir, repo } = yield* world
      const location = yield* resolveIn(config, path.join(repo, "src", "deep"))
      assert.deepStrictEqual(
        location,
        {
          root: { root: repo, kind: "repository", commonDir: path.join(repo, ".git") },
          memoryDir: defaultDir,
          source: "default",
          enabled: true,
          enabledBy: "default",
          automaticModelCalls: { enabled: false, enabledBy: "default" }
        } satisfies MemoryLocation
      )
      assert.include(defaultDir, "-code-my-repo/memory/")
    }))

  it.effect("MEMDIR_MEMORY_DIR or a settings directory that is a link to the home (or above it) is refused", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const { base, config, repo, userHome } = yield* world
      const toHome = path.join(base, "looks-harmless")
      const aboveHome = path.join(base, "above")
      yield* fs.symlink(userHome, toHome)
      yield* fs.symlink(path.dirname(userHome), aboveHome)
      for (const value of [toHome, `${toHome}/`, aboveHome]) {
        const error = yield* Effect.flip(resolveIn({ ...config, MEMDIR_MEMORY_DIR: value }, repo))
        assert.strictEqual(error._tag, "InvalidMemoryDirError", value)
        if (error._tag === "InvalidMemoryDirError") assert.strictEqual(error.reason, "contains-home", value)
      }
      const flagged = yield* Effect.flip(resolveIn(config, repo, { flagMemoryDir: toHome }))
      assert.strictEqual(flagged._tag, "InvalidMemoryDirError")
      // a link to a directory inside the home is fine
      const inside = path.join(base, "to-notes")
      yield* fs.makeDirectory(path.join(userHome, "notes"), { recursive: true })
      yield* fs.symlink(path.join(userHome, "notes"), inside)
      const ok = yield* resolveIn({ ...config, MEMDIR_MEMORY_DIR: inside }, repo)
      assert.strictEqual(ok.memoryDir, `${inside}/`)
    }))

  it.effect("two worktrees share the main checkout's memory directory", () =>
    Effect.gen(function*() {
      const path = yield* Path.Path
      const { base, config, defaultDir, repo } = yield* world
      yield* git(repo, "worktree", "add", "-q", "-b", "a", path.join(base, "wt-a"))
      yield* git(repo, "worktree", "add", "-q", "-b", "b", path.join(base, "wt-b"))
      const fromA = yield* resolveIn(config, path.join(base, "wt-a"))
      const fromB = yield* resolveIn(config, path.join(base, "wt-b"))
      assert.strictEqual(fromA.memoryDir, defaultDir)
      assert.strictEqual(fromB.memoryDir, defaultDir)
      assert.deepStrictEqual([fromA.root.kind, fromA.root.root], ["worktree", repo])
    }))

  it.effect("a base pointed at a reference agent's home (~/.claude) yields its layout", () =>
    Effect.gen(function*() {
      const path = yield* Path.Path
      const { config, repo, userHome } = yield* world
      const location = yield* resolveIn({ ...config, MEMDIR_HOME: "~/.claude" }, repo)
      assert.strictEqual(
        location.memoryDir,
        `${path.join(userHome, ".claude", "projects", repo.replace(/[^A-Za-z0-9]/g, "-"), "memory")}/`
      )
    }))

  it.effect("MEMDIR_REMOTE_MEMORY_DIR is the base of the default directory", () =>
    Effect.gen(function*() {
      const { base, config, repo } = yield* world
      const location = yield* resolveIn(
        { ...config, MEMDIR_REMOTE: "1", MEMDIR_REMOTE_MEMORY_DIR: `${base}/persist` },
        repo
      )
      assert.strictEqual(location.memoryDir, `${base}/persist/projects/${sanitizeProjectName(repo)}/memory/`)
      assert.isTrue(location.enabled)
    }))

  it.effect("project settings never choose the directory; policy, flag, local and user do, in that order", () =>
    Effect.gen(function*() {
      const { base, config, defaultDir, files, repo, userHome, writeJson } = yield* world
      const at = (name: string) => `${base}/${name}`
      const check = Effect.fnUntraced(function*(
        overrides: Partial<MemdirEnv>,
        memoryDir: string,
        source: MemoryLocation["source"],
        sourcePath?: string
      ) {
        const location = yield* resolveIn(config, repo, overrides)
        assert.deepStrictEqual(
          [location.memoryDir, location.source, location.sourcePath],
          [memoryDir, source, sourcePath]
        )
      })
      yield* writeJson(files.project, { autoMemoryDirectory: `${userHome}/.ssh` })
      yield* check({}, defaultDir, "default")
      yield* writeJson(files.user, { autoMemoryDirectory: "~/user-mem" })
      yield* check({}, `${userHome}/user-mem/`, "user", files.user)
      yield* writeJson(files.local, { autoMemoryDirectory: at("local-mem") })
      yield* check({}, `${at("local-mem")}/`, "local", files.local)
      yield* check({ flagMemoryDir: at("flag-mem") }, `${at("flag-mem")}/`, "flag", "--memory-dir")
      yield* writeJson(files.policy, { autoMemoryDirectory: at("policy-mem") })
      yield* check({ flagMemoryDir: at("flag-mem") }, `${at("policy-mem")}/`, "policy", files.policy)
      const location = yield* resolveIn({ ...config, MEMDIR_MEMORY_DIR: at("env-mem") }, repo, {
        flagMemoryDir: at("flag-mem")
      })
      assert.deepStrictEqual([location.memoryDir, location.source], [`${at("env-mem")}/`, "env"])
    }))

  it.effect("an invalid override is an error naming its source, never a fall-through to the next one", () =>
    Effect.gen(function*() {
      const { config, files, repo, writeJson } = yield* world
      yield* writeJson(files.user, { autoMemoryDirectory: "~/fine" })
      yield* writeJson(files.local, { autoMemoryDirectory: "~/.." })
      const refusal = (effect: ReturnType<typeof resolveIn>) =>
        Effect.flip(effect).pipe(
          Effect.filterOrElse(
            (error): error is InvalidMemoryDirError => error._tag === "InvalidMemoryDirError",
            () => Effect.die(new Error("expected an InvalidMemoryDirError"))
          ),
          Effect.map((error) => [error.reason, error.source])
        )
      assert.deepStrictEqual(yield* refusal(resolveIn(config, repo)), ["escapes-home", `local ${files.local}`])
      assert.deepStrictEqual(
        yield* refusal(resolveIn({ ...config, MEMDIR_MEMORY_DIR: "relative/dir" }, repo)),
        ["relative", "env MEMDIR_MEMORY_DIR"]
      )
      assert.deepStrictEqual(
        yield* refusal(resolveIn(config, repo, { flagMemoryDir: "/" })),
        ["filesystem-root", "flag --memory-dir"]
      )
    }))

  it.effect("a broken settings file fails resolve with a SettingsError", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const { config, files, repo, writeJson } = yield* world
      yield* writeJson(files.project, {})
      yield* fs.writeFileString(files.project, "{ not json")
      const error = yield* Effect.flip(resolveIn(config, repo))
      assert.strictEqual(error._tag, "SettingsError")
      assert.strictEqual(error._tag === "SettingsError" ? error.path : undefined, files.project)
    }))

  it.effect("enable chain on real files: a project opts out; a defined-falsy env switch forces memory back on", () =>
    Effect.gen(function*() {
      const { config, files, repo, writeJson } = yield* world
      yield* writeJson(files.project, { autoMemoryEnabled: false })
      const optedOut = yield* resolveIn(config, repo)
      assert.deepStrictEqual([optedOut.enabled, optedOut.enabledBy], [false, `project settings ${files.project}`])
      const forced = yield* resolveIn({ ...config, MEMDIR_DISABLE_AUTO_MEMORY: "" }, repo)
      assert.deepStrictEqual([forced.enabled, forced.enabledBy], [true, "env MEMDIR_DISABLE_AUTO_MEMORY"])
      yield* writeJson(files.local, { autoMemoryEnabled: true })
      assert.isTrue((yield* resolveIn(config, repo)).enabled)
      const disabled = yield* resolveIn({ ...config, MEMDIR_DISABLE_AUTO_MEMORY: "true" }, repo)
      assert.isFalse(disabled.enabled)
      const simple = yield* resolveIn({ ...config, MEMDIR_SIMPLE: "1" }, repo)
      assert.deepStrictEqual([simple.enabled, simple.enabledBy], [false, "env MEMDIR_SIMPLE"])
    }))

  it.effect("automaticModelCalls on real files: project true ignored, project false wins, env wins, wrong type fails", () =>
    Effect.gen(function*() {
      const { config, files, repo, writeJson } = yield* world
      const calls = (env: Record<string, string> = {}) =>
        Effect.map(resolveIn({ ...config, ...env }, repo), (location) => location.automaticModelCalls)
      assert.deepStrictEqual(yield* calls(), { enabled: false, enabledBy: "default" })
      yield* writeJson(files.project, { automaticModelCalls: true })
      assert.deepStrictEqual(yield* calls(), { enabled: false, enabledBy: "default" })
      yield* writeJson(files.user, { automaticModelCalls: true })
      assert.deepStrictEqual(yield* calls(), { enabled: true, enabledBy: `user settings ${files.user}` })
      yield* writeJson(files.project, { automaticModelCalls: false })
      assert.deepStrictEqual(yield* calls(), { enabled: false, enabledBy: `project settings ${files.project}` })
      assert.deepStrictEqual(yield* calls({ [AUTOMATIC_MODEL_CALLS_ENV]: "true" }), {
        enabled: true,
        enabledBy: `env ${AUTOMATIC_MODEL_CALLS_ENV}`
      })
      yield* writeJson(files.project, {})
      assert.isFalse((yield* calls({ [AUTOMATIC_MODEL_CALLS_ENV]: "off" }))!.enabled)
      yield* writeJson(files.local, { automaticModelCalls: "yes" })
      const error = yield* Effect.flip(resolveIn(config, repo))
      assert.strictEqual(error._tag, "SettingsError")
      if (error._tag === "SettingsError") {
        assert.strictEqual(error.path, files.local)
        assert.strictEqual(error.key, "automaticModelCalls")
      }
    }))
})

describe("automaticModelCalls (the chain, pure)", () => {
  const set = (source: "policy" | "local" | "user" | "project", value: boolean) => ({
    source,
    path: `/${source}.json`,
    value
  })
  it("env, policy, project opt-out, local/user, default off; a project never turns it on", () => {
    assert.deepStrictEqual(resolveModelCallsEnabled(undefined, []), { enabled: false, enabledBy: "default" })
    // a committed repository must never turn billing on
    assert.deepStrictEqual(resolveModelCallsEnabled(undefined, [set("project", true)]), {
      enabled: false,
      enabledBy: "default"
    })
    // …but may always opt out, even against the user's own setting
    assert.deepStrictEqual(resolveModelCallsEnabled(undefined, [set("user", true), set("project", false)]), {
      enabled: false,
      enabledBy: "project settings /project.json"
    })
    assert.deepStrictEqual(resolveModelCallsEnabled(undefined, [set("user", true), set("project", true)]), {
      enabled: true,
      enabledBy: "user settings /user.json"
    })
    assert.isFalse(resolveModelCallsEnabled(undefined, [set("local", false), set("user", true)]).enabled)
    assert.deepStrictEqual(resolveModelCallsEnabled(undefined, [set("policy", false), set("user", true)]), {
      enabled: false,
      enabledBy: "policy settings /policy.json"
    })
    // the environment beats every file
    assert.deepStrictEqual(resolveModelCallsEnabled("1", [set("policy", false), set("project", false)]), {
      enabled: true,
      enabledBy: `env ${AUTOMATIC_MODEL_CALLS_ENV}`
    })
    assert.deepStrictEqual(resolveModelCallsEnabled("0", [set("user", true)]), {
      enabled: false,
      enabledBy: `env ${AUTOMATIC_MODEL_CALLS_ENV}`
    })
    assert.isFalse(resolveModelCallsEnabled("", [set("user", true)]).enabled)
  })
})

describe("MemoryPaths.layerTest", () => {
  const location: MemoryLocation = {
    root: { root: "/repo", kind: "repository" },
    memoryDir: "/m/projects/-repo/memory/",
    source: "default",
    enabled: false,
    enabledBy: "env MEMDIR_DISABLE_AUTO_MEMORY"
  }
  it.effect("answers its fixed location for any cwd", () =>
    Effect.gen(function*() {
      const paths = yield* MemoryPaths
      assert.deepStrictEqual(yield* paths.resolve("/anywhere"), location)
    }).pipe(Effect.provide(layerTest(location))))
})
