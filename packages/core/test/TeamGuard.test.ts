/**
 * TeamGuard against real attacks on a real file system: symlinks, FIFOs, sockets, devices, hard links, races.
 *
 * These tests run as root on CI machines, so none of them may be able to damage the machine if the guard is
 * wrong. Every test works in a sandbox: `team/` sits four levels deep inside a fresh temp dir, every link points
 * into another directory of that same temp dir (a fake `etc`, a `team-evil` sibling), and after each attack the
 * test asserts that everything outside `team/` is byte-for-byte what it was. Keys are validated without writing
 * wherever a write adds nothing.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as FastCheck from "fast-check"
import { execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as Containment from "../src/Containment.js"
import { MemoryNotFoundError, PathTraversalError } from "../src/Errors.js"
import { readTeamFile, resolveTeamPath, writeTeamFile } from "../src/internal/team/guardFs.js"
import { MEMORY_MAX_BYTES } from "../src/Memory.js"
import * as MemoryFs from "../src/MemoryFs.js"
import * as TeamGuard from "../src/TeamGuard.js"

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures")

interface Sandbox {
  readonly base: string
  readonly team: string
  /** A fake `/etc` outside team/, holding `passwd` and `x.md`. */
  readonly etc: string
  /** A sibling whose name starts like the team dir's. */
  readonly teamEvil: string
  /** Everything outside team/: relative path → kind and content (or link target). */
  readonly outside: () => Map<string, string>
  readonly cleanup: () => void
}

const snapshot = (root: string, skip: string): Map<string, string> => {
  const seen = new Map<string, string>()
  const visit = (dir: string) => {
    for (const name of fs.readdirSync(dir).sort()) {
      const full = path.join(dir, name)
      if (full === skip) continue
      const rel = path.relative(root, full)
      const stats = fs.lstatSync(full)
      if (stats.isSymbolicLink()) seen.set(rel, `link ${fs.readlinkSync(full)}`)
      else if (stats.isDirectory()) {
        seen.set(rel, "dir")
        visit(full)
      } else if (stats.isFile()) seen.set(rel, `file ${fs.readFileSync(full, "utf8")}`)
      else seen.set(rel, "special")
    }
  }
  visit(root)
  return seen
}

const makeSandbox = (): Sandbox => {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "memdir-teamguard-")))
  const memory = path.join(base, "l1", "l2", "l3", "memory")
  const team = path.join(memory, "team")
  const etc = path.join(base, "etc")
  const teamEvil = path.join(memory, "team-evil")
  fs.mkdirSync(team, { recursive: true })
  fs.mkdirSync(etc)
  fs.mkdirSync(teamEvil)
  fs.writeFileSync(path.join(etc, "passwd"), "root:x:0:0\n")
  fs.writeFileSync(path.join(etc, "x.md"), "outside\n")
  fs.writeFileSync(path.join(teamEvil, "x.md"), "evil sibling\n")
  fs.writeFileSync(path.join(memory, "MEMORY.md"), "- [private](p.md) — private\n")
  return {
    base,
    team,
    etc,
    teamEvil,
    outside: () => snapshot(base, team),
    cleanup: () => fs.rmSync(base, { recursive: true, force: true })
  }
}

/** Runs `body` in a fresh sandbox, then asserts nothing outside team/ changed. */
/** The live file system and containment the guard's operations run on. */
const guardParts = Containment.layer.pipe(Layer.provideMerge(MemoryFs.layer))

const inSandbox = <A, E, R>(body: (box: Sandbox) => Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(makeSandbox),
    (box) =>
      Effect.gen(function*() {
        const before = box.outside()
        const result = yield* body(box)
        assert.deepStrictEqual([...box.outside()], [...before], "something outside team/ changed")
        return result
      }),
    (box) => Effect.sync(box.cleanup)
  ).pipe(Effect.provide(guardParts))

/** The PathTraversalError `effect` fails with; anything else (a success too) fails the test with a short message. */
const refusal = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<PathTraversalError, never, R> =>
  Effect.flatMap(Effect.result(effect), (result) => {
    if (Result.isFailure(result) && result.failure instanceof PathTraversalError) return Effect.succeed(result.failure)
    const got = Result.isFailure(result) ? result.failure : result.success
    // short: a 250 KB value in an assertion message makes the reporter crawl
    return Effect.die(new Error(`expected a PathTraversalError, got ${String(got).slice(0, 200)}`))
  })

