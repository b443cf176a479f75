/**
 * @module What the ingest accepted, as stream snapshots: each pushed quote and depth of a batch (once
 * durable, in the order pushed) becomes TickFlow's JSON object, written once (when first wanted) for
 * every subscriber of every instance. Bars are the store's (klines, the chart page); the streams carry TickFlow's two channels.
 */
import { MARKETS, parseSymbol } from '../domain/market.js'
import { quoteOfSnapshot } from '../domain/quote.js'
import { depthJson, quoteJson } from '../encode/live-wire.js'
import type { LiveEvent, LiveFeed } from './live-feed.js'
import type { Channel, Snapshot, StreamHub } from './stream-hub.js'

export function snapshotsOf(events: readonly LiveEvent[]): Snapshot[] {
  const out: Snapshot[] = []
  for (const e of events) {
    if (e.kind === 'quote') {
      const { snapshot, ext } = e.quote
      const market = MARKETS[parseSymbol(snapshot.symbol).exchange]
      // Its session as of its own time: a subscriber sees the quote as the feed sent it; its name and
      // ext as GET /v1/quotes answers them for the same snapshot.
      const json = () => quoteJson(quoteOfSnapshot(snapshot, market, e.name, snapshot.timestamp, ext))
      out.push(writtenWhenRead('quotes', snapshot.symbol, snapshot.timestamp, json))
    } else if (e.kind === 'depth')
      out.push(writtenWhenRead('depth', e.depth.symbol, e.depth.timestamp, () => depthJson(e.depth)))
  }
  return out
}

/**
 * A snapshot whose JSON is written when first read, then kept: most of a market's snapshots reach no
 * subscriber and, on one instance, no fan-out, and writing each one's JSON regardless cost the
 * main thread more than taking the push in.
 */
function writtenWhenRead(channel: Channel, symbol: string, timestamp: number, write: () => string): Snapshot {
  let json: string | undefined
  return {
    channel,
    symbol,
    timestamp,
    get json() {
      return (json ??= write())
    },
  }
}

/** Publishes every batch the feed accepts to the hub (its subscribers, and through its fan-out every instance's); the function returned stops that. */
export function streamFeed(feed: LiveFeed, hub: StreamHub): () => void {
  return feed.subscribe((events) => hub.publish(snapshotsOf(events)))
}
