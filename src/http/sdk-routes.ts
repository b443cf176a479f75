/** @module TickFlow's other stored-data routes: klines batch, intraday, exchanges, universes, quotes; and the ones mdq cannot serve. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { Readable } from 'node:stream'
import { MdqError } from '../domain/errors.js'
import type { StoredUniverse } from '../domain/universe.js'
import { knownSymbols } from '../query/klines-batch.js'
import { exchangeInstruments, listExchanges, listUniverses, readUniverses } from '../query/listing.js'
import { quoteSymbols, readQuotes, type QuotesRequest } from '../query/quotes.js'
import { sendJson, sendWithEtag } from './etag.js'
import { gzipStream } from '../encode/gzip-member.js'
import { gzipOnSend, wantsGzip } from './compression.js'
import { rejectRepeatedOrEmpty } from './query-string.js'
import { asOfOf, checkRange, errors, answerOnMiss, QUERY_PARAMS, symbolList, type RouteOptions } from './routes.js'
import { AsOfQuery, RateLimitResponse } from './schemas.js'
import {
  ExchangeInstrumentsQuery,
  ExchangeInstrumentsResponse,
  ExchangeParams,
  ExchangesResponse,
  IntradayBatchQuery,
  IntradayQuery,
  IntradayResponse,
  KlinesBatchQuery,
  KlinesBatchResponse,
  QuotesBody,
  QuotesQuery,
  QuotesResponse,
  UniverseBatchBody,
  UniverseBatchResponse,
  UniverseParams,
  UniverseResponse,
  UniversesResponse,
} from './sdk-schemas.js'
import type { BatchTask, QueryRunner } from '../runner/query-runner.js'
import { instrumentWire, wireJson } from '../encode/wire.js'
import type { AnswerMemory } from '../runner/answer-memory.js'
import { docTag } from './doc-tags.js'
import { quoteJson } from '../encode/live-wire.js'

export interface SdkRouteOptions extends RouteOptions {
  /** The clock, for a quote's `session` and which pushed quotes are today's (epoch ms). */
  readonly now: () => number
}

/**
 * `{"data":{"SYM":{...},...}}` written out a few symbols at a time, so a 50 MB answer is never held
 * whole; gzipped as the workers deflate their groups when the client takes gzip and the runner can.
 * Symbols the store does not know are named first, in `unknown_symbols` (absent when there are none).
 */
function batchStream(
  req: FastifyRequest,
  runner: QueryRunner,
  memory: AnswerMemory,
  task: BatchTask,
  unknown: readonly string[],
): Readable {
  // Canonical symbols are ASCII letters, digits, '.' and '-': JSON.stringify escapes nothing in them.
  const head = unknown.length ? `{"unknown_symbols":${JSON.stringify(unknown)},"data":{` : '{"data":{'
  async function* json<T>(members: AsyncIterable<T | string>) {
    yield head
    yield* members
    yield '}}'
  }
  // Pieces computed in a worker's memory go back to it as each is written (answer-memory.ts).
  if (runner.deflatedBatch && wantsGzip(req))
    return gzipStream(json(runner.deflatedBatch(task)), memory.recycles ? (bytes) => memory.stream(bytes)! : undefined)
  // Other encodings, or a runner in the main thread: @fastify/compress compresses the stream as it goes.
  // Latin-1 strings stay strings through the stream (ASCII: the same bytes as UTF-8 on the socket).
  const pieces = json(runner.batch(task))
  return (
    memory.stream(pieces) ??
    Readable.from(pieces, { objectMode: false, ...(runner.textPieces && { encoding: 'latin1' }) })
  )
}

