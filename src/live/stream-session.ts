/**
 * @module One stream connection's subscriptions, kept against the caps of its API key: how many
 * connections and (channel, symbol) subscriptions one key may hold on this instance. A subscribe that
 * would pass the cap changes nothing and is answered with an error op (code 429).
 */
import type { Outbox } from './outbox.js'
import { parseOp } from './stream-protocol.js'
import { CHANNELS, type Channel, type StreamHub } from './stream-hub.js'

export interface StreamCaps {
  /** Open stream connections of one key on one instance. */
  readonly connectionsPerKey: number
  /** (channel, symbol) subscriptions of one key over its connections on one instance. */
  readonly subscriptionsPerKey: number
}

export const DEFAULT_STREAM_CAPS: StreamCaps = { connectionsPerKey: 50, subscriptionsPerKey: 10_000 }

interface Held {
  connections: number
  subscriptions: number
}

/** Connections and subscriptions per key on this instance, and in all (metrics). */
export class KeyStreams {
  readonly #byKey = new Map<number, Held>()
  readonly totals = { connections: 0, subscriptions: { quotes: 0, depth: 0 } as Record<Channel, number> }

  constructor(readonly caps: StreamCaps = DEFAULT_STREAM_CAPS) {}

  /** Connections the key holds here. */
  connections(keyId: number): number {
    return this.#byKey.get(keyId)?.connections ?? 0
  }

  /** Counts a connection of the key if the cap allows it (true), else changes nothing (false). */
  open(keyId: number): boolean {
    const held = this.#byKey.get(keyId) ?? { connections: 0, subscriptions: 0 }
    if (held.connections >= this.caps.connectionsPerKey) return false
    held.connections++
    this.totals.connections++
    this.#byKey.set(keyId, held)
    return true
  }

  close(keyId: number): void {
    const held = this.#byKey.get(keyId)
    if (held === undefined) return
    held.connections--
    this.totals.connections--
    if (held.connections === 0) this.#byKey.delete(keyId)
  }

  /** Takes `n` subscriptions of the key's allowance (true), or none when that would pass the cap (false). */
  take(keyId: number, channel: Channel, n: number): boolean {
    const held = this.#byKey.get(keyId)
    if (held === undefined || held.subscriptions + n > this.caps.subscriptionsPerKey) return false
    held.subscriptions += n
    this.totals.subscriptions[channel] += n
    return true
  }

  give(keyId: number, channel: Channel, n: number): void {
    const held = this.#byKey.get(keyId)
    if (held === undefined) return
    held.subscriptions -= n
    this.totals.subscriptions[channel] -= n
  }
}

/** A connection's subscriptions: ops in, replies and snapshots out through its outbox. */
export class StreamSession {
  readonly #symbols: Record<Channel, Set<string>> = { quotes: new Set(), depth: new Set() }

  /** `channels`: what the endpoint serves (the deprecated quotes endpoint: quotes only). */
  constructor(
    private readonly hub: StreamHub,
    private readonly outbox: Outbox,
    private readonly streams: KeyStreams,
    private readonly keyId: number,
    private readonly channels: readonly Channel[] = CHANNELS,
  ) {}

  /** One client message: applied and answered. */
  handle(text: string): void {
    const op = parseOp(text, this.channels)
    if ('error' in op) return this.outbox.reply({ op: 'error', code: 400, message: op.error })
    if (op.op === 'ping') return this.outbox.reply({ op: 'pong' })
    const held = this.#symbols[op.channel]
    if (op.op === 'unsubscribe') {
      const gone = op.symbols.filter((s) => held.delete(s))
      this.hub.unsubscribe(this.outbox, op.channel, gone)
      this.streams.give(this.keyId, op.channel, gone.length)
      return this.outbox.reply({ op: 'unsubscribed', channel: op.channel, symbols: gone, total: held.size })
    }
    const added = op.symbols.filter((s) => !held.has(s))
    if (!this.streams.take(this.keyId, op.channel, added.length)) {
      const { subscriptionsPerKey } = this.streams.caps
      return this.outbox.reply({
        op: 'error',
        code: 429,
        message: `Subscribing ${added.length} more would pass this API key's ${subscriptionsPerKey} subscriptions (channel and symbol pairs over its connections); nothing was subscribed. Unsubscribe some first.`,
      })
    }
    for (const s of added) held.add(s)
    const latest = this.hub.subscribe(this.outbox, op.channel, added)
    this.outbox.reply({ op: 'subscribed', channel: op.channel, symbols: op.symbols, total: held.size })
    // The latest snapshot of each new symbol, when there is one: a subscriber starts from the present.
    for (const snapshot of latest) this.outbox.deliver(snapshot)
    this.outbox.flush()
  }

  /** The connection is gone: its subscriptions end and go back to the key's allowance. */
  close(): void {
    for (const channel of CHANNELS) {
      const held = this.#symbols[channel]
      this.hub.unsubscribe(this.outbox, channel, held)
      this.streams.give(this.keyId, channel, held.size)
      held.clear()
    }
    this.outbox.close()
  }
}
