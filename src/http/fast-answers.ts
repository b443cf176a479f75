/**
 * @module Answers already in the response cache, served before Fastify's routing and hooks: the
 * same auth, rate limit, status, headers, bytes, log line and metrics as the full path, for less
 * than half its per-request work. Anything it cannot answer exactly is handed to Fastify.
 */
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify'
import { LRUCache } from 'lru-cache'
import { randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type Server, type ServerOptions, type ServerResponse } from 'node:http'
import { performance } from 'node:perf_hooks'
import type { LimitedOperation } from '../auth/rate-limiter.js'
import type { ApiKeyRecord } from '../store/key-store.js'
import type { DataVersions } from '../store/market-store.js'
import type { KeyAuthenticator } from './auth.js'
import type { Encoding } from '../encode/compression.js'
import { noCompression } from './compression.js'
import type { HttpLimits } from './limits.js'
import { logRequest, type Metrics, type RequestCounter } from './observability.js'
import type { PerTurn } from '../lib/per-turn.js'
import {
  carryOutcome,
  outcomeNow,
  plainAllow,
  rateLimitHeaders,
  takeOutcome,
  type Outcome,
  type RateLimitOptions,
} from './rate-limit.js'
import { answerHeaders, matchesTag } from './etag.js'
import { loggedUrl } from './request-log.js'
import type { Latest, ResponseCache } from '../runner/response-cache.js'
import { TurnEndResponse } from './turn-writes.js'
import { Connections } from './connections.js'
import { answerSilentConnection } from './errors.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The app's fast path (absent when off): etag.ts tells it each cached answer it sends. */
    fastAnswers?: FastAnswers
  }
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void

/** A cached answer as the full path last sent it for one URL and Accept-Encoding. */
interface Held {
  readonly version: string
  /** The canonical symbol of a one-symbol answer, whose version `version` is; else `version` is the data version. */
  readonly symbol: string | undefined
  readonly tag: string
  /** The request's newest answer as the cache knows it (stand-ins on): each send here confirms it current. */
  readonly latest: Latest | undefined
  /** The cache key of the bytes sent: the tag, or the tag and the encoding. */
  readonly bytesKey: string
  /** The headers Fastify sends with the 200, as it names and orders them (content-length aside). */
  readonly headers: Readonly<Record<string, string>>
  readonly operation: LimitedOperation | undefined
  readonly route: string
  readonly loggedUrl: string
  readonly count: RequestCounter
}

/** What etag.ts knows of an answer it just sent from the cache. */
export interface SentAnswer {
  readonly version: string
  readonly tag: string
  /** See Held. */
  readonly symbol: string | undefined
  /** See Held. */
  readonly latest: Latest | undefined
  readonly encoding: Encoding | undefined
  /** Large enough to be compressed (answerHeaders). */
  readonly compressible: boolean
}

export interface FastAnswersOptions {
  /** The store's versions, read once per turn: the full path's ETags read the same ones. */
  readonly versions: PerTurn<DataVersions>
  readonly cache: ResponseCache
  /** The auth hook's own checks (one key cache for both paths). */
  readonly authenticator: KeyAuthenticator
  readonly rateLimit?: RateLimitOptions
  readonly metrics: Metrics
  readonly log: FastifyBaseLogger
  /** True once the app is closing: then Fastify answers (503). */
  readonly closing: () => boolean
}

const heldKey = (url: string | undefined, acceptEncoding: string | undefined) => `${url}\n${acceptEncoding ?? ''}`

