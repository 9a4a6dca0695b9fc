/**
 * `memdir ui`: a local web page to see, search, fix and trust the project's memory (docs/ui.md). The server, its
 * API and the page (built into the bundle as strings) are loaded only when this command runs.
 */
import { InvalidMemoryInputError } from "@memdir/core/Errors"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import { common, switchFlag } from "../Common.js"
import { InterruptNote } from "../Output.js"
import { memdirHandler } from "../Services.js"

/** How long the server waits for a page once the last one was closed (MEMDIR_UI_IDLE, e.g. `10 seconds`). */
export const DEFAULT_IDLE = Duration.seconds(60)

export const uiCommand = Command.make(
  "ui",
  {
    ...common,
    port: Flag.Int("port").pipe(
      Flag.withMetavar("N"),
      Flag.withDescription("The port on 127.0.0.1 (default 0: a free one); a port in use is an error"),
      Flag.withDefault(0)
    ),
    noOpen: switchFlag("no-open").pipe(Flag.withDescription("Print the URL only: do not open a browser")),
    readOnly: switchFlag("read-only").pipe(
      Flag.withDescription("Refuse every change: the page shows memory but cannot edit, rename or delete it")
    )
  },
  memdirHandler(
    (args) =>
      Effect.gen(function*() {
        if (!Number.isInteger(args.port) || args.port < 0 || args.port > 65535) {
          return yield* new InvalidMemoryInputError({
            field: "--port",
            value: String(args.port),
            reason: "must be a port number 0–65535 (0: a free one)"
          })
        }
        const idle = yield* Config.Duration("MEMDIR_UI_IDLE").pipe(Config.withDefault(DEFAULT_IDLE))
        const [server, assets] = yield* Effect.promise(() =>
          Promise.all([import("../ui/UiServer.js"), import("memdir-ui-assets")])
        )
        // a change the page sent is written whole or not at all (the store's writes are atomic): say so
        const note = yield* InterruptNote
        yield* Ref.set(note, Option.some("the page's server stopped; every change it made is saved"))
        yield* server.serve({
          cwd: args.cwd,
          port: args.port,
          readOnly: args.readOnly,
          open: !args.noOpen,
          idle,
          assets: { script: assets.script, style: assets.style }
        })
      }),
    // recall in the page is offline; the model selector runs only when the person asks for it there
    () => ({ selector: "offline" })
  )
).pipe(
  Command.withDescription(
    "Open a local web page to browse, search, recall, edit and check memory (127.0.0.1 only, with a token)"
  )
)
