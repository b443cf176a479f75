/**
 * @module What the ingest accepted, as stream snapshots: each pushed quote and depth of a batch (once
 * durable, in the order pushed) becomes TickFlow's JSON object, written once for every subscriber of
 * every instance. Bars are the store's (klines, the chart page); the streams carry TickFlow's two channels.
 */
import { MARKETS, parseSymbol } from '../domain/market.js'
import { quoteOfSnapshot } from '../domain/quote.js'
import { depthJson, quoteJson } from '../encode/live-wire.js'
import type { LiveEvent, LiveFeed } from './live-feed.js'
import type { Snapshot, StreamHub } from './stream-hub.js'

export function snapshotsOf(events: readonly LiveEvent[]): Snapshot[] {
  const out: Snapshot[] = []
  for (const e of events) {
    if (e.kind === 'quote') {
      const { snapshot, ext } = e.quote
      const market = MARKETS[parseSymbol(snapshot.symbol).exchange]
      // Its session as of its own time: a subscriber sees the quote as the feed sent it.
      const quote = quoteOfSnapshot(snapshot, market, null, snapshot.timestamp, ext)
      out.push({ channel: 'quotes', symbol: snapshot.symbol, timestamp: snapshot.timestamp, json: quoteJson(quote) })
    } else if (e.kind === 'depth')
      out.push({ channel: 'depth', symbol: e.depth.symbol, timestamp: e.depth.timestamp, json: depthJson(e.depth) })
  }
  return out
}

/** Publishes every batch the feed accepts to the hub (its subscribers, and through its fan-out every instance's); the function returned stops that. */
export function streamFeed(feed: LiveFeed, hub: StreamHub): () => void {
  return feed.subscribe((events) => hub.publish(snapshotsOf(events)))
}
