/** @module Snapshots as the stream hub carries them (TickFlow's Quote and MarketDepth objects), for tests publishing in-process. */
import { wireJson } from '../../src/encode/wire.js'
import type { Snapshot } from '../../src/live/stream-hub.js'

/** A TickFlow Quote as the hub carries it. */
export function quoteSnapshot(symbol: string, timestamp: number, lastPrice: number, volume = 1000): Snapshot {
  const quote = {
    symbol,
    region: 'CN',
    timestamp,
    last_price: lastPrice,
    open: 10,
    high: Math.max(10, lastPrice),
    low: Math.min(10, lastPrice),
    volume,
    amount: volume * lastPrice,
    prev_close: 10,
    session: 'regular',
    ext: { type: 'cn_equity', name: null, change_amount: lastPrice - 10, change_pct: (lastPrice - 10) / 10 },
  }
  return { channel: 'quotes', symbol, timestamp, json: wireJson(quote) }
}

export function depthSnapshot(symbol: string, timestamp: number, bid: number): Snapshot {
  const depth = {
    symbol,
    region: 'CN',
    timestamp,
    bid_prices: [bid, bid - 0.01],
    bid_volumes: [100, 200],
    ask_prices: [bid + 0.01, bid + 0.02],
    ask_volumes: [300, 400],
  }
  return { channel: 'depth', symbol, timestamp, json: wireJson(depth) }
}
