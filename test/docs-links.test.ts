/**
 * The documentation holds together: every relative link in README.md and docs/ reaches a file of the repository
 * (and a heading, when it names an anchor), every TypeScript block is either a file a test compiles and runs or
 * says it is a fragment, the README stays a front door with CI's two commands, and the architecture page names
 * every module. No network: only the working tree is read.
 */
import { assert, describe, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { repoRoot } from "./support/cli.js"
import {
  anchorsOf,
  codeBlocksIn,
  exampleCode,
  examplePath,
  linksIn,
  markdownFiles,
  readRepoFile,
  slugOf
} from "./support/markdown.js"

const pages = markdownFiles()

describe("markdown helpers", () => {
  it("computes GitHub's anchors", () => {
    assert.strictEqual(slugOf("Models: what needs a key"), "models-what-needs-a-key")
    assert.strictEqual(slugOf("`memdir team audit [--json]`"), "memdir-team-audit---json")
    assert.strictEqual(slugOf("Using an existing `~/.claude` memory"), "using-an-existing-claude-memory")
    assert.strictEqual(slugOf("Being restructured (issue 8)"), "being-restructured-issue-8")
    assert.deepStrictEqual([...anchorsOf("# A\n## A\n```\n# not a heading\n```\n")], ["a", "a-1"])
  })

  it("finds links outside code only", () => {
    const links = linksIn("see [x](a.md#b) and `[y](c.md)`\n```\n[z](d.md)\n```\n![i](img.png \"t\")")
    assert.deepStrictEqual(links.map((l) => l.target), ["a.md#b", "img.png"])
  })
})

describe("documentation", () => {
  it("has README.md and the docs pages", () => {
    for (
      const page of [
        "cli",
        "library",
        "configuration",
        "file-format",
        "team-memory",
        "extraction",
        "dream-and-logs",
        "evals",
        "benchmarks",
        "development",
        "install",
        "architecture"
      ]
    ) {
      assert.include(pages, `docs/${page}.md`)
    }
  })

  it("every relative link resolves to a repository file, and every anchor to a heading", () => {
    const broken: Array<string> = []
    for (const page of pages) {
      const text = readRepoFile(page)
      for (const link of linksIn(text)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(link.target)) continue // https:, mailto: — not checked (no network)
        const [file, anchor] = link.target.split("#", 2) as [string, string | undefined]
        const where = `${page}:${link.line}: [${link.text}](${link.target})`
        const target = file === "" ? path.join(repoRoot, page) : path.resolve(repoRoot, path.dirname(page), file)
        if (path.relative(repoRoot, target).startsWith("..")) {
          broken.push(`${where}: leaves the repository`)
          continue
        }
        if (!fs.existsSync(target)) {
          broken.push(`${where}: no such file`)
          continue
        }
        if (anchor !== undefined && anchor !== "") {
          if (!target.endsWith(".md")) {
            if (!/^L\d+(-L\d+)?$/.test(anchor)) broken.push(`${where}: an anchor into a non-Markdown file`)
            continue
          }
          if (!anchorsOf(fs.readFileSync(target, "utf8")).has(anchor)) broken.push(`${where}: no heading #${anchor}`)
        }
      }
    }
    assert.deepStrictEqual(broken, [])
  })

  it("every docs page is reachable from the README", () => {
    const linked = new Set(
      linksIn(readRepoFile("README.md")).map((l) => path.posix.normalize(l.target.split("#")[0]!))
    )
    assert.deepStrictEqual(pages.filter((p) => p !== "README.md" && !linked.has(p)), [])
  })

  it("every TypeScript block is a file that a test compiles and runs, shown exactly, or says it is a fragment", () => {
    const problems: Array<string> = []
    for (const page of pages) {
      for (const block of codeBlocksIn(readRepoFile(page))) {
        if (!["ts", "typescript", "tsx", "js", "javascript"].includes(block.lang)) continue
        const where = `${page}:${block.line}`
        const example = examplePath(block)
        if (example === undefined) {
          if (!/^fragment:/.test(block.marker ?? "")) {
            problems.push(`${where}: mark it <!-- example: PATH --> (a file a test runs) or <!-- fragment: why -->`)
          }
          continue
        }
        // Typechecked by `tsc -b` (packages/core/tsconfig.test.json includes examples/, test/tsconfig.json all of
        // test/) and run: examples by test/examples.test.ts, *.test.ts files by vitest.
        const runs = /^packages\/core\/examples\/[^/]+\.ts$/.test(example) || /^test\/.+\.test\.ts$/.test(example)
        if (!runs) {
          problems.push(`${where}: ${example} is neither under packages/core/examples/ nor a test under test/`)
        } else if (!fs.existsSync(path.join(repoRoot, example))) {
          problems.push(`${where}: ${example} does not exist`)
        } else if (block.code.replace(/^\n+|\n+$/g, "") !== exampleCode(example)) {
          problems.push(`${where}: the block differs from ${example} (copy the file below its doc comment)`)
        }
      }
    }
    assert.deepStrictEqual(problems, [])
  })

  it("the README is a front door with the two commands CI runs", () => {
    const readme = readRepoFile("README.md")
    assert.isAtMost(readme.split("\n").length, 200)
    const pnpm = `npx -y ${JSON.parse(readRepoFile("package.json")).packageManager}`
    assert.include(readme, `${pnpm} install && ${pnpm} demo`)
    assert.include(readme, `${pnpm} test`)
    const ci = readRepoFile(".ci/run")
    assert.include(ci, `pnpm() { ${pnpm} "$@"; }`)
    assert.match(ci, /^pnpm install --frozen-lockfile$/m)
    assert.match(ci, /^pnpm test$/m)
  })

  it("the architecture page names every module", () => {
    const architecture = readRepoFile("docs/architecture.md")
    const modules = (dir: string) =>
      fs.readdirSync(path.join(repoRoot, dir), { recursive: true, encoding: "utf8" })
        .filter((f) => f.endsWith(".ts"))
        .map((f) => f.split(path.sep).join("/"))
    const missing = [
      ...modules("packages/core/src").map((f) => `\`${f}\``),
      ...modules("packages/testing/src").map((f) => `\`${f}\``),
      ...modules("apps/evals/src").map((f) => `\`${f}\``),
      ...modules("apps/cli/src").map((f) => `${path.posix.basename(f)}\``)
    ].filter((name) => !architecture.includes(name))
    assert.deepStrictEqual(missing, [])
  })

  it("the packages and the LICENSE agree: MIT", () => {
    assert.match(readRepoFile("LICENSE"), /^MIT License\n\nCopyright \(c\) 2026 memdir contributors\n/)
    for (const manifest of ["packages/core", "packages/testing", "apps/cli", "apps/evals"]) {
      assert.strictEqual(JSON.parse(readRepoFile(`${manifest}/package.json`)).license, "MIT", manifest)
    }
  })
})