const isInside = (root: string, candidate: string) => candidate.startsWith(root + path.sep)

const attackList = (): ReadonlyArray<{ readonly expected: string; readonly key: string }> =>
  fs.readFileSync(path.join(fixtures, "traversal-keys.txt"), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "" && !line.startsWith("#"))
    .map((line) => {
      const [expected, json] = line.split("\t") as [string, string]
      return { expected, key: JSON.parse(json) as string }
    })

describe("layers 1 and 2 (the attack list, validated without writing)", () => {
  it.effect("every key of the attack list is refused with its reason, or resolves strictly inside team/", () =>
    inSandbox((box) =>
      Effect.gen(function*() {
        const rows = attackList()
        assert.isAtLeast(rows.length, 90)
        const mismatches: Array<string> = []
        for (const { expected, key } of rows) {
          const result = yield* Effect.result(resolveTeamPath(box.team, key))
          const got = Result.isFailure(result) ? result.failure.reason : "ok"
          if (got !== expected) mismatches.push(`${JSON.stringify(key)}: expected ${expected}, got ${got}`)
          if (Result.isSuccess(result)) assert.isTrue(isInside(box.team, result.success.real), key)
        }
        assert.deepStrictEqual(mismatches, [])
        // every layer-1/2 reason is exercised by the list
        const reasons = new Set(rows.map((r) => r.expected))
        for (const reason of ["null-byte", "encoded-traversal", "unicode-traversal", "backslash", "absolute"]) {
          assert.isTrue(reasons.has(reason), reason)
        }
      })
    ))

  it("the pure checkKey agrees with the service on layers 1 and 2", () => {
    const team = "/srv/memory/team"
    assert.strictEqual(Result.getOrThrow(TeamGuard.checkKey(team, "a/b.md")), "/srv/memory/team/a/b.md")
    const reason = (key: string) =>
      Result.match(TeamGuard.checkKey(team, key), { onFailure: (e) => e.reason, onSuccess: () => "ok" })
    assert.strictEqual(reason("../team-evil/x.md"), "escapes-root")
    assert.strictEqual(reason("%2e%2e%2fx"), "encoded-traversal")
    assert.strictEqual(reason("．．／x"), "unicode-traversal")
    assert.strictEqual(reason("a\\b"), "backslash")
    assert.strictEqual(reason("C:x"), "absolute")
    assert.strictEqual(reason("a\0"), "null-byte")
  })

  it("percent-decoding: %XX runs as lenient UTF-8 (overlong forms included), %uXXXX, lone % kept", () => {
    assert.strictEqual(Containment.percentDecodeOnce("%2e%2E%2f"), "../")
    assert.strictEqual(Containment.percentDecodeOnce("%c0%ae%e0%80%ae%c0%af"), "../")
    assert.strictEqual(Containment.percentDecodeOnce("%f0%80%80%ae"), ".")
    assert.strictEqual(Containment.percentDecodeOnce("%u002e%uFF0E"), ".．")
    assert.strictEqual(Containment.percentDecodeOnce("%e6%97%a5"), "日")
    assert.strictEqual(Containment.percentDecodeOnce("50%-off %zz %"), "50%-off %zz %")
    assert.strictEqual(Containment.percentDecodeOnce("%c0x"), "%C0x")
    assert.strictEqual(Containment.percentDecodeOnce("%252e"), "%2e")
  })

  it("refusals carry the key and a detail saying what was seen", () => {
    const error = Result.flip(TeamGuard.checkKey("/srv/team", "%252e%252e%252fetc"))
    assert.isTrue(Result.isSuccess(error))
    const e = Result.getOrThrow(error)
    assert.strictEqual(e.key, "%252e%252e%252fetc")
    assert.include(e.detail ?? "", "../etc")
    assert.include(e.message, "encoded-traversal")
  })
})

