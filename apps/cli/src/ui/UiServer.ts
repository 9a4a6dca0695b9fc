/**
 * The server of `memdir ui` (docs/ui.md): Node's `node:http` on 127.0.0.1, every request through the checks of
 * `UiSecurity` first, then the page (its script and style are strings built into the CLI bundle: no file is read,
 * nothing is fetched from the network) or a route of `UiApi`, each run as an Effect with the command's services (as
 * `memdir mcp` runs its tools).
 *
 * `node:http` rather than an Effect HTTP server: a dozen routes, one guard in front of all of them, and a streamed
 * event channel are plain in it, and the command stays one small chunk of the bundle.
 *
 * The page keeps an event stream open (`/api/events`): it tells the page when memory changed on disk, and it is how
 * the server knows a page is there. Once a page was seen, no page for `idle` (60 s) stops the server (exit 0).
 */
import { InvalidMemoryInputError } from "@memdir/core/Errors"
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { ensureMemoryDir } from "../MemoryDir.js"
import { isMemdirError, toIoError } from "../Output.js"
import * as UiApi from "./UiApi.js"
import { checkRequest, isSafeMethod, newToken, securityHeaders } from "./UiSecurity.js"

/** The page's compiled script and its style sheet, embedded in the bundle. */
export interface UiAssets {
  readonly script: string
  readonly style: string
}

export interface UiOptions {
  readonly cwd: Option.Option<string>
  /** 0: a free port. */
  readonly port: number
  readonly readOnly: boolean
  readonly open: boolean
  /** How long the server waits for a page once the last one went away. */
  readonly idle: Duration.Duration
  readonly assets: UiAssets
}

/** How long a listing is kept while memory does not change. */
const LISTING_KEPT_MS = 60_000

/** The largest request body read (a memory is at most 250,000 bytes; its JSON escapes may double it). */
export const MAX_BODY_BYTES = 1024 * 1024

const PAGE = "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">" +
  "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>memdir</title>" +
  "<link rel=\"icon\" href=\"data:,\"><link rel=\"stylesheet\" href=\"/app.css\">" +
  // asked for beside the script, not after it: the first view needs both (a page opened on another view wastes one)
  "<link rel=\"preload\" href=\"/api/state\" as=\"fetch\" crossorigin>" +
  "<link rel=\"preload\" href=\"/api/memories\" as=\"fetch\" crossorigin></head>" +
  "<body><div id=\"app\"><p class=\"loading\">Loading memory…</p></div><script src=\"/app.js\"></script></body></html>\n"

// ---------------------------------------------------------------------------------------------------------------
// Routes
// ---------------------------------------------------------------------------------------------------------------

/** A failed request as the page reads it. */
export class UiRequestError extends Schema.TaggedError<UiRequestError>()("UiRequestError", {
  status: Schema.Number,
  message: Schema.String
}) {}

/** What the routes run with: the command's services (`memdirHandler`), as each `UiApi` handler declares them. */
export type UiServices = {
  readonly [K in keyof typeof UiApi]: typeof UiApi[K] extends (...args: ReadonlyArray<any>) => infer R ?
    Effect.Services<R> :
    never
}[keyof typeof UiApi]

interface Route {
  readonly method: "GET" | "POST"
  readonly run: (input: unknown) => Effect.Effect<unknown, unknown, UiServices>
}

const decodeWith = <S extends Schema.Top & { readonly DecodingServices: never }>(schema: S) => {
  const decode = Schema.decodeUnknownResult(schema as any, { errors: "all", onExcessProperty: "error" })
  const format = SchemaIssue.makeFormatterStandardSchemaV1()
  return (input: unknown): Effect.Effect<S["Type"], UiRequestError> => {
    const decoded = decode(input)
    if (Result.isSuccess(decoded)) return Effect.succeed(decoded.success as S["Type"])
    const problems = format(decoded.failure.issue).issues.map((issue) =>
      `${(issue.path ?? []).map(String).join(".") || "request"}: ${issue.message}`
    )
    return Effect.fail(new UiRequestError({ status: 400, message: `bad request: ${problems.join("; ")}` }))
  }
}

