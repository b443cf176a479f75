/**
 * @module Who is subscribed to what, and the latest snapshot of each symbol and channel: a published
 * batch of snapshots goes to every subscriber of each symbol, each snapshot serialized once. Snapshots
 * come from this instance (`publish`, also handed to the fan-out to other instances) or from another
 * one (`receive`). No I/O here: subscribers and the fan-out are passed in.
 */

export const CHANNELS = ['quotes', 'depth'] as const
/** TickFlow's stream channels: `quotes` (Quote objects) and `depth` (MarketDepth objects). */
export type Channel = (typeof CHANNELS)[number]

export function isChannel(value: unknown): value is Channel {
  return (CHANNELS as readonly unknown[]).includes(value)
}

/** One snapshot as subscribers receive it. */
export interface Snapshot {
  readonly channel: Channel
  /** Canonical. */
  readonly symbol: string
  /** The snapshot's own time (epoch ms): one older than the symbol's latest on its channel is not passed on. */
  readonly timestamp: number
  /** Its TickFlow JSON object, written once for every subscriber. */
  readonly json: string
}

/** A batch of snapshots and when it was published at the instance that accepted it (epoch ms: the fan-out lag). */
export interface SnapshotBatch {
  readonly snapshots: readonly Snapshot[]
  readonly publishedMs: number
}

/** A connection's end of the hub: snapshots are delivered one by one, then flushed once per batch. */
export interface Subscriber {
  deliver(snapshot: Snapshot): void
  /** The batch is complete: send what was delivered. */
  flush(): void
}

/**
 * Where a batch came from: this instance, another one through the fan-out, or the fan-out's record
 * of the latest snapshots, read when it (re)subscribes.
 */
export type Origin = 'local' | 'remote' | 'catch-up'

/** Counts the hub keeps for metrics (read when scraped). */
export interface HubCounts {
  /** Snapshots passed on to subscribers. */
  readonly snapshots: number
  /** Snapshots older than the latest of their symbol and channel, or repeating it: not passed on. */
  readonly stale: number
}

type Index<T> = Record<Channel, Map<string, T>>
const index = <T>(): Index<T> => ({ quotes: new Map(), depth: new Map() })

export class StreamHub {
  readonly #subscribers: Index<Set<Subscriber>> = index()
  readonly #latest: Index<Snapshot> = index()
  readonly #outbound = new Set<(batch: SnapshotBatch) => void>()
  readonly #delivered = new Set<(batch: SnapshotBatch, origin: Origin, nowMs: number) => void>()
  #counts = { snapshots: 0, stale: 0 }

  constructor(private readonly now: () => number = Date.now) {}

  get counts(): HubCounts {
    return this.#counts
  }

  /** (channel, symbol) pairs with at least one subscriber. */
  subscribedPairs(channel: Channel): number {
    return this.#subscribers[channel].size
  }

  /** Adds `symbols` (canonical) to the subscriber's channel; answers the latest snapshot of each that has one. */
  subscribe(sub: Subscriber, channel: Channel, symbols: readonly string[]): Snapshot[] {
    const latest: Snapshot[] = []
    for (const symbol of symbols) {
      let set = this.#subscribers[channel].get(symbol)
      if (set === undefined) this.#subscribers[channel].set(symbol, (set = new Set()))
      set.add(sub)
      const held = this.#latest[channel].get(symbol)
      if (held !== undefined) latest.push(held)
    }
    return latest
  }

  unsubscribe(sub: Subscriber, channel: Channel, symbols: Iterable<string>): void {
    const bySymbol = this.#subscribers[channel]
    for (const symbol of symbols) {
      const set = bySymbol.get(symbol)
      if (set === undefined) continue
      set.delete(sub)
      if (set.size === 0) bySymbol.delete(symbol)
    }
  }

  /** The latest snapshot of a symbol on a channel, from this instance or another. */
  latest(channel: Channel, symbol: string): Snapshot | undefined {
    return this.#latest[channel].get(symbol)
  }

  /** Snapshots accepted by this instance: to its subscribers, then to the fan-out. */
  publish(snapshots: readonly Snapshot[]): void {
    if (snapshots.length === 0) return
    const batch = { snapshots, publishedMs: this.now() }
    this.#pass(batch, 'local')
    for (const send of this.#outbound) send(batch)
  }

  /** Snapshots another instance accepted (from the fan-out): to this instance's subscribers only. */
  receive(batch: SnapshotBatch, origin: Exclude<Origin, 'local'> = 'remote'): void {
    this.#pass(batch, origin)
  }

  /** `send` gets every batch published here (the fan-out to other instances); the function returned stops that. */
  onPublish(send: (batch: SnapshotBatch) => void): () => void {
    this.#outbound.add(send)
    return () => void this.#outbound.delete(send)
  }

  /** `seen` is told of every batch once it has been handed to the subscribers (metrics); the function returned stops that. */
  onDelivered(seen: (batch: SnapshotBatch, origin: Origin, nowMs: number) => void): () => void {
    this.#delivered.add(seen)
    return () => void this.#delivered.delete(seen)
  }

  #pass(batch: SnapshotBatch, origin: Origin): void {
    const touched = new Set<Subscriber>()
    for (const snapshot of batch.snapshots) {
      const latest = this.#latest[snapshot.channel]
      const before = latest.get(snapshot.symbol)
      // Per symbol and channel, subscribers see time move forward only (two instances' pushes meet
      // here), and a snapshot once (the fan-out's catch-up repeats some).
      if (
        before !== undefined &&
        (snapshot.timestamp < before.timestamp ||
          (snapshot.timestamp === before.timestamp && snapshot.json === before.json))
      ) {
        this.#counts.stale++
        continue
      }
      latest.set(snapshot.symbol, snapshot)
      this.#counts.snapshots++
      const subs = this.#subscribers[snapshot.channel].get(snapshot.symbol)
      if (subs === undefined) continue
      for (const sub of subs) {
        sub.deliver(snapshot)
        touched.add(sub)
      }
    }
    for (const sub of touched) sub.flush()
    if (this.#delivered.size === 0) return
    const nowMs = this.now()
    for (const seen of this.#delivered) seen(batch, origin, nowMs)
  }
}
