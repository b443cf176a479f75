/**
 * @module The open stream connections of this instance: each a WebSocket with its outbox and
 * subscriptions; pings, a client that stays behind or stops answering closed with a reason, a revoked
 * key noticed, and every connection closed on shutdown. Log lines carry the key's id, never the key.
 */
import type { FastifyBaseLogger, FastifyRequest } from 'fastify'
import type { WebSocket } from 'ws'
import { MdqError } from '../domain/errors.js'
import { Outbox, type OutboxCounts, type OutboxLimits } from '../live/outbox.js'
import type { Channel, StreamHub } from '../live/stream-hub.js'
import { StreamSession, type KeyStreams } from '../live/stream-session.js'
import { presentedKey, type KeyAuthenticator } from './auth.js'

export interface StreamLimits extends OutboxLimits {
  /** A client behind (high water passed) for longer than this is closed with a reason. */
  readonly maxBehindMs: number
  /** Unwritten bytes past which a client is closed at once (one that sends requests and never reads their replies). */
  readonly maxUnwrittenBytes: number
  /** The server pings this often; a connection that has not answered the previous ping is closed. Keys are checked again as often. */
  readonly pingIntervalMs: number
  /** The largest client message (a subscribe of 10,000 symbols is about 130 KB). */
  readonly maxMessageBytes: number
  /** After a close frame, how long a client has to answer before its socket is cut. */
  readonly closeGraceMs: number
}

export const DEFAULT_STREAM_LIMITS: StreamLimits = {
  highWaterBytes: 4 << 20,
  lowWaterBytes: 1 << 20,
  maxBehindMs: 10_000,
  maxUnwrittenBytes: 32 << 20,
  pingIntervalMs: 30_000,
  maxMessageBytes: 1 << 20,
  closeGraceMs: 5_000,
}

/** Why the server closed a connection. */
export const DROP_REASONS = ['slow', 'unresponsive', 'revoked', 'protocol'] as const
export type DropReason = (typeof DROP_REASONS)[number]

export interface StreamCounts extends OutboxCounts {
  readonly dropped: Record<DropReason, number>
}

/** WebSocket close codes (RFC 6455 7.4.1): 1001 going away, 1008 policy violation. */
const GOING_AWAY = 1001
const POLICY = 1008

interface Connection {
  readonly socket: WebSocket
  readonly outbox: Outbox
  readonly session: StreamSession
  readonly keyId: number
  /** The key as presented, held to check it again (a revocation closes the stream); never logged. */
  readonly presented: string
  readonly log: FastifyBaseLogger
  /** Answered the last ping. */
  alive: boolean
  closing: boolean
}

export class StreamConnections {
  readonly counts: StreamCounts = {
    messages: 0,
    snapshots: 0,
    conflated: 0,
    dropped: { slow: 0, unresponsive: 0, revoked: 0, protocol: 0 },
  }
  readonly #open = new Map<WebSocket, Connection>()
  readonly #timers: NodeJS.Timeout[]