describe("layer 3 (real symlinks)", () => {
  it.effect("team/evil -> etc outside: symlink-escape, also through a chain of links", () =>
    inSandbox((box) =>
      Effect.gen(function*() {
        fs.symlinkSync(box.etc, path.join(box.team, "evil"))
        fs.symlinkSync("evil", path.join(box.team, "chain"))
        fs.symlinkSync("../team-evil", path.join(box.team, "sibling"))
        for (const key of ["evil/passwd", "evil/new.md", "evil/deep/new/x.md", "chain/passwd", "sibling/x.md"]) {
          const e = yield* refusal(resolveTeamPath(box.team, key))
          assert.strictEqual(e.reason, "symlink-escape", key)
        }
        // the link itself as the last component resolves outside too
        assert.strictEqual((yield* refusal(resolveTeamPath(box.team, "evil"))).reason, "symlink-escape")
      })
    ))

  it.effect("a link that stays inside team/ resolves (its real path is inside)", () =>
    inSandbox((box) =>
      Effect.gen(function*() {
        fs.mkdirSync(path.join(box.team, "real"))
        fs.symlinkSync("real", path.join(box.team, "alias"))
        const resolved = yield* resolveTeamPath(box.team, "alias/x.md")
        assert.strictEqual(resolved.path, path.join(box.team, "alias", "x.md"))
        assert.strictEqual(resolved.real, path.join(box.team, "real", "x.md"))
      })
    ))

  it.effect("a dangling link on the way: dangling-symlink (even when its target would be inside)", () =>
    inSandbox((box) =>
      Effect.gen(function*() {
        fs.symlinkSync(path.join(box.base, "nowhere"), path.join(box.team, "dangling"))
        fs.symlinkSync("missing-inside", path.join(box.team, "dangling-in"))
        for (const key of ["dangling", "dangling/x.md", "dangling-in/a/b.md"]) {
          const e = yield* refusal(resolveTeamPath(box.team, key))
          assert.strictEqual(e.reason, "dangling-symlink", key)
          assert.include(e.detail ?? "", "->")
        }
      })
    ))

  it.effect("a symlink loop: symlink-loop", () =>
    inSandbox((box) =>
      Effect.gen(function*() {
        fs.symlinkSync("loop-b", path.join(box.team, "loop-a"))
        fs.symlinkSync("loop-a", path.join(box.team, "loop-b"))
        fs.symlinkSync("self", path.join(box.team, "self"))
        for (const key of ["loop-a/x.md", "self", "loop-b"]) {
          assert.strictEqual((yield* refusal(resolveTeamPath(box.team, key))).reason, "symlink-loop", key)
        }
      })
    ))

  it.effect("anything else that prevents verification: unverifiable (a file used as a directory)", () =>
    inSandbox((box) =>
      Effect.gen(function*() {
        fs.writeFileSync(path.join(box.team, "file.md"), "x")
        const e = yield* refusal(resolveTeamPath(box.team, "file.md/x.md"))
        assert.strictEqual(e.reason, "unverifiable")
        assert.include(e.detail ?? "", "ENOTDIR")
      })
    ))

  it.effect("containment uses real paths on both sides: a team dir reached through a link still works", () =>
    inSandbox((box) =>
      Effect.gen(function*() {
        const viaLink = path.join(box.base, "memory-link")
        fs.symlinkSync(path.dirname(box.team), viaLink)
        const resolved = yield* resolveTeamPath(path.join(viaLink, "team"), "a/b.md")
        assert.strictEqual(resolved.real, path.join(box.team, "a", "b.md"))
        // and a team dir that does not exist yet: nothing inside can be a link, keys resolve inside it
        const fresh = path.join(box.base, "l1", "new-memory", "team")
        assert.strictEqual((yield* resolveTeamPath(fresh, "x.md")).real, path.join(fresh, "x.md"))
        fs.unlinkSync(viaLink)
      })
    ))
})

const mkfifo = (file: string) => execFileSync("mkfifo", [file])

/** Unblocks a reader stuck on `fifo` (if the guard were wrong), so a failing test fails instead of hanging. */
const releaseFifo = (fifo: string) => {
  try {
    fs.closeSync(fs.openSync(fifo, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK))
  } catch {
    // ENXIO: nobody is reading, which is the expected case
  }
}

