/**
 * @module The ingest listener (`mdq serve --ingest-port`): a Fastify app of its own, built from the
 * same parts as the public API (createApp's limits and errors, the auth plugin, the request log
 * line), with keys of scope `ingest` and bodies up to INGEST_BODY_BYTES. The public API stays read-only.
 */
import swagger from '@fastify/swagger'
import type { FastifyInstance, FastifyServerOptions } from 'fastify'
import { MdqError } from '../domain/errors.js'
import type { Ingest } from '../ingest/live-ingest.js'
import type { KeyStore } from '../store/key-store.js'
import { authPlugin, keyAuthenticator } from './auth.js'
import { createApp, limitsOf } from './base-app.js'
import { withDocTags } from './doc-tags.js'
import { ingestRoutes } from './ingest-routes.js'
import type { HttpLimits } from './limits.js'
import { requestLogPlugin, type Metrics } from './observability.js'

/** Bodies up to this size (documented; more is a 413): 10,000 quotes or depth rows of ten levels fit. */
export const INGEST_BODY_BYTES = 16 << 20

export interface IngestAppOptions {
  readonly ingest: Ingest
  readonly keys: KeyStore
  readonly metrics: Metrics
  readonly logger?: FastifyServerOptions['logger']
  readonly limits?: Partial<HttpLimits>
  /** The clock (epoch ms), for refusing snapshots stamped on a later day; default Date.now. */
  readonly now?: () => number
}

const NDJSON = 'application/x-ndjson'

export async function buildIngestApp(opts: IngestAppOptions): Promise<FastifyInstance> {
  const { app, finish } = createApp({
    logger: opts.logger,
    limits: limitsOf({ bodyLimitBytes: INGEST_BODY_BYTES, ...opts.limits }),
  })
  // Bodies are JSON or NDJSON, sent as they are: Fastify's text/plain parser would hand a route a string.
  app.removeContentTypeParser('text/plain')
  app.addHook('onRequest', async (req) => {
    const encoding = req.headers['content-encoding']
    if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity')
      throw new MdqError(
        'UNSUPPORTED_MEDIA_TYPE',
        `Content-Encoding '${encoding.slice(0, 40)}' is not accepted here; send the body uncompressed.`,
      )
  })
  // NDJSON: one row a line, as a JSON array of them.
  app.addContentTypeParser(NDJSON, { parseAs: 'string' }, (_req, body, done) => {
    const rows: unknown[] = []
    const lines = (body as string).split('\n')
    for (let i = 0; i < lines.length; i++) {
      if (lines[i].trim() === '') continue
      try {
        rows.push(JSON.parse(lines[i]))
      } catch {
        return done(
          Object.assign(new Error(`Line ${i + 1} of the NDJSON body is not valid JSON.`), { statusCode: 400 }),
          undefined,
        )
      }
    }
    done(null, rows)
  })
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'mdq ingest',
        version: '1',
        description:
          'The ingest listener of mdq (mdq serve --ingest-port): live quotes, bars and depth pushed in, each push durable before its answer. Keys of scope ingest or admin.',
      },
      components: { securitySchemes: { ApiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key' } } },
      security: [{ ApiKeyHeader: [] }],
    },
    transformObject: (doc) => ('openapiObject' in doc ? withDocTags(doc.openapiObject) : doc.swaggerObject),
  })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
  await app.register(requestLogPlugin, { metrics: opts.metrics })
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }))
  const authenticator = keyAuthenticator(opts.keys)
  await app.register(
    async (v1) => {
      await v1.register(authPlugin, { authenticator, scope: 'ingest' })
      await v1.register(ingestRoutes, { ingest: opts.ingest, now: opts.now ?? Date.now })
    },
    { prefix: '/v1' },
  )
  finish()
  return app
}
