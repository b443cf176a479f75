/** @module The wire format: bars and instruments as TickFlow's JSON, built once from columns. */
import type { Bars } from '../domain/bars.js'
import type { Instrument } from '../domain/instrument.js'
import { MARKETS } from '../domain/market.js'
import { JsonBytes, writeKlinesColumns, type KlinesFormat } from './json-bytes.js'
import { price4 } from './json-digits.js'

// Number formatting is most of the cost of a large answer; V8's double-to-string takes ~100 ns.
// Values with at most 4 decimals (all prices we emit) are written from integers instead: exact,
// and about 3x faster. Anything else goes through String(), the shortest round-trip form.
const FRACTION = Array.from({ length: 10_000 }, (_, f) =>
  f === 0 ? '' : `.${String(f).padStart(4, '0').replace(/0+$/, '')}`,
)
const MAX_FAST = 1e11

/** The JSON text of a finite number, the same value JSON.stringify would give. */
export function formatNumber(x: number): string {
  const abs = x < 0 ? -x : x
  if (abs <= Number.MAX_SAFE_INTEGER && x === Math.floor(x)) {
    if (abs < 1e9) return String(x)
    const hi = Math.floor(abs / 1e6) // epoch ms: two small integers print faster than one large
    const lo = abs - hi * 1e6
    return (x < 0 ? '-' : '') + hi + (lo < 100_000 ? String(lo).padStart(6, '0') : String(lo))
  }
  if (abs < MAX_FAST) {
    const r = Math.round(abs * 10_000)
    if (r / 10_000 === abs) {
      const ip = Math.floor(r / 10_000)
      return (x < 0 ? '-' : '') + ip + FRACTION[r - ip * 10_000]
    }
  }
  return Number.isFinite(x) ? String(x) : 'null' // as JSON.stringify; stored values are checked finite
}

/**
 * A price, amount or ratio: like formatNumber but always with a fraction part (`266.0`), so that
 * clients typing numbers by their JSON token (Python's json, pandas) always see a float.
 */
export function formatFloat(x: number): string {
  const s = formatNumber(x)
  return x === Math.floor(x) && Math.abs(x) < 1e21 ? `${s}.0` : s
}

/** An adjusted price rounded to 4 decimals (price4: never to 0.0 unless 0), written from the scaled integer in one step; always with a fraction part. */
export function formatPrice4(x: number): string {
  const abs = x < 0 ? -x : x
  const r = Math.round(x * 10_000) // as round4 rounds: half up, also for negatives
  if (!(abs < MAX_FAST) || (r === 0 && x !== 0)) return formatFloat(price4(x))
  const ar = r < 0 ? -r : r
  const ip = Math.floor(ar / 10_000)
  return (r < 0 ? '-' : '') + ip + (FRACTION[ar - ip * 10_000] || '.0')
}

/** How bars of a query are written: rounded when adjusted, amount noise dropped when aggregated. */
export function klinesFormat(period: string, adjust: string): KlinesFormat {
  return { adjusted: adjust !== 'none', aggregated: period !== '1m' && period !== '1d' }
}

/** `{"data":{...eight arrays...}}` as bytes (json-bytes.ts writes them). */
export function klinesJson(bars: Bars, opts: KlinesFormat): Buffer {
  const out = new JsonBytes()
  out.ascii('{"data":')
  writeKlinesColumns(out, bars, opts)
  out.ascii('}')
  return Buffer.concat(out.take())
}

/** Keys whose numbers are prices, amounts or ratios: written with a fraction part wherever they appear. */
const FLOAT_KEYS: ReadonlySet<string> = new Set([
  'open',
  'high',
  'low',
  'close',
  'amount',
  'prev_close',
  'last_price',
  'ex_factor',
  'tick_size',
  'limit_up',
  'limit_down',
  'change_amount',
  'change_pct',
  'amplitude',
  'turnover_rate',
  'bid_prices',
  'ask_prices',
])

/** JSON.stringify for answers, except that numbers under FLOAT_KEYS always carry a fraction part. */
export function wireJson(value: unknown, key = ''): string {
  if (typeof value === 'number') return FLOAT_KEYS.has(key) ? formatFloat(value) : formatNumber(value)
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null'
  if (Array.isArray(value)) return `[${value.map((v) => wireJson(v, key)).join(',')}]`
  const parts: string[] = []
  for (const [k, v] of Object.entries(value)) if (v !== undefined) parts.push(`${JSON.stringify(k)}:${wireJson(v, k)}`)
  return `{${parts.join(',')}}`
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
      // TickFlow's per-market extras: name_en on CN instruments, lot_size on HK ones.
      ...(i.region === 'CN' ? { name_en: i.nameEn } : {}),
      ...(i.region === 'HK' ? { lot_size: i.lotSize } : {}),
    },
  }
}