const routesFor = (options: UiOptions): ReadonlyMap<string, Route> => {
  const cwd = options.cwd
  const route = <S extends Schema.Top & { readonly DecodingServices: never }>(
    method: "GET" | "POST",
    schema: S,
    run: (input: S["Type"]) => Effect.Effect<unknown, unknown, UiServices>
  ): Route => ({ method, run: (input) => Effect.flatMap(decodeWith(schema)(input), run) })
  const none = Schema.Struct({})
  return new Map<string, Route>([
    ["/api/state", route("GET", none, () => UiApi.state(cwd, options.readOnly))],
    ["/api/memories", route("GET", none, () => UiApi.browse(cwd))],
    ["/api/index", route("GET", none, () => UiApi.index(cwd))],
    ["/api/memory", route("GET", UiApi.ReadRequest, (input) => UiApi.read(cwd, input))],
    ["/api/search", route("GET", UiApi.SearchRequest, (input) => UiApi.search(cwd, input))],
    ["/api/recall", route("GET", UiApi.RecallRequest, (input) => UiApi.recall(cwd, input))],
    ["/api/save", route("POST", UiApi.SaveRequest, (input) => UiApi.save(cwd, input))],
    ["/api/rename", route("POST", UiApi.RenameRequest, (input) => UiApi.rename(cwd, input))],
    ["/api/delete", route("POST", UiApi.DeleteRequest, (input) => UiApi.remove(cwd, input))],
    ["/api/history", route("GET", UiApi.ReadRequest, (input) => UiApi.history(cwd, input))],
    ["/api/history/restore", route("POST", UiApi.RestoreRequest, (input) => UiApi.restoreVersion(cwd, input))],
    ["/api/dreams", route("GET", none, () => UiApi.dreams(cwd))],
    ["/api/activity", route("GET", none, () => UiApi.activity(cwd))],
    ["/api/health", route("GET", none, () => UiApi.health(cwd))],
    ["/api/health/fix", route("POST", UiApi.FixRequest, (input) => UiApi.fix(cwd, input))]
  ])
}

/** The HTTP status of a memdir error: what the page does about it. */
const statusOf = (tag: string): number => {
  switch (tag) {
    case "VersionConflictError":
    case "PathExistsError":
      return 409
    case "MemoryNotFoundError":
      return 404
    case "LockTimeoutError":
      return 503
    case "MemoryIoError":
      return 500
    default:
      return 400
  }
}

/** A failure as `{ error: { _tag, message, …fields } }` and its status. */
const failureBody = (cause: Cause.Cause<unknown>): { readonly status: number; readonly body: unknown } => {
  const error = Cause.squash(cause)
  if (error instanceof UiRequestError) {
    return { status: error.status, body: { error: { _tag: error._tag, message: error.message } } }
  }
  if (isMemdirError(error)) {
    const { _tag, ...fields } = error as unknown as Record<string, unknown>
    return { status: statusOf(error._tag), body: { error: { _tag, message: error.message, ...fields } } }
  }
  return { status: 500, body: { error: { _tag: "Defect", message: `memdir ui failed: ${String(error)}` } } }
}

// ---------------------------------------------------------------------------------------------------------------
// HTTP
// ---------------------------------------------------------------------------------------------------------------

const send = (
  response: http.ServerResponse,
  status: number,
  type: string,
  body: string,
  extra: Record<string, string> = {}
): void => {
  response.writeHead(status, { ...securityHeaders, "Content-Type": type, ...extra })
  response.end(body)
}

const sendJson = (response: http.ServerResponse, status: number, value: unknown): void =>
  send(response, status, "application/json; charset=utf-8", JSON.stringify(value))

/** The body, or undefined past `MAX_BODY_BYTES` (the rest is read and dropped, so the answer still reaches the page). */
const readBody = (request: http.IncomingMessage): Promise<string | undefined> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let bytes = 0
    request.on("data", (chunk: Buffer) => {
      bytes += chunk.length
      if (bytes <= MAX_BODY_BYTES) chunks.push(chunk)
    })
    request.on("end", () => resolve(bytes > MAX_BODY_BYTES ? undefined : Buffer.concat(chunks).toString("utf8")))
    request.on("error", reject)
  })

/** Pages that are open (their event streams), and what happens once none has been for a while. */
const makeLiveness = (idle: Duration.Duration, onIdle: () => void) => {
  const streams = new Set<http.ServerResponse>()
  let timer: ReturnType<typeof setTimeout> | undefined
  return {
    streams,
    opened: (stream: http.ServerResponse) => {
      streams.add(stream)
      if (timer !== undefined) clearTimeout(timer)
      timer = undefined
    },
    closed: (stream: http.ServerResponse) => {
      streams.delete(stream)
      if (streams.size === 0) timer = setTimeout(onIdle, Duration.toMillis(idle))
    },
    stop: () => {
      if (timer !== undefined) clearTimeout(timer)
    }
  }
}