describe("scripts/spec-refs.mjs", () => {
  const script = path.join(repoRoot, "scripts/spec-refs.mjs")
  const sample = [
    "/** The recall program (SPEC §6): see also SPEC §3, §4 and §12. */",
    "const url = \"https://example.com/SPEC §8\" // team memory (SPEC §8), exit codes (README \"Exit codes\")",
    "const re = /SPEC §1\\//",
    "const t = `SPEC §9 ${x /* SPEC §10 */} SPEC §11`",
    "// the priority chain of SPEC §1"
  ].join("\n")
  const run = (args: ReadonlyArray<string>, file: string) =>
    spawnSync(process.execPath, [script, ...args, file], { encoding: "utf8" })

  it("rewrites citations in comments only, to the docs page that states the rule; --check exits 1 until then", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "memdir-spec-refs-"))
    try {
      const file = path.join(dir, "sample.ts")
      fs.writeFileSync(file, sample)
      const before = run(["--check"], file)
      assert.strictEqual(before.status, 1)
      assert.include(before.stdout, "sample.ts:1: SPEC §6")
      assert.strictEqual(run([], file).status, 0)
      assert.strictEqual(
        fs.readFileSync(file, "utf8"),
        [
          "/** The recall program (docs/architecture.md#how-a-recall-flows): see also docs/file-format.md, docs/evals.md. */",
          "const url = \"https://example.com/SPEC §8\" // team memory (docs/team-memory.md), exit codes (docs/cli.md#exit-codes)",
          "const re = /SPEC §1\\//",
          "const t = `SPEC §9 ${x /* docs/dream-and-logs.md */} SPEC §11`",
          "// the priority chain in docs/configuration.md"
        ].join("\n")
      )
      assert.strictEqual(run(["--check"], file).status, 0)
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it("the repository's own sources cite no SPEC section (a document outside the repository)", () => {
    const check = spawnSync(process.execPath, [script, "--check"], { cwd: repoRoot, encoding: "utf8" })
    assert.strictEqual(check.status, 0, check.stdout + check.stderr)
  })

  it("every docs page the mapping names exists, with its anchor", () => {
    const table = fs.readFileSync(script, "utf8")
    const targets = [...table.matchAll(/"((?:docs\/[\w-]+|README)\.md(?:#[\w-]+)?)"/g)].map((m) => m[1]!)
    assert.isAbove(targets.length, 20)
    for (const target of targets) {
      const [file, anchor] = target.split("#") as [string, string | undefined]
      const text = readRepoFile(file)
      if (anchor !== undefined) assert.isTrue(anchorsOf(text).has(anchor), target)
    }
  })
})
