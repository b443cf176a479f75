/** @module The /v1 data routes: each is a schema plus one call into query/. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify'
import type { LimitedOperation } from '../auth/rate-limiter.js'
import { parseAsOf, type AsOf } from '../domain/as-of.js'
import { readExFactors, readInstruments } from '../query/reference.js'
import type { SymbolContexts } from '../query/symbol-context.js'
import type { MarketStore } from '../store/market-store.js'
import { sendJson, sendWithEtag } from './etag.js'
import { badParam } from './errors.js'
import { gzipOnSend, wantsGzip } from './compression.js'
import type { AnswerTask, QueryRunner } from '../runner/query-runner.js'
import type { Production, ResponseCache } from '../runner/response-cache.js'
import { rejectRepeatedOrEmpty } from './query-string.js'
import {
  AsOfQuery,
  ErrorResponse,
  ExFactorsQuery,
  ExFactorsResponse,
  InstrumentsBody,
  InstrumentsResponse,
  KlinesQuery,
  KlinesResponse,
  RateLimitResponse,
  SearchQuery,
  SymbolsQuery,
} from './schemas.js'
import { instrumentWire, wireJson } from '../encode/wire.js'
import { docTag } from './doc-tags.js'

export interface RouteOptions {
  readonly store: MarketStore
  readonly contexts: SymbolContexts
  readonly cache: ResponseCache
  /** Where uncached klines answers are computed (the main thread or the worker pool). */
  readonly runner: QueryRunner
  /** The rate-limit hook of a limited operation, when limiting is on. */
  readonly limit?: (operation: LimitedOperation) => onRequestAsyncHookHandler
}

/** Query parameters of the data routes: each may be given once and never empty. */
export const QUERY_PARAMS = [
  'symbol',
  'symbols',
  'period',
  'count',
  'start_time',
  'end_time',
  'adjust',
  'q',
  'limit',
  'type',
  'universes',
  'start_date',
  'end_date',
  'latest',
  'as_of',
]

export const errors = { 400: ErrorResponse, 401: ErrorResponse, 404: ErrorResponse, 503: ErrorResponse }

/**
 * The symbols of a batch route: a comma-separated string or a list (each entry may itself be
 * comma-separated: `{"symbols": "a,b"}` reaches here as ["a,b"] after Ajv's array coercion);
 * 1..max entries (malformed ones are refused later).
 */
export function symbolList(value: string | readonly string[], max: number): string[] {
  const list = (typeof value === 'string' ? [value] : value)
    .flatMap((s) => s.split(','))
    .map((s) => s.trim())
    .filter((s) => s !== '')
  if (list.length === 0) throw badParam(`Parameter 'symbols' must name at least one symbol.`)
  if (list.length > max) throw badParam(`Parameter 'symbols' must name at most ${max} symbols (got ${list.length}).`)
  return list
}

/** The `as_of` of a request, checked (a 400 naming it), as `{ asOf }` to spread into a query; `{}` without one. */
export function asOfOf(q: { readonly as_of?: string }): { asOf?: AsOf } {
  return q.as_of === undefined ? {} : { asOf: parseAsOf(q.as_of) }
}

export function checkRange(start?: number, end?: number): void {
  if (start !== undefined && end !== undefined && start > end)
    throw badParam(`Parameter 'start_time' (${start}) must not be after 'end_time' (${end}).`)
}

/**
 * A klines answer computed by the runner on a miss: with a response cache, the plain answer
 * (with its gzip member attached when the client takes gzip: the cache keeps both), whose memory the
 * cache hands back to the runner once it has left the cache and is no longer being written. Without
 * one, the answer for this request alone, handed back by the cache once the response is written (or
 * was not needed: a 304); a client that takes gzip may get it gzipped by the runner (the route's
 * onSend is gzipOnSend). A response that never finishes (the client left) leaves its memory to the GC.
 * The `produce` of `task` for sendWithEtag; `how` is the cache's (an answer it computes in the background).
 */
