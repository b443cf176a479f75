/** @module Shared parts of the security suite: captured server logs, the key-in-log check, the error-body check, raw HTTP. */
import assert from 'node:assert/strict'
import { Agent, request, type IncomingHttpHeaders } from 'node:http'
import { connect, type Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'

/** A pino destination that keeps every line in memory (the server's log, as it would reach stdout). */
export function captureLogs(level = 'trace'): {
  lines: string[]
  logger: { level: string; stream: { write(line: string): void } }
} {
  const lines: string[] = []
  return { lines, logger: { level, stream: { write: (line: string) => void lines.push(line) } } }
}

/** Percent-decodes byte by byte, never throwing, so encoded forms of a key show as the key. */
function decodeLoosely(text: string): string {
  return text.replace(/%([0-9a-f]{2})/gi, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)))
}

/**
 * Fails if the secret part of any key (the 43 characters after `mdq_`) is in a log line, as
 * written or after any number of rounds of percent-decoding (`api%5Fkey=`, `%252D`, `%25252525255F`...).
 */
export function assertNoKeyInLogs(lines: readonly string[], keys: readonly string[]): void {
  const secrets = keys.map((k) => k.slice(4))
  for (const line of lines) {
    for (let text = line, previous = ''; text !== previous; previous = text, text = decodeLoosely(text))
      for (const secret of secrets) assert.ok(!text.includes(secret), `a key reached the log: ${line}`)
  }
}

/** Every error answer is JSON `{code, message}` with `code` equal to the status. */
export function assertErrorBody(
  status: number,
  headers: IncomingHttpHeaders | Headers,
  body: string,
  context: string,
): void {
  const type = headers instanceof Headers ? headers.get('content-type') : headers['content-type']
  assert.match(
    String(type),
    /^application\/json/,
    `${context}: content-type of a ${status} is ${type}; body ${body.slice(0, 200)}`,
  )
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    assert.fail(`${context}: a ${status} body is not JSON: ${body.slice(0, 200)}`)
  }
  const { code, message } = parsed as { code?: unknown; message?: unknown }
  assert.equal(code, status, `${context}: code ${String(code)} in a ${status}: ${body.slice(0, 200)}`)
  assert.equal(typeof message, 'string', `${context}: no message: ${body.slice(0, 200)}`)
}

export interface RawAnswer {
  status: number
  headers: IncomingHttpHeaders
  body: string
}

/** One request over node:http (any method, path bytes and headers fetch would refuse or normalize). */
export function send(
  base: URL,
  agent: Agent | undefined,
  method: string,
  path: string,
  headers: Record<string, string | string[]>,
  body?: string | Buffer,
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: base.hostname, port: base.port, method, path, headers, agent }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
      )
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(body)
  })
}

/** GET /healthz on a new connection from local address `from`: the status, or the error's code (a refused connection). */
export function healthFrom(base: URL, from: string): Promise<number | string> {
  return new Promise((resolve) => {
    const req = request(
      { host: base.hostname, port: base.port, path: '/healthz', localAddress: from, agent: false },
      (res) => {
        res.resume()
        res.on('end', () => resolve(res.statusCode ?? 0))
        res.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message))
      },
    )
    req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message))
    req.end()
  })
}

/**
 * A raw TCP connection that records what the server sends and when it ends. `from` is the local
 * address (any of 127.0.0.0/8 over loopback: another client address); `halfOpen` keeps this side
 * open after the server's FIN, as a client that never closes does (`ended` then tells the FIN).
 */
export class RawConnection {
  readonly socket: Socket
  received = ''
  closed = false
  /** The server sent its FIN (or the connection closed). */
  ended = false
  readonly #opened: Promise<void>
  constructor(base: URL, { from, halfOpen = false }: { from?: string; halfOpen?: boolean } = {}) {
    this.socket = connect({ port: Number(base.port), host: base.hostname, localAddress: from, allowHalfOpen: halfOpen })
    this.socket.on('data', (d: Buffer) => (this.received += d.toString('utf8')))
    this.socket.on('end', () => (this.ended = true))
    this.socket.on('close', () => (this.closed = this.ended = true))
    this.socket.on('error', () => {}) // a reset counts as closed
    this.#opened = new Promise((resolve, reject) => {
      this.socket.once('connect', () => resolve())
      this.socket.once('error', reject)
    })
  }
  opened(): Promise<void> {
    return this.#opened
  }
  write(text: string): void {
    if (!this.socket.destroyed) this.socket.write(text)
  }
}

/** Polls `condition` until it holds; throws with `what` after `deadlineMs` (a liveness bound, never a timing assertion). */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  what: string,
  deadlineMs = 30_000,
): Promise<void> {
  const t0 = Date.now()
  while (!(await condition())) {
    if (Date.now() - t0 > deadlineMs) throw new Error(`still waiting after ${deadlineMs} ms for ${what}`)
    await sleep(20)
  }
}

/** The value of one Prometheus sample line (`name{labels} value`), summed over label sets; 0 if absent. */
export function metricSum(text: string, name: string): number {
  let sum = 0
  for (const line of text.split('\n')) {
    if (line.startsWith(name + ' ') || line.startsWith(name + '{')) sum += Number(line.slice(line.lastIndexOf(' ') + 1))
  }
  return sum
}
