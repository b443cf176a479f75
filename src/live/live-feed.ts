/**
 * @module What live data this process accepted, as it becomes durable: every pushed quote and depth
 * snapshot, for listeners (WebSocket streams, a fan-out to other instances); and the latest quote and
 * depth of each symbol. Bars are read from the store (klines, the chart page).
 */
import type { MarketDepth } from '../domain/depth.js'
import type { QuoteSnapshot } from '../domain/minute-bars.js'

/** An accepted quote as pushed: its checked figures and, when given, TickFlow's `ext` object. */
export interface PushedQuote {
  readonly snapshot: QuoteSnapshot
  readonly ext?: Readonly<Record<string, string | number | boolean | null>>
}

export type LiveEvent =
  | {
      readonly kind: 'quote'
      readonly quote: PushedQuote
      /** The symbol's instrument name as the store held it when the batch was written (null: it has none). */
      readonly name: string | null
    }
  | { readonly kind: 'depth'; readonly depth: MarketDepth }

export type LiveListener = (events: readonly LiveEvent[]) => void

export interface LiveFeed {
  /** Called once per accepted batch, after it is durable, with its events in the order they happened. */
  publish(events: readonly LiveEvent[]): void
  /** `listener` gets every later batch of events; the function returned stops that. */
  subscribe(listener: LiveListener): () => void
  /** The latest quote of a symbol published here (this process), if any. */
  latestQuote(symbol: string): PushedQuote | undefined
  /** The latest depth of a symbol published here (this process), if any. */
  latestDepth(symbol: string): MarketDepth | undefined
}

/** The feed of one process: listeners are called in turn, synchronously; one that throws is reported and kept. */
export class InProcessLiveFeed implements LiveFeed {
  readonly #listeners = new Set<LiveListener>()
  readonly #quotes = new Map<string, PushedQuote>()
  readonly #depth = new Map<string, MarketDepth>()

  constructor(private readonly onListenerError: (err: unknown) => void = () => {}) {}

  publish(events: readonly LiveEvent[]): void {
    if (events.length === 0) return
    for (const e of events) {
      if (e.kind === 'quote') this.#quotes.set(e.quote.snapshot.symbol, e.quote)
      else if (e.kind === 'depth') this.#depth.set(e.depth.symbol, e.depth)
    }
    for (const listener of this.#listeners) {
      try {
        listener(events)
      } catch (err) {
        this.onListenerError(err)
      }
    }
  }

  subscribe(listener: LiveListener): () => void {
    this.#listeners.add(listener)
    return () => void this.#listeners.delete(listener)
  }

  latestQuote(symbol: string): PushedQuote | undefined {
    return this.#quotes.get(symbol)
  }

  latestDepth(symbol: string): MarketDepth | undefined {
    return this.#depth.get(symbol)
  }
}