describe("reads", () => {
  it.effect("a regular file is read; a missing one is MemoryNotFoundError", () =>
    inSandbox((box) =>
      Effect.gen(function*() {
        fs.mkdirSync(path.join(box.team, "sub"))
        fs.writeFileSync(path.join(box.team, "sub", "x.md"), "team memory\n")
        assert.strictEqual(yield* readTeamFile(box.team, "sub/x.md"), "team memory\n")
        const missing = yield* Effect.flip(readTeamFile(box.team, "sub/none.md"))
        assert.instanceOf(missing, MemoryNotFoundError)
      })
    ))

  it.effect("the last component is never followed, even when the link points inside team/", () =>
    inSandbox((box) =>
      Effect.gen(function*() {
        fs.writeFileSync(path.join(box.team, "real.md"), "real\n")
        fs.symlinkSync("real.md", path.join(box.team, "alias.md"))
        const e = yield* refusal(readTeamFile(box.team, "alias.md"))
        assert.strictEqual(e.reason, "not-regular-file")
        assert.include(e.detail ?? "", "symbolic link")
      })
    ))

  it.live("a FIFO is refused at once, never waited on", () =>
    inSandbox((box) =>
      Effect.gen(function*() {
        const fifo = path.join(box.team, "pipe.md")
        mkfifo(fifo)
        const e = yield* refusal(readTeamFile(box.team, "pipe.md")).pipe(
          Effect.timeoutOrElse({
            duration: "10 seconds",
            orElse: () => Effect.fail(new Error("the read hung on a FIFO"))
          }),
          Effect.ensuring(Effect.sync(() => releaseFifo(fifo)))
        )
        assert.strictEqual(e.reason, "not-regular-file")
        assert.include(e.detail ?? "", "FIFO")
      })
    ))

  it.live("a socket is refused", () =>
    inSandbox((box) =>
      Effect.acquireUseRelease(
        Effect.callback<net.Server>((resume) => {
          const server = net.createServer()
          server.listen(path.join(box.team, "sock.md"), () => resume(Effect.succeed(server)))
        }),
        () =>
          Effect.gen(function*() {
            const e = yield* refusal(readTeamFile(box.team, "sock.md"))
            assert.strictEqual(e.reason, "not-regular-file")
          }),
        (server) =>
          Effect.callback<void>((resume) => {
            server.close(() => resume(Effect.void))
          })
      )
    ))

  it.effect("a device node is refused without being read (when this machine lets us make one)", () =>
    inSandbox((box) =>
      Effect.gen(function*() {
        const device = path.join(box.team, "null.md")
        try {
          // /dev/null's numbers: harmless even if read or written
          execFileSync("mknod", [device, "c", "1", "3"], { stdio: "ignore" })
        } catch {
          return // not root, or no mknod: the FIFO and socket tests cover the non-regular path
        }
        const e = yield* refusal(readTeamFile(box.team, "null.md"))
        assert.strictEqual(e.reason, "not-regular-file")
        assert.match(e.detail ?? "", /device|socket/)
      })
    ))

  it.effect("a directory, a hard-linked file and a file over 250,000 bytes are refused; 250,000 is fine", () =>
    inSandbox((box) =>
      Effect.gen(function*() {
        fs.mkdirSync(path.join(box.team, "dir.md"))
        assert.strictEqual((yield* refusal(readTeamFile(box.team, "dir.md"))).reason, "not-regular-file")
        fs.linkSync(path.join(box.etc, "passwd"), path.join(box.team, "hard.md"))
        const hard = yield* refusal(readTeamFile(box.team, "hard.md"))
        assert.strictEqual(hard.reason, "not-regular-file")
        assert.include(hard.detail ?? "", "hard link")
        fs.unlinkSync(path.join(box.team, "hard.md")) // restores etc/passwd's link count for the snapshot
        fs.writeFileSync(path.join(box.team, "big.md"), "x".repeat(MEMORY_MAX_BYTES + 1))
        const big = yield* refusal(readTeamFile(box.team, "big.md"))
        assert.strictEqual(big.reason, "too-large")
        fs.writeFileSync(path.join(box.team, "limit.md"), "y".repeat(MEMORY_MAX_BYTES))
        assert.strictEqual((yield* readTeamFile(box.team, "limit.md")).length, MEMORY_MAX_BYTES)
      })
    ))

  it.effect("race: a parent swapped for a link to outside after the check is caught after opening", () =>
    inSandbox((box) =>
      Effect.gen(function*() {
        const sub = path.join(box.team, "sub")
        fs.mkdirSync(sub)
        fs.writeFileSync(path.join(sub, "x.md"), "inside\n")
        const swap = () => {
          fs.renameSync(sub, path.join(box.team, "sub.old"))
          fs.symlinkSync(box.etc, sub)
        }
        const e = yield* refusal(readTeamFile(box.team, "sub/x.md", { afterResolve: swap }))
        assert.strictEqual(e.reason, "symlink-escape")
        assert.notInclude(e.message, "outside\n")
      })
    ))
})

