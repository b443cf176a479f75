/**
 * @module The server's open connections, each silent (no request yet), busy (answering) or idle
 * (between requests on a kept-alive connection), so that closing one never cuts an answer short.
 *
 * Node's `closeIdleConnections` (called by `server.close()` and by Fastify's close) destroys every
 * connection whose response has been ended, including one whose bytes are still in the socket's
 * buffer (a large answer to a slow reader, or one held to the end of the turn by turn-writes.ts):
 * the server logged the answer, the client got a reset. Here a shutdown waits for each answer to be
 * written, answers a request that still arrives with a 503 and `Connection: close`, and closes idle
 * connections gently.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { HttpLimits } from './limits.js'

interface Connection {
  /** Responses not yet written out (more than one only for pipelined requests). */
  readonly answering: Set<ServerResponse>
}

export class Connections {
  readonly #open = new Map<Socket, Connection>()
  #closing = false

  constructor(
    server: Server,
    private readonly limits: Pick<HttpLimits, 'closingIdleMs'>,
  ) {
    server.on('connection', (socket: Socket) => this.#opened(socket))
    // Before the app's handler, which may end the response at once.
    server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => this.#request(req, res))
    server.closeIdleConnections = () => this.close()
  }

  /** Open connections. */
  get size(): number {
    return this.#open.size
  }

  /**
   * Starts closing every connection once it is idle: an answer under way is written whole, then the
   * connection waits `closingIdleMs` for a request its client may have sent already (the app answers
   * it 503 with `Connection: close`, so every request that reaches the server is answered), and then
   * closes gently.
   */
  close(): void {
    if (this.#closing) return
    this.#closing = true
    for (const [socket, connection] of this.#open)
      if (connection.answering.size === 0) this.#closeWhenIdle(socket, connection)
  }

  #opened(socket: Socket): void {
    const connection: Connection = { answering: new Set() }
    this.#open.set(socket, connection)
    socket.once('close', () => this.#open.delete(socket))
    if (this.#closing) this.#closeWhenIdle(socket, connection)
  }

  #request(req: IncomingMessage, res: ServerResponse): void {
    const connection = this.#open.get(req.socket)
    if (connection === undefined) return
    connection.answering.add(res)
    if (this.#closing) res.shouldKeepAlive = false // the app's 503 says so too
    // 'close' comes once the response's bytes are all written (or the connection is gone).
    res.once('close', () => {
      connection.answering.delete(res)
      if (this.#closing && connection.answering.size === 0) this.#closeWhenIdle(req.socket, connection)
    })
  }

  #closeWhenIdle(socket: Socket, connection: Connection): void {
    if (socket.destroyed) return
    const wait = setTimeout(() => {
      if (connection.answering.size === 0) endGently(socket, this.limits.closingIdleMs)
    }, this.limits.closingIdleMs)
    socket.once('close', () => clearTimeout(wait))
  }
}

/**
 * Ends a connection with a FIN after `last` (if given) is written, reads nothing more, and destroys
 * it once the client closes its side or `lingerMs` have passed.
 */
export function endGently(socket: Socket, lingerMs: number, last?: string): void {
  socket.pause() // no further request is read, so none is answered into a closed connection
  if (last === undefined) socket.end()
  else socket.end(last)
  const linger = setTimeout(() => socket.destroy(), lingerMs)
  socket.once('close', () => clearTimeout(linger))
}
