/**
 * Team memory: the switch and the remote (pure and through the service), guarded team writes and the team index
 * on a real temp dir, the cross-check of private feedback against team feedback, the prompt's team section and
 * team recall. Every escape a broken guard would allow lands in the scratch tree, which the tests inspect.
 */
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it, layer } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Path from "effect/Path"
import * as Result from "effect/Result"
import * as NodeFs from "node:fs"
import * as GitRoot from "../src/GitRoot.js"
import * as MemoryFs from "../src/MemoryFs.js"
import * as MemoryIndex from "../src/MemoryIndex.js"
import { truncateIndex } from "../src/MemoryIndex.js"
import * as MemoryPaths from "../src/MemoryPaths.js"
import type { MemoryLocation } from "../src/MemoryPaths.js"
import * as MemoryStore from "../src/MemoryStore.js"
import { renderMemoryPrompt } from "../src/Prompt.js"
import * as Recall from "../src/Recall.js"
import { RecallSession } from "../src/Recall.js"
import * as Scanner from "../src/Scanner.js"
import * as Selector from "../src/Selector.js"
import * as Settings from "../src/Settings.js"
import * as Staleness from "../src/Staleness.js"
import * as TeamGuard from "../src/TeamGuard.js"
import {
  checkTeamContradictions,
  ensureTeamDir,
  findContradictions,
  isProhibition,
  listTeamMemories,
  readTeamSettings,
  resolveTeamEnabled,
  resolveTeamRemote,
  scopeOf,
  TeamMemory,
  teamPromptInput,
  writePrivateMemory,
  writeTeamFile,
  writeTeamMemory
} from "../src/TeamMemory.js"
import * as TeamMemoryModule from "../src/TeamMemory.js"

const on = { enabled: true, enabledBy: "default" }
const sw = (source: Settings.SettingsSource, value: boolean) => ({ source, path: `/${source}.json`, value })

describe("the team switch and remote (pure)", () => {
  it("follows the chain: auto memory, env, policy, project opt-out, local/user, default off", () => {
    const decide = (env: string | undefined, switches: ReadonlyArray<ReturnType<typeof sw>>, auto = on) =>
      resolveTeamEnabled(auto, env, switches)
    assert.deepStrictEqual(decide(undefined, []), { enabled: false, enabledBy: "default" })
    assert.isFalse(decide("1", [sw("user", true)], { enabled: false, enabledBy: "env X" }).enabled)
    assert.include(decide("1", [], { enabled: false, enabledBy: "env X" }).enabledBy, "auto memory is disabled")
    assert.deepStrictEqual(decide("1", [sw("policy", false)]), { enabled: true, enabledBy: "env MEMDIR_TEAM_MEMORY" })
    assert.isFalse(decide("0", [sw("user", true)]).enabled)
    assert.deepStrictEqual(decide(undefined, [sw("policy", false), sw("user", true)]), {
      enabled: false,
      enabledBy: "policy settings /policy.json"
    })
    // A project may always opt out, even against the user's setting…
    assert.deepStrictEqual(decide(undefined, [sw("user", true), sw("project", false)]), {
      enabled: false,
      enabledBy: "project settings /project.json"
    })
    // …but never opt in: a cloned repository does not decide to read other people's files into your agent.
    assert.isFalse(decide(undefined, [sw("project", true)]).enabled)
    assert.isTrue(decide(undefined, [sw("local", true), sw("user", false)]).enabled)
    assert.isTrue(decide(undefined, [sw("user", true), sw("project", true)]).enabled)
  })

  it("reads the keys with their types, refuses option-like remotes, and never takes the remote from the project", () => {
    const sources = (project: Record<string, unknown>, user: Record<string, unknown> = {}) => [
      { source: "user" as const, path: "/u.json", settings: user },
      { source: "project" as const, path: "/p.json", settings: project }
    ]
    const wrongType = readTeamSettings(sources({ teamMemory: "yes" }))
    assert.isTrue(Result.isFailure(wrongType))
    if (Result.isFailure(wrongType)) {
      assert.strictEqual(wrongType.failure.key, "teamMemory")
      assert.strictEqual(wrongType.failure.path, "/p.json")
    }
    for (const remote of ["--upload-pack=touch /tmp/pwned", "-oProxyCommand=x", "a\nb", " "]) {
      const refused = readTeamSettings(sources({}, { teamRemote: remote }))
      assert.isTrue(Result.isFailure(refused), remote)
    }
    const settings = Result.getOrThrow(
      readTeamSettings(sources({ teamRemote: "git@evil.example:loot.git" }, { teamRemote: " /srv/team.git " }))
    )
    assert.deepStrictEqual(resolveTeamRemote(settings.remotes), { remote: "/srv/team.git", source: "/u.json" })
    const projectOnly = Result.getOrThrow(readTeamSettings(sources({ teamRemote: "git@evil.example:loot.git" })))
    assert.isUndefined(resolveTeamRemote(projectOnly.remotes))
  })

  it("tells team paths from private ones", () => {
    assert.strictEqual(scopeOf("team/reference_ci.md"), "team")
    assert.strictEqual(scopeOf("team-evil/x.md"), "private")
    assert.strictEqual(scopeOf("feedback_x.md"), "private")
  })
})

