/**
 * @module What the ingest accepted, as stream snapshots: each pushed quote and depth of a batch (once
 * durable, in the order pushed) becomes TickFlow's JSON object, written once (when first wanted) for
 * every subscriber of every instance. Bars are the store's (klines, the chart page); the streams carry TickFlow's two channels.
 */
import { MARKETS, parseSymbol } from '../domain/market.js'
import { quoteOfSnapshot } from '../domain/quote.js'
import { depthJson, quoteJson } from '../encode/live-wire.js'
import type { MarketDepth } from '../domain/depth.js'
import type { MarketStore } from '../store/market-store.js'
import type { LiveEvent, LiveFeed } from './live-feed.js'
import type { Channel, Snapshot, StreamHub } from './stream-hub.js'

export function snapshotsOf(events: readonly LiveEvent[]): Snapshot[] {
  return events.map((e) => (e.kind === 'quote' ? new QuoteOut(e) : new DepthOut(e.depth)))
}

/**
 * A snapshot whose JSON is written when first read, then kept: most of a market's snapshots reach no
 * subscriber and, on one instance, no fan-out, and writing each one's JSON regardless cost the main
 * thread more than taking the push in. Classes rather than closures: a push makes thousands.
 */
abstract class WrittenWhenRead implements Snapshot {
  abstract readonly channel: Channel
  #json: string | undefined

  constructor(
    readonly symbol: string,
    readonly timestamp: number,
  ) {}

  get json(): string {
    return (this.#json ??= this.write())
  }

  protected abstract write(): string
}

class QuoteOut extends WrittenWhenRead {
  readonly channel = 'quotes'

  constructor(private readonly event: Extract<LiveEvent, { kind: 'quote' }>) {
    super(event.quote.snapshot.symbol, event.quote.snapshot.timestamp)
  }

  // Its session as of its own time: a subscriber sees the quote as the feed sent it; its name and ext
  // as GET /v1/quotes answers them for the same snapshot.
  protected write(): string {
    const { quote, name } = this.event
    const { snapshot, ext } = quote
    const market = MARKETS[parseSymbol(snapshot.symbol).exchange]
    return quoteJson(quoteOfSnapshot(snapshot, market, name, snapshot.timestamp, ext))
  }
}

class DepthOut extends WrittenWhenRead {
  readonly channel = 'depth'

  constructor(private readonly depth: MarketDepth) {
    super(depth.symbol, depth.timestamp)
  }

  protected write(): string {
    return depthJson(this.depth)
  }
}

/** Symbols a read of the store's latest quotes and depth asks for at once (an IN list on ClickHouse). */
const STORED_READ_SYMBOLS = 1_000

/**
 * The latest quote and depth of every instrument as the store keeps them, as stream snapshots: what a
 * hub held before a restart (or holds on another instance), so that a subscribe answers them at once.
 */
export async function storedSnapshots(store: MarketStore): Promise<Snapshot[]> {
  const instruments = await store.listInstruments()
  const events: LiveEvent[] = []
  for (let i = 0; i < instruments.length; i += STORED_READ_SYMBOLS) {
    const some = instruments.slice(i, i + STORED_READ_SYMBOLS)
    const symbols = some.map((x) => x.symbol)
    const [quotes, depths] = await Promise.all([store.readLiveQuotes(symbols), store.readDepths(symbols)])
    for (const { symbol, name } of some) {
      const quote = quotes.get(symbol)
      if (quote !== undefined)
        events.push({
          kind: 'quote',
          quote: { snapshot: quote.state.last, ...(quote.ext !== undefined && { ext: quote.ext }) },
          name,
        })
      const depth = depths.get(symbol)
      if (depth !== undefined) events.push({ kind: 'depth', depth })
    }
  }
  return snapshotsOf(events)
}

/** Publishes every batch the feed accepts to the hub (its subscribers, and through its fan-out every instance's); the function returned stops that. */
export function streamFeed(feed: LiveFeed, hub: StreamHub): () => void {
  return feed.subscribe((events) => hub.publish(snapshotsOf(events)))
}
