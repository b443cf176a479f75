// The per-request floor: a bare node:http server answering each path with fixed bytes captured from mdq.
// Usage: node bare-server.js BODIES.json (path -> body); prints its port on stdout.
import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'

const bodies = new Map(Object.entries(JSON.parse(readFileSync(process.argv[2], 'utf8')) as Record<string, string>).map(([p, b]) => [p, Buffer.from(b)]))
const server = createServer((req, res) => {
  const body = bodies.get(req.url ?? '')
  if (!body) return res.writeHead(404).end() // a path without its captured body would measure the wrong bytes
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length, etag: 'W/"bare"' })
  res.end(body)
})
server.listen(0, '127.0.0.1', () => console.log((server.address() as { port: number }).port))