describe("TeamMemory.layer", () => {
  const root = "/home/memdir-test/code/app"
  const location: MemoryLocation = {
    root: { root, kind: "repository" },
    memoryDir: "/home/memdir-test/.memdir/projects/-app/memory/",
    source: "default",
    enabled: true,
    enabledBy: "default"
  }
  const resolveWith = (env: Record<string, string>, files: Record<string, Settings.SettingsFile>) =>
    Effect.flatMap(TeamMemory, (team) => team.resolve(root)).pipe(
      Effect.provide(
        TeamMemoryModule.layer.pipe(
          Layer.provide(Layer.mergeAll(
            Settings.layerTest({}, files),
            MemoryPaths.layerTest(location),
            NodeServices.layer
          ))
        )
      ),
      Effect.provideService(
        ConfigProvider.ConfigProvider,
        ConfigProvider.fromEnvRecord(env, { preserveEmptyStrings: true })
      )
    )

  it.effect("resolves the switch, the team directory and the trusted remote from the settings files and env", () =>
    Effect.gen(function*() {
      const user = "/home/memdir-test/.memdir/settings.json"
      const project = `${root}/.memdir/settings.json`
      const files = { [user]: { teamMemory: true, teamRemote: "/srv/team.git" }, [project]: { teamRemote: "evil" } }
      const team = yield* resolveWith({}, files)
      assert.isTrue(team.enabled)
      assert.strictEqual(team.enabledBy, `user settings ${user}`)
      assert.strictEqual(team.teamDir, `${location.memoryDir}team/`)
      assert.strictEqual(team.remote, "/srv/team.git")
      assert.strictEqual(team.remoteSource, user)
      const forcedOff = yield* resolveWith({ MEMDIR_TEAM_MEMORY: "0" }, files)
      assert.deepStrictEqual([forcedOff.enabled, forcedOff.enabledBy], [false, "env MEMDIR_TEAM_MEMORY"])
      const optedOut = yield* resolveWith({}, { ...files, [project]: { teamMemory: false } })
      assert.isFalse(optedOut.enabled)
      const error = yield* Effect.flip(resolveWith({}, { [user]: { teamRemote: 42 } as Settings.SettingsFile }))
      assert.strictEqual(error._tag, "SettingsError")
    }))
})

