/**
 * Compiles a scratch consumer project of the packed @memdir/core (test/pack.test.ts) as its own process, so a
 * long type check never blocks a test worker:
 *
 *   node --import tsx test/support/compileConsumer.ts DIR
 *
 * DIR/src is compiled to DIR/dist with an ordinary strict configuration (no exactOptionalPropertyTypes). It
 * prints `{ declarations, diagnostics }`: how many of @memdir/core's declaration files the program read (all), and
 * the diagnostics of the consumer's own files and of those declarations, checked in full (other libraries'
 * declarations are theirs to check, as skipLibCheck would leave them).
 */
import * as fs from "node:fs"
import * as path from "node:path"
import ts from "typescript"

const compile = (dir: string) => {
  const src = path.join(dir, "src")
  const core = path.join(dir, "node_modules", "@memdir", "core")
  const options: ts.CompilerOptions = {
    strict: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: ["node"],
    outDir: path.join(dir, "dist"),
    rootDir: src,
    skipLibCheck: false
  }
  // every declaration file of the package is a root: each is checked, not only those the sources reach
  const declarations = fs.readdirSync(core, { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".d.ts")).map((file) => path.join(core, file))
  const sources = fs.readdirSync(src).map((file) => path.join(src, file))
  const program = ts.createProgram([...sources, ...declarations], options)
  const ours = program.getSourceFiles().filter((file) =>
    file.fileName.startsWith(src + path.sep) || file.fileName.startsWith(core + path.sep)
  )
  const diagnostics = [
    ...program.getOptionsDiagnostics(),
    ...program.getGlobalDiagnostics(),
    ...ours.flatMap((file) => [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)]),
    ...program.emit().diagnostics
  ]
  return {
    declarations: ours.filter((file) => file.isDeclarationFile).length,
    diagnostics: ts.formatDiagnostics(diagnostics, {
      getCanonicalFileName: (file) => file,
      getCurrentDirectory: () => dir,
      getNewLine: () => "\n"
    })
  }
}

const dir = process.argv[2]
if (dir === undefined) throw new Error("usage: node --import tsx test/support/compileConsumer.ts DIR")
process.stdout.write(JSON.stringify(compile(path.resolve(dir))) + "\n")
