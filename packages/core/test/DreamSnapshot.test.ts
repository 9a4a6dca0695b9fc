import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { createHash } from "node:crypto"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import {
  diffSnapshots,
  discardUnfinishedTrace,
  keepTrace,
  reserveTrace,
  SNAPSHOT_COPY_MAX_BYTES,
  SNAPSHOT_MAX_FILE_BYTES,
  snapshotMemoryDir
} from "../src/dream/snapshot.js"
import * as MemoryFs from "../src/MemoryFs.js"

const NOW = Date.parse("2026-12-03T09:00:00.000Z")

/** Over `SNAPSHOT_MAX_FILE_BYTES`, with bytes that are not UTF-8 (a lone continuation byte, an invalid lead byte). */
const largeBytes = (): Uint8Array => {
  const bytes = new Uint8Array(SNAPSHOT_MAX_FILE_BYTES + 4096)
  for (let i = 0; i < bytes.length; i++) bytes[i] = 0x61 + (i % 26)
  bytes[10] = 0x80
  bytes[11] = 0xff
  bytes[bytes.length - 1] = 0xc3
  return bytes
}

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")

describe("snapshotMemoryDir (in memory)", () => {
  const memoryDir = "/home/u/memory"
  const seed: MemoryFs.MemoryFsSeed = {
    [`${memoryDir}/MEMORY.md`]: "- [a](a.md) — a\n",
    [`${memoryDir}/a.md`]: "# a\n",
    [`${memoryDir}/sub/b.md`]: "# b\n",
    [`${memoryDir}/notes.txt`]: "not a memory\n",
    [`${memoryDir}/.hidden.md`]: "hidden\n",
    [`${memoryDir}/logs/2026-12-03.md`]: "log\n",
    [`${memoryDir}/team/shared.md`]: "team\n",
    "/elsewhere/secret.md": "outside the memory directory\n",
    "/elsewhere/dir/inner.md": "outside too\n",
    [`${memoryDir}/link.md`]: { symlink: "/elsewhere/secret.md" },
    [`${memoryDir}/linked-dir`]: { symlink: "/elsewhere/dir" },
    [`${memoryDir}/dangling.md`]: { symlink: "/nowhere.md" }
  }

  it.effect("only *.md files it may touch: links (to files or directories) skipped, never followed", () =>
    Effect.gen(function*() {
      const snapshot = yield* snapshotMemoryDir(memoryDir)
      assert.deepStrictEqual([...snapshot.keys()].sort(), ["MEMORY.md", "a.md", "sub/b.md"])
      assert.strictEqual(snapshot.get("a.md")?.content, "# a\n")
    }).pipe(Effect.provide(MemoryFs.layerMemory(seed))))

  it.effect("a large memory: its copy is byte for byte (invalid UTF-8 included), 0600, digested from the same bytes", () =>
    Effect.gen(function*() {
      const fs = yield* MemoryFs.MemoryFs
      const bytes = largeBytes()
      yield* fs.writeFileAtomic(`${memoryDir}/big.md`, bytes)
      const copies = `${memoryDir}/.dream/stamp/.large`
      const snapshot = yield* snapshotMemoryDir(memoryDir, { copyLargeTo: copies })
      const big = snapshot.get("big.md")!
      assert.strictEqual(big.content, undefined)
      assert.strictEqual(big.size, bytes.length)
      assert.strictEqual(big.digest, sha256(bytes))
      assert.strictEqual(big.copy, `${copies}/big.md`)
      const copied = yield* fs.readBytes(big.copy!, { maxBytes: SNAPSHOT_COPY_MAX_BYTES })
      assert.deepStrictEqual(copied.bytes, bytes)
      assert.strictEqual(copied.info.mode, 0o600)
      // the snapshot after a change of one byte (same size) sees an update
      const changed = bytes.slice()
      changed[12] = 0x7a
      yield* fs.writeFileAtomic(`${memoryDir}/big.md`, changed)
      const after = yield* snapshotMemoryDir(memoryDir)
      assert.deepStrictEqual(diffSnapshots(snapshot, after).updated.map((u) => u.file), ["big.md"])
    }).pipe(Effect.provide(MemoryFs.layerMemory(seed))))
})

