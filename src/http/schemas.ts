/** @module TypeBox schemas: request validation, handler types and the OpenAPI document, from one source. */
import { Type, type Static } from '@sinclair/typebox'
import { ADJUSTS, type Adjust } from '../domain/adjust.js'
import { PERIODS, type Period } from '../domain/period.js'

/** A time bound: epoch ms, 0 or from 10^10 on (domain/epoch-ms.ts refuses the rest, with the value meant). */
export const epochMs = (description: string) =>
  Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: Number.MAX_SAFE_INTEGER,
      description: `${description}; 0 or from 10000000000 on (epoch seconds, microseconds and dates are refused with the value meant)`,
    }),
  )

/** `as_of` (an mdq extension): every stored-data route answers as it was known then. */
export const asOfParam = Type.Optional(
  Type.String({
    description:
      'The answer as known then (an mdq extension): YYYY-MM-DD (through the end of that day in the exchange zone) or epoch ms',
  }),
)

/**
 * The OpenAPI document with every parameter that has a default marked optional: validation fills
 * the default in, so a handler's type has it, but a client need not send it.
 */
export function withOptionalDefaults<T extends { paths?: unknown }>(doc: T): T {
  type Parameter = { required?: boolean; schema?: { default?: unknown } }
  const paths = (doc.paths ?? {}) as Record<string, Record<string, { parameters?: Parameter[] } | undefined>>
  for (const ops of Object.values(paths))
    for (const op of Object.values(ops ?? {}))
      for (const p of op?.parameters ?? []) if (p.required && p.schema?.default !== undefined) p.required = false
  return doc
}

export const KlinesQuery = Type.Object({
  symbol: Type.String({ description: 'Instrument, `<code>.<exchange>`, e.g. 600000.SH, AAPL.US, 00700.HK' }),
  period: Type.Unsafe<Period>({ type: 'string', enum: [...PERIODS], default: '1d', description: 'Kline period' }),
  count: Type.Integer({
    minimum: 1,
    maximum: 10_000,
    default: 100,
    description: 'The latest `count` bars of the range are returned',
  }),
  start_time: epochMs('Range start, epoch ms, inclusive'),
  end_time: epochMs('Range end, epoch ms, inclusive; page back with the first returned timestamp - 1'),
  adjust: Type.Unsafe<Adjust>({
    type: 'string',
    enum: [...ADJUSTS],
    default: 'forward',
    description: 'Price adjustment',
  }),
  as_of: asOfParam,
})
export type KlinesQuery = Static<typeof KlinesQuery>

const numbers = (description: string) => Type.Array(Type.Number(), { description })
export const KlinesColumns = Type.Object(
  {
    timestamp: numbers('Bar start, epoch ms (exchange-local interval start)'),
    open: numbers('Open'),
    high: numbers('High'),
    low: numbers('Low'),
    close: numbers('Close'),
    volume: numbers('Volume: lots of 100 shares for CN, shares for HK and US'),
    amount: numbers('Turnover in the quote currency'),
    prev_close: numbers('Previous close (the ex-rights reference price on ex-dates)'),
  },
  {
    description: 'Eight arrays of equal length, ascending by timestamp; prices and amount always carry a fraction part',
  },
)
export const KlinesResponse = Type.Object({ data: KlinesColumns })

export const SymbolsQuery = (max: number) =>
  Type.Object({
    symbols: Type.String({ description: `Comma-separated symbols, 1..${max}` }),
    as_of: asOfParam,
  })

/** Only `as_of`: the listing routes and the body forms take it in the query string. */
export const AsOfQuery = Type.Object({ as_of: asOfParam })

export const ExFactorsQuery = Type.Object({
  symbols: Type.String({ description: 'Comma-separated symbols, 1..100' }),
  start_time: epochMs('Lower bound on the event timestamp, inclusive'),
  end_time: epochMs('Upper bound on the event timestamp, inclusive'),
  as_of: asOfParam,
})
export type ExFactorsQuery = Static<typeof ExFactorsQuery>

export const ExFactorsResponse = Type.Object({
  data: Type.Record(Type.String(), Type.Array(Type.Object({ timestamp: Type.Integer(), ex_factor: Type.Number() })), {
    description: 'Events per canonical symbol, ascending; a known symbol without events maps to []',
  }),
})

export const InstrumentsBody = Type.Object({
  symbols: Type.Union([Type.Array(Type.String(), { minItems: 1, maxItems: 1000 }), Type.String()]),
})
export type InstrumentsBody = Static<typeof InstrumentsBody>

const nullable = <T extends ReturnType<typeof Type.Number> | ReturnType<typeof Type.String>>(t: T) =>
  Type.Union([t, Type.Null()])
export const InstrumentRecord = Type.Object({
  symbol: Type.String(),
  code: Type.String(),
  exchange: Type.String(),
  region: Type.String(),
  name: nullable(Type.String()),
  type: nullable(Type.String({ description: 'Security class: stock etf index bond fund futures options other' })),
  ext: Type.Object({
    type: Type.String({ description: 'cn_equity, hk_equity or us_equity' }),
    listing_date: nullable(Type.String({ description: 'YYYY-MM-DD' })),
    tick_size: nullable(Type.Number()),
    limit_up: nullable(Type.Number()),
    limit_down: nullable(Type.Number()),
    total_shares: nullable(Type.Number()),
    float_shares: nullable(Type.Number()),
    name_en: Type.Optional(nullable(Type.String({ description: 'English name (CN instruments only)' }))),
    lot_size: Type.Optional(
      Type.Union([Type.Integer({ description: 'Shares per board lot (HK instruments only)' }), Type.Null()]),
    ),
  }),
})
export const InstrumentsResponse = Type.Object({ data: Type.Array(InstrumentRecord) })

export const ErrorResponse = Type.Object({ code: Type.Integer(), message: Type.String() })
export const RateLimitResponse = Type.Object({
  code: Type.Literal(429),
  message: Type.String(),
  retry_after_ms: Type.Integer(),
})

export const SearchQuery = Type.Object({
  q: Type.String({ minLength: 1, maxLength: 64, description: 'Text in the symbol, code or name' }),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
})
