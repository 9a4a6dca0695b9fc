/**
 * The memory-tool backend is a drop-in for the SDK's `BetaLocalFilesystemMemoryTool`: one sequence of commands,
 * every error case included, runs against the reference (in one temp dir) and against memdir (in another), and
 * each result must be the same string, as the SDK's tool runner would send it (`Error: …` with `is_error`).
 * `MEMDIR_REFUSES_MORE` lists, case by case, where memdir deliberately answers differently (docs/memory-tool.md).
 */
import Anthropic from "@anthropic-ai/sdk"
import { betaMemoryTool } from "@anthropic-ai/sdk/helpers/beta/memory"
import { BetaLocalFilesystemMemoryTool } from "@anthropic-ai/sdk/tools/memory/node"
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Path from "effect/Path"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Server from "../../testing/src/MessagesApiServer.js"
import * as MemoryFs from "../src/MemoryFs.js"
import * as MemoryIndex from "../src/MemoryIndex.js"
import * as MemoryStore from "../src/MemoryStore.js"
import * as MemoryToolBackend from "../src/MemoryToolBackend.js"
import * as ModelCatalog from "../src/ModelCatalog.js"
import * as TeamGuard from "../src/TeamGuard.js"

const live = MemoryToolBackend.layer.pipe(
  Layer.provideMerge(MemoryStore.layerNode),
  Layer.provideMerge(MemoryIndex.layer),
  Layer.provideMerge(NodeServices.layer)
)
const runtime = ManagedRuntime.make(live)

const memory = (name: string, description: string, body: string) =>
  `---\nname: ${name}\ndescription: ${description}\ntype: feedback\n---\n${body}`

const TESTING = memory(
  "Testing policy",
  "Integration tests hit a real database",
  "Use the real database in tests.\nWhy: a mock hid a broken migration.\nHow to apply: tests/integration/.\n"
)
const DATABASE = memory("Database", "Postgres 16 with a pool of 10", "The pool is capped at 10.\nSee src/db.ts.\n")

type Input = Record<string, unknown> & { readonly command: string }
interface Answer {
  readonly content: string
  readonly is_error: boolean
}

/** Two fresh worlds: the reference's `<dir>/memories` and a memdir memory directory, plus a place outside both. */
const worlds = async (options: { readonly teamEnabled?: boolean } = {}) => {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "memdir-memtool-")))
  const reference = await BetaLocalFilesystemMemoryTool.init(path.join(base, "reference"))
  const referenceDir = path.join(base, "reference", "memories")
  const memoryDir = path.join(base, "memdir", "memory")
  const outside = path.join(base, "outside")
  fs.mkdirSync(memoryDir, { recursive: true, mode: 0o700 })
  fs.mkdirSync(outside)
  fs.writeFileSync(path.join(outside, "secret.md"), "outside\n")
  const root = { memoryDir, teamEnabled: options.teamEnabled ?? false }
  const handlers = reference as unknown as Record<string, (input: Input) => Promise<string>>
  const viaReference = async (input: Input): Promise<Answer> => {
    try {
      return { content: await handlers[input.command]!.call(reference, input), is_error: false }
    } catch (e) {
      return { content: `Error: ${e instanceof Error ? e.message : String(e)}`, is_error: true }
    }
  }
  const viaMemdir = (input: Input): Promise<Answer> =>
    runtime.runPromise(Effect.flatMap(MemoryToolBackend.MemoryToolBackend, (backend) => backend.answer(root, input)))
  return {
    base,
    referenceDir,
    memoryDir,
    outside,
    root,
    viaReference,
    viaMemdir,
    /** Plants the same thing in both directories. */
    both: (plant: (dir: string) => void) => {
      plant(referenceDir)
      plant(memoryDir)
    },
    cleanup: () => fs.rmSync(base, { recursive: true, force: true })
  }
}