  constructor(
    private readonly hub: StreamHub,
    readonly streams: KeyStreams,
    private readonly authenticator: KeyAuthenticator,
    readonly limits: StreamLimits = DEFAULT_STREAM_LIMITS,
  ) {
    this.#timers = [
      setInterval(() => this.#sweep(), Math.max(10, Math.min(1000, limits.maxBehindMs / 4))),
      setInterval(() => this.#ping(), limits.pingIntervalMs),
    ]
    for (const t of this.#timers) t.unref()
  }

  /** Checked at the handshake, after the key: a key at its cap of connections is refused (429). */
  admit(keyId: number): void {
    const cap = this.streams.caps.connectionsPerKey
    if (this.streams.connections(keyId) >= cap)
      throw new MdqError(
        'TOO_MANY_STREAMS',
        `This API key already has ${cap} stream connections open on this server, the most allowed; close one first.`,
      )
  }

  /** A connection whose handshake passed: its subscriptions, replies and snapshots from now on. */
  accept(socket: WebSocket, req: FastifyRequest, channels: readonly Channel[]): void {
    const key = req.apiKey!
    const log = req.log
    // Two handshakes of one key may pass `admit` together; the second to get here over the cap is closed.
    if (!this.streams.open(key.id)) {
      socket.close(POLICY, 'too many stream connections for this API key')
      return
    }
    const outbox = new Outbox({ send: (text, done) => socket.send(text, done) }, this.limits, this.counts)
    const conn: Connection = {
      socket,
      outbox,
      session: new StreamSession(this.hub, outbox, this.streams, key.id, channels),
      keyId: key.id,
      presented: presentedKey(req),
      log,
      alive: true,
      closing: false,
    }
    this.#open.set(socket, conn)
    const openedMs = Date.now()
    log.info({ route: req.routeOptions.url, keyId: key.id }, 'stream opened')
    socket.on('message', (data, isBinary) => {
      if (conn.closing) return
      if (isBinary) outbox.reply({ op: 'error', code: 400, message: 'Send text messages (JSON), not binary ones.' })
      else conn.session.handle(String(data))
      if (outbox.unwrittenBytes > this.limits.maxUnwrittenBytes) this.#drop(conn, 'slow', 'too slow: replies not read')
    })
    socket.on('pong', () => (conn.alive = true))
    socket.on('close', (code) => {
      this.#open.delete(socket)
      conn.session.close()
      this.streams.close(key.id)
      log.info({ keyId: key.id, code, seconds: Math.round((Date.now() - openedMs) / 100) / 10 }, 'stream closed')
    })
  }

  /**
   * A protocol violation by the client (a bad frame, a message over the size limit): `ws` has sent
   * the close frame with its code; counted and logged, without the request.
   */
  failed(err: Error, socket: WebSocket): void {
    const conn = this.#open.get(socket)
    if (conn && !conn.closing) {
      conn.closing = true
      this.counts.dropped.protocol++
      conn.log.warn({ keyId: conn.keyId, reason: err.message }, 'stream closed by the server: protocol error')
    }
    setTimeout(() => socket.terminate(), this.limits.closeGraceMs).unref()
  }

  get size(): number {
    return this.#open.size
  }

  /** Shutdown: every stream is told the server is going away (the SDK reconnects); those that do not close in time are cut. */
  async closeAll(): Promise<void> {
    for (const t of this.#timers) clearInterval(t)
    const open = [...this.#open.values()]
    const closed = open.map((c) => new Promise<void>((resolve) => c.socket.once('close', () => resolve())))
    for (const c of open) c.socket.close(GOING_AWAY, 'server shutting down')
    const cut = setTimeout(() => open.forEach((c) => c.socket.terminate()), this.limits.closeGraceMs)
    await Promise.all(closed)
    clearTimeout(cut)
  }

  #drop(conn: Connection, reason: DropReason, message: string): void {
    if (conn.closing) return
    conn.closing = true
    this.counts.dropped[reason]++
    conn.log.warn({ keyId: conn.keyId, reason }, `stream closed by the server: ${message}`)
    conn.outbox.close()
    conn.socket.close(POLICY, message.slice(0, 120)) // a close frame's reason is at most 123 bytes
    setTimeout(() => conn.socket.terminate(), this.limits.closeGraceMs).unref()
  }

  #sweep(): void {
    const now = Date.now()
    for (const conn of this.#open.values()) {
      const since = conn.outbox.behindSinceMs
      if (since !== undefined && now - since > this.limits.maxBehindMs)
        this.#drop(conn, 'slow', `too slow: behind for over ${this.limits.maxBehindMs / 1000} s`)
    }
  }

  #ping(): void {
    for (const conn of this.#open.values()) {
      if (conn.closing) continue
      if (!conn.alive) {
        this.#drop(conn, 'unresponsive', 'no answer to ping')
        continue
      }
      conn.alive = false
      conn.socket.ping()
      this.authenticator.check(conn.presented).catch((err: unknown) => {
        // A store that cannot be read now says nothing about the key: only a refusal closes the stream.
        if (err instanceof MdqError && err.code === 'BAD_KEY') this.#drop(conn, 'revoked', err.message)
      })
    }
  }
}
