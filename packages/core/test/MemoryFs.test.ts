/**
 * The `MemoryFs` contract: one suite, run against the live layer (a real temp directory) and the in-memory one,
 * so the two answer alike (the way Effect's platform tests a `KeyValueStore` against each implementation).
 * Each world starts with the same planted tree: a file outside the root, a link to it, a FIFO and a directory.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { execFileSync } from "node:child_process"
import * as nodeFs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as MemoryFs from "../src/MemoryFs.js"

interface World {
  /** The scratch root (absolute). */
  readonly root: string
  readonly layer: Layer.Layer<MemoryFs.MemoryFs>
}

/** root/out.md → ../outside/secret.md, root/pipe (FIFO), root/dir/a.md, ../outside/secret.md. */
const liveWorld = Effect.acquireRelease(
  Effect.sync((): World & { readonly scratch: string } => {
    const scratch = nodeFs.realpathSync(nodeFs.mkdtempSync(path.join(os.tmpdir(), "memdir-fs-contract-")))
    const root = path.join(scratch, "root")
    nodeFs.mkdirSync(path.join(root, "dir"), { recursive: true })
    nodeFs.mkdirSync(path.join(scratch, "outside"))
    nodeFs.writeFileSync(path.join(scratch, "outside", "secret.md"), "KEY")
    nodeFs.writeFileSync(path.join(root, "dir", "a.md"), "a")
    nodeFs.symlinkSync(path.join(scratch, "outside", "secret.md"), path.join(root, "out.md"))
    execFileSync("mkfifo", [path.join(root, "pipe")])
    return { scratch, root, layer: MemoryFs.layer }
  }),
  (world) => Effect.sync(() => nodeFs.rmSync(world.scratch, { recursive: true, force: true }))
)

const memoryWorld = Effect.succeed<World>({
  root: "/s/root",
  layer: MemoryFs.layerMemory({
    "/s/outside/secret.md": "KEY",
    "/s/root/dir/a.md": "a",
    "/s/root/out.md": { symlink: "/s/outside/secret.md" },
    "/s/root/pipe": { fifo: true }
  })
})

