/**
 * The memory-tool backend fuzzed against the SDK's own `BetaLocalFilesystemMemoryTool` (issue 23): random command
 * sequences (view, create, str_replace, insert, delete, rename) with random and hostile paths (the traversal
 * corpora, `..` in every spelling, look-alikes, NUL, backslashes, absolute paths, `/memories/team/../x`, long
 * names, trailing spaces, a link planted in both directories that leads out) run on the reference in one temp
 * directory and on memdir in another. memdir refuses more than the reference by design (docs/memory-tool.md#where-
 * memdir-differs); the invariants:
 *
 * - memdir accepts no path the reference refuses as escaping `/memories` (lexically or through the link);
 * - nothing changes outside memdir's memory directory;
 * - every file memdir holds parses, with exactly its index line (`MEMORY.md` or `team/MEMORY.md`), no line without
 *   its file, nothing in `team/` while team memory is off;
 * - a `create` memdir accepts stores the model's text as given;
 * - while both directories hold the same files, a command both accept answers the same text;
 * - no command hangs (each is bounded).
 */
import { BetaLocalFilesystemMemoryTool } from "@anthropic-ai/sdk/tools/memory/node"
import { NodeServices } from "@effect/platform-node"
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Result from "effect/Result"
import * as FastCheck from "fast-check"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as MemoryIndex from "../src/MemoryIndex.js"
import * as MemoryStore from "../src/MemoryStore.js"
import * as MemoryToolBackend from "../src/MemoryToolBackend.js"
import {
  anyKey,
  benignKey,
  changesOutside,
  memoryContent,
  POOL,
  poolKey,
  snapshot,
  unsoundness
} from "./support/fuzz.js"

/** The live backend on Node's file system, built once for every run. */
const runtime = ManagedRuntime.make(
  MemoryToolBackend.layer.pipe(
    Layer.provideMerge(MemoryStore.layerNode),
    Layer.provideMerge(MemoryIndex.layer),
    Layer.provideMerge(NodeServices.layer)
  )
)
afterAll(() => runtime.dispose())

/** A command that answers nothing within this long is a hang (a generous bound: a command takes milliseconds). */
const HANG = Duration.seconds(20)

/** The reference's refusals of a path as leaving `/memories` (lexically, by its prefix, through a link). */
const ESCAPING = /would escape \/memories directory|Path must start with \/memories/

type Command = Record<string, unknown> & { readonly command: string }

/** A tool path: hostile or benign keys under `/memories`, `/memories/team`, beside it, or as given. */
const toolPath: FastCheck.Arbitrary<string> = FastCheck.oneof(
  { arbitrary: poolKey.map((key) => `/memories/${key}`), weight: 16 },
  { arbitrary: benignKey.map((key) => `/memories/${key}`), weight: 2 },
  { arbitrary: anyKey.map((key) => `/memories/${key}`), weight: 4 },
  { arbitrary: anyKey.map((key) => `/memories/team/${key}`), weight: 2 },
  { arbitrary: anyKey.map((key) => `/memories/team/../${key}`), weight: 1 },
  { arbitrary: anyKey.map((key) => `/memories/out/${key}`), weight: 1 },
  { arbitrary: anyKey, weight: 1 },
  { arbitrary: anyKey.map((key) => `/memoriesX/${key}`), weight: 1 },
  {
    arbitrary: FastCheck.constantFrom(
      "/memories",
      "/memories/",
      "/memories/out",
      "/memories/out/secret.md",
      "/memories/team",
      "/memories/../x.md",
      "/memories/notes/../../x.md",
      "/memories//tmp/evil.md",
      "/memories/./team/../x.md",
      "/memories/team/../evil.md",
      "/tmp/evil.md",
      "/etc/passwd"
    ),
    weight: 2
  }
)

const command: FastCheck.Arbitrary<Command> = FastCheck.oneof(
  FastCheck.record({
    command: FastCheck.constant("view"),
    path: toolPath,
    view_range: FastCheck.option(
      FastCheck.tuple(FastCheck.integer({ min: -2, max: 9 }), FastCheck.integer({ min: -1, max: 9 })),
      { nil: undefined }
    )
  }, { requiredKeys: ["command", "path"] }),
  FastCheck.record({ command: FastCheck.constant("create"), path: toolPath, file_text: memoryContent }),
  FastCheck.record({ command: FastCheck.constant("create"), path: toolPath, file_text: memoryContent }),
  FastCheck.record({
    command: FastCheck.constant("str_replace"),
    path: toolPath,
    old_str: FastCheck.constantFrom("name", "description", "type", "---", "\n", "a", "feedback", ""),
    new_str: FastCheck.oneof(FastCheck.string({ maxLength: 12 }), FastCheck.constantFrom("---", "\n", "name:"))
  }),
  FastCheck.record({
    command: FastCheck.constant("insert"),
    path: toolPath,
    insert_line: FastCheck.integer({ min: -2, max: 12 }),
    insert_text: FastCheck.oneof(FastCheck.string({ maxLength: 20 }), FastCheck.constantFrom("---", "x\n"))
  }),
  FastCheck.record({ command: FastCheck.constant("delete"), path: toolPath }),
  FastCheck.record({ command: FastCheck.constant("rename"), old_path: toolPath, new_path: toolPath })
)

/** The pool's memories, created first (through both backends) so that the random commands find files to act on. */
const seeded = (teamEnabled: boolean): ReadonlyArray<Command> =>
  POOL.filter((key) => teamEnabled || !key.startsWith("team/")).map((key, i) => ({
    command: "create",
    path: `/memories/${key}`,
    file_text: `---\nname: Seed ${i}\ndescription: seeded memory ${i}\ntype: project\n---\nline a\nline b ${i}\n`
  }))

