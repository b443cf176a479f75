/**
 * @module POSTs over kept HTTP/1.1 sockets whose answers are read into reused memory: each socket
 * reads into one buffer of its own (net's `onread`), and an answer's body is gathered into a buffer
 * lent for the exchange and handed to the caller's `read`, which must be done with it when it
 * returns. Node's HTTP client allocates a buffer per socket read and an object per chunk of a
 * chunked answer (ClickHouse 18.16 writes 4 KiB chunks: about 8,000 per 33 MB answer); gathered,
 * they are garbage the worker's collector then spends more on than the reads themselves.
 */
import { connect, isIPv6, type Socket } from 'node:net'

/** What one socket reads at a time. */
const READ_BYTES = 64 << 10
/** A body buffer starts this large and doubles as an answer needs. */
const FIRST_BODY_BYTES = 1 << 20
/** The bytes of body buffers kept for the next exchanges; more are left to the collector. */
const KEPT_BODY_BYTES = 64 << 20
/** A chunk larger than this is not an answer this client reads. */
const MAX_CHUNK_BYTES = 1 << 30
/** Status line and headers longer than this are not an HTTP server's answer. */
const MAX_HEAD_BYTES = 64 << 10

export interface PoolOptions {
  readonly host: string
  readonly port: number
  /** A kept socket idle this long is closed (before the server's own keep-alive timeout does). */
  readonly idleMs: number
  /** Exchanges at once, each on a socket of its own; more wait their turn. */
  readonly maxSockets: number
}

/** One POST: its path (with the query string), header lines beyond Host and Content-Length (each ending in CRLF), body, and the signal that ends it. */
export interface Post {
  readonly path: string
  readonly headers: string
  readonly body: Buffer
  readonly signal: AbortSignal
}

/** A failed exchange; `reused`: it failed on a kept socket before any of the answer came (the server had closed it). */
export type ExchangeError = Error & { reused?: boolean }

export class AnswerPool {
  readonly #idle: Kept[] = []
  readonly #bodies: Buffer[] = []
  #keptBytes = 0
  /** Exchanges waiting for a socket (maxSockets under way), oldest first. */
  readonly #waiting: (() => void)[] = []
  #busy = 0
  #closed = false

  constructor(private readonly options: PoolOptions) {}

  /** Sends `post`; `read` gets the answer's status and body (valid only during the call) and its result is the exchange's. */
  async post<T>(post: Post, read: (status: number, body: Buffer) => T): Promise<T> {
    // A socket's turn passes from the exchange that ends to the oldest waiting, so no newcomer takes it between.
    if (this.#busy < this.options.maxSockets) this.#busy++
    else await this.#turn(post.signal)
    try {
      if (this.#closed) throw new Error('connection pool closed')
      return await this.#exchange(post, read)
    } finally {
      const next = this.#waiting.shift()
      if (next) next()
      else this.#busy--
    }
  }

  #exchange<T>({ path, headers, body, signal }: Post, read: (status: number, body: Buffer) => T): Promise<T> {
    if (signal.aborted) return Promise.reject(signal.reason)
    let kept = this.#idle.pop()
    while (kept && !kept.usable) {
      kept.close()
      kept = this.#idle.pop()
    }
    kept ??= new Kept(this.options)
    const host = isIPv6(this.options.host) ? `[${this.options.host}]` : this.options.host
    const head = `POST ${path} HTTP/1.1\r\nHost: ${host}:${this.options.port}\r\n${headers}Content-Length: ${body.length}\r\n\r\n`
    return kept.exchange(Buffer.concat([Buffer.from(head, 'latin1'), body]), this.#body(), signal).then(
      ({ status, body: answer, keepAlive }) => {
        try {
          return read(status, answer.body.subarray(0, answer.length))
        } finally {
          this.#giveBack(answer.body)
          if (keepAlive && !this.#closed && kept.usable) this.#idle.push(kept.rest(() => this.#forget(kept)))
          else kept.close()
        }
      },
      (err: unknown) => {
        kept.close()
        throw err
      },
    )
  }

  /** Resolves when a socket is free for this exchange; rejects with the signal's reason if it aborts first. */
  #turn(signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason)
      const go = () => {
        signal.removeEventListener('abort', onAbort)
        resolve()
      }
      const onAbort = () => {
        const at = this.#waiting.indexOf(go)
        if (at >= 0) this.#waiting.splice(at, 1)
        reject(signal.reason)
      }
      signal.addEventListener('abort', onAbort, { once: true })
      this.#waiting.push(go)
    })
  }

  /** Closes the idle sockets and fails the exchanges still waiting for one; those under way finish. */
  close(): void {
    this.#closed = true
    // Each waiting exchange goes on to find the pool closed (the count of turns no longer matters).
    for (const go of this.#waiting.splice(0)) go()
    for (const kept of this.#idle.splice(0)) kept.close()
    this.#bodies.length = 0
    this.#keptBytes = 0
  }

  #body(): Buffer {
    const body = this.#bodies.pop()
    if (!body) return Buffer.allocUnsafe(FIRST_BODY_BYTES)
    this.#keptBytes -= body.length
    return body
  }

  #giveBack(body: Buffer): void {
    if (this.#closed || this.#keptBytes + body.length > KEPT_BODY_BYTES) return
    this.#bodies.push(body)
    this.#keptBytes += body.length
  }

  #forget(kept: Kept): void {
    const at = this.#idle.indexOf(kept)
    if (at >= 0) this.#idle.splice(at, 1)
  }
}

