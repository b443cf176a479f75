// The floor of a push: a bare node:http server that reads each POST body, parses its JSON and answers
// with the row count, as the ingest listener answers, but checks and stores nothing. Prints its port.
// Usage: node bare-ingest-server.js [INSERT_URL]. With a ClickHouse URL whose query is an INSERT ...
// FORMAT JSONEachRow, it also relays the rows there and answers each push once ClickHouse has taken
// it: one INSERT at a time, of every push that came while the one before ran (a group commit, as mdq
// writes), the least a service in front of ClickHouse does.
import { createServer } from 'node:http'

const insertUrl = process.argv[2]

/** The rows of a push as JSONEachRow takes them in 18.16: one object a line (the pushed rows have no nested objects). */
const eachRow = (body: string) => body.slice(1, -1).replaceAll('},{', '}\n{')

interface Held {
  readonly rows: string
  readonly done: (err?: unknown) => void
}
let held: Held[] = []
let inserting = false

async function insertHeld(url: string): Promise<void> {
  inserting = true
  while (held.length > 0) {
    const group = held
    held = []
    let failed: unknown
    try {
      const r = await fetch(url, { method: 'POST', body: group.map((h) => h.rows).join('\n') })
      const text = await r.text()
      if (!r.ok) failed = new Error(`insert: ${r.status} ${text.slice(0, 300)}`)
    } catch (err) {
      failed = err
    }
    for (const h of group) h.done(failed)
  }
  inserting = false
}

/** Resolves once the push's rows are in ClickHouse (at once without an INSERT_URL). */
function relay(body: string): Promise<void> {
  if (insertUrl === undefined) return Promise.resolve()
  return new Promise((resolve, reject) => {
    held.push({ rows: eachRow(body), done: (err) => (err === undefined ? resolve() : reject(err)) })
    if (!inserting) void insertHeld(insertUrl)
  })
}

const server = createServer((req, res) => {
  const parts: Buffer[] = []
  req.on('data', (d: Buffer) => parts.push(d))
  req.on('end', () => {
    const text = Buffer.concat(parts).toString('utf8')
    const rows = (JSON.parse(text) as unknown[]).length
    relay(text).then(
      () => {
        const body = JSON.stringify({ data: { rows, accepted: rows, stale: 0, duplicate: 0 } })
        res
          .writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length })
          .end(body)
      },
      (err: unknown) => res.writeHead(502).end(String(err)),
    )
  })
})
server.keepAliveTimeout = 72_000
server.listen(0, '127.0.0.1', () => console.log((server.address() as { port: number }).port))
