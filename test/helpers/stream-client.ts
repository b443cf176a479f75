/** @module A WebSocket client of mdq's streams (the `ws` package) for tests: messages kept in order, a refused handshake's status and JSON body. */
import WebSocket, { type ClientOptions } from 'ws'
import { until } from './wait.js'

export interface StreamMessage {
  readonly op: string
  readonly data?: readonly Record<string, unknown>[]
  readonly [field: string]: unknown
}

/** A handshake the server answered with an HTTP status instead of 101. */
export interface Refusal {
  readonly status: number
  readonly headers: Record<string, string | string[] | undefined>
  readonly body: { code: number; message: string }
}

/** `http://host:port` -> `ws://host:port/v1/ws/<path>?api_key=<key>` (the SDK's form). */
export const streamUrl = (base: string, key: string | undefined, path = 'stream') =>
  `${base.replace(/^http/, 'ws')}/v1/ws/${path}${key === undefined ? '' : `?api_key=${encodeURIComponent(key)}`}`

export class StreamClient {
  readonly messages: StreamMessage[] = []
  /** Resolves with the close code and reason, once closed. */
  readonly closed: Promise<{ code: number; reason: string }>

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => this.messages.push(JSON.parse(String(data)) as StreamMessage))
    this.closed = new Promise((resolve) =>
      ws.once('close', (code, reason) => resolve({ code, reason: String(reason) })),
    )
  }

  /** Opens a stream; rejects with a Refusal when the handshake is answered with an HTTP status. */
  static open(url: string, options: ClientOptions = {}): Promise<StreamClient> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, options)
      ws.once('open', () => resolve(new StreamClient(ws)))
      ws.once('unexpected-response', (_req, res) => {
        let text = ''
        res.on('data', (d: Buffer) => (text += String(d)))
        res.on('end', () => {
          reject(
            Object.assign(new Error(`refused: ${res.statusCode}`), {
              refusal: { status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(text) } satisfies Refusal,
            }),
          )
          ws.terminate()
        })
      })
      ws.once('error', reject)
    })
  }

  /** The handshake's refusal (fails if the stream opens). */
  static async refusal(url: string, options: ClientOptions = {}): Promise<Refusal> {
    try {
      const opened = await StreamClient.open(url, options)
      opened.ws.terminate()
    } catch (err) {
      const refusal = (err as { refusal?: Refusal }).refusal
      if (refusal) return refusal
      throw err
    }
    throw new Error(`the handshake to ${url.split('?')[0]} was accepted`)
  }

  send(message: object | string): void {
    this.ws.send(typeof message === 'string' ? message : JSON.stringify(message))
  }

  /** The first message (from `from` on) that `match` accepts, waiting for it. */
  next(match: (m: StreamMessage) => boolean, what: string, from = 0): Promise<StreamMessage> {
    return until(() => this.messages.slice(from).find(match), what)
  }

  /** Sends an op and waits for its reply (the first subscribed, unsubscribed, error or pong after it). */
  async request(message: object | string): Promise<StreamMessage> {
    const from = this.messages.length
    this.send(message)
    return this.next((m) => ['subscribed', 'unsubscribed', 'error', 'pong'].includes(m.op), 'a reply', from)
  }

  /** The data items of every `op` message so far, in the order received. */
  items(op: 'quotes' | 'depth'): Record<string, unknown>[] {
    return this.messages.filter((m) => m.op === op).flatMap((m) => m.data ?? [])
  }

  close(): Promise<{ code: number; reason: string }> {
    this.ws.close()
    return this.closed
  }
}