interface Answer {
  readonly status: number
  readonly body: { body: Buffer; length: number }
  readonly keepAlive: boolean
}

/** One kept socket and the parse of the answer it is reading. */
class Kept {
  readonly #socket: Socket
  #exchanges = 0
  #parse: AnswerParse | undefined
  #onIdleClose: (() => void) | undefined
  #failure: Error | undefined

  constructor(private readonly options: PoolOptions) {
    this.#socket = connect({
      host: options.host,
      port: options.port,
      noDelay: true,
      onread: { buffer: Buffer.allocUnsafe(READ_BYTES), callback: (n, buf) => this.#onData(buf as Buffer, n) },
    })
    this.#socket.on('error', (err) => this.#fail(err))
    this.#socket.on('close', () => this.#fail(new Error('the server closed the connection')))
    // An idle socket timed out: gone from the idle list at once, not when its close comes.
    this.#socket.on('timeout', () => this.#fail(new Error('idle socket closed')))
  }

  /** Whether another exchange may use the socket: not failed, not destroyed. */
  get usable(): boolean {
    return this.#failure === undefined && !this.#socket.destroyed
  }

  exchange(request: Buffer, body: Buffer, signal: AbortSignal): Promise<Answer> {
    const reused = this.#exchanges++ > 0
    this.#onIdleClose = undefined
    this.#socket.setTimeout(0)
    return new Promise<Answer>((resolve, reject) => {
      const onAbort = () => {
        this.#socket.destroy()
        settle(() => reject(signal.reason))
      }
      const settle = (then: () => void) => {
        signal.removeEventListener('abort', onAbort)
        this.#parse = undefined
        then()
      }
      if (signal.aborted) return reject(signal.reason)
      signal.addEventListener('abort', onAbort, { once: true })
      const parse: AnswerParse = new AnswerParse(body, (err, answer) =>
        settle(() => (err ? reject(Object.assign(err, { reused: reused && !parse.started })) : resolve(answer!))),
      )
      this.#parse = parse
      this.#socket.write(request)
    })
  }

  /** Back to the idle list: closed after idleMs, `onClose` told if the socket ends meanwhile. */
  rest(onClose: () => void): this {
    this.#onIdleClose = onClose
    this.#socket.setTimeout(this.options.idleMs)
    return this
  }

  close(): void {
    this.#socket.destroy()
  }

  /** Bytes read into the socket's buffer (true: read on). */
  #onData(buf: Buffer, n: number): boolean {
    const parse = this.#parse
    if (!parse) {
      this.#socket.destroy() // bytes nobody asked for: the socket is no longer trusted
      return false
    }
    try {
      parse.feed(buf, n)
    } catch (err) {
      this.#socket.destroy()
      parse.fail(err as Error)
    }
    return true
  }

  #fail(err: Error): void {
    this.#failure ??= err
    this.#socket.destroy()
    this.#parse?.fail(err)
    this.#onIdleClose?.()
    this.#onIdleClose = undefined
  }
}

const enum State {
  Head,
  Length,
  ChunkSize,
  ChunkData,
  ChunkEnd,
  Trailer,
  Done,
}

/** The incremental parse of one answer: status line and headers, then a Content-Length or chunked body. */
export class AnswerParse {
  #state = State.Head
  #head = ''
  #status = 0
  #keepAlive = true
  #left = 0
  #sizeLine = ''
  #length = 0
  #done = false
  started = false

  constructor(
    private body: Buffer,
    private readonly onDone: (err: Error | undefined, answer?: Answer) => void,
  ) {}