/** The conformance sequence: every result must be the reference's, string for string. */
const SEQUENCE: ReadonlyArray<Input> = [
  { command: "view", path: "/memories" },
  { command: "create", path: "/memories/feedback_testing.md", file_text: TESTING },
  { command: "create", path: "/memories/feedback_testing.md", file_text: TESTING },
  { command: "create", path: "/memories/notes/project_db.md", file_text: DATABASE },
  // three levels down: listed from /memories/notes, not from /memories (two levels deep)
  { command: "create", path: "/memories/notes/old/project_deep.md", file_text: DATABASE },
  { command: "create", path: "/memories", file_text: TESTING },
  { command: "view", path: "/memories" },
  { command: "view", path: "/memories/" },
  { command: "view", path: "/memories/notes" },
  { command: "view", path: "/memories/feedback_testing.md" },
  { command: "view", path: "/memories/feedback_testing.md", view_range: [2, 4] },
  { command: "view", path: "/memories/feedback_testing.md", view_range: [6, -1] },
  { command: "view", path: "/memories/feedback_testing.md", view_range: [0, 100] },
  { command: "view", path: "/memories/notes/../feedback_testing.md" },
  // missing paths
  { command: "view", path: "/memories/missing.md" },
  { command: "str_replace", path: "/memories/missing.md", old_str: "a", new_str: "b" },
  { command: "insert", path: "/memories/missing.md", insert_line: 0, insert_text: "x" },
  { command: "delete", path: "/memories/missing.md" },
  { command: "rename", old_path: "/memories/missing.md", new_path: "/memories/other.md" },
  // escapes: relative, absolute outside, deep
  { command: "view", path: "/memories/../x" },
  { command: "view", path: "/memories/notes/../../etc/passwd" },
  { command: "view", path: "/etc/passwd" },
  { command: "view", path: "memories/feedback_testing.md" },
  { command: "create", path: "/memories/../escaped.md", file_text: TESTING },
  { command: "delete", path: "/memories/../reference" },
  { command: "rename", old_path: "/memories/feedback_testing.md", new_path: "/memories/../moved.md" },
  { command: "rename", old_path: "/tmp/x.md", new_path: "/memories/moved.md" },
  // str_replace: unique, no match, several matches, not a file
  { command: "str_replace", path: "/memories/feedback_testing.md", old_str: "a mock hid", new_str: "mocks hid" },
  { command: "str_replace", path: "/memories/feedback_testing.md", old_str: "sqlite", new_str: "x" },
  { command: "str_replace", path: "/memories/feedback_testing.md", old_str: "database", new_str: "db" },
  { command: "str_replace", path: "/memories/feedback_testing.md", old_str: "tests\nWhy", new_str: "x" },
  { command: "str_replace", path: "/memories/notes", old_str: "a", new_str: "b" },
  { command: "view", path: "/memories/feedback_testing.md" },
  // insert: in the body, at the end, bad lines, not a file
  { command: "insert", path: "/memories/feedback_testing.md", insert_line: 6, insert_text: "Owner: the db team\n" },
  { command: "insert", path: "/memories/feedback_testing.md", insert_line: 9, insert_text: "Last line" },
  { command: "insert", path: "/memories/feedback_testing.md", insert_line: -1, insert_text: "x" },
  { command: "insert", path: "/memories/feedback_testing.md", insert_line: 12, insert_text: "x" },
  { command: "insert", path: "/memories/feedback_testing.md", insert_line: 999, insert_text: "x" },
  { command: "insert", path: "/memories/notes", insert_line: 0, insert_text: "x" },
  { command: "view", path: "/memories/feedback_testing.md" },
  // the root
  { command: "delete", path: "/memories" },
  { command: "delete", path: "/memories/" },
  { command: "rename", old_path: "/memories", new_path: "/memories/elsewhere" },
  // rename: onto an existing file, then for real (into a new directory too), then back
  { command: "rename", old_path: "/memories/feedback_testing.md", new_path: "/memories/notes/project_db.md" },
  { command: "rename", old_path: "/memories/feedback_testing.md", new_path: "/memories/feedback_tests.md" },
  { command: "rename", old_path: "/memories/feedback_tests.md", new_path: "/memories/archive/feedback_tests.md" },
  { command: "view", path: "/memories" },
  { command: "view", path: "/memories/feedback_testing.md" },
  { command: "view", path: "/memories/archive/feedback_tests.md" },
  // delete a file; its directory stays, as in the reference
  { command: "delete", path: "/memories/notes/project_db.md" },
  { command: "delete", path: "/memories/notes/project_db.md" },
  { command: "view", path: "/memories" },
  { command: "view", path: "/memories/notes" }
]

