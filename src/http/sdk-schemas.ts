/** @module TypeBox schemas of TickFlow's other stored-data routes (batch, intraday, exchanges, universes, quotes). */
import { Type, type Static } from '@sinclair/typebox'
import { ADJUSTS, type Adjust } from '../domain/adjust.js'
import { SECURITY_TYPES } from '../domain/instrument.js'
import { EXCHANGES } from '../domain/market.js'
import { PERIODS, type MinutePeriod, type Period } from '../domain/period.js'
import { asOfParam, epochMs, InstrumentRecord, KlinesColumns } from './schemas.js'

const symbols = Type.String({
  description: 'Comma-separated symbols, 1..100; unknown ones are left out of `data` and listed in `unknown_symbols`',
})
const INTRADAY_PERIODS = ['1m', '5m', '10m', '15m', '30m', '60m'] as const satisfies readonly MinutePeriod[]

export const KlinesBatchQuery = Type.Object({
  symbols,
  period: Type.Unsafe<Period>({ type: 'string', enum: [...PERIODS], default: '1d', description: 'Kline period' }),
  count: Type.Integer({
    minimum: 1,
    maximum: 10_000,
    default: 100,
    description: 'The latest `count` bars of the range, per symbol',
  }),
  start_time: epochMs('Range start, epoch ms, inclusive'),
  end_time: epochMs('Range end, epoch ms, inclusive'),
  adjust: Type.Unsafe<Adjust>({
    type: 'string',
    enum: [...ADJUSTS],
    default: 'forward',
    description: 'Price adjustment',
  }),
  as_of: asOfParam,
})
export type KlinesBatchQuery = Static<typeof KlinesBatchQuery>

const intradayPeriod = Type.Unsafe<MinutePeriod>({
  type: 'string',
  enum: [...INTRADAY_PERIODS],
  default: '1m',
  description: 'Minute period',
})
const intradayCount = Type.Optional(
  Type.Integer({ minimum: 1, maximum: 10_000, description: 'The latest `count` bars of the day; absent = all' }),
)
export const IntradayQuery = Type.Object({
  symbol: Type.String({ description: 'Instrument, `<code>.<exchange>`' }),
  period: intradayPeriod,
  count: intradayCount,
  as_of: asOfParam,
})
export const IntradayBatchQuery = Type.Object({
  symbols,
  period: intradayPeriod,
  count: intradayCount,
  as_of: asOfParam,
})

export const KlinesBatchResponse = Type.Object({
  unknown_symbols: Type.Optional(
    Type.Array(Type.String(), {
      description: 'The symbols asked for that this store does not hold (canonical, in order); absent when none',
    }),
  ),
  data: Type.Record(Type.String(), KlinesColumns, { description: 'Bars per canonical symbol' }),
})
export const IntradayResponse = Type.Object({ data: KlinesColumns })

export const ExchangesResponse = Type.Object({
  data: Type.Array(
    Type.Object({
      exchange: Type.String(),
      region: Type.String(),
      count: Type.Integer({ description: 'Instruments of the exchange in this store' }),
    }),
  ),
})
export const ExchangeParams = Type.Object({
  exchange: Type.String({ description: `Exchange code: ${EXCHANGES.join(', ')}` }),
})
export const ExchangeInstrumentsQuery = Type.Object({
  type: Type.Optional(Type.String({ description: `Security class: ${SECURITY_TYPES.join(', ')}` })),
  as_of: asOfParam,
})
export const ExchangeInstrumentsResponse = Type.Object({
  exchange: Type.String(),
  count: Type.Integer(),
  data: Type.Array(InstrumentRecord),
})

const nullableString = Type.Union([Type.String(), Type.Null()])
const universeFields = {
  id: Type.String(),
  name: Type.String(),
  region: nullableString,
  category: Type.Union([Type.String({ description: 'equity, etf or index' }), Type.Null()]),
  description: nullableString,
  symbol_count: Type.Integer(),
}
export const UniverseSummary = Type.Object(universeFields)
export const UniverseDetail = Type.Object({ ...universeFields, symbols: Type.Array(Type.String()) })
export const UniversesResponse = Type.Object({ data: Type.Array(UniverseSummary) })
export const UniverseResponse = Type.Object({ data: UniverseDetail })
export const UniverseParams = Type.Object({ id: Type.String({ description: 'Universe id, e.g. CN_Equity_A' }) })
export const UniverseBatchBody = Type.Object({ ids: Type.Array(Type.String(), { minItems: 1, maxItems: 100 }) })
export const UniverseBatchResponse = Type.Object({
  data: Type.Record(Type.String(), UniverseDetail, { description: 'Detail per id; unknown ids left out' }),
})

export const QuotesQuery = Type.Object({
  symbols: Type.Optional(Type.String({ description: 'Comma-separated symbols' })),
  universes: Type.Optional(
    Type.String({ description: 'Comma-separated universe ids; their members are quoted too (1..1000 symbols in all)' }),
  ),
  as_of: asOfParam,
})
export const QuotesBody = Type.Object({
  symbols: Type.Optional(Type.Array(Type.String(), { maxItems: 1000 })),
  universes: Type.Optional(Type.Array(Type.String(), { maxItems: 100 })),
})
const price = (description: string) => Type.Number({ description })
export const QuoteRecord = Type.Object({
  symbol: Type.String(),
  region: Type.String(),
  timestamp: Type.Integer({
    description: 'Start of the latest stored bar (1m when that day has minute bars, else 1d), epoch ms',
  }),
  last_price: price("That bar's close"),
  open: price('Open of the trading day'),
  high: price('High of the trading day'),
  low: price('Low of the trading day'),
  volume: Type.Integer(),
  amount: Type.Number(),
  prev_close: price('Previous close of the trading day'),
  session: Type.String({
    description:
      "`regular` when the quote's last bar belongs to the regular session running now (same day, not after now), else `closed`",
  }),
  ext: Type.Object({
    type: Type.String({ description: 'cn_equity, hk_equity or us_equity' }),
    name: nullableString,
    change_amount: price('last_price - prev_close, rounded to 4 decimals (the exact decimal difference)'),
    change_pct: price('change_amount / prev_close, a fraction to 6 decimals (-0.006135 = -0.6135 %)'),
    amplitude: price('(high - low) / prev_close, to 6 decimals'),
  }),
})
export const QuotesResponse = Type.Object({
  data: Type.Array(QuoteRecord, { description: 'Quotes derived from stored bars (no live feed), raw prices' }),
})