/** Opens `url` in the default browser, detached; a failure is a note on stderr, never an error. */
const openBrowser = (url: string): void => {
  const [command, args] = process.platform === "darwin" ?
    ["open", [url]] as const :
    process.platform === "win32" ?
    ["cmd", ["/c", "start", "", url]] as const :
    ["xdg-open", [url]] as const
  const note = (why: string) =>
    process.stderr.write(`memdir ui: could not open a browser (${command}: ${why}): open the URL above\n`)
  try {
    const child = spawn(command, [...args], { detached: true, stdio: "ignore" })
    child.on("error", (error) => note(error.message))
    child.on("exit", (code) => {
      if (code !== null && code !== 0) note(`exit ${code}`)
    })
    child.unref()
  } catch (error) {
    note(String(error))
  }
}

/** Listens on 127.0.0.1:port; a port in use is a clear error. */
const listen = (server: http.Server, port: number) =>
  Effect.callback<number, InvalidMemoryInputError>((resume) => {
    const failed = (error: NodeJS.ErrnoException) =>
      resume(Effect.fail(
        new InvalidMemoryInputError({
          field: "--port",
          value: String(port),
          reason: error.code === "EADDRINUSE" ?
            "is in use: choose another port, or leave --port out for a free one" :
            `cannot be listened on (${error.code ?? error.message})`
        })
      ))
    server.once("error", failed)
    server.listen(port, "127.0.0.1", () => {
      server.off("error", failed)
      resume(Effect.succeed((server.address() as AddressInfo).port))
    })
  })

const close = (server: http.Server) =>
  Effect.callback<void>((resume) => {
    server.close(() => resume(Effect.void))
    server.closeAllConnections()
  })