describe("MemoryToolBackend: conformance with BetaLocalFilesystemMemoryTool", () => {
  it("answers the whole sequence with the reference's strings", async () => {
    const w = await worlds()
    try {
      const differences: Array<string> = []
      let errors = 0
      for (const input of SEQUENCE) {
        const expected = await w.viaReference(input)
        const actual = await w.viaMemdir(input)
        if (expected.is_error) errors++
        if (expected.content !== actual.content || expected.is_error !== actual.is_error) {
          differences.push(
            `${JSON.stringify(input)}\n  reference: ${JSON.stringify(expected)}\n  memdir:    ${JSON.stringify(actual)}`
          )
        }
      }
      assert.deepStrictEqual(differences, [])
      assert.isAtLeast(errors, 25, "the sequence exercises the error cases")
      // the files are the same on both sides (memdir's index and locks aside)
      const files = (dir: string) =>
        fs.readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((f) =>
          !f.split(path.sep).some((s) => s.startsWith(".")) && f !== "MEMORY.md" &&
          fs.lstatSync(path.join(dir, f)).isFile()
        ).sort().map((f) => [f, fs.readFileSync(path.join(dir, f), "utf8")])
      assert.deepStrictEqual(files(w.memoryDir), files(w.referenceDir))
      assert.deepStrictEqual(files(w.memoryDir).map(([f]) => f), [
        "archive/feedback_tests.md",
        path.join("notes", "old", "project_deep.md")
      ])
    } finally {
      w.cleanup()
    }
  })

  it("keeps MEMORY.md in step with creates, renames and deletes, and never shows it", async () => {
    const w = await worlds()
    try {
      await w.viaMemdir({ command: "create", path: "/memories/feedback_testing.md", file_text: TESTING })
      const index = () => fs.readFileSync(path.join(w.memoryDir, "MEMORY.md"), "utf8")
      assert.include(index(), "(feedback_testing.md)")
      await w.viaMemdir({ command: "rename", old_path: "/memories/feedback_testing.md", new_path: "/memories/t.md" })
      assert.include(index(), "(t.md)")
      assert.notInclude(index(), "(feedback_testing.md)")
      const listing = await w.viaMemdir({ command: "view", path: "/memories" })
      const indexView = await w.viaMemdir({ command: "view", path: "/memories/MEMORY.md" })
      assert.isFalse(indexView.is_error, "a direct view still shows the index")
      assert.include(indexView.content, "(t.md)")
      assert.notInclude(listing.content, "MEMORY.md")
      assert.notInclude(listing.content, ".memory-index.lock")
      assert.include(listing.content, "/memories/t.md")
      await w.viaMemdir({ command: "delete", path: "/memories/t.md" })
      assert.notInclude(index(), "(t.md)")
      // memdir's own files exist on disk but view lists nothing else than the reference would
      assert.isTrue(fs.existsSync(path.join(w.memoryDir, "MEMORY.md")))
      assert.deepStrictEqual(
        await w.viaMemdir({ command: "view", path: "/memories" }),
        await w.viaReference({ command: "view", path: "/memories" })
      )
    } finally {
      w.cleanup()
    }
  })

  it("maps /memories/team to team/ while team memory is on: the guard, the team index, never shown", async () => {
    const w = await worlds({ teamEnabled: true })
    try {
      const ci = memory("CI", "CI runs on every push", "The pipeline is .ci/run.\n")
      const created = await w.viaMemdir({ command: "create", path: "/memories/team/reference_ci.md", file_text: ci })
      assert.deepStrictEqual(created, {
        content: "File created successfully at: /memories/team/reference_ci.md",
        is_error: false
      })
      assert.strictEqual(fs.readFileSync(path.join(w.memoryDir, "team/reference_ci.md"), "utf8"), ci)
      assert.include(fs.readFileSync(path.join(w.memoryDir, "team/MEMORY.md"), "utf8"), "(reference_ci.md)")
      const listing = (await w.viaMemdir({ command: "view", path: "/memories" })).content
      assert.include(listing, "\t/memories/team/\n")
      assert.include(listing, "\t/memories/team/reference_ci.md")
      assert.notInclude(listing, "MEMORY.md")
      const edited = await w.viaMemdir({
        command: "str_replace",
        path: "/memories/team/reference_ci.md",
        old_str: ".ci/run",
        new_str: "bash .ci/run"
      })
      assert.isFalse(edited.is_error, edited.content)
      assert.include(fs.readFileSync(path.join(w.memoryDir, "team/reference_ci.md"), "utf8"), "bash .ci/run")
    } finally {
      w.cleanup()
    }
  })

  it("lists no link, even one that stays inside (the reference lists it as what it points to)", async () => {
    const w = await worlds()
    try {
      w.both((dir) => {
        fs.writeFileSync(path.join(dir, "f.md"), TESTING)
        fs.symlinkSync(path.join(dir, "f.md"), path.join(dir, "alias.md"))
      })
      const input = { command: "view", path: "/memories" }
      assert.include((await w.viaReference(input)).content, "/memories/alias.md")
      const listing = await w.viaMemdir(input)
      assert.notInclude(listing.content, "alias.md")
      assert.include(listing.content, "/memories/f.md")
    } finally {
      w.cleanup()
    }
  })

  it("refuses a link that leads out, as the reference does", async () => {
    const w = await worlds()
    try {
      w.both((dir) => fs.symlinkSync(w.outside, path.join(dir, "out")))
      for (
        const input of [
          { command: "view", path: "/memories/out/secret.md" },
          { command: "create", path: "/memories/out/new.md", file_text: TESTING },
          { command: "view", path: "/memories" }
        ]
      ) {
        assert.deepStrictEqual(await w.viaMemdir(input), await w.viaReference(input), JSON.stringify(input))
      }
      assert.isFalse(fs.existsSync(path.join(w.outside, "new.md")))
    } finally {
      w.cleanup()
    }
  })
})

