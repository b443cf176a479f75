/**
 * @module What every mdq listener is built from (the public API and the ingest listener): one Fastify
 * setup for limits, timeouts, errors, JSON bodies, 404/405/414 and shutting down, so they decide
 * alike. Each adds its plugins and routes between `createApp` and `finishApp`.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { Connections } from './connections.js'
import {
  clientErrorHandler,
  errorHandler,
  answerSilentConnection,
  frameworkErrorHandler,
  notFoundHandler,
  schemaErrorFormatter,
  sendError,
} from './errors.js'
import { guardIntegerParams } from './integer-params.js'
import { connectionsCheckingIntervalMs, DEFAULT_HTTP_LIMITS, type HttpLimits } from './limits.js'
import { parseQueryString } from './query-string.js'

/** Every route of an app, as registered (method and URL): the fuzz tests walk them all. */
export const registeredRoutes = new WeakMap<FastifyInstance, { method: string; url: string; schema?: unknown }[]>()

/** URLs longer than this are 414: room for 1000 symbols on GET /v1/instruments, under Node's 16 KB head limit (431). */
export const MAX_URL_LENGTH = 15_000

/** On these paths a method without a route is a 405 with `Allow`: every route's but the static files' (a wildcard). */
const listsAllowed = (url: string) => !url.includes('*')
const ALL_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const

type Handler = (req: IncomingMessage, res: ServerResponse) => void
/** Node's HTTP server options as Fastify passes them (timeouts). */
type ServerOptions = Record<string, unknown>

export interface BaseAppOptions {
  /** pino options, or false for no logs (tests). */
  readonly logger?: FastifyServerOptions['logger']
  readonly limits: HttpLimits
  /** Makes the HTTP server (the public API's puts its fast path in front of Fastify); default Node's. */
  readonly serverFactory?: (http: ServerOptions, limits: HttpLimits) => (handler: Handler) => Server
}

export interface BaseApp {
  readonly app: FastifyInstance
  /** True once the app is closing: requests then get 503 and their connection closed. */
  readonly closing: () => boolean
  /** After every route: the 405s of its paths, with `Allow`. */
  readonly finish: () => void
}

/** Node's HTTP server with the app's timeouts, whose connections are admitted and closed by connections.ts. */
function plainServer(http: ServerOptions, limits: HttpLimits): (handler: Handler) => Server {
  return (handler) => {
    const server = createServer(http, handler)
    server.keepAliveTimeout = limits.keepAliveTimeoutMs
    server.requestTimeout = limits.requestTimeoutMs
    server.setTimeout(limits.idleTimeoutMs)
    new Connections(server, limits, answerSilentConnection)
    return server
  }
}

/** The limits each listener starts from: the defaults, with the caller's over them. */
export const limitsOf = (given: Partial<HttpLimits> = {}): HttpLimits => ({ ...DEFAULT_HTTP_LIMITS, ...given })

export function createApp(opts: BaseAppOptions): BaseApp {
  const { limits } = opts
  const http = {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    connectionsCheckingInterval: connectionsCheckingIntervalMs(limits),
  }
  const app = Fastify({
    serverFactory: (opts.serverFactory ?? plainServer)(http, limits),
    logger: opts.logger ?? false,
    // One line per request comes from the onResponse hook (observability.ts: key id, URL redacted).
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

  // The methods each path answers, as routes are registered: the 405s follow from them.
  const allowed = new Map<string, string[]>()
  const routes: { method: string; url: string; schema?: unknown }[] = []
  registeredRoutes.set(app, routes)
  let finished = false
  app.addHook('onRoute', (route) => {
    if (finished) return // finish's 405s: answers for the methods no route has, not routes of their own
    for (const method of [route.method].flat()) routes.push({ method, url: route.url, schema: route.schema })
    guardIntegerParams(route)
    if (!listsAllowed(route.url)) return
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

  const finish = () => {
    finished = true
    for (const [url, methods] of allowed) {
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
  }
  return { app, closing: () => closing, finish }
}
