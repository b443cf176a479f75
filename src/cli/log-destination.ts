/**
 * @module Where `mdq serve` writes its log: JSON lines to a pipe, a file or a log collector, and
 * readable lines on a terminal.
 */
import pino from 'pino'
import { prettyFactory } from 'pino-pretty'
import type { LogFormat } from './log-format.js'

/** The longest a JSON line waits in the buffer before it is written. */
export const LOG_FLUSH_MS = 100

export interface LogDestination {
  readonly stream: pino.DestinationStream
  /** Writes what is buffered now (asynchronously). */
  flush(): void
  /** Writes what is buffered before returning: at exit. */
  flushSync(): void
}

/**
 * JSON goes out in writes of 4 KB or more while lines come fast (a write per request would cost a
 * system call each), and at most LOG_FLUSH_MS after the last line when they come slowly, so a line
 * (a request, "rate limiter unreachable") shows up at once to anyone watching.
 * On a terminal each line is written as it comes, one readable line per request.
 */
export function logDestination(format: LogFormat, isTerminal: boolean): LogDestination {
  if (format === 'json' || (format === 'auto' && !isTerminal)) {
    const out = pino.destination({ dest: 1, sync: false, minLength: 4096, periodicFlush: LOG_FLUSH_MS })
    return { stream: out, flush: () => out.flush(), flushSync: () => out.flushSync() }
  }
  const out = pino.destination({ dest: 1, sync: true })
  const pretty = prettyFactory({ ignore: 'pid,hostname', translateTime: 'SYS:HH:MM:ss.l' })
  return {
    stream: { write: (line: string) => void out.write(pretty(readable(line))) },
    flush: () => {},
    flushSync: () => {},
  }
}

interface RequestLine {
  readonly msg?: unknown
  readonly level?: unknown
  readonly time?: unknown
  readonly method?: unknown
  readonly url?: unknown
  readonly status?: unknown
  readonly ms?: unknown
  readonly keyId?: unknown
}

/** A request's line as one sentence (`GET /v1/klines?... 200 1.2 ms key 3`); any other line as it is. */
function readable(line: string): RequestLine | string {
  const log = JSON.parse(line) as RequestLine
  if (log.msg !== 'request') return line
  const key = log.keyId === undefined ? '' : ` key ${String(log.keyId)}`
  return {
    level: log.level,
    time: log.time,
    msg: `${String(log.method)} ${String(log.url)} ${String(log.status)} ${String(log.ms)} ms${key}`,
  }
}