describe("snapshotMemoryDir and the trace (real files)", () => {
  const withDir = <A, E, R>(use: (memoryDir: string, root: string) => Effect.Effect<A, E, R>) =>
    Effect.acquireUseRelease(
      Effect.sync(() => NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "memdir-snapshot-")))),
      (root) => {
        const memoryDir = NodePath.join(root, "memory")
        NodeFs.mkdirSync(memoryDir)
        return use(memoryDir, root)
      },
      (root) => Effect.sync(() => NodeFs.rmSync(root, { recursive: true, force: true }))
    )
  const live = Layer.mergeAll(MemoryFs.layer, NodeServices.layer)

  it.effect("a deleted large memory's previous version is kept byte for byte; a link is neither read nor copied", () =>
    withDir((memoryDir, root) =>
      Effect.gen(function*() {
        const bytes = largeBytes()
        NodeFs.writeFileSync(NodePath.join(memoryDir, "big.md"), bytes)
        NodeFs.writeFileSync(NodePath.join(memoryDir, "small.md"), "# small\n")
        const outside = NodePath.join(root, "outside")
        NodeFs.mkdirSync(outside)
        NodeFs.writeFileSync(NodePath.join(outside, "huge.md"), bytes)
        NodeFs.symlinkSync(NodePath.join(outside, "huge.md"), NodePath.join(memoryDir, "link.md"))
        NodeFs.symlinkSync(outside, NodePath.join(memoryDir, "linked"))

        const trace = yield* reserveTrace(memoryDir, NOW)
        const before = yield* snapshotMemoryDir(memoryDir, { copyLargeTo: trace.largeCopies })
        assert.deepStrictEqual([...before.keys()].sort(), ["big.md", "small.md"])
        assert.deepStrictEqual(NodeFs.readdirSync(trace.largeCopies), ["big.md"])

        NodeFs.rmSync(NodePath.join(memoryDir, "big.md"))
        const after = yield* snapshotMemoryDir(memoryDir)
        const diff = diffSnapshots(before, after)
        assert.deepStrictEqual(diff.deleted.map((d) => d.file), ["big.md"])
        const kept = yield* keepTrace(trace, before, diff)
        assert.strictEqual(kept.backups.get("big.md"), `${trace.backupDir}/big.md`)
        const backup = NodePath.join(trace.absolute, "big.md")
        assert.isTrue(Buffer.from(bytes).equals(NodeFs.readFileSync(backup)))
        assert.strictEqual(NodeFs.statSync(backup).mode & 0o777, 0o600)
        // the copies are gone once kept; what the links lead to was never touched
        assert.isFalse(NodeFs.existsSync(trace.largeCopies))
        assert.deepStrictEqual(NodeFs.readdirSync(outside), ["huge.md"])
      })
    ).pipe(Effect.provide(live)))

  it.effect("an interrupted dream's copies go, and the trace directory with them when they were all it held", () =>
    withDir((memoryDir) =>
      Effect.gen(function*() {
        NodeFs.writeFileSync(NodePath.join(memoryDir, "big.md"), largeBytes())
        const trace = yield* reserveTrace(memoryDir, NOW)
        yield* snapshotMemoryDir(memoryDir, { copyLargeTo: trace.largeCopies })
        assert.isTrue(NodeFs.existsSync(trace.largeCopies))
        yield* discardUnfinishedTrace(trace)
        assert.isFalse(NodeFs.existsSync(trace.absolute))
        // never created: nothing to do
        yield* discardUnfinishedTrace(yield* reserveTrace(memoryDir, NOW + 1000))
      })
    ).pipe(Effect.provide(live)))

  it.effect("a memory file past the copy bound fails the snapshot with a MemoryIoError at once, never reading it", () =>
    withDir((memoryDir) =>
      Effect.gen(function*() {
        const file = NodePath.join(memoryDir, "huge.md")
        // sparse: instant to make, whatever its size
        NodeFs.closeSync(NodeFs.openSync(file, "w"))
        NodeFs.truncateSync(file, SNAPSHOT_COPY_MAX_BYTES + 1)
        const error = yield* Effect.flip(snapshotMemoryDir(memoryDir, { copyLargeTo: NodePath.join(memoryDir, ".c") }))
        assert.strictEqual(error._tag, "MemoryIoError")
        assert.strictEqual(error.path, file)
        assert.include(error.detail, `larger than ${SNAPSHOT_COPY_MAX_BYTES} bytes`)
        assert.isFalse(NodeFs.existsSync(NodePath.join(memoryDir, ".c")))
      })
    ).pipe(Effect.provide(live)))
})
