/** @module The Fastify app: plugins for compression, OpenAPI, auth and the /v1 routes; JSON for every answer. */
import compress from '@fastify/compress'
import swagger from '@fastify/swagger'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { randomUUID } from 'node:crypto'
import { SymbolContexts } from '../query/symbol-context.js'
import type { KeyStore } from '../store/key-store.js'
import type { DataVersions, MarketStore } from '../store/market-store.js'
import { authPlugin, keyAuthenticator } from './auth.js'
import { FastAnswers, serverWithFastPath } from './fast-answers.js'
import { fastifyCompressOptions } from './compression.js'
import { Metrics, observabilityPlugin, timedStore } from './observability.js'
import {
  clientErrorHandler,
  errorHandler,
  frameworkErrorHandler,
  notFoundHandler,
  schemaErrorFormatter,
  sendError,
} from './errors.js'
import { DEFAULT_HTTP_LIMITS, connectionsCheckingIntervalMs, type HttpLimits } from './limits.js'
import { guardIntegerParams } from './integer-params.js'
import { parseQueryString } from './query-string.js'
import type { LimitedOperation } from '../auth/rate-limiter.js'
import { rateLimitHook, type RateLimitOptions } from './rate-limit.js'
import { inThreadRunner, type QueryRunner } from '../runner/query-runner.js'
import { AnswerMemory } from '../runner/answer-memory.js'
import { ResponseCache } from '../runner/response-cache.js'
import { perTurn, type PerTurn } from '../lib/per-turn.js'
import { dataRoutes } from './routes.js'
import { sdkRoutes } from './sdk-routes.js'
import { pagesPlugin } from './pages.js'
import { withDocTags } from './doc-tags.js'

export interface AppOptions {
  readonly store: MarketStore
  /** The API keys (apart from the market data: a long import never holds up a key change). */
  readonly keys: KeyStore
  /** pino options, or false for no logs (tests). */
  readonly logger?: FastifyServerOptions['logger']
  /** Bytes of answers kept for repeated requests (default 64 MB; 0 disables). */
  readonly responseCacheBytes?: number
  /** Rate limiting of the spec's limited routes; absent = none (tests of other concerns). */
  readonly rateLimit?: RateLimitOptions
  /** Timeouts and caps of the HTTP server (DEFAULT_HTTP_LIMITS for what is not given). */
  readonly limits?: Partial<HttpLimits>
  /** The clock (epoch ms), read only for a quote's `session`; default Date.now. */
  readonly now?: () => number
  /** Where uncached klines answers are computed (runner/query-pool.ts); default: the main thread. Its owner closes it. */
  readonly runner?: QueryRunner
  /** Cached answers sent before Fastify's routing and hooks (fast-answers.ts); default on. Off: every request takes the full path (tests compare the two). */
  readonly fastPath?: boolean
  /** Brotli's quality for the answers @fastify/compress compresses; default BROTLI_QUALITY (the compression bench compares others). */
  readonly brotliQuality?: number
}

/** Every route of an app, as registered (method and URL): the fuzz tests walk them all. */
export const registeredRoutes = new WeakMap<FastifyInstance, { method: string; url: string; schema?: unknown }[]>()

/** URLs longer than this are 414: room for 1000 symbols on GET /v1/instruments, under Node's 16 KB head limit (431). */
export const MAX_URL_LENGTH = 15_000

/** On these paths a method without a route is a 405 with `Allow` (the API's own paths). */
const isApiPath = (url: string) => url.startsWith('/v1/') || url === '/openapi.json'
const ALL_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const

/** The store with its versions read once per event-loop turn (every request reads them, for ETags and caches). */
function sharedVersions(store: MarketStore, versions: PerTurn<DataVersions>): MarketStore {
  const dataVersion = async () => (await versions()).data
  return new Proxy(store, {
    get: (target, prop, receiver) =>
      prop === 'readVersions' ? versions : prop === 'dataVersion' ? dataVersion : Reflect.get(target, prop, receiver),
  })
}

