/**
 * What the local API stand-ins (MessagesApiServer, ResponsesApiServer) share: an HTTP server on 127.0.0.1 at a free
 * port that records every request, answers each from a queue of scripted replies, then from a handler, renders the
 * reply as the API would (optionally after a delay), and closes, dropping open connections and pending delays, with
 * its scope. What a request must look like and how a reply is written is each API's own (`ScriptedApi`).
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"

export interface RecordedRequest {
  readonly method: string
  readonly path: string
  /** Lower-cased names, e.g. `x-api-key`, `authorization`, `user-agent`. */
  readonly headers: Readonly<Record<string, string>>
  /** The parsed JSON body (undefined when it was not JSON). */
  readonly body: any
  readonly rawBody: string
}

/** An HTTP answer: its status, body, extra headers and content type (default JSON). */
export interface Sent {
  readonly status: number
  readonly body: string
  readonly headers?: Readonly<Record<string, string>> | undefined
  readonly contentType?: string | undefined
}

export type Handler<Reply> = (request: RecordedRequest, index: number) => Reply | Promise<Reply>

/** One API's side of a stand-in. */
export interface ScriptedApi<Reply extends { readonly delayMs?: number | undefined }> {
  readonly replies?: ReadonlyArray<Reply> | undefined
  readonly handler?: Handler<Reply> | undefined
  /** The header naming each answer (`request-id`, `x-request-id`): `req_test_0001`, … */
  readonly requestIdHeader: string
  /** What the API answers a request it refuses (wrong path, key or body) before any reply is used; else undefined. */
  readonly refuse: (request: RecordedRequest, index: number) => Sent | undefined
  /** The reply when neither the queue nor a handler has one. */
  readonly unscripted: (index: number) => Reply
  /** A reply as the API sends it. */
  readonly render: (reply: Reply, request: RecordedRequest, index: number) => Sent
  /** The answer when the handler threw. */
  readonly crashed: (error: unknown) => Sent
}

export interface ScriptedServer<Reply> {
  readonly port: number
  /** Every request received so far, in order (also refused ones). */
  readonly requests: Effect.Effect<ReadonlyArray<RecordedRequest>>
  /** Queue more answers (after the ones not yet used). */
  readonly enqueue: (...replies: ReadonlyArray<Reply>) => Effect.Effect<void>
  /** Answer with this once the queue is empty. */
  readonly setHandler: (handler: Handler<Reply>) => Effect.Effect<void>
}

/** Node's headers as one lower-cased record (repeated ones joined). */
const headerRecord = (headers: Http.IncomingHttpHeaders): Record<string, string> =>
  Object.fromEntries(
    Object.entries(headers).flatMap(([name, value]) =>
      value === undefined ? [] : [[name.toLowerCase(), Array.isArray(value) ? value.join(", ") : value]]
    )
  )

const parseJson = (raw: string): unknown => {
  try {
    return JSON.parse(raw)
  } catch {
    return undefined
  }
}

/** Starts the stand-in; it stops when the scope closes. */
export const serve = <Reply extends { readonly delayMs?: number | undefined }>(
  api: ScriptedApi<Reply>
): Effect.Effect<ScriptedServer<Reply>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const recorded: Array<RecordedRequest> = []
    const queue: Array<Reply> = [...(api.replies ?? [])]
    let handler = api.handler
    const timers = new Set<NodeJS.Timeout>()

    const send = (res: Http.ServerResponse, index: number, sent: Sent) => {
      if (res.destroyed || res.writableEnded) return
      res.writeHead(sent.status, {
        "content-type": sent.contentType ?? "application/json",
        [api.requestIdHeader]: `req_test_${String(index + 1).padStart(4, "0")}`,
        ...sent.headers
      })
      res.end(sent.body)
    }

    const answer = async (req: Http.IncomingMessage, res: Http.ServerResponse, rawBody: string) => {
      const index = recorded.length
      const request: RecordedRequest = {
        method: req.method ?? "",
        path: (req.url ?? "").split("?")[0]!,
        headers: headerRecord(req.headers),
        body: parseJson(rawBody),
        rawBody
      }
      recorded.push(request)
      const refused = api.refuse(request, index)
      if (refused !== undefined) return send(res, index, refused)
      const reply = queue.shift() ?? (handler === undefined ? api.unscripted(index) : await handler(request, index))
      const respond = () => send(res, index, api.render(reply, request, index))
      if (reply.delayMs === undefined || reply.delayMs <= 0) return respond()
      const timer = setTimeout(() => {
        timers.delete(timer)
        respond()
      }, reply.delayMs)
      timers.add(timer)
    }

    const server = Http.createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (chunk: Buffer) => chunks.push(chunk))
      req.on("end", () => {
        answer(req, res, Buffer.concat(chunks).toString("utf8")).catch((error: unknown) =>
          send(res, recorded.length - 1, api.crashed(error))
        )
      })
    })

    const port = yield* Effect.acquireRelease(
      Effect.callback<number>((resume) => {
        server.once("error", (error) => resume(Effect.die(error)))
        server.listen(0, "127.0.0.1", () => resume(Effect.succeed((server.address() as AddressInfo).port)))
      }),
      () =>
        Effect.callback<void>((resume) => {
          for (const timer of timers) clearTimeout(timer)
          timers.clear()
          server.close(() => resume(Effect.void))
          server.closeAllConnections()
        })
    )

    return {
      port,
      requests: Effect.sync(() => [...recorded]),
      enqueue: (...replies: ReadonlyArray<Reply>) => Effect.sync(() => void queue.push(...replies)),
      setHandler: (next: Handler<Reply>) =>
        Effect.sync(() => {
          handler = next
        })
    }
  })