  /** The first `n` bytes of `buf` as they came. */
  feed(buf: Buffer, n: number): void {
    this.started = true
    let at = 0
    while (at < n && !this.#done) {
      switch (this.#state) {
        case State.Head: {
          const before = this.#head.length
          this.#head += buf.toString('latin1', at, n)
          const end = this.#head.indexOf('\r\n\r\n')
          if (end < 0) {
            if (this.#head.length > MAX_HEAD_BYTES) throw new Error('answer headers too long')
            return
          }
          at += end + 4 - before
          this.#headers(this.#head.slice(0, end))
          break
        }
        case State.Length: {
          const take = Math.min(this.#left, n - at)
          this.#append(buf, at, take)
          at += take
          if ((this.#left -= take) === 0) this.#finish()
          break
        }
        case State.ChunkSize: {
          const lf = buf.indexOf(10, at)
          const end = lf < 0 || lf >= n ? n : lf
          this.#sizeLine += buf.toString('latin1', at, end)
          if (this.#sizeLine.length > 1024) throw new Error('bad chunk size line')
          at = end
          if (end === n) break
          at++ // the \n
          const size = parseInt(this.#sizeLine, 16)
          if (!/^[0-9a-fA-F]+(;.*)?\r$/.test(this.#sizeLine) || !(size <= MAX_CHUNK_BYTES))
            throw new Error(`bad chunk size line: ${JSON.stringify(this.#sizeLine.slice(0, 40))}`)
          this.#sizeLine = ''
          this.#left = size
          this.#state = size === 0 ? State.Trailer : State.ChunkData
          break
        }
        case State.ChunkData: {
          const take = Math.min(this.#left, n - at)
          this.#append(buf, at, take)
          at += take
          if ((this.#left -= take) === 0) {
            this.#state = State.ChunkEnd
            this.#left = 2
          }
          break
        }
        case State.ChunkEnd: {
          // The CRLF that ends a chunk's data, perhaps split between reads.
          if (buf[at] !== (this.#left === 2 ? 13 : 10)) throw new Error('bad chunk end')
          at++
          if (--this.#left === 0) this.#state = State.ChunkSize
          break
        }
        case State.Trailer: {
          // Trailer lines, if any, then the empty line that ends the answer.
          const lf = buf.indexOf(10, at)
          const end = lf < 0 || lf >= n ? n : lf
          this.#sizeLine += buf.toString('latin1', at, end)
          if (this.#sizeLine.length > MAX_HEAD_BYTES) throw new Error('answer trailers too long')
          at = end
          if (end === n) break
          at++
          const empty = this.#sizeLine === '\r' || this.#sizeLine === ''
          this.#sizeLine = ''
          if (empty) this.#finish()
          break
        }
        case State.Done:
          return
      }
    }
    if (at < n && this.#done) throw new Error('more bytes than the answer')
  }

  fail(err: Error): void {
    if (this.#done) return
    this.#done = true
    this.onDone(err)
  }

  #headers(head: string): void {
    const lines = head.split('\r\n')
    const status = /^HTTP\/1\.([01]) (\d{3})/.exec(lines[0])
    if (!status) throw new Error(`not an HTTP answer: ${JSON.stringify(lines[0].slice(0, 40))}`)
    this.#status = Number(status[2])
    this.#keepAlive = status[1] === '1'
    let length: number | undefined
    let chunked = false
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':')
      const name = line.slice(0, colon).trim().toLowerCase()
      const value = line
        .slice(colon + 1)
        .trim()
        .toLowerCase()
      if (name === 'content-length') length = Number(value)
      else if (name === 'transfer-encoding') chunked = value.split(',').pop()!.trim() === 'chunked'
      else if (name === 'connection') this.#keepAlive = value === 'keep-alive' || (this.#keepAlive && value !== 'close')
    }
    this.#head = ''
    if (chunked) this.#state = State.ChunkSize
    else if (length !== undefined && Number.isSafeInteger(length) && length >= 0) {
      this.#state = State.Length
      this.#left = length
      if (length === 0) this.#finish()
    } else throw new Error('an answer with neither a length nor chunks')
  }

  #append(buf: Buffer, at: number, take: number): void {
    if (this.#length + take > this.body.length) {
      let size = this.body.length * 2
      while (size < this.#length + take) size *= 2
      const grown = Buffer.allocUnsafe(size)
      this.body.copy(grown, 0, 0, this.#length)
      this.body = grown
    }
    buf.copy(this.body, this.#length, at, at + take)
    this.#length += take
  }

  #finish(): void {
    this.#state = State.Done
    this.#done = true
    this.onDone(undefined, {
      status: this.#status,
      body: { body: this.body, length: this.#length },
      keepAlive: this.#keepAlive,
    })
  }
}
