// The fan-out floor: a bare `ws` relay. POST /v1/ingest/quotes parses the body's rows, sends each
// subscriber of a row's symbol the row as given (one quotes message per subscriber and push), and
// publishes the body on Redis, whose other relays send it to their own subscribers. It checks,
// stores, conflates and limits nothing: a client that never reads is buffered without bound.
// Usage: node bare-relay-server.js REDIS_URL; prints its port on stdout.
import { randomUUID } from 'node:crypto'
import { createServer } from 'node:http'
import { Redis } from 'ioredis'
import { WebSocketServer, type WebSocket } from 'ws'

const CHANNEL = 'bare-relay'
const id = randomUUID()
const subscribers = new Map<string, Set<WebSocket>>()

function relay(body: string): number {
  const rows = JSON.parse(body) as { symbol: string }[]
  const out = new Map<WebSocket, string[]>()
  for (const row of rows) {
    const subs = subscribers.get(row.symbol)
    if (subs === undefined) continue
    const json = JSON.stringify(row)
    for (const ws of subs) {
      const items = out.get(ws)
      if (items === undefined) out.set(ws, [json])
      else items.push(json)
    }
  }
  for (const [ws, items] of out) ws.send(`{"op":"quotes","data":[${items.join(',')}]}`)
  return rows.length
}

const pub = new Redis(process.argv[2])
const sub = new Redis(process.argv[2])
await sub.subscribe(CHANNEL)
sub.on('message', (_channel: string, message: string) => {
  const cut = message.indexOf('\n')
  if (message.slice(0, cut) !== id) relay(message.slice(cut + 1))
})

const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false })
wss.on('connection', (ws) => {
  const held = new Set<string>()
  ws.on('message', (data) => {
    const op = JSON.parse(String(data)) as { op: string; channel: string; symbols: string[] }
    for (const symbol of op.symbols) {
      held.add(symbol)
      const subs = subscribers.get(symbol)
      if (subs === undefined) subscribers.set(symbol, new Set([ws]))
      else subs.add(ws)
    }
    ws.send(JSON.stringify({ op: 'subscribed', channel: op.channel, symbols: op.symbols, total: held.size }))
  })
  ws.on('close', () => {
    for (const symbol of held) subscribers.get(symbol)?.delete(ws)
  })
})

const server = createServer((req, res) => {
  const parts: Buffer[] = []
  req.on('data', (d: Buffer) => parts.push(d))
  req.on('end', () => {
    const body = Buffer.concat(parts).toString('utf8')
    const rows = relay(body)
    void pub.publish(CHANNEL, `${id}\n${body}`)
    const answer = JSON.stringify({ data: { rows, accepted: rows, stale: 0, duplicate: 0 } })
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': answer.length })
    res.end(answer)
  })
})
server.on('upgrade', (req, socket, head) => wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws)))
server.keepAliveTimeout = 72_000
server.listen(0, '127.0.0.1', () => console.log((server.address() as { port: number }).port))
