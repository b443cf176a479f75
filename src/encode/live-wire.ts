/** @module Quotes and depth as TickFlow's JSON objects (`Quote`, `MarketDepth`): the same text for /v1/quotes, /v1/depth and the streams. */
import type { MarketDepth } from '../domain/depth.js'
import { MARKETS, parseSymbol } from '../domain/market.js'
import type { Quote } from '../domain/quote.js'
import { wireJson } from './wire.js'

/** A quote's JSON text; a pushed quote's own `ext` members over the computed ones. */
export function quoteJson(q: Quote): string {
  return wireJson({
    symbol: q.symbol,
    region: q.region,
    timestamp: q.timestamp,
    last_price: q.lastPrice,
    open: q.open,
    high: q.high,
    low: q.low,
    volume: q.volume,
    amount: q.amount,
    prev_close: q.prevClose,
    session: q.session,
    ext: {
      type: q.kind,
      name: q.name,
      change_amount: q.changeAmount,
      change_pct: q.changePct,
      amplitude: q.amplitude,
      ...q.pushedExt,
    },
  })
}

/** A depth snapshot's JSON text. */
export function depthJson(d: MarketDepth): string {
  return wireJson({
    symbol: d.symbol,
    region: MARKETS[parseSymbol(d.symbol).exchange].region,
    timestamp: d.timestamp,
    bid_prices: d.bidPrices,
    bid_volumes: d.bidVolumes,
    ask_prices: d.askPrices,
    ask_volumes: d.askVolumes,
  })
}
