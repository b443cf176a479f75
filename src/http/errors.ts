/** @module The one place a failure becomes an HTTP status and a `{code, message}` body. */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import type { Socket } from 'node:net'
import { MdqError, type ErrorCode } from '../domain/errors.js'
import { endGently } from './connections.js'

// A new ErrorCode without a row here does not compile.
export const STATUS = {
  BAD_PARAM: 400,
  BAD_SYMBOL: 400,
  BAD_IMPORT: 400,
  BAD_KEY: 401,
  FORBIDDEN: 403,
  UNKNOWN_SYMBOL: 404,
  UNKNOWN_UNIVERSE: 404,
  UNKNOWN_STATEMENT: 404,
  TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  NO_LIVE_DATA: 404,
  NOT_WEBSOCKET: 426,
  RATE_LIMITED: 429,
  TOO_MANY_STREAMS: 429,
  STORE_UNAVAILABLE: 503,
  LIMITER_UNAVAILABLE: 503,
} as const satisfies Record<ErrorCode, number>

export interface ErrorBody {
  code: number
  message: string
  retry_after_ms?: number
}

export function badParam(message: string): MdqError {
  return new MdqError('BAD_PARAM', message)
}

/** Fastify's own client errors we pass on with their status, worded for users. */
const FASTIFY_MESSAGES: Record<string, string> = {
  FST_ERR_CTP_INVALID_JSON: 'The request body is not valid JSON.',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'The request body is empty; send JSON.',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'Unsupported Content-Type; send application/json.',
}

/** Sends `{code, message}` (and for 429 `retry_after_ms`); the one way an error answer is written. */
export function sendError(
  reply: FastifyReply,
  code: number,
  message: string,
  extra: Partial<ErrorBody> = {},
): FastifyReply {
  // A tag stands for a successful answer only; an error never carries one.
  reply.removeHeader('etag')
  // Nor the encoding of a compressed stream that failed before its first byte: this body is plain (@fastify/compress may encode it anew).
  reply.removeHeader('content-encoding')
  return reply
    .code(code)
    .type('application/json; charset=utf-8')
    .send({ code, message, ...extra })
}

/**
 * An error answered before the request body was read (413, 401 on a POST...): read and discard the
 * rest of the body on a kept-alive connection, so the client reads the answer instead of a reset
 * (a close with unread bytes is a TCP RST). The request timeout bounds how long that may take.
 */
function drainUnreadBody(req: FastifyRequest, reply: FastifyReply): void {
  if (req.raw.complete) return
  reply.removeHeader('connection')
  req.raw.on('data', () => {}) // flowing, dropped
}

export function errorHandler(
  err: FastifyError | MdqError | Error,
  req: FastifyRequest,
  reply: FastifyReply,
): FastifyReply {
  drainUnreadBody(req, reply)
  if (err instanceof MdqError) {
    const code = STATUS[err.code]
    if (code >= 500) req.log.error({ err }, err.message)
    return sendError(
      reply,
      code,
      err.message,
      err.code === 'RATE_LIMITED' && err.retryAfterMs !== undefined ? { retry_after_ms: err.retryAfterMs } : {},
    )
  }
  const fe = err as FastifyError
  if (fe.validation) return sendError(reply, 400, fe.message)
  if (fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
    return sendError(
      reply,
      413,
      `The request body is larger than ${req.routeOptions.bodyLimit} bytes, the limit of this route.`,
    )
  if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500)
    return sendError(reply, fe.statusCode, FASTIFY_MESSAGES[fe.code] ?? fe.message)
  req.log.error({ err }, 'unexpected failure') // internals go to the log only
  return sendError(reply, 500, 'Internal server error.')
}

/** Fastify's router failures (its `frameworkErrors` option), answered like every other error. */
export function frameworkErrorHandler(err: FastifyError, _req: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (err.code === 'FST_ERR_BAD_URL')
    return sendError(reply, 400, 'The URL path is not valid (a malformed percent-escape).')
  if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') return sendError(reply, 414, 'A path segment of the URL is too long.')
  return sendError(reply, 400, 'The request could not be routed.')
}

/** Ajv errors worded like every other mdq error: the parameter and what it allows. */
export function schemaErrorFormatter(
  errors: readonly { instancePath: string; keyword: string; params: Record<string, unknown>; message?: string }[],
  dataVar: string,
): Error {
  const e = errors[0]
  const where = dataVar === 'body' ? 'Body field' : 'Parameter'
  const name =
    e.keyword === 'required'
      ? String(e.params.missingProperty)
      : e.instancePath.replace(/^\//, '').replace(/\//g, '.') || dataVar
  const rule =
    e.keyword === 'required'
      ? 'is required'
      : e.keyword === 'enum'
        ? `must be one of ${(e.params.allowedValues as unknown[]).join(', ')}`
        : e.keyword === 'type'
          ? `must be ${e.params.type === 'integer' ? 'an integer' : `of type ${String(e.params.type)}`}`
          : e.keyword === 'maximum'
            ? `must be at most ${String(e.params.limit)}`
            : e.keyword === 'minimum'
              ? `must be at least ${String(e.params.limit)}`
              : e.keyword === 'maxItems'
                ? `must have at most ${String(e.params.limit)} items`
                : e.keyword === 'minItems'
                  ? `must have at least ${String(e.params.limit)} items`
                  : (e.message ?? 'is invalid')
  return new Error(`${where} '${name}' ${rule}.`)
}

export function notFoundHandler(req: FastifyRequest, reply: FastifyReply): FastifyReply {
  return sendError(reply, 404, `No route ${req.method} ${req.url.split('?')[0]}.`)
}

const CLIENT_ERRORS: Record<string, readonly [number, string, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', 'Request headers (or URL) too large.'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', 'The request did not arrive in time; send it at once.'],
}

/** Answers for connections Node rejects before Fastify sees them (oversized headers, timeouts, bad requests). */
export function clientErrorHandler(err: Error & { code?: string }, socket: Socket): void {
  const [status, reason, message] = CLIENT_ERRORS[err.code ?? ''] ?? [400, 'Bad Request', 'Malformed HTTP request.']
  const body = JSON.stringify({ code: status, message })
  // Never write into a response already under way on this connection (Node's own rule).
  const answering = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true
  if (socket.writable && !answering) {
    // Released once written: a client that never closes its side would otherwise hold the connection.
    endGently(
      socket,
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    )
  } else socket.destroy(err)
}

/** A silent connection closed to admit another is told what its header timeout would have told it. */
export function answerSilentConnection(socket: Socket): void {
  clientErrorHandler(
    Object.assign(new Error('closed to admit another connection'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }),
    socket,
  )
}