const summaryWire = (u: StoredUniverse) => ({
  id: u.id,
  name: u.name,
  region: u.region,
  category: u.category,
  description: u.description,
  symbol_count: u.symbols.length,
})
const detailWire = (u: StoredUniverse) => ({ ...summaryWire(u), symbols: u.symbols })
const commaList = (value: string | undefined) =>
  (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')

export const sdkRoutes: FastifyPluginAsyncTypebox<SdkRouteOptions> = async (
  app,
  { store, contexts, cache, limit, now, runner },
) => {
  // Batch, intraday and quotes each take one token of the key's klines bucket; listings are unlimited.
  const klinesLimited = limit ? { onRequest: limit('klines') } : {}
  // gzipOnSend: answers a runner gzipped (batch streams, and intraday answers when nothing keeps them) go out labelled gzip.
  const klinesOptions = { ...klinesLimited, onSend: gzipOnSend }
  const limitedErrors = { ...errors, 429: RateLimitResponse }
  app.addHook('preValidation', async (req) => rejectRepeatedOrEmpty(req.query, QUERY_PARAMS))

  app.get(
    '/klines/batch',
    {
      ...klinesOptions,
      schema: {
        ...docTag('klines'),
        summary: 'Klines of up to 100 instruments, each exactly as /v1/klines answers it',
        querystring: KlinesBatchQuery,
        response: { 200: KlinesBatchResponse, ...limitedErrors },
      },
    },
    async (req, reply) => {
      const q = req.query
      checkRange(q.start_time, q.end_time)
      const { known, unknown } = await knownSymbols(contexts, symbolList(q.symbols, 100))
      const range = { count: q.count, startTime: q.start_time, endTime: q.end_time, adjust: q.adjust, ...asOfOf(q) }
      return sendWithEtag(req, reply, store, cache, async () =>
        batchStream(
          req,
          runner,
          cache.memory,
          { kind: 'klines-batch', symbols: known, period: q.period, range },
          unknown,
        ),
      )
    },
  )

  app.get(
    '/klines/intraday',
    {
      ...klinesOptions,
      schema: {
        ...docTag('klines'),
        summary: "Minute bars of the symbol's latest trading day with 1m bars, unadjusted",
        querystring: IntradayQuery,
        response: { 200: IntradayResponse, ...limitedErrors },
      },
    },
    async (req, reply) => {
      const q = req.query
      const asOf = asOfOf(q)
      return sendWithEtag(
        req,
        reply,
        store,
        cache,
        answerOnMiss(req, reply, cache, runner, {
          kind: 'intraday',
          symbol: q.symbol,
          period: q.period,
          count: q.count,
          ...asOf,
        }),
        q.symbol,
      )
    },
  )

  app.get(
    '/klines/intraday/batch',
    {
      ...klinesOptions,
      schema: {
        ...docTag('klines'),
        summary: 'Intraday minute bars of up to 100 instruments',
        querystring: IntradayBatchQuery,
        response: { 200: KlinesBatchResponse, ...limitedErrors },
      },
    },
    async (req, reply) => {
      const q = req.query
      const asOf = asOfOf(q)
      const { known, unknown } = await knownSymbols(contexts, symbolList(q.symbols, 100))
      return sendWithEtag(req, reply, store, cache, async () =>
        batchStream(
          req,
          runner,
          cache.memory,
          { kind: 'intraday-batch', symbols: known, period: q.period, count: q.count, ...asOf },
          unknown,
        ),
      )
    },
  )

  app.get(
    '/exchanges',
    {
      schema: {
        ...docTag('reference'),
        summary: 'Exchanges with at least one instrument, and how many',
        response: { 200: ExchangesResponse, ...errors },
      },
    },
    async (req, reply) =>
      sendWithEtag(req, reply, store, cache, async () => wireJson({ data: await listExchanges(store) })),
  )

  app.get(
    '/exchanges/:exchange/instruments',
    {
      schema: {
        ...docTag('reference'),
        summary: 'Every instrument of one exchange, optionally of one security type',
        params: ExchangeParams,
        querystring: ExchangeInstrumentsQuery,
        response: { 200: ExchangeInstrumentsResponse, ...errors },
      },
    },
    async (req, reply) => {
      const { asOf } = asOfOf(req.query)
      const { exchange, instruments } = await exchangeInstruments(store, req.params.exchange, req.query.type, asOf)
      return sendWithEtag(req, reply, store, cache, async () =>
        wireJson({ exchange, count: instruments.length, data: instruments.map(instrumentWire) }),
      )
    },
  )

  app.get(
    '/universes',
    {
      schema: {
        ...docTag('reference'),
        summary: 'Universes: the four built-in ones and the imported ones',
        querystring: AsOfQuery,
        response: { 200: UniversesResponse, ...errors },
      },
    },
    async (req, reply) => {
      const { asOf } = asOfOf(req.query)
      return sendWithEtag(req, reply, store, cache, async () =>
        wireJson({ data: (await listUniverses(store, asOf)).map(summaryWire) }),
      )
    },
  )

  app.get(
    '/universes/:id',
    {
      schema: {
        ...docTag('reference'),
        summary: 'One universe with its symbols',
        params: UniverseParams,
        querystring: AsOfQuery,
        response: { 200: UniverseResponse, ...errors },
      },
    },
    async (req, reply) => {
      const [universe] = await readUniverses(store, [req.params.id], asOfOf(req.query).asOf)
      if (!universe)
        throw new MdqError(
          'UNKNOWN_UNIVERSE',
          `Unknown universe '${req.params.id.slice(0, 64)}' (GET /v1/universes lists them).`,
        )
      return sendWithEtag(req, reply, store, cache, async () => wireJson({ data: detailWire(universe) }))
    },
  )

  app.post(
    '/universes/batch',
    {
      schema: {
        ...docTag('reference'),
        summary: 'Several universes with their symbols; unknown ids left out',
        querystring: AsOfQuery,
        body: UniverseBatchBody,
        response: { 200: UniverseBatchResponse, ...errors },
      },
    },
    async (req, reply) => {
      const found = await readUniverses(store, req.body.ids, asOfOf(req.query).asOf)
      return sendJson(reply, wireJson({ data: Object.fromEntries(found.map((u) => [u.id, detailWire(u)])) }))
    },
  )

  const quotes = async (request: QuotesRequest) => {
    const found = await readQuotes(store, contexts, await quoteSymbols(store, request), now(), request.asOf)
    return `{"data":[${found.map(quoteJson).join(',')}]}`
  }
  app.get(
    '/quotes',
    {
      ...klinesLimited,
      schema: {
        ...docTag('SDK extras'),
        summary: 'Quotes: the latest pushed today, else derived from the latest stored bars',
        querystring: QuotesQuery,
        response: { 200: QuotesResponse, ...limitedErrors },
      },
    },
    async (req, reply) =>
      sendJson(
        reply,
        await quotes({
          symbols: commaList(req.query.symbols),
          universes: commaList(req.query.universes),
          ...asOfOf(req.query),
        }),
      ),
  )
  app.post(
    '/quotes',
    {
      ...klinesLimited,
      schema: {
        ...docTag('SDK extras'),
        summary: 'Quotes (body form, for long lists)',
        querystring: AsOfQuery,
        body: QuotesBody,
        response: { 200: QuotesResponse, ...limitedErrors },
      },
    },
    async (req, reply) =>
      sendJson(
        reply,
        await quotes({ symbols: req.body.symbols ?? [], universes: req.body.universes ?? [], ...asOfOf(req.query) }),
      ),
  )
}
