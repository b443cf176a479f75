/** @module The one list of mdq failure codes; http/errors.ts maps each to an HTTP status. */

export const ERROR_CODES = [
  'BAD_PARAM',
  'BAD_SYMBOL',
  'UNKNOWN_SYMBOL',
  'BAD_KEY',
  'FORBIDDEN',
  'RATE_LIMITED',
  'STORE_UNAVAILABLE',
  'LIMITER_UNAVAILABLE',
  'BAD_IMPORT',
  'UNKNOWN_UNIVERSE',
  'UNKNOWN_STATEMENT',
  'TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'NOT_WEBSOCKET',
  'TOO_MANY_STREAMS',
  'NO_LIVE_DATA',
] as const
export type ErrorCode = (typeof ERROR_CODES)[number]

export class MdqError extends Error {
  override readonly name = 'MdqError'
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message)
  }
}
