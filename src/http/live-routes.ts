/** @module What was pushed, read back: GET /v1/depth (the latest depth the store holds for a symbol). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { MdqError } from '../domain/errors.js'
import { parseSymbol } from '../domain/market.js'
import { depthJson } from '../encode/live-wire.js'
import { docTag } from './doc-tags.js'
import { sendJson } from './etag.js'
import { DepthQuery, DepthResponse } from './live-schemas.js'
import { rejectRepeatedOrEmpty } from './query-string.js'
import { errors, QUERY_PARAMS, type RouteOptions } from './routes.js'
import { RateLimitResponse } from './schemas.js'

export const liveRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { store, limit }) => {
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
      const held = (await store.readDepths([symbol])).get(symbol)
      if (held === undefined)
        throw new MdqError(
          'NO_LIVE_DATA',
          `No depth was pushed for ${symbol}; depth is served as pushed to the ingest API (POST /v1/ingest/depth).`,
        )
      return sendJson(reply, `{"data":${depthJson(held)}}`)
    },
  )
}