export const answerOnMiss =
  (req: FastifyRequest, reply: FastifyReply, cache: ResponseCache, runner: QueryRunner, task: AnswerTask) =>
  async (how?: Production): Promise<Buffer> => {
    const kept = cache.maxBytes > 0
    const body = await runner.answer(task, {
      ...(wantsGzip(req) && { gzip: kept ? 'beside' : 'instead' }),
      ...(how?.background && { background: true }),
    })
    if (!kept) cache.memory.passing(body, reply.raw)
    return body
  }

export const dataRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { store, cache, limit, runner }) => {
  const limited = (operation: LimitedOperation) => (limit ? { onRequest: limit(operation) } : {})
  app.addHook('preValidation', async (req) => rejectRepeatedOrEmpty(req.query, QUERY_PARAMS))

  app.get(
    '/klines',
    {
      ...limited('klines'),
      onSend: gzipOnSend,
      schema: {
        ...docTag('klines'),
        summary: 'Kline series of one instrument (columnar)',
        querystring: KlinesQuery,
        response: { 200: KlinesResponse, ...errors, 429: RateLimitResponse },
      },
    },
    async (req, reply) => {
      const q = req.query
      checkRange(q.start_time, q.end_time)
      const asOf = asOfOf(q)
      return sendWithEtag(
        req,
        reply,
        store,
        cache,
        answerOnMiss(req, reply, cache, runner, {
          kind: 'klines',
          symbol: q.symbol,
          period: q.period,
          range: { count: q.count, startTime: q.start_time, endTime: q.end_time, adjust: q.adjust, ...asOf },
        }),
        q.symbol,
      )
    },
  )

  app.get(
    '/klines/ex-factors',
    {
      ...limited('ex-factors'),
      schema: {
        ...docTag('klines'),
        summary: 'Ex-rights / ex-dividend factors of instruments',
        querystring: ExFactorsQuery,
        response: { 200: ExFactorsResponse, ...errors, 429: RateLimitResponse },
      },
    },
    async (req, reply) => {
      const q = req.query
      checkRange(q.start_time, q.end_time)
      const symbols = symbolList(q.symbols, 100)
      const { asOf } = asOfOf(q)
      return sendWithEtag(req, reply, store, cache, async () => {
        const events = await readExFactors(store, symbols, q.start_time, q.end_time, asOf)
        const data: Record<string, { timestamp: number; ex_factor: number }[]> = {}
        for (const [symbol, list] of events)
          data[symbol] = list.map((e) => ({ timestamp: e.timestamp, ex_factor: e.exFactor }))
        return wireJson({ data })
      })
    },
  )

  const instruments = async (symbols: string[], asOf?: AsOf) =>
    wireJson({ data: (await readInstruments(store, symbols, asOf)).map(instrumentWire) })
  app.get(
    '/instruments',
    {
      schema: {
        ...docTag('reference'),
        summary: 'Instrument metadata',
        querystring: SymbolsQuery(1000),
        response: { 200: InstrumentsResponse, ...errors },
      },
    },
    async (req, reply) => {
      const symbols = symbolList(req.query.symbols, 1000)
      const { asOf } = asOfOf(req.query)
      return sendWithEtag(req, reply, store, cache, () => instruments(symbols, asOf))
    },
  )
  app.get(
    '/instruments/search',
    {
      schema: {
        ...docTag('reference'),
        summary: 'Search instruments by symbol, code or name (an mdq extension, used by the chart page)',
        querystring: SearchQuery,
        response: { 200: InstrumentsResponse, ...errors },
      },
    },
    async (req, reply) =>
      sendJson(
        reply,
        wireJson({ data: (await store.searchInstruments(req.query.q, req.query.limit)).map(instrumentWire) }),
      ),
  )
  app.post(
    '/instruments',
    {
      schema: {
        ...docTag('reference'),
        summary: 'Instrument metadata (body form, used by the TickFlow SDK)',
        querystring: AsOfQuery,
        body: InstrumentsBody,
        response: { 200: InstrumentsResponse, ...errors },
      },
    },
    async (req, reply) => {
      const symbols = symbolList(req.body.symbols, 1000)
      const { asOf } = asOfOf(req.query)
      return sendWithEtag(req, reply, store, cache, () => instruments(symbols, asOf))
    },
  )
}
