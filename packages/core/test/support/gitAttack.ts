/**
 * Test parts for git attacks: the environment a calling git hook leaves behind, and a remote that never answers.
 */
import * as Effect from "effect/Effect"
import * as NodeNet from "node:net"

/** Sets variables in this process's environment for the scope, as a calling git hook would have them. */
export const inheritedFromHook = (variables: Record<string, string>) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const saved = Object.fromEntries(Object.keys(variables).map((k) => [k, process.env[k]]))
      Object.assign(process.env, variables)
      return saved
    }),
    (saved) =>
      Effect.sync(() => {
        for (const [k, v] of Object.entries(saved)) {
          if (v === undefined) delete process.env[k]
          else process.env[k] = v
        }
      })
  )

/** A TCP server that accepts connections and never says a word (a remote that hangs). */
export const silentServer = Effect.acquireRelease(
  Effect.callback<{ server: NodeNet.Server; sockets: Array<NodeNet.Socket>; port: number }>((resume) => {
    const sockets: Array<NodeNet.Socket> = []
    const server = NodeNet.createServer((socket) => void sockets.push(socket))
    server.listen(
      0,
      "127.0.0.1",
      () => resume(Effect.succeed({ server, sockets, port: (server.address() as NodeNet.AddressInfo).port }))
    )
  }),
  ({ server, sockets }) =>
    Effect.sync(() => {
      for (const socket of sockets) socket.destroy()
      server.close()
    })
)
