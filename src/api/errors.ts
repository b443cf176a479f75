/** @module The one place a failure becomes an HTTP status and a `{code, message}` body. */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import type { Socket } from 'node:net'
import { MdqError, type ErrorCode } from '../domain/errors.js'

// A new ErrorCode without a row here does not compile.
export const STATUS = {
  BAD_PARAM: 400,
  BAD_SYMBOL: 400,
  BAD_IMPORT: 400,
  BAD_KEY: 401,
  UNKNOWN_SYMBOL: 404,
  UNKNOWN_UNIVERSE: 404,
  NOT_SERVED: 404,
  RATE_LIMITED: 429,
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
  FST_ERR_CTP_BODY_TOO_LARGE: 'The request body is too large.',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'Unsupported Content-Type; send application/json.',
}

export function errorHandler(err: FastifyError | MdqError | Error, req: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (err instanceof MdqError) {
    const code = STATUS[err.code]
    const body: ErrorBody = { code, message: err.message }
    if (err.code === 'RATE_LIMITED' && err.retryAfterMs !== undefined) body.retry_after_ms = err.retryAfterMs
    if (code >= 500) req.log.error({ err }, err.message)
    return reply.code(code).send(body)
  }
  const fe = err as FastifyError
  if (fe.validation) return reply.code(400).send({ code: 400, message: fe.message })
  if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
    return reply.code(fe.statusCode).send({ code: fe.statusCode, message: FASTIFY_MESSAGES[fe.code] ?? fe.message })
  }
  req.log.error({ err }, 'unexpected failure') // internals go to the log only
  return reply.code(500).send({ code: 500, message: 'Internal server error.' })
}

/** Ajv errors worded like every other mdq error: the parameter and what it allows. */
export function schemaErrorFormatter(errors: readonly { instancePath: string; keyword: string; params: Record<string, unknown>; message?: string }[], dataVar: string): Error {
  const e = errors[0]
  const where = dataVar === 'body' ? 'Body field' : 'Parameter'
  const name = e.keyword === 'required' ? String(e.params.missingProperty) : e.instancePath.replace(/^\//, '').replace(/\//g, '.') || dataVar
  const rule =
    e.keyword === 'required' ? 'is required'
    : e.keyword === 'enum' ? `must be one of ${(e.params.allowedValues as unknown[]).join(', ')}`
    : e.keyword === 'type' ? `must be ${e.params.type === 'integer' ? 'an integer' : `of type ${String(e.params.type)}`}`
    : e.keyword === 'maximum' ? `must be at most ${String(e.params.limit)}`
    : e.keyword === 'minimum' ? `must be at least ${String(e.params.limit)}`
    : e.keyword === 'maxItems' ? `must have at most ${String(e.params.limit)} items`
    : e.keyword === 'minItems' ? `must have at least ${String(e.params.limit)} items`
    : (e.message ?? 'is invalid')
  return new Error(`${where} '${name}' ${rule}.`)
}

export function notFoundHandler(req: FastifyRequest, reply: FastifyReply): FastifyReply {
  return reply.code(404).send({ code: 404, message: `No route ${req.method} ${req.url.split('?')[0]}.` })
}

/** Answers for connections Node rejects before Fastify sees them (oversized headers, bad requests). */
export function clientErrorHandler(err: Error & { code?: string }, socket: Socket): void {
  const [status, message] = err.code === 'HPE_HEADER_OVERFLOW' ? [431, 'Request headers (or URL) too large.'] : [400, 'Malformed HTTP request.']
  const body = JSON.stringify({ code: status, message })
  if (socket.writable) {
    socket.end(`HTTP/1.1 ${status} ${status === 431 ? 'Request Header Fields Too Large' : 'Bad Request'}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`)
  } else socket.destroy(err)
}