const pathsOf = (input: Command): ReadonlyArray<string> =>
  input.command === "rename" ? [String(input.old_path), String(input.new_path)] : [String(input.path)]

/**
 * Two worlds, each deep enough that `../..` stays inside its base: the reference's `<base>/ref/l1/memories` and
 * memdir's `<base>/memdir/l1/l2/memory`, each with `out` a link to `outside/` (which holds `secret.md`).
 */
const worlds = async (teamEnabled: boolean) => {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "memdir-toolfuzz-")))
  const referenceBase = path.join(base, "ref", "l1")
  const reference = await BetaLocalFilesystemMemoryTool.init(referenceBase)
  const referenceDir = path.join(referenceBase, "memories")
  const memdirBase = path.join(base, "memdir")
  const memoryDir = path.join(memdirBase, "l1", "l2", "memory")
  fs.mkdirSync(memoryDir, { recursive: true, mode: 0o700 })
  for (const world of [path.join(base, "ref"), memdirBase]) {
    fs.mkdirSync(path.join(world, "outside"))
    fs.writeFileSync(path.join(world, "outside", "secret.md"), "outside\n")
  }
  fs.symlinkSync(path.join(base, "ref", "outside"), path.join(referenceDir, "out"))
  fs.symlinkSync(path.join(memdirBase, "outside"), path.join(memoryDir, "out"))
  const handlers = reference as unknown as Record<string, (input: Command) => Promise<string>>
  const viaReference = (input: Command): Promise<MemoryToolBackend.MemoryToolAnswer> =>
    handlers[input.command]!.call(reference, input).then(
      (content) => ({ content, is_error: false }),
      (e: unknown) => ({ content: `Error: ${e instanceof Error ? e.message : String(e)}`, is_error: true })
    )
  /** The reference's verdict on one path, before any command: refused as escaping `/memories`, or not. */
  const referenceEscapes = (toolPath: string): Promise<boolean> =>
    (reference as unknown as { validatePath: (p: string) => Promise<unknown> }).validatePath(toolPath).then(
      () => false,
      (e: unknown) => ESCAPING.test(e instanceof Error ? e.message : String(e))
    )
  return {
    base,
    memdirBase,
    memoryDir,
    referenceDir,
    root: { memoryDir, teamEnabled },
    viaReference,
    referenceEscapes,
    cleanup: () => fs.rmSync(base, { recursive: true, force: true })
  }
}

/** A world as the model sees it: its files (with their text), directories and links; memdir's own state aside. */
const modelView = (dir: string): string =>
  JSON.stringify(
    [...snapshot(dir)].filter(([key]) =>
      !key.split("/").some((segment) => segment.startsWith(".")) && key !== "MEMORY.md" && key !== "team/MEMORY.md"
    ).map(([key, entry]) => [key, entry.kind, entry.kind === "file" ? entry.content : ""])
  )

describe("MemoryToolBackend fuzzed against BetaLocalFilesystemMemoryTool", () => {
  it(
    "random command sequences: nothing the reference refuses as escaping, nothing outside, every file indexed",
    { timeout: 60_000 },
    () =>
      FastCheck.assert(
        FastCheck.asyncProperty(
          FastCheck.array(command, { minLength: 1, maxLength: 10 }),
          FastCheck.oneof({ arbitrary: FastCheck.constant(true), weight: 2 }, {
            arbitrary: FastCheck.constant(false),
            weight: 1
          }),
          (commands, teamEnabled) =>
            Effect.runPromise(
              Effect.gen(function*() {
                const backend = yield* Effect.promise(() => runtime.runPromise(MemoryToolBackend.MemoryToolBackend))
                const w = yield* Effect.acquireRelease(
                  Effect.promise(() => worlds(teamEnabled)),
                  (w) => Effect.sync(w.cleanup)
                )
                const before = snapshot(w.memdirBase)
                const memoryKey = path.relative(w.memdirBase, w.memoryDir).split(path.sep).join("/")
                for (const [i, input] of [...seeded(teamEnabled), ...commands].entries()) {
                  const at = `command ${i} ${JSON.stringify(input)}`
                  const escapes = yield* Effect.promise(() => Promise.all(pathsOf(input).map(w.referenceEscapes)))
                  const inStep = modelView(w.memoryDir) === modelView(w.referenceDir)
                  const expected = yield* Effect.promise(() => w.viaReference(input))
                  const answer = yield* backend.answer(w.root, input).pipe(
                    Effect.timeoutOrElse({
                      duration: HANG,
                      orElse: () => Effect.fail(new Error(`${at}: no answer within ${Duration.format(HANG)}`))
                    })
                  )

                  if (escapes.some((escaped) => escaped)) {
                    assert.isTrue(
                      answer.is_error,
                      `${at}: the reference refuses it as escaping, memdir answered ${answer.content}`
                    )
                  }
                  if (!answer.is_error && input.command === "create") {
                    const key = Result.getOrThrow(MemoryToolBackend.keyOfToolPath(String(input.path)))
                    assert.strictEqual(
                      fs.readFileSync(path.join(w.memoryDir, key), "utf8"),
                      input.file_text,
                      `${at}: verbatim`
                    )
                  }
                  if (inStep && !answer.is_error && !expected.is_error) {
                    assert.deepStrictEqual(answer, expected, `${at}: both accept it, from the same files`)
                  }
                }
                assert.deepStrictEqual(
                  changesOutside(before, snapshot(w.memdirBase), memoryKey),
                  [],
                  "outside the memory dir"
                )
                assert.deepStrictEqual(unsoundness(w.memoryDir, teamEnabled, true), [], "the memory directory")
              }).pipe(Effect.scoped)
            )
        ),
        { numRuns: 30 }
      )
  )
})