export class FastAnswers {
  /**
   * By URL and Accept-Encoding, bounded in bytes (the URL, twice as UTF-16 in the key and the logged
   * copy, plus about a kilobyte of objects: headers, metric children); the answers' bytes stay in the
   * response cache, under its own bound.
   */
  readonly #held = new LRUCache<string, Held>({
    maxSize: 8 << 20,
    sizeCalculation: (_held, key) => 4 * key.length + 1024,
  })

  /** Requests answered here (the rest went to Fastify): tests check which path answered. */
  answered = 0

  constructor(private readonly opts: FastAnswersOptions) {}

  /**
   * Remembers an answer the full path sent from the cache, when a repeat of the same request can be
   * answered without Fastify: a GET with no body and no `x-no-compression`, whose key came in the
   * X-API-Key header (a key in the URL would be held in this map).
   */
  remember(req: FastifyRequest, reply: FastifyReply, sent: SentAnswer): void {
    if (
      req.method !== 'GET' ||
      reply.statusCode !== 200 ||
      hasBody(req.raw) ||
      typeof req.headers['x-api-key'] !== 'string' ||
      noCompression(req.headers)
    )
      return
    if ((req.query as Record<string, unknown> | undefined)?.api_key !== undefined) return
    const route = req.routeOptions.url ?? 'unmatched'
    this.#held.set(heldKey(req.url, req.headers['accept-encoding']), {
      version: sent.version,
      symbol: sent.symbol,
      tag: sent.tag,
      latest: sent.latest,
      bytesKey: sent.encoding === undefined ? sent.tag : `${sent.tag} ${sent.encoding}`,
      headers: answerHeaders(sent.tag, sent.encoding, sent.compressible),
      operation: req.limitedAs,
      route,
      loggedUrl: loggedUrl(req.url),
      count: this.opts.metrics.requestOf(route, 'GET'),
    })
  }

  /**
   * Takes a request that may have a held answer (true): answers it, or hands it to `fallback` once
   * it turns out not to (a bad key, a refusal, a new data version, an evicted answer). False: not
   * (or no longer) a candidate, untouched: the caller hands it to Fastify at once.
   */
  take(req: IncomingMessage, res: ServerResponse, fallback: Handler): boolean {
    // Held answers are by Accept-Encoding alone: a request with x-no-compression takes the full path.
    if (req.method !== 'GET' || this.opts.closing() || hasBody(req) || noCompression(req.headers)) return false
    const presented = req.headers['x-api-key']
    if (typeof presented !== 'string' || presented === '') return false
    const held = this.#held.get(heldKey(req.url, req.headers['accept-encoding']))
    if (held === undefined) return false
    const start = performance.now()
    // Most requests of a busy turn find the key and the data version already read: no await at all
    // (unless the route is limited by a limiter that answers only asynchronously: Redis).
    const key = this.opts.authenticator.known(presented)
    const versions = this.opts.versions.settled()
    if (key !== undefined && versions !== undefined) {
      const limit = this.#limitNow(key, held)
      if (limit !== undefined)
        return (
          (limit.allowed && this.#send(req, res, held, key, versions, limit.outcome, start)) ||
          handOver(req, limit.outcome)
        )
    }
    this.#answer(req, res, presented, held, start).then(
      (answered) => answered || fallback(req, res),
      (err: unknown) => {
        // Nothing here throws by design; if something does, Fastify answers if it still can.
        this.opts.log.error({ reason: err instanceof Error ? err.message : String(err) }, 'fast path failed')
        if (res.headersSent) res.destroy()
        else fallback(req, res)
      },
    )
    return true
  }

  /** The route's limit taken at once: none (allowed), a decision (allowed if a plain allow), or undefined, nothing taken, when the limiter answers only asynchronously. */
  #limitNow(key: ApiKeyRecord, held: Held): { readonly outcome?: Outcome; readonly allowed: boolean } | undefined {
    const { rateLimit } = this.opts
    if (rateLimit === undefined || held.operation === undefined) return { allowed: true }
    const outcome = outcomeNow(rateLimit, key, held.operation)
    return outcome && { outcome, allowed: plainAllow(rateLimit, outcome) }
  }

  /** The full path's steps in its order (auth, rate limit, ETag, cache); false, untouched, when Fastify must answer. */
  async #answer(
    req: IncomingMessage,
    res: ServerResponse,
    presented: string,
    held: Held,
    start: number,
  ): Promise<boolean> {
    const { rateLimit } = this.opts
    let key
    try {
      key = await this.opts.authenticator.check(presented)
    } catch {
      return false // Fastify's auth hook answers the 401 with the same check
    }
    let outcome: Outcome | undefined
    if (held.operation !== undefined && rateLimit !== undefined) {
      outcome = await takeOutcome(rateLimit, key, held.operation)
      if (!plainAllow(rateLimit, outcome)) return handOver(req, outcome)
    }
    return this.#send(req, res, held, key, await this.opts.versions(), outcome, start) || handOver(req, outcome)
  }

  /** Sends the held answer (or its 304) if it still stands at `versions`; false, untouched, if not. */
  #send(
    req: IncomingMessage,
    res: ServerResponse,
    held: Held,
    key: ApiKeyRecord,
    versions: DataVersions,
    outcome: Outcome | undefined,
    start: number,
  ): boolean {
    const version = held.symbol === undefined ? versions.data : versions.of(held.symbol)
    const { cache } = this.opts
    const current = version === held.version
    const inm = req.headers['if-none-match']
    // At a newer version, the held answer may still stand in while its successor is computed
    // (response-cache.ts); not for a client holding another tag (maybe the newer one): the full path decides.
    const standIn =
      !current &&
      held.latest?.tag === held.tag &&
      cache.standsIn(held.latest) &&
      (inm === undefined || matchesTag(inm, held.tag))
    if (this.opts.closing() || (!current && !standIn)) return false
    const limitHeaders = outcome !== undefined && 'decision' in outcome ? rateLimitHeaders(outcome.decision) : undefined
    let status: number
    if (matchesTag(inm, held.tag)) {
      if (!cache.has(held.tag)) return false
      status = 304
      res.writeHead(304, { ...limitHeaders, etag: held.tag })
      res.end()
    } else {
      const body = held.bytesKey === held.tag ? cache.held(held.tag) : this.#encoded(held)
      if (body === undefined) return false
      status = 200
      cache.memory.writing(body, res)
      res.writeHead(200, { ...limitHeaders, ...held.headers, 'content-length': String(body.length) })
      res.end(body)
    }
    this.answered++
    if (standIn) cache.stale++
    else if (held.latest?.tag === held.tag) held.latest.confirmedMs = cache.now()
    res.once('finish', () => {
      const ms = performance.now() - start
      const line = { method: 'GET', url: held.loggedUrl, route: held.route, status, ms, keyId: key.id }
      logRequest(this.opts.log, line, randomUUID())
      held.count(status, ms / 1000)
    })
    return true
  }

  /** The compressed bytes, counting the plain answer's hit as the full path does; undefined if either is gone. */
  #encoded(held: Held): Buffer | undefined {
    const bytes = this.opts.cache.peek(held.bytesKey)
    return bytes !== undefined && this.opts.cache.held(held.tag) !== undefined ? bytes : undefined
  }
}

/** Fastify answers; a token this path took goes with the request to the rate-limit hook (never taken twice). */
function handOver(req: IncomingMessage, outcome: Outcome | undefined): false {
  if (outcome !== undefined) carryOutcome(req, outcome)
  return false
}

const hasBody = (req: IncomingMessage) =>
  req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined

/**
 * Fastify's `serverFactory`: the HTTP server Fastify would make (same options and timeouts), whose
 * requests meet the fast path first, whose whole answers leave at the end of each turn (turn-writes.ts)
 * and whose connections are admitted, and closed, by connections.ts.
 * `fast` is read per request: the app builds it after the server.
 */
export function serverWithFastPath(
  http: ServerOptions,
  limits: HttpLimits,
  fast: () => FastAnswers | undefined,
): (handler: Handler) => Server {
  return (handler) => {
    const server = createServer({ ...http, ServerResponse: TurnEndResponse }, (req, res) => {
      if (!fast()?.take(req, res, handler)) handler(req, res)
    })
    server.keepAliveTimeout = limits.keepAliveTimeoutMs
    server.requestTimeout = limits.requestTimeoutMs
    server.setTimeout(limits.idleTimeoutMs)
    new Connections(server, limits, answerSilentConnection)
    return server
  }
}