describe("the team switch is resolved once, with the other settings", () => {
  it.effect("MemoryPaths.locate says whether team memory is on; TeamMemory.locate then reads no settings file", () =>
    Effect.gen(function*() {
      const root = "/home/memdir-test/code/app"
      const user = "/home/memdir-test/.memdir/settings.json"
      const loads: Array<string> = []
      const counting = Layer.effect(
        Settings.Settings,
        Effect.map(Settings.Settings, (settings) =>
          Settings.Settings.of({
            ...settings,
            load: (at) => Effect.andThen(Effect.sync(() => loads.push(at)), settings.load(at))
          }))
      ).pipe(Layer.provide(Settings.layerTest({}, { [user]: { teamMemory: true, teamRemote: "/srv/team.git" } })))
      const services = TeamMemoryModule.layer.pipe(
        Layer.provideMerge(MemoryPaths.layer),
        Layer.provide(GitRoot.layerTest({ [root]: { root, kind: "repository" } })),
        Layer.provide(MemoryFs.layer),
        Layer.provideMerge(counting),
        Layer.provide(NodeServices.layer)
      )
      yield* Effect.gen(function*() {
        const location = yield* (yield* MemoryPaths.MemoryPaths).locate(root)
        assert.isTrue(location.teamEnabled)
        assert.strictEqual(location.team?.enabledBy, `user settings ${user}`)
        const team = yield* (yield* TeamMemory).locate(location)
        assert.deepStrictEqual([team.enabled, team.remote], [true, "/srv/team.git"])
        assert.deepStrictEqual(loads, [root], "one read of the settings files for the whole command")
      }).pipe(Effect.provide(services))
    }))
})

describe("ensureTeamDir needs only MemoryFs and Path", () => {
  const inMemory = (seed: MemoryFs.MemoryFsSeed) =>
    Effect.provide(Layer.mergeAll(MemoryFs.layerMemory(seed), Path.layer))

  it.effect("creates team/ (0700) in the memory directory, and again finds it there", () =>
    Effect.gen(function*() {
      const memoryFs = yield* MemoryFs.MemoryFs
      assert.strictEqual(yield* ensureTeamDir("/home/u/.memdir/memory"), "/home/u/.memdir/memory/team/")
      assert.strictEqual(yield* ensureTeamDir("/home/u/.memdir/memory/"), "/home/u/.memdir/memory/team/")
      const info = yield* memoryFs.lstat("/home/u/.memdir/memory/team")
      assert.strictEqual(info.kind, "Directory")
      assert.strictEqual(info.mode, MemoryFs.DIR_MODE)
    }).pipe(inMemory({})))

  it.effect("refuses a team/ that is a link out of the memory directory", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(ensureTeamDir("/m"))
      assert.strictEqual(error._tag, "PathTraversalError")
      if (error._tag === "PathTraversalError") assert.strictEqual(error.reason, "symlink-escape")
    }).pipe(inMemory({ "/elsewhere/notes.md": "x", "/m/team": { symlink: "/elsewhere" } })))

  it.effect("a team/ that is a file is an I/O error naming it", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(ensureTeamDir("/m"))
      assert.strictEqual(error._tag, "MemoryIoError")
      if (error._tag === "MemoryIoError") assert.strictEqual(error.path, "/m/team/")
    }).pipe(inMemory({ "/m/team": "not a directory" })))
})