const contract = (name: string, world: Effect.Effect<World, never, Scope.Scope>) =>
  describe(`MemoryFs contract: ${name}`, () => {
    /** Runs `body` with the world's root, the `MemoryFs` of that world provided. */
    const inWorld = <A, E>(body: (root: string, fs: MemoryFs.MemoryFs["Service"]) => Effect.Effect<A, E>) =>
      Effect.gen(function*() {
        const { layer, root } = yield* world
        return yield* Effect.flatMap(MemoryFs.MemoryFs, (fs) => body(root, fs)).pipe(Effect.provide(layer))
      })

    it.effect("reads refuse a link in the last component, a FIFO (without blocking), a file over the bound", () =>
      inWorld((root, fs) =>
        Effect.gen(function*() {
          assert.strictEqual((yield* fs.readFile(`${root}/dir/a.md`, { maxBytes: 10 })).text, "a")
          const link = yield* Effect.flip(fs.readFile(`${root}/out.md`, { maxBytes: 10 }))
          assert.strictEqual(link.reason, "SymbolicLink")
          const pipe = yield* Effect.flip(fs.readBytes(`${root}/pipe`, { maxBytes: 10 }))
          assert.deepStrictEqual([pipe.reason, pipe.detail], ["NotRegularFile", "a FIFO"])
          yield* fs.writeFileAtomic(`${root}/big`, "y".repeat(11))
          assert.strictEqual((yield* Effect.flip(fs.readFile(`${root}/big`, { maxBytes: 10 }))).reason, "TooLarge")
          const missing = yield* Effect.flip(fs.readFile(`${root}/none`, { maxBytes: 10 }))
          assert.strictEqual(missing.reason, "NotFound")
        })
      ))

    it.effect("readBytes gives the bytes back exactly, invalid UTF-8 included", () =>
      inWorld((root, fs) =>
        Effect.gen(function*() {
          const bytes = Uint8Array.from([0x44, 0x49, 0x52, 0x43, 0xff, 0x00, 0xc3, 0x28])
          yield* fs.writeFileAtomic(`${root}/index.bin`, bytes)
          const read = yield* fs.readBytes(`${root}/index.bin`, { maxBytes: 100 })
          assert.deepStrictEqual([...read.bytes], [...bytes])
          assert.strictEqual(read.info.size, bytes.length)
        })
      ))

    it.effect("a written file is private (0600) and owned by the writer; a made directory is 0700", () =>
      inWorld((root, fs) =>
        Effect.gen(function*() {
          yield* fs.writeFileAtomic(`${root}/new/deep/f.md`, "x")
          const file = yield* fs.lstat(`${root}/new/deep/f.md`)
          assert.deepStrictEqual([file.kind, file.mode, file.size], ["File", 0o600, 1])
          if (typeof process.getuid === "function") assert.strictEqual(file.uid, process.getuid())
          assert.strictEqual((yield* fs.lstat(`${root}/new/deep`)).mode, 0o700)
        })
      ))

    it.effect("an exclusive write creates a missing file whole and refuses to replace anything", () =>
      inWorld((root, fs) =>
        Effect.gen(function*() {
          yield* fs.writeFileAtomic(`${root}/day.md`, "# header\n", { exclusive: true })
          assert.strictEqual((yield* fs.readFile(`${root}/day.md`, { maxBytes: 100 })).text, "# header\n")
          const again = yield* Effect.flip(fs.writeFileAtomic(`${root}/day.md`, "other", { exclusive: true }))
          assert.strictEqual(again.reason, "AlreadyExists")
          const onLink = yield* Effect.flip(fs.writeFileAtomic(`${root}/out.md`, "other", { exclusive: true }))
          assert.strictEqual(onLink.reason, "AlreadyExists")
          assert.strictEqual((yield* fs.readFile(`${root}/day.md`, { maxBytes: 100 })).text, "# header\n")
          yield* fs.writeFileAtomic(`${root}/owner.json`, "{}", { exclusive: true, durable: false })
          assert.strictEqual((yield* fs.readFile(`${root}/owner.json`, { maxBytes: 100 })).text, "{}")
          const names = (yield* fs.readDirectory(root)).map((entry) => entry.name)
          assert.deepStrictEqual(names.filter((name) => name.endsWith(".tmp")), [], "no temp file is left")
        })
      ))

    it.effect("remove takes a link, never its target; a directory only with `recursive`, links inside unfollowed", () =>
      inWorld((root, fs) =>
        Effect.gen(function*() {
          yield* fs.remove(`${root}/out.md`)
          assert.isFalse(yield* fs.exists(`${root}/out.md`))
          const outside = path.posix.join(path.posix.dirname(root), "outside", "secret.md")
          assert.strictEqual((yield* fs.readFile(outside, { maxBytes: 10 })).text, "KEY")
          const dir = yield* Effect.flip(fs.remove(`${root}/dir`))
          assert.strictEqual(dir.reason, "NotRegularFile")
          yield* fs.writeFileAtomic(`${root}/dir/sub/b.md`, "b")
          yield* fs.remove(`${root}/dir`, { recursive: true })
          assert.isFalse(yield* fs.exists(`${root}/dir`))
          assert.strictEqual((yield* Effect.flip(fs.remove(`${root}/dir`, { recursive: true }))).reason, "NotFound")
          assert.isTrue(yield* fs.exists(outside))
        })
      ))

    it.effect("setModified sets the time lstat reports", () =>
      inWorld((root, fs) =>
        Effect.gen(function*() {
          const at = Date.UTC(2026, 0, 2, 3, 4, 5)
          yield* fs.setModified(`${root}/dir/a.md`, at)
          assert.strictEqual((yield* fs.lstat(`${root}/dir/a.md`)).mtimeMs, at)
          assert.strictEqual((yield* Effect.flip(fs.setModified(`${root}/none`, at))).reason, "NotFound")
        })
      ))

    it.effect("rename replaces a file; a directory replaces only an empty one (AlreadyExists onto entries)", () =>
      inWorld((root, fs) =>
        Effect.gen(function*() {
          yield* fs.writeFileAtomic(`${root}/x.md`, "x")
          yield* fs.rename(`${root}/x.md`, `${root}/dir/a.md`)
          assert.strictEqual((yield* fs.readFile(`${root}/dir/a.md`, { maxBytes: 10 })).text, "x")
          yield* fs.makeDirectory(`${root}/staging`)
          yield* fs.writeFileAtomic(`${root}/staging/owner.json`, "{}")
          const held = yield* Effect.flip(fs.rename(`${root}/staging`, `${root}/dir`))
          assert.strictEqual(held.reason, "AlreadyExists")
          yield* fs.makeDirectory(`${root}/empty`)
          yield* fs.rename(`${root}/staging`, `${root}/empty`)
          assert.strictEqual((yield* fs.readFile(`${root}/empty/owner.json`, { maxBytes: 10 })).text, "{}")
          assert.isFalse(yield* fs.exists(`${root}/staging`))
          yield* fs.rename(`${root}/empty`, `${root}/moved`)
          assert.deepStrictEqual((yield* fs.readDirectory(`${root}/moved`)).map((e) => e.name), ["owner.json"])
        })
      ))

    it.effect("makeDirectory makes missing parents (0700), accepts an existing one, refuses a file in the way", () =>
      inWorld((root, fs) =>
        Effect.gen(function*() {
          yield* fs.makeDirectory(`${root}/p/q/r`)
          assert.deepStrictEqual([(yield* fs.lstat(`${root}/p`)).mode, (yield* fs.lstat(`${root}/p/q/r`)).mode], [
            0o700,
            0o700
          ])
          yield* fs.makeDirectory(`${root}/dir`)
          const file = yield* Effect.flip(fs.makeDirectory(`${root}/dir/a.md/x`))
          assert.strictEqual(file.reason, "NotDirectory")
        })
      ))

    it.effect("append creates a private file and adds to it; a FIFO or a link is refused", () =>
      inWorld((root, fs) =>
        Effect.gen(function*() {
          yield* fs.append(`${root}/log.md`, "one\n")
          yield* fs.append(`${root}/log.md`, "two\n")
          assert.strictEqual((yield* fs.readFile(`${root}/log.md`, { maxBytes: 100 })).text, "one\ntwo\n")
          assert.strictEqual((yield* fs.lstat(`${root}/log.md`)).mode, 0o600)
          assert.strictEqual((yield* Effect.flip(fs.append(`${root}/pipe`, "x"))).reason, "NotRegularFile")
          assert.strictEqual((yield* Effect.flip(fs.append(`${root}/out.md`, "x"))).reason, "SymbolicLink")
        })
      ))
  })

contract("live (node:fs, a temp directory)", liveWorld)
contract("in memory", memoryWorld)
