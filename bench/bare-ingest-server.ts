// The floor of a push: a bare node:http server that reads each POST body, parses its JSON and answers
// with the row count, as the ingest listener answers, but checks and stores nothing. Prints its port.
import { createServer } from 'node:http'

const server = createServer((req, res) => {
  const parts: Buffer[] = []
  req.on('data', (d: Buffer) => parts.push(d))
  req.on('end', () => {
    const rows = (JSON.parse(Buffer.concat(parts).toString('utf8')) as unknown[]).length
    const body = JSON.stringify({ data: { rows, accepted: rows, stale: 0, duplicate: 0 } })
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length }).end(body)
  })
})
server.keepAliveTimeout = 72_000
server.listen(0, '127.0.0.1', () => console.log((server.address() as { port: number }).port))
