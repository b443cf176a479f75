/** @module What was pushed, read back: GET /v1/depth, and today's pushed quotes for /v1/quotes. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { MdqError } from '../domain/errors.js'
import { isTodays, liveSession } from '../domain/live-quote.js'
import { MARKETS, parseSymbol } from '../domain/market.js'
import { wireJson } from '../encode/wire.js'
import type { StreamHub } from '../live/stream-hub.js'
import { docTag } from './doc-tags.js'
import { sendJson } from './etag.js'
import { DepthQuery, DepthResponse } from './live-schemas.js'
import { rejectRepeatedOrEmpty } from './query-string.js'
import { errors, QUERY_PARAMS, type RouteOptions } from './routes.js'
import { RateLimitResponse } from './schemas.js'

/**
 * Today's pushed quote of each symbol that has one (exchange-local day), as its wire JSON with the
 * session as of `nowMs`; a symbol whose latest push is of an earlier day is left to the stored bars.
 */
export function liveQuotes(hub: StreamHub, symbols: readonly string[], nowMs: number): Map<string, string> {
  const out = new Map<string, string>()
  for (const symbol of symbols) {
    const held = hub.latest('quotes', symbol)
    const market = MARKETS[parseSymbol(symbol).exchange]
    if (held === undefined || !isTodays(market, held.timestamp, nowMs)) continue
    const quote = JSON.parse(held.json) as Record<string, unknown>
    out.set(symbol, wireJson({ ...quote, session: liveSession(market, held.timestamp, nowMs) }))
  }
  return out
}

export const liveRoutes: FastifyPluginAsyncTypebox<RouteOptions & { hub: StreamHub }> = async (app, { hub, limit }) => {
  app.addHook('preValidation', async (req) => rejectRepeatedOrEmpty(req.query, QUERY_PARAMS))
  app.get(
    '/depth',
    {
      // As /v1/quotes: one token of the key's klines bucket.
      ...(limit && { onRequest: limit('klines') }),
      schema: {
        ...docTag('live'),
        summary: 'The latest order book depth pushed for a symbol',
        querystring: DepthQuery,
        response: { 200: DepthResponse, ...errors, 429: RateLimitResponse },
      },
    },
    async (req, reply) => {
      const { symbol } = parseSymbol(req.query.symbol)
      const held = hub.latest('depth', symbol)
      if (held === undefined)
        throw new MdqError(
          'NO_LIVE_DATA',
          `No depth was pushed for ${symbol}; depth is served as pushed to the ingest API (POST /v1/ingest/depth).`,
        )
      return sendJson(reply, `{"data":${held.json}}`)
    },
  )
}
