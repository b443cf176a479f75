/** @module The wire format: bars and instruments as TickFlow's JSON, built once from columns. */
import { round4 } from '../domain/adjust.js'
import type { Bars } from '../domain/bars.js'
import type { Instrument } from '../domain/instrument.js'
import { MARKETS } from '../domain/market.js'

const asIs = (x: number) => x
const noise = (x: number) => Math.round(x * 1e6) / 1e6

function column(values: Float64Array, format: (x: number) => number): string {
  let s = '['
  for (let i = 0; i < values.length; i++) {
    if (i > 0) s += ','
    s += format(values[i])
  }
  return s + ']'
}

/**
 * `{"data":{...eight arrays...}}`. Adjusted prices are rounded to 4 decimals here and only here;
 * raw prices go out exactly as stored. Summed amounts of aggregated bars drop float noise below 1e-6.
 */
export function klinesJson(bars: Bars, opts: { adjusted: boolean; aggregated: boolean }): string {
  const price = opts.adjusted ? round4 : asIs
  return (
    `{"data":{"timestamp":${column(bars.timestamp, asIs)},"open":${column(bars.open, price)},"high":${column(bars.high, price)},` +
    `"low":${column(bars.low, price)},"close":${column(bars.close, price)},"volume":${column(bars.volume, asIs)},` +
    `"amount":${column(bars.amount, opts.aggregated ? noise : asIs)},"prev_close":${column(bars.prevClose, price)}}}`
  )
}

export function instrumentWire(i: Instrument) {
  return {
    symbol: i.symbol,
    code: i.code,
    exchange: i.exchange,
    region: i.region,
    name: i.name,
    type: i.type,
    ext: {
      type: MARKETS[i.exchange].kind,
      listing_date: i.listingDate,
      tick_size: i.tickSize,
      limit_up: i.limitUp,
      limit_down: i.limitDown,
      total_shares: i.totalShares,
      float_shares: i.floatShares,
    },
  }
}