describe("writes", () => {
  it.effect("atomic: content, 0600 file, 0700 new directories, no temp file left", () =>
    inSandbox((box) =>
      Effect.gen(function*() {
        const written = yield* writeTeamFile(box.team, "a/b/c.md", "hello\n")
        assert.strictEqual(written, path.join(box.team, "a", "b", "c.md"))
        assert.strictEqual(fs.readFileSync(written, "utf8"), "hello\n")
        assert.strictEqual(fs.statSync(written).mode & 0o777, 0o600)
        assert.strictEqual(fs.statSync(path.join(box.team, "a")).mode & 0o777, 0o700)
        yield* writeTeamFile(box.team, "a/b/c.md", "")
        assert.strictEqual(fs.readFileSync(written, "utf8"), "")
        assert.deepStrictEqual(fs.readdirSync(path.join(box.team, "a", "b")), ["c.md"])
      })
    ))

  it.effect("through a link to outside: refused, nothing written outside", () =>
    inSandbox((box) =>
      Effect.gen(function*() {
        fs.symlinkSync(box.etc, path.join(box.team, "evil"))
        for (const key of ["evil/passwd", "evil/new.md", "evil/a/b.md"]) {
          assert.strictEqual((yield* refusal(writeTeamFile(box.team, key, "pwned\n"))).reason, "symlink-escape")
        }
      })
    ))

  it.effect("race: the target becomes a link to outside after the check; rename replaces the link", () =>
    inSandbox((box) =>
      Effect.gen(function*() {
        const target = path.join(box.team, "x.md")
        const plant = () => fs.symlinkSync(path.join(box.etc, "passwd"), target)
        yield* writeTeamFile(box.team, "x.md", "team\n", { afterResolve: plant })
        assert.isTrue(fs.lstatSync(target).isFile())
        assert.strictEqual(fs.readFileSync(target, "utf8"), "team\n")
      })
    ))

  it.effect("race: the parent becomes a link to outside before its directories are made: refused", () =>
    inSandbox((box) =>
      Effect.gen(function*() {
        const plant = () => fs.symlinkSync(box.etc, path.join(box.team, "sub"))
        const e = yield* refusal(writeTeamFile(box.team, "sub/deeper/x.md", "pwned\n", { afterResolve: plant }))
        assert.strictEqual(e.reason, "symlink-escape")
      })
    ))

  it.effect("race: a link planted at the temp file's name is never followed (O_EXCL | O_NOFOLLOW)", () =>
    inSandbox((box) =>
      Effect.gen(function*() {
        const plant = (temp: string) => fs.symlinkSync(path.join(box.etc, "passwd"), temp)
        const e = yield* Effect.flip(writeTeamFile(box.team, "x.md", "pwned\n", { beforeTempOpen: plant }))
        assert.strictEqual(e._tag, "MemoryIoError")
        assert.isFalse(fs.existsSync(path.join(box.team, "x.md")))
      })
    ))

  it.effect("race: the parent swapped for a link to outside right before rename: refused, temp removed", () =>
    inSandbox((box) =>
      Effect.gen(function*() {
        const sub = path.join(box.team, "sub")
        fs.mkdirSync(sub)
        const swap = () => {
          fs.renameSync(sub, path.join(box.team, "sub.old"))
          fs.symlinkSync(box.etc, sub)
        }
        const e = yield* refusal(writeTeamFile(box.team, "sub/x.md", "pwned\n", { beforeRename: swap }))
        assert.strictEqual(e.reason, "symlink-escape")
        // the temp file is in the moved directory, still inside team/, and it is left alone (not ours to
        // find any more): nothing reached etc either way
        assert.isAtMost(fs.readdirSync(path.join(box.team, "sub.old")).length, 1)
      })
    ))

  it.effect("race: the temp file replaced by a link before rename: refused", () =>
    inSandbox((box) =>
      Effect.gen(function*() {
        const replace = (_target: string, temp: string) => {
          fs.unlinkSync(temp)
          fs.symlinkSync(path.join(box.etc, "passwd"), temp)
        }
        const e = yield* refusal(writeTeamFile(box.team, "x.md", "pwned\n", { beforeRename: replace }))
        assert.strictEqual(e.reason, "unverifiable")
        assert.isFalse(fs.existsSync(path.join(box.team, "x.md")))
      })
    ))

  it.live("a real concurrent attacker flipping the target between file and link never gets a byte outside", () =>
    inSandbox((box) =>
      Effect.gen(function*() {
        const target = path.join(box.team, "flip.md")
        const stopFile = path.join(box.base, "l1", "stop")
        // the attacker: another process that keeps replacing the target with a link to etc/passwd
        const attacker = spawn(process.execPath, [
          "-e",
          `const fs = require("fs")
           const [target, outside, stop] = process.argv.slice(1)
           let flips = 0
           const pause = new Int32Array(new SharedArrayBuffer(4))
           while (!fs.existsSync(stop)) {
             try { fs.unlinkSync(target) } catch {}
             Atomics.wait(pause, 0, 0, 1)
             try { fs.symlinkSync(outside, target); flips++ } catch {}
             Atomics.wait(pause, 0, 0, 1)
           }
           fs.writeFileSync(stop, String(flips))`,
          target,
          path.join(box.etc, "passwd"),
          stopFile
        ], { stdio: "ignore" })
        let written = 0
        for (let i = 0; i < 150; i++) {
          const result = yield* Effect.result(writeTeamFile(box.team, "flip.md", `round ${i}\n`))
          if (Result.isSuccess(result)) written++
          // a refusal is fine (the link was there at check time); an escape is not, and the snapshot catches it
          else assert.strictEqual(result.failure._tag, "PathTraversalError")
        }
        fs.writeFileSync(stopFile, "")
        yield* Effect.callback<void>((resume) => {
          attacker.on("exit", () => resume(Effect.void))
        })
        fs.unlinkSync(stopFile)
        assert.strictEqual(fs.readFileSync(path.join(box.etc, "passwd"), "utf8"), "root:x:0:0\n")
        assert.isAtLeast(written, 1)
      })
    ))
})