/** Serves the page until Ctrl-C, or until no page has been open for `idle` after one was. */
export const serve = (options: UiOptions) =>
  Effect.gen(function*() {
    const team = yield* UiApi.enabledLocation(options.cwd)
    const memoryDir = team.memory.memoryDir
    // as `memdir prompt` does: the prompt the index view shows says the directory exists, and the page watches it
    if (!options.readOnly) {
      yield* ensureMemoryDir(memoryDir).pipe(Effect.mapError(toIoError("init", memoryDir)))
    }
    const context = yield* Effect.context<UiServices>()
    const runExit = Effect.runPromiseExitWith(context)
    const routes = routesFor(options)
    const token = newToken()
    let port = 0
    let idleReached: (() => void) | undefined
    /**
     * The listing, kept while memory has not changed: the watch drops it on any change on disk (and every change the
     * page sends drops it too, before its answer), and it is kept at most `LISTING_KEPT_MS` (ages count in days, but
     * a page open over midnight should see them move). Only while the directory is watched.
     */
    let listing: { readonly at: number; readonly body: Promise<string | undefined> } | undefined
    let watching = false
    const makeListing = () => ({
      at: Date.now(),
      body: runExit(UiApi.browse(options.cwd)).then((exit) =>
        Exit.isSuccess(exit) ? JSON.stringify(exit.value) : undefined
      )
    })
    const liveness = makeLiveness(options.idle, () => idleReached?.())

    const handle = async (request: http.IncomingMessage, response: http.ServerResponse): Promise<void> => {
      const method = request.method ?? "GET"
      const verdict = checkRequest({ method, url: request.url ?? "/", headers: request.headers }, {
        token,
        port,
        readOnly: options.readOnly
      })
      if (!verdict.ok) {
        request.resume()
        return send(response, verdict.status, "text/plain; charset=utf-8", `${verdict.reason}\n`)
      }
      if (verdict.redirect !== undefined) {
        return send(response, 303, "text/plain; charset=utf-8", "", {
          Location: verdict.redirect.location,
          "Set-Cookie": verdict.redirect.setCookie
        })
      }
      const url = new URL(request.url ?? "/", "http://127.0.0.1")
      if (method === "GET" && url.pathname === "/") return send(response, 200, "text/html; charset=utf-8", PAGE)
      if (method === "GET" && url.pathname === "/app.js") {
        return send(response, 200, "text/javascript; charset=utf-8", options.assets.script)
      }
      if (method === "GET" && url.pathname === "/app.css") {
        return send(response, 200, "text/css; charset=utf-8", options.assets.style)
      }
      if (method === "GET" && url.pathname === "/api/events") {
        response.writeHead(200, { ...securityHeaders, "Content-Type": "text/event-stream; charset=utf-8" })
        response.write("retry: 2000\n\n")
        liveness.opened(response)
        response.on("close", () => liveness.closed(response))
        return
      }
      if (method === "GET" && url.pathname === "/api/memories" && watching && url.search === "") {
        if (listing === undefined || Date.now() - listing.at > LISTING_KEPT_MS) listing = makeListing()
        const body = await listing.body
        // a failure is answered by the route itself, with its status
        if (body !== undefined) return send(response, 200, "application/json; charset=utf-8", body)
        listing = undefined
      }
      const route = routes.get(url.pathname)
      if (route === undefined) return sendJson(response, 404, { error: { _tag: "NotFound", message: "no such page" } })
      if (route.method !== method) {
        request.resume()
        return sendJson(response, 405, { error: { _tag: "MethodNotAllowed", message: `use ${route.method}` } })
      }
      let input: unknown = Object.fromEntries(url.searchParams)
      if (!isSafeMethod(method)) {
        const body = await readBody(request)
        if (body === undefined) {
          return sendJson(response, 413, { error: { _tag: "TooLarge", message: "request over 1 MiB" } })
        }
        try {
          input = JSON.parse(body)
        } catch {
          return sendJson(response, 400, { error: { _tag: "BadJson", message: "the body is not JSON" } })
        }
      }
      const exit = await runExit(route.run(input))
      // the page asks for the listing right after a change it made: never the one from before it
      if (!isSafeMethod(method)) listing = undefined
      if (Exit.isSuccess(exit)) return sendJson(response, 200, exit.value)
      const failure = failureBody(exit.cause)
      return sendJson(response, failure.status, failure.body)
    }

    const server = http.createServer((request, response) => {
      handle(request, response).catch((error) => {
        if (!response.headersSent) sendJson(response, 500, { error: { _tag: "Defect", message: String(error) } })
        else response.destroy()
      })
    })
    // a page's event stream stays open for as long as the page does
    server.requestTimeout = 0
    server.keepAliveTimeout = 5_000

    yield* Effect.acquireRelease(
      Effect.map(listen(server, options.port), (bound) => {
        port = bound
      }),
      () => Effect.andThen(Effect.sync(() => liveness.stop()), close(server))
    )
    // memory changed on disk (an agent, another door, an editor): tell the page to refresh (memdir's own state
    // files, under hidden directories, are not memory)
    const watcher = yield* Effect.acquireRelease(
      Effect.sync(() => {
        try {
          const watcher = fs.watch(memoryDir, { recursive: true }, (_event, file) => {
            const name = typeof file === "string" ? file : ""
            if (name.split(/[\\/]/).some((segment) => segment.startsWith("."))) return
            // the listing no longer holds: the next request makes it again
            listing = undefined
            for (const stream of liveness.streams) stream.write(`event: changed\ndata: ${JSON.stringify(name)}\n\n`)
          })
          // a watch that fails later (the directory removed, the system's watch limit) ends the live updates, not
          // the server: the page still loads what is on disk when it asks
          watcher.on("error", () => {
            watching = false
            listing = undefined
            watcher.close()
          })
          watching = true
          return watcher
        } catch {
          return undefined
        }
      }),
      (watcher) => Effect.sync(() => watcher?.close())
    )
    void watcher
    const url = `http://127.0.0.1:${port}/?token=${token}`
    yield* Console.log(url)
    yield* Console.error(
      `memdir ui: serving ${memoryDir}${options.readOnly ? " read-only" : ""} at http://127.0.0.1:${port}/ ` +
        "until Ctrl-C"
    )
    if (options.open) openBrowser(url)
    // the listing, made while the browser starts (the scan's caches, the links read): the page's first request takes
    // it (unless memory changed meanwhile)
    if (watching) listing = makeListing()
    yield* Effect.callback<void>((resume) => {
      idleReached = () => resume(Effect.void)
    })
    yield* Console.error(
      `memdir ui: no page open for ${Duration.format(options.idle)}: stopped (run memdir ui again to reopen it)`
    )
  }).pipe(Effect.scoped)