describe("cross-check (pure)", () => {
  const team = (path: string, description: string, body = "") => ({ path, name: "Team rule", description, body })
  it("flags a rule that prescribes what team feedback prohibits, and the reverse, but not agreement", () => {
    const teamFeedback = [
      team("team/feedback_db.md", "Integration tests must never mock the database", "Use docker Postgres."),
      team("team/feedback_prs.md", "Keep pull requests small and focused"),
      team("team/feedback_style.md", "Avoid default exports in TypeScript modules")
    ]
    const mock = findContradictions(
      { name: "Mock DB", description: "Mock the database in integration tests for speed", body: "" },
      teamFeedback
    )
    assert.deepStrictEqual(mock.map((c) => c.path), ["team/feedback_db.md"])
    assert.include(mock[0]!.shared, "mock")
    assert.include(mock[0]!.reason, "prescribes what this team memory prohibits")

    const agree = findContradictions(
      { name: "Real DB", description: "Don't mock the database in integration tests", body: "" },
      teamFeedback
    )
    assert.deepStrictEqual(agree, [])

    const reverse = findContradictions(
      { name: "Feature PRs", description: "Never split a feature across several pull requests", body: "" },
      [...teamFeedback, {
        ...team("team/feedback_split.md", "Split each feature into several small pull requests"),
        name: "Split PRs"
      }]
    )
    assert.deepStrictEqual(reverse.map((c) => c.path), ["team/feedback_split.md"])
    assert.include(reverse[0]!.reason, "prohibits what this team memory prescribes")

    const unrelated = findContradictions({ name: "Tone", description: "Never use emoji in replies", body: "" }, [
      team("team/feedback_emoji_docs.md", "Use tables in design docs")
    ])
    assert.deepStrictEqual(unrelated, [])
  })

  it("reads the rule, not the reasons: a 'don't' under **Why:** does not make a rule a prohibition", () => {
    assert.isFalse(isProhibition({
      name: "x",
      description: "Run the linter before pushing",
      body: "Always.\n\n**Why:** we don't want red CI."
    }))
    assert.isTrue(isProhibition({ name: "x", description: "Do not push on Fridays", body: "" }))
  })
})

/** A scratch memory directory with a sentinel tree beside it: escapes would land there. */
const scratch = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const root = yield* fs.realPath(yield* fs.makeTempDirectoryScoped({ prefix: "memdir-team-" }))
  const memoryDir = `${root}/memory/`
  NodeFs.mkdirSync(memoryDir, { recursive: true })
  NodeFs.mkdirSync(`${root}/outside`)
  return { root, memoryDir, teamDir: `${memoryDir}team/`, outside: `${root}/outside` }
})

const files = (dir: string): Array<string> =>
  NodeFs.existsSync(dir) ? (NodeFs.readdirSync(dir, { recursive: true }) as Array<string>).sort() : []

const feedbackText = (name: string, description: string, body: string) =>
  `---\nname: ${name}\ndescription: ${description}\ntype: feedback\n---\n\n${body}\n`

const FAKE_AWS_KEY = "AKIA" + "2Z3Y4X5W6V7UTSRQ"

const LiveLayer = MemoryStore.layerNode.pipe(
  Layer.provideMerge(Layer.mergeAll(Scanner.layerNode, MemoryIndex.layer, TeamGuard.layer, Staleness.layer)),
  Layer.provideMerge(NodeServices.layer)
)

