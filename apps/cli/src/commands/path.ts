import * as Command from "@effect/cli/Command"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { common, jsonOption, locate, memdirHandler } from "../Common.js"
import { printJson } from "../Output.js"

export const pathCommand = Command.make(
  "path",
  { ...common, json: jsonOption },
  memdirHandler(({ cwd, json }) =>
    Effect.gen(function*() {
      const location = yield* locate(cwd)
      if (json) {
        return yield* printJson({
          memoryDir: location.memoryDir,
          source: location.source,
          root: location.root.root,
          rootKind: location.root.kind,
          enabled: location.enabled,
          enabledBy: location.enabledBy
        })
      }
      yield* Console.log(location.memoryDir)
    })
  )
).pipe(Command.withDescription("Print the resolved memory directory"))
