/** @module The ingest listener's bodies and answers as the OpenAPI document shows them (rows are checked by ingest/pushed-rows.ts, with the import's messages). */
import { Type } from '@sinclair/typebox'
import { MAX_PUSH_ROWS } from '../ingest/pushed-rows.js'

const rows = <T extends ReturnType<typeof Type.Object>>(row: T, what: string) =>
  Type.Array(row, {
    maxItems: MAX_PUSH_ROWS,
    description: `${what}: a JSON array, or NDJSON (Content-Type application/x-ndjson, one row a line); at most ${MAX_PUSH_ROWS} rows (more is a 413)`,
  })

const epochMs = (description: string) => Type.Integer({ description: `${description}, epoch milliseconds` })

export const QuoteRow = Type.Object(
  {
    symbol: Type.String({ description: '600000.SH, AAPL.US, 00700.HK' }),
    timestamp: epochMs('When the quote was taken'),
    last_price: Type.Number(),
    open: Type.Number({ description: "The day's open (0 before its first trade)" }),
    high: Type.Number({ description: "The day's high" }),
    low: Type.Number({ description: "The day's low" }),
    prev_close: Type.Number(),
    volume: Type.Integer({ description: 'Cumulative for the trading day, in the source unit' }),
    amount: Type.Number({ description: 'Cumulative for the trading day' }),
    region: Type.Optional(Type.String()),
    session: Type.Optional(Type.String()),
    ext: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'Kept as pushed' })),
  },
  { description: "TickFlow's Quote, as tf.stream's on_quotes hands it over" },
)

export const BarRow = Type.Object({
  symbol: Type.String(),
  period: Type.Union([Type.Literal('1m'), Type.Literal('1d')]),
  time: Type.Union([Type.Integer(), Type.String()], {
    description: 'Bar start: epoch ms, or the local date/time as the bars CSV takes it',
  }),
  open: Type.Number(),
  high: Type.Number(),
  low: Type.Number(),
  close: Type.Number(),
  volume: Type.Integer(),
  amount: Type.Optional(Type.Number()),
  prev_close: Type.Optional(Type.Number()),
})

const levels = (what: string) => Type.Array(Type.Number(), { description: `${what}, best first` })
export const DepthRow = Type.Object(
  {
    symbol: Type.String(),
    timestamp: epochMs('When the book was taken'),
    bid_prices: levels('Bid prices'),
    bid_volumes: levels('Bid volumes'),
    ask_prices: levels('Ask prices'),
    ask_volumes: levels('Ask volumes'),
    region: Type.Optional(Type.String()),
  },
  { description: "TickFlow's MarketDepth" },
)

export const QuotesBody = rows(QuoteRow, 'Quote snapshots')
export const BarsBody = rows(BarRow, 'Bars')
export const DepthBody = rows(DepthRow, 'Depth snapshots')

export const PushResponse = Type.Object({
  data: Type.Object({
    rows: Type.Integer({ description: 'Rows in the push' }),
    accepted: Type.Integer({ description: 'Rows that changed the store' }),
    stale: Type.Integer({ description: "Older than the symbol's latest: ignored" }),
    duplicate: Type.Integer({ description: "The symbol's latest again: ignored" }),
  }),
})
