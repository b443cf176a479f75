/**
 * @module The server's open connections, each silent (no request yet), answering, or idle (between
 * requests on a kept-alive connection): who is let in when the connection cap is full, and how a
 * shutdown closes them without cutting an answer short.
 *
 * Admission: Node's `maxConnections` turns every new connection away while the cap is full, so
 * connections that send nothing lock everyone out for as long as they are held. Here a new connection
 * is admitted by closing the oldest silent connection (answered 408, as its header timeout would) or
 * else the longest idle one; only when every connection is answering is the new one turned away. One
 * address (an IPv6 /64) holds at most `maxConnectionsPerAddress` of them, by the same rule.
 *
 * Shutdown: Node's `closeIdleConnections` (called by `server.close()` and by Fastify's close) destroys
 * a connection whose response has been ended even while its bytes are still in the socket's buffer (a
 * large answer to a slow reader, or one held to the end of the turn by turn-writes.ts): the server
 * logged the answer, the client got a reset. Here each connection closes once its answers are written.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { addressGroup } from './address-group.js'
import type { HttpLimits } from './limits.js'

interface Connection {
  readonly group: string
  /** Responses not yet written out (more than one only for pipelined requests). */
  readonly answering: Set<ServerResponse>
  /** Whether a request has arrived on it (its head complete). */
  spoken: boolean
}

type Limits = Pick<HttpLimits, 'maxConnections' | 'maxConnectionsPerAddress' | 'closingIdleMs'>

export class Connections {
  readonly #open = new Map<Socket, Connection>()
  /** Connections without any request yet, oldest first. */
  readonly #silent = new Map<Socket, Connection>()
  /** Kept-alive connections between requests, longest idle first. */
  readonly #idle = new Map<Socket, Connection>()
  readonly #perGroup = new Map<string, number>()
  #closing = false

  /** `answerSilent` answers a silent connection closed to make room (a 408, and the connection ends). */
  constructor(
    server: Server,
    private readonly limits: Limits,
    private readonly answerSilent: (socket: Socket) => void,
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
    const group = addressGroup(socket.remoteAddress)
    if (!this.#admit(group)) return void socket.destroy()
    const connection: Connection = { group, answering: new Set(), spoken: false }
    this.#open.set(socket, connection)
    this.#silent.set(socket, connection)
    this.#perGroup.set(group, (this.#perGroup.get(group) ?? 0) + 1)
    socket.once('close', () => this.#forget(socket, connection))
    if (this.#closing) this.#closeWhenIdle(socket, connection)
  }

  /** Makes room for a connection from `group` if it takes closing a silent or idle one; false if none can go. */
  #admit(group: string): boolean {
    if ((this.#perGroup.get(group) ?? 0) >= this.limits.maxConnectionsPerAddress) {
      const inGroup = (map: Map<Socket, Connection>) => first(map, (c) => c.group === group)
      const victim = inGroup(this.#silent) ?? inGroup(this.#idle)
      if (victim === undefined) return false
      this.#evict(victim)
    }
    if (this.#open.size >= this.limits.maxConnections) {
      const victim = first(this.#silent) ?? first(this.#idle)
      if (victim === undefined) return false
      this.#evict(victim)
    }
    return true
  }

  #evict(socket: Socket): void {
    const connection = this.#open.get(socket)!
    this.#forget(socket, connection) // its room is free at once, whenever its socket closes
    if (connection.spoken) endGently(socket)
    else this.answerSilent(socket)
  }

  #forget(socket: Socket, connection: Connection): void {
    if (!this.#open.delete(socket)) return
    this.#silent.delete(socket)
    this.#idle.delete(socket)
    const left = this.#perGroup.get(connection.group)! - 1
    if (left === 0) this.#perGroup.delete(connection.group)
    else this.#perGroup.set(connection.group, left)
  }

  #request(req: IncomingMessage, res: ServerResponse): void {
    const socket = req.socket
    const connection = this.#open.get(socket)
    if (connection === undefined) return
    connection.spoken = true
    connection.answering.add(res)
    this.#silent.delete(socket)
    this.#idle.delete(socket)
    if (this.#closing) res.shouldKeepAlive = false // the app's 503 says so too
    // 'close' comes once the response's bytes are all written (or the connection is gone).
    res.once('close', () => {
      connection.answering.delete(res)
      if (connection.answering.size > 0 || !this.#open.has(socket)) return
      this.#idle.set(socket, connection)
      if (this.#closing) this.#closeWhenIdle(socket, connection)
    })
  }

  #closeWhenIdle(socket: Socket, connection: Connection): void {
    if (socket.destroyed) return
    const wait = setTimeout(() => {
      if (connection.answering.size === 0) endGently(socket)
    }, this.limits.closingIdleMs)
    socket.once('close', () => clearTimeout(wait))
  }
}

/** The first (oldest) socket of `map` whose connection passes `test`. */
function first(map: Map<Socket, Connection>, test: (c: Connection) => boolean = () => true): Socket | undefined {
  for (const [socket, connection] of map) if (test(connection)) return socket
  return undefined
}

/**
 * Ends a connection: reads nothing more (no request is answered into a closing connection), sends
 * `last` (if given) and a FIN, and releases the socket once they are written, without waiting for the
 * client to close its side (a client that never does would hold the connection until the idle timeout).
 */
export function endGently(socket: Socket, last?: string): void {
  socket.pause()
  if (!socket.writableEnded) {
    if (last === undefined) socket.end()
    else socket.end(last)
  }
  if (socket.writableFinished) socket.destroy()
  else socket.once('finish', () => socket.destroy())
}
