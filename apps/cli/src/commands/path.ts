import type { RefusedSettings } from "@memdir/core/Settings"
import * as Command from "effect/cli/Command"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { common, jsonOption, locate, locationHandler } from "../Common.js"
import { printJson } from "../Output.js"

/** The stderr line for a settings file memdir ignored: the file, why, and the fix. */
export const refusedWarning = (entry: RefusedSettings): string =>
  `memdir: warning: ignoring ${entry.source} settings ${entry.path}: it ${entry.reason}; ${entry.fix}`

export const pathCommand = Command.make(
  "path",
  { ...common, json: jsonOption },
  locationHandler(({ cwd, json }) =>
    Effect.gen(function*() {
      const location = yield* locate(cwd)
      const refused = location.refusedSettings ?? []
      yield* Effect.forEach(refused, (entry) => Console.error(refusedWarning(entry)))
      if (json) {
        return yield* printJson({
          memoryDir: location.memoryDir,
          source: location.source,
          root: location.root.root,
          rootKind: location.root.kind,
          enabled: location.enabled,
          enabledBy: location.enabledBy,
          ...(refused.length === 0 ? {} : { refusedSettings: refused })
        })
      }
      yield* Console.log(location.memoryDir)
    })
  )
).pipe(Command.withDescription("Print the resolved memory directory"))
