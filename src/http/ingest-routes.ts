/** @module The ingest listener's /v1 routes: each a body of rows, checked, then one durable write (ingest/). */
import type { FastifyPluginAsync, FastifySchemaCompiler } from 'fastify'
import type { Ingest, PushOutcome } from '../ingest/live-ingest.js'
import { checkBars, checkDepth, checkQuotes, pushedRows } from '../ingest/pushed-rows.js'
import { docTag } from './doc-tags.js'
import { ErrorResponse } from './schemas.js'
import { BarsBody, DepthBody, PushResponse, QuotesBody } from './ingest-schemas.js'

/**
 * The body schemas document the routes (OpenAPI) but check nothing: rows are checked by the
 * import's rules, whose messages name the row and field as an import names line and column.
 */
const documentsOnly: FastifySchemaCompiler<unknown> = () => (value) => ({ value })

const answers = {
  200: PushResponse,
  400: ErrorResponse,
  401: ErrorResponse,
  403: ErrorResponse,
  413: ErrorResponse,
  415: ErrorResponse,
  503: ErrorResponse,
}

const answer = (outcome: PushOutcome) => ({ data: outcome })

export interface IngestRouteOptions {
  readonly ingest: Ingest
  /** The server's clock (epoch ms): a snapshot stamped on a later day is refused. */
  readonly now: () => number
}

export const ingestRoutes: FastifyPluginAsync<IngestRouteOptions> = async (app, { ingest, now }) => {
  app.post(
    '/ingest/quotes',
    {
      validatorCompiler: documentsOnly,
      schema: {
        ...docTag('ingest'),
        summary: 'Push quote snapshots: minute and day bars are built from them, session by session',
        body: QuotesBody,
        response: answers,
      },
    },
    async (req) => answer(await ingest.pushQuotes(checkQuotes(pushedRows(req.body), now()))),
  )
  app.post(
    '/ingest/bars',
    {
      validatorCompiler: documentsOnly,
      schema: {
        ...docTag('ingest'),
        summary: 'Push 1m or 1d bars, stored as an import stores them',
        body: BarsBody,
        response: answers,
      },
    },
    async (req) => answer(await ingest.pushBars(checkBars(pushedRows(req.body)))),
  )
  app.post(
    '/ingest/depth',
    {
      validatorCompiler: documentsOnly,
      schema: {
        ...docTag('ingest'),
        summary: 'Push order book depth: the latest per symbol is kept',
        body: DepthBody,
        response: answers,
      },
    },
    async (req) => answer(await ingest.pushDepth(checkDepth(pushedRows(req.body), now()))),
  )
}
