// The per-request floor: a bare node:http server answering each path with fixed bytes captured from mdq.
// Usage: node bare-server.js BODIES.json (path -> body) [--processes N] [--spin-us US]; prints its port on stdout.
// --processes: N processes sharing the port (node:cluster), each answering its connections whole, with
// no hop between threads; --spin-us: each request first burns US microseconds of the process's CPU, so
// the server costs what mdq costs a request and shows the latency that cost alone allows on this machine.
import cluster from 'node:cluster'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { parseArgs } from 'node:util'

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { processes: { type: 'string', default: '1' }, 'spin-us': { type: 'string', default: '0' } },
})
const processes = Number(values.processes)
const spinUs = Number(values['spin-us'])

/** Busy until this process has used `us` more microseconds of CPU (time it is descheduled does not count). */
function burn(us: number): void {
  const start = process.cpuUsage()
  for (let used = 0; used < us;) {
    const { user, system } = process.cpuUsage(start)
    used = user + system
  }
}

if (processes > 1 && cluster.isPrimary) {
  // The port, once every process listens on it (listen(0) in cluster workers gets one port for all).
  let listening = 0
  cluster.on('listening', (_, address) => ++listening === processes && console.log(address.port))
  for (let i = 0; i < processes; i++) cluster.fork()
} else {
  const bodies = new Map(
    Object.entries(JSON.parse(readFileSync(positionals[0], 'utf8')) as Record<string, string>).map(([p, b]) => [
      p,
      Buffer.from(b),
    ]),
  )
  const server = createServer((req, res) => {
    const body = bodies.get(req.url ?? '')
    if (!body) return res.writeHead(404).end() // a path without its captured body would measure the wrong bytes
    if (spinUs > 0) burn(spinUs)
    res.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': body.length,
      etag: 'W/"bare"',
    })
    res.end(body)
  })
  server.listen(0, '127.0.0.1', () => cluster.isPrimary && console.log((server.address() as { port: number }).port))
}