/** Keys built from the pieces attacks are made of, and ordinary names. */
const keyPiece = FastCheck.constantFrom(
  ".",
  "..",
  "/",
  "\\",
  "%",
  "%2e",
  "%2f",
  "%25",
  "%c0%ae",
  "%u002e",
  "．",
  "／",
  "∕",
  "‥",
  "․",
  "~",
  "C:",
  "\0",
  "team",
  "team-evil",
  "evil",
  "in",
  "notes",
  "x.md",
  "a",
  "é",
  " "
)
const generatedKey = FastCheck.array(keyPiece, { minLength: 1, maxLength: 8 }).map((pieces) => pieces.join(""))

describe("property: refused, or written with its real path inside team/ (checked on disk)", () => {
  it.effect("for any generated key", () =>
    inSandbox((box) =>
      Effect.gen(function*() {
        fs.symlinkSync(box.etc, path.join(box.team, "evil"))
        fs.mkdirSync(path.join(box.team, "real"))
        fs.symlinkSync("real", path.join(box.team, "in"))
        const realTeam = fs.realpathSync(box.team)
        const keys = FastCheck.sample(generatedKey, { numRuns: 400, seed: 20261130 })
        let refused = 0
        for (const key of keys) {
          const result = yield* Effect.result(writeTeamFile(box.team, key, "p\n"))
          if (Result.isFailure(result)) {
            const error = result.failure
            // a file written over an existing directory fails like any write would: not an escape
            if (error._tag === "MemoryIoError") assert.match(error.detail, /EISDIR|ENOTEMPTY|EEXIST/, key)
            else refused++
            continue
          }
          const real = fs.realpathSync(result.success)
          assert.isTrue(isInside(realTeam, real), `${JSON.stringify(key)} landed at ${real}`)
          assert.strictEqual(fs.readFileSync(real, "utf8"), "p\n")
        }
        // the generator really produces both kinds
        assert.isAbove(refused, 50)
        assert.isBelow(refused, keys.length - 20)
      })
    ))

  it("resolve alone: refused, or a real path inside team/", () =>
    FastCheck.assert(
      FastCheck.asyncProperty(generatedKey, (key) =>
        Effect.runPromise(inSandbox((box) =>
          Effect.gen(function*() {
            fs.symlinkSync(box.etc, path.join(box.team, "evil"))
            const result = yield* Effect.result(resolveTeamPath(box.team, key))
            if (Result.isSuccess(result)) assert.isTrue(isInside(box.team, result.success.real), key)
          })
        ))),
      { numRuns: 60 }
    ))
})

