/**
 * The head reader thread (internal/headReader.ts), on real files: with the thread running, `visitHeads` gives the
 * visitor exactly the calls the calling thread alone gives (same files, order, mtimes, bytes, failures), for every
 * kind of file it must leave to the calling thread (FIFO, link, directory, gone, larger than its slot, exactly its
 * slot); `mtimeMany` gives the same mtimes and failures; a visitor that throws mid-batch leaves the next batch
 * intact; and a full scan, and a capped one, are the same with and without it. Each test checks that the thread did
 * work, so none passes with the thread idle.
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import { execFileSync } from "node:child_process"
import * as nodeFs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { type HeadReader, makeHeadReader, MIN_BATCH, SLOT_BYTES } from "../src/internal/headReader.js"
import { HEAD_FLAGS, makeMemoryFsNode } from "../src/internal/memoryFsNode.js"
import * as MemoryFs from "../src/MemoryFs.js"
import * as Scanner from "../src/Scanner.js"

const scratch = Effect.acquireRelease(
  Effect.sync(() => nodeFs.realpathSync(nodeFs.mkdtempSync(path.join(os.tmpdir(), "memdir-head-reader-")))),
  (dir) => Effect.sync(() => nodeFs.rmSync(dir, { recursive: true, force: true }))
)

/** A reader whose thread is running: the first batch starts it, then it is waited for (20 s at most). */
const runningReader = (somePaths: ReadonlyArray<string>): Effect.Effect<HeadReader> =>
  Effect.promise(async () => {
    const reader = makeHeadReader({ flags: HEAD_FLAGS, startAfterFiles: 0, startAfterMs: 0 })
    const ignore = { file: () => undefined, failed: () => undefined }
    reader.visit(somePaths, ignore, () => undefined)
    for (let waited = 0; !reader.isRunning(); waited += 10) {
      if (waited > 20_000) throw new Error("the head reader thread did not start within 20 s")
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    return reader
  })

/** Deterministic text of `size` bytes: lines, so a head of it reads like a file's. */
const textOf = (size: number, seed: number) => {
  let text = ""
  for (let line = 0; text.length < size; line++) {
    text += `line ${line} of file ${seed}: ${"x".repeat((seed + line) % 90)}\n`
  }
  return text.slice(0, size)
}

/** Files of every size and kind a head read meets, listed in a shuffled order, specials among the plain ones. */
const plant = (dir: string): Array<string> => {
  const special: Array<string> = []
  const file = (name: string, content: string | Buffer) => {
    const at = path.join(dir, name)
    nodeFs.writeFileSync(at, content)
    return at
  }
  for (const size of [0, 1, 100, 4095, 4096, 4097, SLOT_BYTES - 1, SLOT_BYTES, SLOT_BYTES + 1, 20_000, 70_000]) {
    special.push(file(`size-${size}.md`, textOf(size, size)))
  }
  special.push(file("ünïcødé ✓.md", "---\nname: ü\n---\nbody ✓\n"))
  special.push(file("名前.md", Buffer.from([0xe5, 0x90, 0x8d, 0xff, 0xfe, 0x0a])))
  execFileSync("mkfifo", [path.join(dir, "pipe.md")])
  special.push(path.join(dir, "pipe.md"))
  nodeFs.symlinkSync(special[3]!, path.join(dir, "link.md"))
  special.push(path.join(dir, "link.md"))
  nodeFs.mkdirSync(path.join(dir, "dir.md"))
  special.push(path.join(dir, "dir.md"))
  special.push(path.join(dir, "gone.md"))
  // enough files for a batch the thread takes (MIN_BATCH)
  const plain = Array.from(
    { length: MIN_BATCH + 40 },
    (_, i) => file(`plain-${i}.md`, textOf(200 + (i * 97) % 3800, i))
  )
  // specials spread over the batch, front to back: the thread takes from the back, the caller from the front
  const listed: Array<string> = []
  plain.forEach((p, i) => {
    listed.push(p)
    if (i % 13 === 3 && special.length > 0) listed.push(special.pop()!)
  })
  listed.push(...special)
  return listed
}

type Call =
  | { readonly index: number; readonly mtime: number; readonly size: number; readonly bytes: string }
  | { readonly index: number; readonly failed: string }

/** Reads each head as the scanner does (4 KiB, then doubling while the read fills what was asked) and records it. */
const record = (fs: MemoryFs.MemoryFs["Type"], paths: ReadonlyArray<string>, throwAt?: number) => {
  const calls: Array<Call> = []
  const buffer = Buffer.alloc(65_537)
  return fs.visitHeads(paths, {
    file: (index, mtime, read, size) => {
      if (index === throwAt) throw new Error(`visitor stopped at ${index}`)
      let length = 0
      for (let asked = 4096; length < buffer.length; asked = Math.min(length, buffer.length - length)) {
        const got = read(buffer, length, asked)
        length += got
        if (got < asked) break
      }
      calls.push({ index, mtime, size, bytes: buffer.toString("hex", 0, length) })
    },
    failed: (index, error) => {
      calls.push({ index, failed: `${error.op} ${error.reason} ${error.detail}` })
    }
  }).pipe(Effect.as(calls))
}

const oneThread = makeMemoryFsNode({ headReader: false })

/** The planted files in a scratch directory, a running reader, and a live `MemoryFs` that uses it. */
const plantedWithReader = Effect.gen(function*() {
  const listed = plant(yield* scratch)
  const reader = yield* runningReader(listed)
  return { listed, reader, withThread: makeMemoryFsNode({ headReader: reader }) }
})

/** A scan of `dir` (with `options`) by the live scanner over `fs`. */
const scanWith = (fs: MemoryFs.MemoryFs["Type"], dir: string, options?: Scanner.ScanOptions) =>
  Effect.flatMap(Scanner.Scanner, (scanner) => scanner.scan(dir, options)).pipe(
    Effect.provide(Scanner.layer.pipe(
      Layer.provide(Layer.merge(Layer.succeed(MemoryFs.MemoryFs, fs), NodeContext.layer))
    ))
  )

describe("head reader thread", () => {
  it.scoped("gives the visitor the calling thread's calls for every kind of file, batch after batch", () =>
    Effect.gen(function*() {
      const { listed, reader, withThread } = yield* plantedWithReader
      const expected = yield* record(oneThread, listed)
      assert.isTrue(expected.some((call) => "failed" in call), "the listing has failures")
      for (let round = 0; round < 8 || (round < 40 && reader.threadReads() === 0); round++) {
        assert.deepStrictEqual(yield* record(withThread, listed), expected, `round ${round}`)
      }
      assert.isAbove(reader.threadReads(), 0, "the thread read none of the files")
    }))

  it.scoped("is not started by a process younger than its start age, however many files it reads", () =>
    Effect.gen(function*() {
      const dir = yield* scratch
      const listed = plant(dir)
      const young = makeHeadReader({
        flags: HEAD_FLAGS,
        startAfterFiles: 0,
        startAfterMs: process.uptime() * 1000 + 60_000
      })
      const withYoung = makeMemoryFsNode({ headReader: young })
      for (let round = 0; round < 20; round++) yield* record(withYoung, listed)
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 200)))
      yield* record(withYoung, listed)
      assert.isFalse(young.isRunning())
      assert.strictEqual(young.threadReads(), 0)
    }))

  it.scoped("a visitor that throws mid-batch leaves the next batch whole", () =>
    Effect.gen(function*() {
      const { listed, reader, withThread } = yield* plantedWithReader
      const stopped = yield* Effect.exit(record(withThread, listed, 2))
      assert.isTrue(Exit.isFailure(stopped), "the visitor's throw reaches the caller")
      const others = [...listed].reverse()
      const expected = yield* record(oneThread, others)
      const before = reader.threadReads()
      // the batches after it are whole; on a busy machine the caller may finish a batch before the thread claims
      // any of it (it never waits), so batches follow until the thread has taken part in one (20 at most)
      for (let round = 0; round < 20 && reader.threadReads() === before; round++) {
        assert.deepStrictEqual(yield* record(withThread, others), expected, `batch ${round} after the throw`)
      }
      assert.isAbove(reader.threadReads(), before, "the thread read none of 20 batches after the throw")
    }))

  it.scoped("gives the calling thread's lstat mtimes and failures, batch after batch", () =>
    Effect.gen(function*() {
      const dir = yield* scratch
      const listed = plant(dir)
      // a path through a file: ENOTDIR, a failure the reader leaves to the caller
      const paths = [...listed, path.join(listed[0]!, "below.md")]
      const reader = yield* runningReader(paths)
      const withThread = makeMemoryFsNode({ headReader: reader })
      const shown = (fs: MemoryFs.MemoryFs["Type"]) =>
        Effect.map(
          fs.mtimeMany(paths),
          (infos) => infos.map((info) => typeof info === "number" ? info : `${info.op} ${info.reason} ${info.detail}`)
        )
      const expected = yield* shown(oneThread)
      assert.include(expected, "lstat NotFound ENOENT")
      assert.include(expected, "lstat NotDirectory ENOTDIR")
      const before = reader.threadReads()
      for (let round = 0; round < 8 || (round < 40 && reader.threadReads() === before); round++) {
        assert.deepStrictEqual(yield* shown(withThread), expected, `round ${round}`)
      }
      assert.isAbove(reader.threadReads(), before, "the thread stat-ed none of the files")
    }))

  it.scoped("a scan is the same with the thread as without", () =>
    Effect.gen(function*() {
      const dir = yield* scratch
      for (let i = 0; i < 1500; i++) {
        const body = i % 50 === 7 ? "---\nname: [unclosed\n---\nbad yaml\n" : i % 50 === 9 ?
          "no header at all\n" :
          `---\nname: memory ${i}\ndescription: about thing ${i % 13}\ntype: ${
            i % 2 === 0 ? "user" : "project"
          }\n---\n` +
          textOf(100 + (i * 31) % 3000, i)
        nodeFs.writeFileSync(path.join(dir, `m-${i}.md`), body)
        nodeFs.utimesSync(path.join(dir, `m-${i}.md`), 1_700_000_000 + (i % 40), 1_700_000_000 + (i % 40))
      }
      execFileSync("mkfifo", [path.join(dir, "pipe.md")])
      const names = nodeFs.readdirSync(dir).map((name) => path.join(dir, name))
      const reader = yield* runningReader(names)
      const withThread = makeMemoryFsNode({ headReader: reader })
      // scans follow until the thread has taken part (on a busy machine the caller, who never waits for it, may
      // finish a batch alone), each the same as the calling thread's alone
      const sameUntilTheThreadReads = (options: Scanner.ScanOptions | undefined, what: string) =>
        Effect.gen(function*() {
          const expected = yield* scanWith(oneThread, dir, options)
          const before = reader.threadReads()
          for (let round = 0; round < 10 && reader.threadReads() === before; round++) {
            assert.deepStrictEqual(yield* scanWith(withThread, dir, options), expected, `${what}, scan ${round}`)
          }
          assert.isAbove(reader.threadReads(), before, `the thread took no part in 10 ${what}s`)
          return expected
        })
      const full = yield* sameUntilTheThreadReads(undefined, "full scan")
      assert.strictEqual(full.memories.length, 1500 - 30)
      // a recall's capped scan: every file stat-ed, the newest 200 heads read
      yield* sameUntilTheThreadReads({ limit: 200 }, "capped scan")
    }))
})