/**
 * Where memdir deliberately refuses more than the reference (docs/memory-tool.md#where-memdir-differs). Each case
 * runs in fresh directories: the reference accepts, memdir answers an error that says why, and writes nothing.
 */
const MEMDIR_REFUSES_MORE: ReadonlyArray<{
  readonly why: string
  readonly setup?: (w: Awaited<ReturnType<typeof worlds>>) => void
  readonly team?: boolean
  readonly input: Input
  readonly memdir: RegExp
}> = [
  {
    why: "MEMORY.md is the index, maintained by memdir",
    input: { command: "create", path: "/memories/MEMORY.md", file_text: TESTING },
    memdir: /^Error: invalid file "MEMORY.md": MEMORY.md is the index/
  },
  {
    why: "hidden entries are memdir's own state",
    input: { command: "create", path: "/memories/.state.md", file_text: TESTING },
    memdir: /^Error: invalid file ".state.md": hidden entries/
  },
  {
    why: "/memoriesX is not under /memories (the reference reads it as /memories/X)",
    input: { command: "create", path: "/memoriesX.md", file_text: TESTING },
    memdir: /^Error: Path must start with \/memories, got: \/memoriesX\.md$/
  },
  {
    why: "a percent-encoded traversal is refused, not taken literally",
    input: { command: "create", path: "/memories/%2e%2e/x.md", file_text: TESTING },
    memdir: /^Error: refused path ".*": encoded-traversal/
  },
  {
    why: "a backslash is refused, not taken literally",
    input: { command: "create", path: "/memories/a\\b.md", file_text: TESTING },
    memdir: /^Error: refused path ".*": backslash/
  },
  {
    why: "a name that starts or ends with white space is refused (memdir's keys are trimmed)",
    input: { command: "create", path: "/memories/ notes.md", file_text: TESTING },
    memdir: /^Error: invalid memory tool input: path "\/memories\/ notes\.md": a name may not start or end/
  },
  {
    why: "/memories/team exists only while team memory is on",
    input: { command: "create", path: "/memories/team/reference_ci.md", file_text: TESTING },
    memdir: /^Error: team memory is off/
  },
  {
    why: "a team memory that looks like it holds a secret is never written",
    team: true,
    input: {
      command: "create",
      path: "/memories/team/reference_ci.md",
      file_text: memory("CI", "CI credentials", "AWS key AKIA" + "2Z3Y4X5W6V7UTSRQ\n")
    },
    memdir: /^Error: team\/reference_ci\.md:\d+ looks like it holds a secret/
  },
  {
    why: "a directory holding a hidden entry (memdir's own state) is not deleted whole",
    setup: (w) => w.both((dir) => fs.mkdirSync(path.join(dir, "old", ".state"), { recursive: true })),
    input: { command: "delete", path: "/memories/old" },
    memdir: /^Error: \/memories\/old cannot be deleted whole: it holds memdir's own old\/\.state/
  },
  {
    why: "a file over 1 MiB is not read (memdir's read bound)",
    setup: (w) =>
      w.both((dir) => fs.writeFileSync(path.join(dir, "huge.md"), memory("Huge", "Huge", "x\n".repeat(600_000)))),
    input: { command: "view", path: "/memories/huge.md", view_range: [1, 3] },
    memdir: /^Error: refused path "huge\.md": too-large/
  },
  {
    why: "a memory is at most 250,000 bytes",
    input: { command: "create", path: "/memories/big.md", file_text: memory("Big", "Big", "x".repeat(250_001)) },
    memdir: /^Error: invalid content "big.md": \d+ bytes is over the limit of 250000/
  }
]

