/** @module The Fastify app: plugins for compression, OpenAPI, auth and the /v1 routes; JSON for every answer. */
import compress from '@fastify/compress'
import swagger from '@fastify/swagger'
import type { FastifyInstance, FastifyServerOptions } from 'fastify'
import { SymbolContexts } from '../query/symbol-context.js'
import type { KeyStore } from '../store/key-store.js'
import type { DataVersions, MarketStore } from '../store/market-store.js'
import { authPlugin, keyAuthenticator } from './auth.js'
import { FastAnswers, serverWithFastPath } from './fast-answers.js'
import { fastifyCompressOptions } from './compression.js'
import { Metrics, observabilityPlugin, timedStore } from './observability.js'
import { createApp, limitsOf } from './base-app.js'
import type { HttpLimits } from './limits.js'
import type { LimitedOperation } from '../auth/rate-limiter.js'
import { rateLimitHook, type RateLimitOptions } from './rate-limit.js'
import { inThreadRunner, type QueryRunner } from '../runner/query-runner.js'
import { AnswerMemory } from '../runner/answer-memory.js'
import { ResponseCache } from '../runner/response-cache.js'
import { perTurn, type PerTurn } from '../lib/per-turn.js'
import { dataRoutes } from './routes.js'
import { sdkRoutes } from './sdk-routes.js'
import { financialsRoutes } from './financials-routes.js'
import { pagesPlugin } from './pages.js'
import { withDocTags } from './doc-tags.js'
import { withOptionalDefaults } from './schemas.js'
import { StreamHub } from '../live/stream-hub.js'
import { DEFAULT_STREAM_CAPS, KeyStreams, type StreamCaps } from '../live/stream-session.js'
import { DEFAULT_STREAM_LIMITS, StreamConnections, type StreamLimits } from './stream-connections.js'
import { registerWebSockets, streamRoutes } from './stream-routes.js'
import { watchStreams } from './stream-metrics.js'
import { liveRoutes } from './live-routes.js'

/** The live half: where pushed snapshots are published, and how streams are bounded. */
export interface LiveOptions {
  /** Snapshots published here reach this app's subscribers (and, through a fan-out on it, other instances'). */
  readonly hub: StreamHub
  /** The fan-out to other instances (Redis), for /readyz. */
  readonly fanout?: { reachable(): boolean }
  readonly caps?: Partial<StreamCaps>
  readonly limits?: Partial<StreamLimits>
}

export interface AppOptions {
  readonly store: MarketStore
  /** The API keys (apart from the market data: a long import never holds up a key change). */
  readonly keys: KeyStore
  /** pino options, or false for no logs (tests). */
  readonly logger?: FastifyServerOptions['logger']
  /** Bytes of answers kept for repeated requests (default 64 MB; 0 disables). */
  readonly responseCacheBytes?: number
  /** How long after an answer was last known current it may be sent while its data's newer answer is computed (default 0: never; ResponseCache). */
  readonly staleWhileRevalidateMs?: number
  /** Rate limiting of the spec's limited routes; absent = none (tests of other concerns). */
  readonly rateLimit?: RateLimitOptions
  /** Timeouts and caps of the HTTP server (DEFAULT_HTTP_LIMITS for what is not given). */
  readonly limits?: Partial<HttpLimits>
  /** The clock (epoch ms), read only for a quote's `session`; default Date.now. */
  readonly now?: () => number
  /** Where uncached klines answers are computed (runner/query-pool.ts); default: the main thread. Its owner closes it. */
  readonly runner?: QueryRunner
  /** The metrics to count into (one registry for every listener of a server); default: the app's own. */
  readonly metrics?: Metrics
  /** Cached answers sent before Fastify's routing and hooks (fast-answers.ts); default on. Off: every request takes the full path (tests compare the two). */
  readonly fastPath?: boolean
  /** Brotli's quality for the answers @fastify/compress compresses; default BROTLI_QUALITY (the compression bench compares others). */
  readonly brotliQuality?: number
  /** The live half; default: a hub of the app's own (one instance, no fan-out) and the default caps. */
  readonly live?: LiveOptions
}

export { MAX_URL_LENGTH, registeredRoutes } from './base-app.js'

/** The store with its versions read once per event-loop turn (every request reads them, for ETags and caches). */
function sharedVersions(store: MarketStore, versions: PerTurn<DataVersions>): MarketStore {
  const dataVersion = async () => (await versions()).data
  return new Proxy(store, {
    get: (target, prop, receiver) =>
      prop === 'readVersions' ? versions : prop === 'dataVersion' ? dataVersion : Reflect.get(target, prop, receiver),
  })
}

export async function buildApp(opts: AppOptions): Promise<FastifyInstance> {
  let fast: FastAnswers | undefined
  const { app, closing, finish } = createApp({
    logger: opts.logger,
    limits: limitsOf(opts.limits),
    serverFactory: (http, limits) => serverWithFastPath(http, limits, () => fast),
  })

  const authenticator = keyAuthenticator(opts.keys)
  const hub = opts.live?.hub ?? new StreamHub()
  const connections = new StreamConnections(
    hub,
    new KeyStreams({ ...DEFAULT_STREAM_CAPS, ...opts.live?.caps }),
    authenticator,
    { ...DEFAULT_STREAM_LIMITS, ...opts.live?.limits },
  )
  // Before any route: every route is then one an upgrade request may reach (and is refused by, but the streams).
  await registerWebSockets(app, connections)

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
    transformObject: (doc) =>
      'openapiObject' in doc ? withOptionalDefaults(withDocTags(doc.openapiObject)) : doc.swaggerObject,
  })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
  await app.register(pagesPlugin)

  if (opts.rateLimit) {
    const { limiter } = opts.rateLimit
    app.addHook('onClose', async () => limiter.close())
  }
  const metrics = opts.metrics ?? new Metrics()
  const timed = timedStore(opts.store, metrics)
  const versions = perTurn(() => timed.readVersions())
  const store = sharedVersions(timed, versions)
  const contexts = new SymbolContexts(store)
  const runner = opts.runner ?? inThreadRunner(store, contexts)
  const cache = new ResponseCache(opts.responseCacheBytes ?? 64 << 20, {
    memory: new AnswerMemory(runner.written),
    staleMs: opts.staleWhileRevalidateMs ?? 0,
  })
  app.addHook('onClose', async () => cache.close())
  metrics.watch(cache, opts.store, runner)
  watchStreams(metrics.registry, hub, connections)
  runner.onStoreReads?.((operation, seconds) => metrics.storeReads.observe({ operation }, seconds))
  runner.useMainStore?.(store, contexts)
  await app.register(observabilityPlugin, {
    store: opts.store,
    keys: opts.keys,
    metrics,
    limiter: opts.rateLimit?.limiter,
    fanout: opts.live?.fanout,
  })
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
      closing,
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
      await v1.register(financialsRoutes, routeOptions)
      await v1.register(liveRoutes, routeOptions)
      await v1.register(streamRoutes, { connections })
    },
    { prefix: '/v1' },
  )

  finish()
  return app
}
