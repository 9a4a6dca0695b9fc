/**
 * The benchmarks' shared corpus generator: one seeded random source, one vocabulary, and the plain-fs listing of
 * memory files with the scanner's skip rules (the floors every benchmark compares against). Deterministic: the
 * same seed gives the same files on every machine, so generated sets under `.bench/` are reused while their
 * manifests match.
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"

/** mulberry32: small, fast, and the same sequence on every machine. */
export const makeRandom = (seed: number) => {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6D2B79F5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
}

export type Random = ReturnType<typeof makeRandom>

/** The vocabulary of generated memories. */
export const WORDS: ReadonlyArray<string> = (
  "integration tests database mocks migration deploy freeze review reviewer merge branch release pipeline " +
  "latency dashboard grafana linear ticket oncall incident postgres redis queue worker cache schema api client " +
  "auth token refresh retry timeout budget owner team frontend backend mobile flaky ci lint format style naming " +
  "commit message changelog feature flag rollout canary metrics alert threshold customer contract legal " +
  "compliance audit storage bucket region cost invoice weekly standup planning sprint roadmap decision why " +
  "because always never prefer avoid check verify before after when user expert senior prefers terse answers"
).split(" ")

export const MEMORY_TYPES = ["user", "feedback", "project", "reference"] as const

export const pick = <A>(random: Random, items: ReadonlyArray<A>): A => items[Math.floor(random() * items.length)]!

/** `count` words of `words` (default `WORDS`), space-separated. */
export const sentence = (random: Random, count: number, words: ReadonlyArray<string> = WORDS) =>
  Array.from({ length: count }, () => pick(random, words)).join(" ")

export const hex = (random: Random, length: number) =>
  Array.from({ length }, () => Math.floor(random() * 16).toString(16)).join("")

/** The memory files under `root` with the scanner's skip rules (dot-dirs, logs/, MEMORY.md), as plain fs lists them. */
export const listMemoryFiles = (root: string): Array<string> => {
  const files: Array<string> = []
  const visit = (dir: string) => {
    for (const entry of NodeFs.readdirSync(dir, { withFileTypes: true })) {
      const name = entry.name
      if (entry.isDirectory()) {
        if (!name.startsWith(".") && name !== "logs") visit(dir + NodePath.sep + name)
      } else if (name.endsWith(".md") && name !== "MEMORY.md" && !name.startsWith(".")) {
        files.push(dir + NodePath.sep + name)
      }
    }
  }
  visit(root)
  return files
}