describe("audit", () => {
  it.live("reports every kind of violation, sorted, with where links point", () =>
    inSandbox((box) =>
      Effect.gen(function*() {
        const t = (p: string) => path.join(box.team, p)
        fs.mkdirSync(t("notes"))
        fs.writeFileSync(t("notes/clean.md"), "---\nname: ok\n---\nnothing to see\n")
        fs.symlinkSync(box.etc, t("evil"))
        fs.mkdirSync(t("real"))
        fs.symlinkSync("real", t("alias"))
        fs.symlinkSync(path.join(box.base, "gone"), t("dangling"))
        fs.symlinkSync("loop", t("loop"))
        mkfifo(t("pipe.md"))
        fs.writeFileSync(t("big.md"), "z".repeat(MEMORY_MAX_BYTES + 1))
        fs.writeFileSync(t("key.md"), "deploy with\n-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n")
        fs.writeFileSync(t("back\\slash.md"), "x")
        fs.mkdirSync(t("%2e%2e"))
        fs.writeFileSync(t("%2e%2e/inner.md"), "x")
        fs.writeFileSync(t("．．"), "x")
        fs.linkSync(t("notes/clean.md"), t("real/hard.md"))
        // git's own files when team/ is a checkout are not memories: skipped
        fs.mkdirSync(t(".git"))
        fs.writeFileSync(t(".git/packed"), "q".repeat(MEMORY_MAX_BYTES + 10))
        const violations = yield* Effect.provide(
          Effect.flatMap(TeamGuard.TeamGuard, (guard) => guard.audit(box.team)),
          TeamGuard.layer
        )
        const got = violations.map((v) => `${v.path} ${v.reason}`)
        assert.deepStrictEqual(got, [
          "%2e%2e encoded-traversal",
          "alias symlink",
          "back\\slash.md backslash",
          "big.md oversized",
          "dangling dangling-symlink",
          "evil symlink-escape",
          "key.md secret",
          "loop symlink-loop",
          "notes/clean.md hard-link",
          "pipe.md special-file",
          "real/hard.md hard-link",
          "．． unicode-traversal"
        ])
        const evil = violations.find((v) => v.path === "evil")!
        assert.include(evil.detail, box.etc)
        assert.include(violations.find((v) => v.path === "key.md")!.detail, "private-key")
        assert.include(violations.find((v) => v.path === "pipe.md")!.detail, "FIFO")
      })
    ))

  it.effect("a clean or missing team dir has no violations; a team dir that is itself a link is reported", () =>
    inSandbox((box) =>
      Effect.gen(function*() {
        fs.mkdirSync(path.join(box.team, "a"))
        fs.writeFileSync(path.join(box.team, "a", "x.md"), "fine\n")
        assert.deepStrictEqual(yield* TeamGuard.make.pipe(Effect.flatMap((g) => g.audit(box.team))), [])
        const guard = yield* TeamGuard.make
        assert.deepStrictEqual(yield* guard.audit(path.join(box.base, "l1", "none", "team")), [])
        const linked = path.join(box.base, "l1", "linked-team")
        fs.symlinkSync(box.etc, linked)
        const report = yield* guard.audit(linked)
        assert.deepStrictEqual(report.map((v) => v.reason), ["symlink"])
        assert.include(report[0]!.detail, box.etc)
        fs.unlinkSync(linked)
      })
    ))
})

describe("layerTest (in memory)", () => {
  it.effect("same layer-1/2 refusals, a map for files, audit of names, sizes and secrets", () =>
    Effect.gen(function*() {
      const guard = yield* TeamGuard.TeamGuard
      const written = yield* guard.write("/m/team", "a.md", "hello")
      assert.strictEqual(written, "/m/team/a.md")
      assert.strictEqual(yield* guard.read("/m/team", "a.md"), "hello")
      assert.strictEqual((yield* Effect.flip(guard.write("/m/team", "../x.md", "x")))._tag, "PathTraversalError")
      assert.strictEqual((yield* refusal(guard.read("/m/team", "big.md"))).reason, "too-large")
      const audit = yield* guard.audit("/m/team")
      assert.deepStrictEqual(audit.map((v) => `${v.path} ${v.reason}`), [
        "a%2fb.md encoded-traversal",
        "big.md oversized",
        "token.md secret"
      ])
    }).pipe(Effect.provide(TeamGuard.layerTest({
      "/m/team/big.md": "b".repeat(MEMORY_MAX_BYTES + 1),
      "/m/team/token.md": `token: ${"xox" + "b-1234567890-"}abcdefghijkl`,
      "/m/team/a%2fb.md": "x",
      "/m/private.md": "not team"
    }))))
})
