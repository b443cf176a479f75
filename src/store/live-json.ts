/** @module Live rows as both backends keep them: the latest quote (with the builder's state) and depth of a symbol, as JSON text. */
import type { MarketDepth } from '../domain/depth.js'
import type { LiveQuote } from './market-store.js'

/** A live quote as its row keeps it: JSON of the builder's state (plain numbers: doubles round-trip exactly) and the ext. */
export const liveQuoteJson = (q: LiveQuote): string => JSON.stringify({ state: q.state, ext: q.ext })

export function liveQuoteOf(symbol: string, json: string): LiveQuote {
  const { state, ext } = JSON.parse(json) as Omit<LiveQuote, 'symbol'>
  return { symbol, state, ...(ext !== undefined && { ext }) }
}

export const depthJson = (d: MarketDepth): string =>
  JSON.stringify([d.timestamp, d.bidPrices, d.bidVolumes, d.askPrices, d.askVolumes])

export function depthOf(symbol: string, json: string): MarketDepth {
  const [timestamp, bidPrices, bidVolumes, askPrices, askVolumes] = JSON.parse(json) as [
    number,
    number[],
    number[],
    number[],
    number[],
  ]
  return { symbol, timestamp, bidPrices, bidVolumes, askPrices, askVolumes }
}