export async function buildApp(opts: AppOptions): Promise<FastifyInstance> {
  const limits: HttpLimits = { ...DEFAULT_HTTP_LIMITS, ...opts.limits }
  let fast: FastAnswers | undefined
  const http = {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    connectionsCheckingInterval: connectionsCheckingIntervalMs(limits),
  }
  const app = Fastify({
    serverFactory: serverWithFastPath(http, limits, () => fast),
    logger: opts.logger ?? false,
    // One line per request comes from the onResponse hook below (with the key id, URL redacted).
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: () => randomUUID(),
    routerOptions: { querystringParser: parseQueryString, ignoreTrailingSlash: true },
    schemaErrorFormatter,
    clientErrorHandler,
    frameworkErrors: frameworkErrorHandler,
    bodyLimit: limits.bodyLimitBytes,
    connectionTimeout: limits.idleTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    http,
    // Our own 503 below: Fastify's has a body of its own shape.
    return503OnClosing: false,
  }).withTypeProvider<TypeBoxTypeProvider>()
  app.server.maxConnections = limits.maxConnections

  // Clients (the Python SDK) send Content-Type: application/json on GET with no body.
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    if (body === '') return done(null, undefined)
    try {
      done(null, JSON.parse(body as string))
    } catch {
      done(
        Object.assign(new Error('The request body is not valid JSON.'), {
          statusCode: 400,
          code: 'FST_ERR_CTP_INVALID_JSON',
        }),
        undefined,
      )
    }
  })

  // The methods each API path answers, as routes are registered: the 405s below follow from them.
  const allowed = new Map<string, string[]>()
  const routes: { method: string; url: string; schema?: unknown }[] = []
  registeredRoutes.set(app, routes)
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) routes.push({ method, url: route.url, schema: route.schema })
    guardIntegerParams(route)
    if (!isApiPath(route.url)) return
    const methods = allowed.get(route.url) ?? []
    allowed.set(route.url, [...methods, ...[route.method].flat()])
  })
  app.setErrorHandler(errorHandler)
  app.setNotFoundHandler(notFoundHandler)
  let closing = false
  app.addHook('preClose', async () => {
    closing = true
  })
  app.addHook('onRequest', async (req, reply) => {
    // Requests that reach a closing server (on kept-alive connections) are turned away, and the connection with them.
    if (closing)
      return sendError(
        reply.header('Connection', 'close'),
        503,
        'The server is shutting down; retry on another instance or shortly.',
      )
    if (req.url.length > MAX_URL_LENGTH)
      return sendError(reply, 414, `The URL is longer than ${MAX_URL_LENGTH} characters.`)
  })

  await app.register(compress, fastifyCompressOptions(opts.brotliQuality))
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'mdq',
        version: '1',
        description:
          'Market data query service, wire-compatible with the TickFlow API. Every /v1 route needs an API key (`X-API-Key` header or `api_key` parameter): "Authorize" takes one for "try it out".',
      },
      components: {
        securitySchemes: {
          ApiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
          ApiKeyQuery: { type: 'apiKey', in: 'query', name: 'api_key' },
        },
      },
      security: [{ ApiKeyHeader: [] }, { ApiKeyQuery: [] }],
    },
    transformObject: (doc) => ('openapiObject' in doc ? withDocTags(doc.openapiObject) : doc.swaggerObject),
  })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
  await app.register(pagesPlugin)

  if (opts.rateLimit) {
    const { limiter } = opts.rateLimit
    app.addHook('onClose', async () => limiter.close())
  }
  const metrics = new Metrics()
  const timed = timedStore(opts.store, metrics)
  const versions = perTurn(() => timed.readVersions())
  const store = sharedVersions(timed, versions)
  const contexts = new SymbolContexts(store)
  const runner = opts.runner ?? inThreadRunner(store, contexts)
  const cache = new ResponseCache(opts.responseCacheBytes ?? 64 << 20, { memory: new AnswerMemory(runner.written) })
  metrics.watch(cache, opts.store, runner)
  runner.onStoreReads?.((operation, seconds) => metrics.storeReads.observe({ operation }, seconds))
  runner.useMainStore?.(store, contexts)
  await app.register(observabilityPlugin, {
    store: opts.store,
    keys: opts.keys,
    metrics,
    limiter: opts.rateLimit?.limiter,
  })
  const authenticator = keyAuthenticator(opts.keys)
  const onOutcome = (outcome: 'limited' | 'backend_error', operation: LimitedOperation) =>
    (outcome === 'limited' ? metrics.rateLimited : metrics.limiterErrors).inc({ operation })
  const rateLimit = opts.rateLimit && { ...opts.rateLimit, onOutcome }
  if (opts.fastPath !== false) {
    fast = new FastAnswers({
      versions,
      cache,
      authenticator,
      rateLimit,
      metrics,
      log: app.log,
      closing: () => closing,
    })
    app.decorate('fastAnswers', fast)
  }
  app.decorateRequest('limitedAs', undefined)
  await app.register(
    async (v1) => {
      await v1.register(authPlugin, { authenticator })
      const routeOptions = {
        store,
        contexts,
        cache,
        runner,
        limit: rateLimit && ((operation: LimitedOperation) => rateLimitHook(rateLimit, operation)),
      }
      await v1.register(dataRoutes, routeOptions)
      await v1.register(sdkRoutes, { ...routeOptions, now: opts.now ?? Date.now })
    },
    { prefix: '/v1' },
  )

  for (const [url, methods] of [...allowed]) {
    const allow = ALL_METHODS.filter((m) => methods.includes(m))
    app.route({
      method: ALL_METHODS.filter((m) => !methods.includes(m)),
      url,
      schema: { hide: true },
      handler: async (req, reply) =>
        sendError(
          reply.header('Allow', allow.join(', ')),
          405,
          `Method ${req.method} is not allowed on ${url}; allowed: ${allow.join(', ')}.`,
        ),
    })
  }
  return app
}
