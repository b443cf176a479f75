/**
 * @module One connection's outgoing messages: while the client keeps up, every snapshot is sent, one
 * message per channel and batch; once what it has not read passes a high-water mark, snapshots wait
 * in a queue that holds only the latest per symbol and channel (so it is bounded by the
 * subscriptions), and go out when the client has caught up. How long it may stay behind is the
 * caller's to decide (`behindSinceMs`).
 */
import type { Channel, Snapshot, Subscriber } from './stream-hub.js'

/** The socket as the outbox uses it: `done` is called once the message has been written out (or failed). */
export interface OutboxSocket {
  send(text: string, done: (err?: Error) => void): void
}

export interface OutboxLimits {
  /** Bytes sent and not yet written out above which the client counts as behind. */
  readonly highWaterBytes: number
  /** Bytes not yet written out at or below which a client that was behind has caught up. */
  readonly lowWaterBytes: number
}

/** What an outbox has done, for metrics. */
export interface OutboxCounts {
  messages: number
  snapshots: number
  /** Snapshots replaced in the queue by a newer one of the same symbol and channel before they were sent. */
  conflated: number
}

const dataMessage = (channel: Channel, items: readonly string[]) => `{"op":"${channel}","data":[${items.join(',')}]}`

export class Outbox implements Subscriber {
  readonly #ready: Record<Channel, string[]> = { quotes: [], depth: [] }
  /** While behind: the latest snapshot per channel and symbol, in the order first queued. */
  readonly #held = new Map<string, Snapshot>()
  #unwritten = 0
  #behindSinceMs: number | undefined
  #closed = false

  constructor(
    private readonly socket: OutboxSocket,
    private readonly limits: OutboxLimits,
    private readonly counts: OutboxCounts,
    private readonly now: () => number = Date.now,
  ) {}

  /** Since when the client has been behind (epoch ms), or undefined while it keeps up. */
  get behindSinceMs(): number | undefined {
    return this.#behindSinceMs
  }

  /** Bytes sent that the socket has not written out yet. */
  get unwrittenBytes(): number {
    return this.#unwritten
  }

  /** Snapshots waiting for the client to catch up. */
  get heldSnapshots(): number {
    return this.#held.size
  }

  deliver(snapshot: Snapshot): void {
    if (this.#closed) return
    if (this.#behindSinceMs === undefined) {
      this.#ready[snapshot.channel].push(snapshot.json)
      return
    }
    const key = `${snapshot.channel}\0${snapshot.symbol}`
    if (this.#held.has(key)) this.counts.conflated++
    this.#held.set(key, snapshot) // a key already held keeps its place: symbols go out in the order they first waited
  }

  flush(): void {
    for (const channel of ['quotes', 'depth'] as const) {
      const items = this.#ready[channel]
      if (items.length === 0) continue
      this.#ready[channel] = []
      this.counts.snapshots += items.length
      this.#send(dataMessage(channel, items))
    }
  }

  /** A reply (subscribed, error, pong): sent at once, ahead of snapshots still held. */
  reply(message: object): void {
    this.#send(JSON.stringify(message))
  }

  /** Drops everything held; nothing more is sent. */
  close(): void {
    this.#closed = true
    this.#held.clear()
    this.#ready.quotes = []
    this.#ready.depth = []
  }

  #send(text: string): void {
    if (this.#closed) return
    const bytes = Buffer.byteLength(text)
    this.#unwritten += bytes
    this.counts.messages++
    this.socket.send(text, () => {
      this.#unwritten -= bytes
      if (this.#behindSinceMs !== undefined && this.#unwritten <= this.limits.lowWaterBytes) this.#caughtUp()
    })
    if (this.#behindSinceMs === undefined && this.#unwritten > this.limits.highWaterBytes)
      this.#behindSinceMs = this.now()
  }

  /** The client has read enough: what waited goes out, the latest of each symbol once. */
  #caughtUp(): void {
    this.#behindSinceMs = undefined
    for (const snapshot of this.#held.values()) this.#ready[snapshot.channel].push(snapshot.json)
    this.#held.clear()
    this.flush()
  }
}