/** What memdir once refused and now does as the reference does (issue 24): same answer, same files. */
const SAME_AS_REFERENCE: ReadonlyArray<{
  readonly why: string
  readonly setup?: (w: Awaited<ReturnType<typeof worlds>>) => void
  readonly input: Input
}> = [
  {
    why: "a file without frontmatter",
    input: { command: "create", path: "/memories/notes.md", file_text: "just some notes\n" }
  },
  { why: "a file that is not .md", input: { command: "create", path: "/memories/notes.txt", file_text: "x\n" } },
  {
    why: "an edit that breaks the frontmatter",
    setup: (w) => w.both((dir) => fs.writeFileSync(path.join(dir, "f.md"), TESTING)),
    input: { command: "insert", path: "/memories/f.md", insert_line: 0, insert_text: "preamble" }
  },
  {
    why: "a name with # ? % < >",
    input: { command: "create", path: "/memories/a#1 ?50% <x>.md", file_text: TESTING }
  },
  {
    why: "delete of a directory, its files and index lines with it",
    setup: (w) => w.both((dir) => fs.mkdirSync(path.join(dir, "old", "empty"), { recursive: true })),
    input: { command: "delete", path: "/memories/old" }
  },
  {
    why: "rename of a directory",
    setup: (w) => w.both((dir) => fs.mkdirSync(path.join(dir, "old", "empty"), { recursive: true })),
    input: { command: "rename", old_path: "/memories/old", new_path: "/memories/new/deeper" }
  }
]

describe("MemoryToolBackend: what memdir once refused, as the reference does it", () => {
  for (const same of SAME_AS_REFERENCE) {
    it(same.why, async () => {
      const w = await worlds()
      try {
        same.setup?.(w)
        const reference = await w.viaReference(same.input)
        const memdir = await w.viaMemdir(same.input)
        assert.isFalse(reference.is_error, reference.content)
        assert.deepStrictEqual(memdir, reference)
        const files = (dir: string) =>
          fs.readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((f) =>
            !f.startsWith(".") && f !== "MEMORY.md"
          )
            .sort()
        assert.deepStrictEqual(files(w.memoryDir), files(w.referenceDir))
      } finally {
        w.cleanup()
      }
    })
  }
})

