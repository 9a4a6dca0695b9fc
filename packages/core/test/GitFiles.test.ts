/**
 * The one parser of git's pointer files (`.git` files, `commondir`, a worktree's `gitdir`), which `GitRoot`,
 * `GitAges` and `Settings` read git's layout with. Real `git worktree add` layouts are covered by `GitRoot.test.ts`;
 * here, the spellings git and other tools write.
 */
import { assert, describe, it } from "@effect/vitest"
import { parseDotGitFile, parsePointerFile } from "../src/internal/git/files.js"

describe("parseDotGitFile", () => {
  it("reads the gitdir line as written, its blanks and line end trimmed", () => {
    assert.strictEqual(parseDotGitFile("gitdir: /repo/.git/worktrees/wt\n"), "/repo/.git/worktrees/wt")
    assert.strictEqual(parseDotGitFile("gitdir:../.git/modules/sub\r\n"), "../.git/modules/sub")
    assert.strictEqual(parseDotGitFile("gitdir: \t/with space/.git \t\n"), "/with space/.git")
    assert.strictEqual(parseDotGitFile("# written by a tool\ngitdir: /repo/.git\n"), "/repo/.git")
  })

  it("names no git dir when the line is missing or empty", () => {
    assert.isUndefined(parseDotGitFile(""))
    assert.isUndefined(parseDotGitFile("gitdir:\n"))
    assert.isUndefined(parseDotGitFile("gitdir:   \n"))
    assert.isUndefined(parseDotGitFile("ref: refs/heads/main\n"))
    assert.isUndefined(parseDotGitFile("  gitdir: /indented/.git\n"))
  })
})

describe("parsePointerFile", () => {
  it("reads one path, its line end trimmed; a blank file points nowhere", () => {
    assert.strictEqual(parsePointerFile("../..\n"), "../..")
    assert.strictEqual(parsePointerFile("/repo/wt/.git\r\n"), "/repo/wt/.git")
    assert.isUndefined(parsePointerFile("\n"))
    assert.isUndefined(parsePointerFile(""))
  })
})
