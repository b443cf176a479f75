/**
 * @module A stand-in for TickFlow's live stream (`/v1/ws/stream`, the quotes channel, its wire as the
 * official SDK's stream.py speaks it), for trying a relay without a paid feed: `mdq replay --serve-stream`.
 */
import { createServer, type Server } from 'node:http'
import { WebSocketServer, type WebSocket } from 'ws'
import { asciiUpperCase, MARKETS, parseSymbol } from '../domain/market.js'
import type { QuoteSnapshot } from '../domain/minute-bars.js'

/** A snapshot as TickFlow's `Quote` (the SDK's generated_model.py), what on_quotes hands over. */
export function tickflowQuote(q: QuoteSnapshot): Record<string, unknown> {
  const market = MARKETS[parseSymbol(q.symbol).exchange]
  const change = Math.round((q.lastPrice - q.prevClose) * 1e6) / 1e6
  return {
    symbol: q.symbol,
    region: market.region,
    timestamp: q.timestamp,
    last_price: q.lastPrice,
    open: q.open,
    high: q.high,
    low: q.low,
    prev_close: q.prevClose,
    volume: q.volume,
    amount: q.amount,
    session: 'regular',
    ext: { type: market.kind, change_amount: change, change_pct: Math.round((change / q.prevClose) * 1e8) / 1e8 },
  }
}

export interface StreamServer {
  readonly port: number
  /** Resolves when the first client subscribes to quotes (the replay's clock starts then). */
  readonly subscribed: Promise<void>
  /** Sends the snapshots to every client subscribed to their symbols, as one `quotes` message each. */
  send(batch: readonly QuoteSnapshot[]): void
  close(): Promise<void>
}

/** Listens on `host:port` (0: any free port) for WebSocket clients at /v1/ws/stream; any key is taken. */
export async function startStreamServer(host: string, port: number): Promise<StreamServer> {
  const http: Server = createServer((_req, res) => {
    res
      .writeHead(404, { 'content-type': 'application/json' })
      .end('{"code":404,"message":"Only /v1/ws/stream is served."}')
  })
  const wss = new WebSocketServer({ noServer: true })
  const subscriptions = new Map<WebSocket, Set<string>>()
  let firstSubscription: () => void = () => {}
  const subscribed = new Promise<void>((resolve) => (firstSubscription = resolve))
  http.on('upgrade', (req, socket, head) => {
    if (new URL(req.url ?? '/', 'http://x').pathname !== '/v1/ws/stream') {
      socket.end(
        'HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\n\r\n{"code":404,"message":"Only /v1/ws/stream is served."}',
      )
      return
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      const symbols = new Set<string>()
      subscriptions.set(ws, symbols)
      ws.on('close', () => subscriptions.delete(ws))
      ws.on('message', (data) => {
        let msg: { op?: unknown; channel?: unknown; symbols?: unknown }
        try {
          msg = JSON.parse(String(data)) as typeof msg
        } catch {
          return ws.send(JSON.stringify({ op: 'error', code: 400, message: 'not JSON' }))
        }
        const list = Array.isArray(msg.symbols) ? msg.symbols.filter((s): s is string => typeof s === 'string') : []
        if (msg.channel !== 'quotes')
          return ws.send(JSON.stringify({ op: 'error', code: 400, message: 'only the quotes channel is replayed' }))
        if (msg.op !== 'subscribe' && msg.op !== 'unsubscribe')
          return ws.send(JSON.stringify({ op: 'error', code: 400, message: "op must be 'subscribe' or 'unsubscribe'" }))
        const subscribing = msg.op === 'subscribe'
        const named = list.map((s) => asciiUpperCase(s))
        // Unsubscribing: the symbols it held (mdq's own stream answers those).
        const gone = subscribing ? [] : named.filter((s) => symbols.has(s))
        for (const s of named) {
          if (subscribing) symbols.add(s)
          else symbols.delete(s)
        }
        ws.send(
          JSON.stringify({
            op: subscribing ? 'subscribed' : 'unsubscribed',
            channel: 'quotes',
            symbols: subscribing ? named : gone,
            total: symbols.size,
          }),
        )
        if (symbols.size > 0) firstSubscription()
      })
    })
  })
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject)
    http.listen(port, host, () => resolve())
  })
  return {
    port: (http.address() as { port: number }).port,
    subscribed,
    send(batch) {
      for (const [ws, symbols] of subscriptions) {
        const data = batch.filter((q) => symbols.has(q.symbol)).map(tickflowQuote)
        if (data.length) ws.send(JSON.stringify({ op: 'quotes', data }))
      }
    },
    async close() {
      for (const ws of subscriptions.keys()) ws.close(1001, 'replay ended')
      wss.close()
      await new Promise<void>((resolve) => http.close(() => resolve()))
    },
  }
}