layer(LiveLayer, { excludeTestServices: true })("team writes on a real directory", (it) => {
  it.effect("writes a team memory and its team/MEMORY.md line, updates it in place, keeps extra keys", () =>
    Effect.gen(function*() {
      const s = yield* scratch
      const input = {
        memoryDir: s.memoryDir,
        type: "reference",
        name: "CI",
        description: "CI runs on buildkite.example/acme",
        body: "Pipelines per package."
      }
      const first = yield* writeTeamMemory(input)
      assert.deepStrictEqual([first.file, first.key, first.created, first.indexCreated, first.scope], [
        "team/reference_ci.md",
        "reference_ci.md",
        true,
        true,
        "team"
      ])
      assert.strictEqual(first.path, `${s.teamDir}reference_ci.md`)
      assert.include(NodeFs.readFileSync(`${s.teamDir}MEMORY.md`, "utf8"), "- [CI](reference_ci.md) — CI runs on")
      // A teammate added a key by hand; the update keeps it and does not duplicate the memory or its line.
      const text = NodeFs.readFileSync(first.path, "utf8").replace("type: reference\n", "type: reference\nowner: ops\n")
      NodeFs.writeFileSync(first.path, text)
      const second = yield* writeTeamMemory({ ...input, description: "CI runs on buildkite.example/acme-2" })
      assert.deepStrictEqual([second.created, second.indexCreated, second.path], [false, false, first.path])
      assert.include(NodeFs.readFileSync(first.path, "utf8"), "owner: ops")
      assert.deepStrictEqual(files(s.teamDir), ["MEMORY.md", "reference_ci.md"])
      // Nothing of it is a private memory.
      assert.deepStrictEqual(files(s.memoryDir).filter((f) => !f.startsWith("team")), [])
    }))

  it.effect("refuses secrets, traversal keys, the index itself and bad frontmatter, writing nothing", () =>
    Effect.gen(function*() {
      const s = yield* scratch
      const secret = yield* Effect.flip(writeTeamMemory({
        memoryDir: s.memoryDir,
        type: "reference",
        name: "Deploy",
        description: "Deploy credentials",
        body: `aws key ${FAKE_AWS_KEY}`
      }))
      assert.strictEqual(secret._tag, "SecretDetectedError")
      if (secret._tag === "SecretDetectedError") {
        assert.strictEqual(secret.path, "team/reference_deploy.md")
        assert.include(secret.pattern, "aws-access-key-id")
        assert.strictEqual(secret.action, "write")
      }
      for (const [key, reason] of [["../../outside/x.md", "escapes-root"], ["%2e%2e/x.md", "encoded-traversal"]]) {
        const error = yield* Effect.flip(writeTeamFile({
          memoryDir: s.memoryDir,
          key: key!,
          content: feedbackText("X", "x", "x")
        }))
        assert.strictEqual(error._tag, "PathTraversalError", key)
        if (error._tag === "PathTraversalError") assert.strictEqual(error.reason, reason)
      }
      const index = yield* Effect.flip(writeTeamFile({
        memoryDir: s.memoryDir,
        key: "MEMORY.md",
        content: feedbackText("X", "x", "x")
      }))
      assert.strictEqual(index._tag, "InvalidMemoryInputError")
      const bad = yield* Effect.flip(writeTeamFile({ memoryDir: s.memoryDir, key: "x.md", content: "no frontmatter" }))
      assert.strictEqual(bad._tag, "InvalidFrontmatterError")
      assert.deepStrictEqual(files(s.teamDir), [])
      assert.deepStrictEqual(files(s.outside), [])
      assert.isFalse(NodeFs.existsSync(`${s.root}/x.md`))
    }))

  it.effect("refuses a team directory that is a symlink, and writes through it nowhere", () =>
    Effect.gen(function*() {
      const s = yield* scratch
      NodeFs.symlinkSync(s.outside, `${s.memoryDir}team`)
      const error = yield* Effect.flip(writeTeamMemory({
        memoryDir: s.memoryDir,
        type: "reference",
        name: "CI",
        description: "CI",
        body: "x"
      }))
      assert.strictEqual(error._tag, "PathTraversalError")
      if (error._tag === "PathTraversalError") assert.strictEqual(error.reason, "symlink-escape")
      assert.deepStrictEqual(files(s.outside), [])
      const ensured = yield* Effect.flip(ensureTeamDir(s.memoryDir))
      assert.strictEqual(ensured._tag, "PathTraversalError")
    }))

  it.effect("a raw team file gets its index line from its own frontmatter; ls shows conflicts", () =>
    Effect.gen(function*() {
      const s = yield* scratch
      const written = yield* writeTeamFile({
        memoryDir: s.memoryDir,
        key: "notes/reference_oncall.md",
        content: `---\nname: On-call\ndescription: Pager rota lives in opsgenie\ntype: reference\n---\n\nrota\n`
      })
      assert.strictEqual(written.file, "team/notes/reference_oncall.md")
      assert.include(
        NodeFs.readFileSync(`${s.teamDir}MEMORY.md`, "utf8"),
        "- [On-call](notes/reference_oncall.md) — Pager rota"
      )
      NodeFs.writeFileSync(
        `${s.teamDir}notes/reference_oncall.conflict-1a2b3c4d.md`,
        `---\nname: On-call\ndescription: Pager rota lives in pagerduty\ntype: reference\n---\n\nrota\n`
      )
      const listing = yield* listTeamMemories(s.memoryDir)
      assert.deepStrictEqual(listing.memories.map((m) => m.path).sort(), [
        "team/notes/reference_oncall.conflict-1a2b3c4d.md",
        "team/notes/reference_oncall.md"
      ])
      assert.deepStrictEqual(listing.conflicts, [{
        path: "team/notes/reference_oncall.conflict-1a2b3c4d.md",
        conflictsWith: "team/notes/reference_oncall.md"
      }])
    }))

  it.effect("cross-checks a private feedback memory against team feedback, only when team memory is on", () =>
    Effect.gen(function*() {
      const s = yield* scratch
      yield* writeTeamFile({
        memoryDir: s.memoryDir,
        key: "feedback_real_db.md",
        content: feedbackText("Real DB", "Integration tests must never mock the database", "Use docker.")
      })
      // A team file the guard refuses (a symlink out of team/) is skipped, never read.
      NodeFs.writeFileSync(`${s.outside}/feedback_x.md`, feedbackText("X", "Mock the database always", "x"))
      NodeFs.symlinkSync(`${s.outside}/feedback_x.md`, `${s.teamDir}feedback_link.md`)
      const input = {
        memoryDir: s.memoryDir,
        type: "feedback",
        name: "Mock DB",
        description: "Mock the database in integration tests for speed",
        body: "Faster CI."
      }
      const checked = yield* checkTeamContradictions(s.memoryDir, input)
      assert.deepStrictEqual(checked.map((c) => c.path), ["team/feedback_real_db.md"])

      const written = yield* writePrivateMemory({ ...input, teamEnabled: true })
      assert.strictEqual(written.scope, "private")
      assert.strictEqual(written.file, "feedback_mock_db.md")
      assert.deepStrictEqual(written.contradictions.map((c) => c.path), ["team/feedback_real_db.md"])
      const off = yield* writePrivateMemory({ ...input, teamEnabled: false })
      assert.deepStrictEqual(off.contradictions, [])
      const project = yield* writePrivateMemory({ ...input, type: "project", name: "Speed", teamEnabled: true })
      assert.deepStrictEqual(project.contradictions, [])
    }))

  it.effect("the prompt gets the team section (guidance, cross-check, team index) only while team memory is on", () =>
    Effect.gen(function*() {
      const s = yield* scratch
      yield* writeTeamMemory({
        memoryDir: s.memoryDir,
        type: "reference",
        name: "Tracker",
        description: "Bugs live in linear.app/acme {{memoryDir}}",
        body: "x"
      })
      const memory: MemoryLocation = {
        root: { root: s.root, kind: "none" },
        memoryDir: s.memoryDir,
        source: "default",
        enabled: true,
        enabledBy: "default"
      }
      const team = { memory, teamDir: s.teamDir, enabled: true, enabledBy: "test" }
      const index = { ...(yield* (yield* MemoryIndex.MemoryIndex).load(s.memoryDir)) }
      const render = (input: Parameters<typeof renderMemoryPrompt>[0]) => Result.getOrThrow(renderMemoryPrompt(input))

      const teamInput = yield* teamPromptInput(team)
      assert.isDefined(teamInput)
      const prompt = render({ memoryDir: s.memoryDir, index, team: teamInput })
      const section = prompt.slice(prompt.indexOf("## Team memory\n"))
      assert.include(section, `\`${s.teamDir}\``)
      assert.include(section, "- **user** memories are always private")
      assert.include(section, "- **reference** memories (trackers, dashboards, channels, runbooks) usually go to team")
      assert.include(section, "feedback** is private, unless it is a convention the whole project follows")
      assert.include(section, "Before you save a private feedback memory, check that it does not contradict team")
      // The teammate's text goes in verbatim: a slot in it is not filled.
      assert.include(section, "- [Tracker](reference_tracker.md) — Bugs live in linear.app/acme {{memoryDir}}")
      const baseline = render({
        memoryDir: s.memoryDir,
        index,
        team: teamInput,
        variants: { team: "without-cross-check" }
      })
      assert.notInclude(baseline, "Before you save a private feedback memory")
      assert.include(baseline, "## Team memory")

      // Off (or auto memory off): no team section at all.
      assert.isUndefined(yield* teamPromptInput({ ...team, enabled: false }))
      assert.isUndefined(yield* teamPromptInput({ ...team, memory: { ...memory, enabled: false } }))
      const off = render({ memoryDir: s.memoryDir, index })
      assert.notInclude(off, "Team memory")
      assert.notInclude(off, "team/")

      // A team index the guard refuses is not loaded; the prompt says why.
      NodeFs.rmSync(`${s.teamDir}MEMORY.md`)
      NodeFs.writeFileSync(`${s.outside}/MEMORY.md`, "- [Leak](../../secret.md) — outside\n")
      NodeFs.symlinkSync(`${s.outside}/MEMORY.md`, `${s.teamDir}MEMORY.md`)
      const refused = yield* teamPromptInput(team)
      const refusedPrompt = render({ memoryDir: s.memoryDir, index, team: refused })
      assert.include(refusedPrompt, "team/MEMORY.md was not loaded")
      assert.notInclude(refusedPrompt, "Leak")
    }))

  it.effect("recall covers team memories with their scope when asked, reads them only through the guard", () =>
    Effect.gen(function*() {
      const s = yield* scratch
      yield* writeTeamMemory({
        memoryDir: s.memoryDir,
        type: "reference",
        name: "Dashboards",
        description: "Checkout latency dashboards on grafana",
        body: "grafana.internal/d/checkout"
      })
      NodeFs.writeFileSync(
        `${s.memoryDir}reference_grafana.md`,
        `---\nname: Grafana\ndescription: Checkout latency dashboards personal notes\ntype: reference\n---\n\nmine\n`
      )
      // A link inside team/ to a file inside team/: the scanner lists it, the guard refuses to read it.
      NodeFs.writeFileSync(`${s.teamDir}.hidden.md`, feedbackText("Hidden", "Checkout latency hidden", "x"))
      NodeFs.symlinkSync(`${s.teamDir}.hidden.md`, `${s.teamDir}reference_linked.md`)
      const everything = ["team/reference_dashboards.md", "reference_grafana.md", "team/reference_linked.md"]
      const recall = (team: boolean) =>
        Effect.flatMap(
          RecallSession,
          (session) => session.recall({ memoryDir: s.memoryDir, query: "checkout latency dashboards", team })
        ).pipe(
          Effect.provide(Recall.layer.pipe(Layer.provide(Selector.layerTest(() => everything))))
        )
      const withTeam = yield* recall(true)
      assert.deepStrictEqual(withTeam.selected.map((m) => [m.path, m.scope]).sort(), [
        ["reference_grafana.md", "private"],
        ["team/reference_dashboards.md", "team"]
      ])
      assert.deepStrictEqual(withTeam.unreadable.map((u) => u.path), ["team/reference_linked.md"])
      assert.include(withTeam.unreadable[0]!.detail, "a symbolic link")
      assert.include(Recall.renderRecalledMemory(withTeam.selected.find((m) => m.scope === "team")!), "team memory")

      const withoutTeam = yield* recall(false)
      assert.deepStrictEqual(withoutTeam.selected.map((m) => m.path), ["reference_grafana.md"])
      assert.strictEqual(withoutTeam.candidates, 1)
    }))
})

describe("prompt without team input", () => {
  it("keeps the private prompt exactly as it was", () => {
    const index = { ...truncateIndex(""), path: "/m/MEMORY.md", exists: false, entries: [] }
    const prompt = Result.getOrThrow(renderMemoryPrompt({ memoryDir: "/m/", index }))
    assert.notInclude(prompt, "## Team memory")
  })
})