describe("MemoryToolBackend: where memdir refuses more", () => {
  for (const exception of MEMDIR_REFUSES_MORE) {
    it(exception.why, async () => {
      const w = await worlds({ teamEnabled: exception.team ?? false })
      try {
        exception.setup?.(w)
        const before = fs.readdirSync(w.memoryDir, { recursive: true, encoding: "utf8" }).sort()
        const reference = await w.viaReference(exception.input)
        const memdir = await w.viaMemdir(exception.input)
        assert.isFalse(reference.is_error, `the reference accepts it: ${reference.content}`)
        assert.isTrue(memdir.is_error)
        assert.match(memdir.content, exception.memdir)
        const after = fs.readdirSync(w.memoryDir, { recursive: true, encoding: "utf8" }).sort()
          .filter((f) => !f.startsWith(".") && !before.includes(f) && f !== "team" && f !== "MEMORY.md")
        assert.deepStrictEqual(after, [], "memdir wrote nothing")
        assert.deepStrictEqual(fs.readdirSync(w.outside), ["secret.md"])
      } finally {
        w.cleanup()
      }
    })
  }
})

describe("MemoryToolBackend: input", () => {
  it("answers malformed input and unknown commands with an error result", async () => {
    const w = await worlds()
    try {
      const unknown = await w.viaMemdir({ command: "undo", path: "/memories" })
      assert.deepStrictEqual(unknown, { content: "Error: undo not implemented", is_error: true })
      const missing = await w.viaMemdir({ command: "create", path: "/memories/x.md" })
      assert.isTrue(missing.is_error)
      assert.match(missing.content, /^Error: invalid memory tool input: .*file_text/)
      const notObject = await runtime.runPromise(
        Effect.flatMap(MemoryToolBackend.MemoryToolBackend, (backend) => backend.answer(w.root, 42))
      )
      assert.isTrue(notObject.is_error)
      assert.match(notObject.content, /^Error: invalid memory tool input: the input: must be an object with a command/)
      // no command: named as such, with the commands there are (not every command's whole shape)
      const noCommand = await w.viaMemdir({ path: "/memories/x.md" } as unknown as { command: string })
      assert.isTrue(noCommand.is_error)
      assert.match(
        noCommand.content,
        /command: is missing \(one of view, create, str_replace, insert, delete, rename\)/
      )
    } finally {
      w.cleanup()
    }
  })

  it("handlers() throw an Error with the reference's message", async () => {
    const w = await worlds()
    try {
      const handlers = await runtime.runPromise(MemoryToolBackend.handlers(w.root))
      const error = await Promise.resolve(handlers.delete({ command: "delete", path: "/memories" })).then(
        () => undefined,
        (e: unknown) => e
      )
      assert.instanceOf(error, Error)
      assert.strictEqual((error as Error).message, "Cannot delete the /memories directory itself")
      assert.strictEqual(
        await handlers.create({ command: "create", path: "/memories/f.md", file_text: TESTING }),
        "File created successfully at: /memories/f.md"
      )
    } finally {
      w.cleanup()
    }
  })
})

