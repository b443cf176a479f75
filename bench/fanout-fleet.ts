/**
 * @module The fan-out bench's WebSocket clients, in the bench process: per instance a set that each
 * subscribe to a slice of the symbols and one that subscribes to all of them, every one timing each
 * snapshot from its push to its arrival and checking that each symbol's cycles arrive in order
 * without a gap; and a client that never reads, replaced by a new one whenever the server drops it.
 */
import { createHistogram, performance, type RecordableHistogram } from 'node:perf_hooks'
import WebSocket from 'ws'
import { cycleOf, pushOf, type FanoutFeed } from './fanout-feed.js'

/** `http://host:port` -> the stream endpoint with the key in `api_key`, as the SDK connects. */
const streamUrl = (base: string, key: string) =>
  `${base.replace(/^http/, 'ws')}/v1/ws/stream?api_key=${encodeURIComponent(key)}`

interface Received {
  readonly op: string
  readonly data?: readonly { readonly symbol: string; readonly timestamp: number }[]
}

/** Opens a stream, subscribes `symbols` to quotes, and resolves once the server confirms them. */
function subscribed(url: string, symbols: readonly string[], onQuotes: (m: Received) => void): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { perMessageDeflate: false })
    ws.on('error', reject) // after the subscribe, an error is followed by 'close', which the watcher records
    ws.once('open', () => ws.send(JSON.stringify({ op: 'subscribe', channel: 'quotes', symbols })))
    ws.on('message', (data) => {
      const m = JSON.parse(String(data)) as Received
      if (m.op === 'subscribed') resolve(ws)
      else if (m.op === 'error') reject(new Error(`subscribe refused: ${String(data)}`))
      else if (m.op === 'quotes') onQuotes(m)
    })
  })
}

/** A client that keeps up: its latencies go into its instance's histogram. */
export class Watcher {
  /** Per subscribed symbol (by index), the last cycle received; -1 before the first. */
  readonly #last = new Map<number, number>()
  received = 0
  /** Cycles that never arrived (skipped over, or missing at the end). */
  gaps = 0
  /** Snapshots at or before a cycle already received. */
  reordered = 0
  /** Snapshots of a symbol it did not subscribe to. */
  strays = 0
  /** The close code and reason, if the server closed the stream. */
  closed: string | undefined
  #ws: WebSocket | undefined

  constructor(
    private readonly feed: FanoutFeed,
    private readonly index: ReadonlyMap<string, number>,
    private readonly pushedAt: Float64Array,
    private readonly latency: RecordableHistogram,
    private readonly warmupPushes: number,
    symbols: readonly number[],
  ) {
    for (const k of symbols) this.#last.set(k, -1)
  }

  async open(url: string): Promise<void> {
    const symbols = [...this.#last.keys()].map((k) => this.feed.symbols[k])
    this.#ws = await subscribed(url, symbols, (m) => this.#quotes(m))
    this.#ws.once('close', (code, reason) => (this.closed = `${code} ${String(reason)}`))
  }

  /** Whether every subscribed symbol's last cycle has arrived. */
  caughtUp(): boolean {
    for (const cycle of this.#last.values()) if (cycle < this.feed.cycles - 1) return false
    return true
  }

  /** Counts what never arrived as gaps (once, at the end) and closes the stream. */
  finish(): void {
    for (const cycle of this.#last.values()) this.gaps += this.feed.cycles - 1 - cycle
    this.#ws?.terminate()
  }

  #quotes(m: Received): void {
    const now = performance.now()
    for (const q of m.data ?? []) {
      this.received++
      const push = pushOf(this.feed, q.timestamp)
      if (push >= this.warmupPushes) this.latency.record(Math.max(1, Math.round((now - this.pushedAt[push]) * 1000)))
      const k = this.index.get(q.symbol) ?? -1
      const last = this.#last.get(k)
      if (last === undefined) {
        this.strays++
        continue
      }
      const cycle = cycleOf(this.feed, push)
      if (cycle <= last) this.reordered++
      else {
        this.gaps += cycle - last - 1
        this.#last.set(k, cycle)
      }
    }
  }
}

/** A client that subscribes to every symbol, then never reads again (its socket paused). */
export class StalledClient {
  #ws: WebSocket | undefined
  /** Streams it has opened (one more after each drop). */
  opened = 0

  constructor(
    private readonly url: string,
    private readonly symbols: readonly string[],
  ) {}

  async open(): Promise<void> {
    this.#ws?.terminate()
    this.#ws = await subscribed(this.url, this.symbols, () => {})
    this.#ws.pause()
    this.opened++
  }

  close(): void {
    this.#ws?.terminate()
  }
}

export interface FleetOptions {
  readonly clientsPerInstance: number
  readonly symbolsPerClient: number
  /** Pushes before this one are not timed (the first look-ups of every symbol on the server). */
  readonly warmupPushes: number
}

/** Every instance's watchers, and a latency histogram (microseconds) per instance. */
export class Fleet {
  readonly latency: RecordableHistogram[]
  readonly watchers: Watcher[][]

  private constructor(instances: number) {
    this.latency = Array.from({ length: instances }, () => createHistogram())
    this.watchers = Array.from({ length: instances }, () => [])
  }

  /**
   * Client c (over all instances, in order) subscribes to symbols c * perClient onwards (wrapping),
   * so with 200 clients of 50 each every symbol has one subscriber per instance of two; and each
   * instance has one client of all the symbols.
   */
  static async open(
    feed: FanoutFeed,
    bases: readonly string[],
    key: string,
    pushedAt: Float64Array,
    opts: FleetOptions,
  ): Promise<Fleet> {
    const fleet = new Fleet(bases.length)
    const index = new Map(feed.symbols.map((s, k) => [s, k]))
    const n = feed.symbols.length
    for (const [i, base] of bases.entries()) {
      const slices: number[][] = []
      for (let c = 0; c < opts.clientsPerInstance; c++) {
        const first = (i * opts.clientsPerInstance + c) * opts.symbolsPerClient
        slices.push(Array.from({ length: opts.symbolsPerClient }, (_, j) => (first + j) % n))
      }
      slices.push(Array.from({ length: n }, (_, k) => k))
      const watchers = slices.map(
        (symbols) => new Watcher(feed, index, pushedAt, fleet.latency[i], opts.warmupPushes, symbols),
      )
      // A few handshakes at a time: hundreds at once would time the bench's own burst.
      for (let at = 0; at < watchers.length; at += 20)
        await Promise.all(watchers.slice(at, at + 20).map((w) => w.open(streamUrl(base, key))))
      fleet.watchers[i] = watchers
    }
    return fleet
  }

  static stalled(base: string, key: string, symbols: readonly string[]): StalledClient {
    return new StalledClient(streamUrl(base, key), symbols)
  }

  caughtUp(): boolean {
    return this.watchers.every((ws) => ws.every((w) => w.closed !== undefined || w.caughtUp()))
  }

  finish(): void {
    for (const ws of this.watchers) for (const w of ws) w.finish()
  }

  /** Sums over one instance's watchers. */
  totals(instance: number): { received: number; gaps: number; reordered: number; strays: number; closed: string[] } {
    const ws = this.watchers[instance]
    const sum = (f: (w: Watcher) => number) => ws.reduce((s, w) => s + f(w), 0)
    return {
      received: sum((w) => w.received),
      gaps: sum((w) => w.gaps),
      reordered: sum((w) => w.reordered),
      strays: sum((w) => w.strays),
      closed: ws.flatMap((w) => (w.closed === undefined ? [] : [w.closed])),
    }
  }
}
