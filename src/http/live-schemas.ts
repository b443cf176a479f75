/** @module TypeBox schemas of the live routes: GET /v1/depth (TickFlow's MarketDepth). */
import { Type } from '@sinclair/typebox'

export const DepthQuery = Type.Object({
  symbol: Type.String({ description: 'One symbol, e.g. 600000.SH' }),
})

const levels = (what: string) => Type.Array(Type.Number(), { description: `${what}, best first` })
export const MarketDepth = Type.Object({
  symbol: Type.String(),
  region: Type.String({ description: 'CN, HK or US' }),
  timestamp: Type.Integer({ description: 'When the book was taken, epoch ms' }),
  bid_prices: levels('Bid prices'),
  bid_volumes: levels('Bid volumes'),
  ask_prices: levels('Ask prices'),
  ask_volumes: levels('Ask volumes'),
})

export const DepthResponse = Type.Object({
  data: Type.Object(MarketDepth.properties, { description: 'The latest depth pushed for the symbol' }),
})