describe("MemoryToolBackend: inside the SDK's tool runner", () => {
  it.live("answers a scripted model's memory calls; the files land on disk, the results go back to the model", () =>
    Effect.gen(function*() {
      const w = yield* Effect.acquireRelease(Effect.promise(() => worlds()), (w) => Effect.sync(w.cleanup))
      const server = yield* Server.make({
        replies: [
          Server.toolUse("memory", { command: "view", path: "/memories" }),
          Server.toolUse("memory", { command: "create", path: "/memories/feedback_testing.md", file_text: TESTING }),
          Server.toolUse("memory", {
            command: "str_replace",
            path: "/memories/feedback_testing.md",
            old_str: "sqlite",
            new_str: "postgres"
          }),
          Server.toolUse("memory", { command: "create", path: "/memories/team/reference_ci.md", file_text: TESTING }),
          Server.text("Saved the testing policy.")
        ]
      })
      const handlers = yield* MemoryToolBackend.handlers(w.root)
      const client = new Anthropic({ apiKey: "test-key", baseURL: server.url, maxRetries: 0 })
      const final = yield* Effect.promise(() =>
        client.beta.messages.toolRunner({
          model: ModelCatalog.DEFAULT_MODEL,
          max_tokens: 1024,
          betas: ["context-management-2025-06-27"],
          messages: [{ role: "user", content: "Remember: integration tests hit a real database." }],
          tools: [betaMemoryTool(handlers)]
        })
      )
      assert.deepStrictEqual(final.content.map((b) => b.type === "text" ? b.text : b.type), [
        "Saved the testing policy."
      ])
      // on disk: the memory and its index line; nothing under team/ (team memory is off)
      assert.strictEqual(fs.readFileSync(path.join(w.memoryDir, "feedback_testing.md"), "utf8"), TESTING)
      assert.include(fs.readFileSync(path.join(w.memoryDir, "MEMORY.md"), "utf8"), "(feedback_testing.md)")
      assert.isFalse(fs.existsSync(path.join(w.memoryDir, "team")))
      // what the model got back, request by request
      const requests = yield* server.requests
      assert.strictEqual(requests.length, 5)
      assert.deepStrictEqual(requests[0]!.body.tools, [{ type: "memory_20250818", name: "memory" }])
      const resultOf = (i: number) => {
        const blocks: ReadonlyArray<any> = requests[i]!.body.messages.at(-1).content
        const result = blocks.find((b) => b.type === "tool_result")
        return { content: result.content, is_error: result.is_error === true }
      }
      assert.deepStrictEqual(resultOf(1), {
        content: "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and " +
          "node_modules:\n4K\t/memories",
        is_error: false
      })
      assert.deepStrictEqual(resultOf(2), {
        content: "File created successfully at: /memories/feedback_testing.md",
        is_error: false
      })
      assert.deepStrictEqual(resultOf(3), {
        content: "Error: No replacement was performed, old_str `sqlite` did not appear verbatim in " +
          "/memories/feedback_testing.md.",
        is_error: true
      })
      assert.strictEqual(resultOf(4).is_error, true)
      assert.match(resultOf(4).content, /^Error: team memory is off/)
    }).pipe(Effect.provide(live), Effect.scoped))
})

describe("a whole-directory rename never deletes a file written there meanwhile", () => {
  it.effect("the late file stays in the old directory, the moved ones are moved, and the answer says why", () =>
    Effect.gen(function*() {
      const backend = yield* MemoryToolBackend.MemoryToolBackend
      const fs = yield* MemoryFs.MemoryFs
      const root = { memoryDir: "/mem", teamEnabled: false }
      const created = yield* backend.answer(root, { command: "create", path: "/memories/old/a.md", file_text: "A\n" })
      assert.isFalse(created.is_error, created.content)
      const moved = yield* backend.answer(root, {
        command: "rename",
        old_path: "/memories/old",
        new_path: "/memories/new"
      })
      assert.isTrue(moved.is_error, moved.content)
      assert.include(moved.content, "late.md appeared in it meanwhile and was left in place")
      assert.strictEqual((yield* fs.readFile("/mem/old/late.md", { maxBytes: 100 })).text, "written meanwhile\n")
      assert.strictEqual((yield* fs.readFile("/mem/new/a.md", { maxBytes: 100 })).text, "A\n")
    }).pipe(
      Effect.provide(
        MemoryToolBackend.layer.pipe(
          Layer.provideMerge(MemoryStore.layerWithContainment),
          Layer.provideMerge(Layer.merge(MemoryIndex.layerOver, TeamGuard.layerOver)),
          // another writer puts a file into the old directory while the rename makes the new one
          Layer.provideMerge(
            Layer.effect(
              MemoryFs.MemoryFs,
              Effect.map(MemoryFs.MemoryFs, (inner) => ({
                ...inner,
                makeDirectory: (path: string, options?: { readonly within?: string | undefined }) =>
                  path === "/mem/new" ?
                    Effect.andThen(
                      Effect.ignore(inner.writeFileAtomic("/mem/old/late.md", "written meanwhile\n")),
                      inner.makeDirectory(path, options)
                    ) :
                    inner.makeDirectory(path, options)
              }))
            ).pipe(Layer.provide(MemoryFs.layerMemory()))
          ),
          Layer.provideMerge(Path.layer)
        )
      )
    ))
})
