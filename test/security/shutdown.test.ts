// SIGTERM while keep-alive clients loop on uncached klines: every answer the server logged reached
// its client whole ("in flight" means delivered). Closing idle keep-alive connections used to destroy
// sockets whose answer was ended but not yet written out, so the server logged a 200 that the client
// saw as a reset.
import assert from 'node:assert/strict'
import { Agent, get } from 'node:http'
import { after, before, describe, it } from 'node:test'
import { spawnServe } from '../helpers/serve-process.js'
import { demoDb } from '../helpers/server.js'
import { runMdq, tempDir } from '../helpers/store-files.js'
import { until } from '../helpers/wait.js'

const { dir, cleanup } = tempDir()
let db: string
let key: string
before(async () => {
  db = await demoDb(dir)
  key = runMdq([
    '--db',
    db,
    'keys',
    'create',
    '--name',
    'shutdown',
    '--rate',
    '100000/s',
    '--burst',
    '100000',
  ]).stdout.trim()
})
after(cleanup)

const CLIENTS = 8
// Uncached answers (written from the worker pool as they come), then cached ones (the fast path).
const ROUNDS = ['0', '0', '64'] as const
// About 4,800 1m bars (a quarter of a megabyte): more than a socket takes in one write.
const PATH = '/v1/klines?symbol=600000.SH&period=1m&count=10000&adjust=forward'

/** A status once the whole body arrived; or an error, and whether it came on a kept-alive connection that had answered before. */
type Outcome = { status: number } | { error: string; reused: boolean }

/** One GET on a kept-alive connection: its status once the whole body arrived, or what went wrong. */
function fetchWhole(base: string, agent: Agent): Promise<Outcome> {
  return new Promise((resolve) => {
    const req = get(`${base}${PATH}`, { agent, headers: { 'X-API-Key': key } }, (res) => {
      res.on('data', () => {})
      res.on('end', () =>
        resolve(res.complete ? { status: res.statusCode! } : { error: 'incomplete body', reused: req.reusedSocket }),
      )
      res.on('error', (err) => resolve({ error: `body: ${err.message}`, reused: req.reusedSocket }))
    })
    req.on('error', (err) =>
      resolve({ error: (err as NodeJS.ErrnoException).code ?? err.message, reused: req.reusedSocket }),
    )
  })
}

describe('graceful shutdown', () => {
  it(`SIGTERM under ${CLIENTS} keep-alive clients looping klines: every request sent on a connection is answered, every logged answer delivered whole (${ROUNDS.length} rounds, the last with the response cache)`, async () => {
    for (const [round, cacheMb] of ROUNDS.entries()) {
      const server = await spawnServe(['--db', db], ['--cache-mb', cacheMb])
      const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS })
      const delivered = new Map<number, number>()
      const errors: { error: string; reused: boolean }[] = []
      let answered = 0
      const clients = Array.from({ length: CLIENTS }, async () => {
        for (;;) {
          const outcome = await fetchWhole(server.base, agent)
          if ('error' in outcome) return void errors.push(outcome)
          delivered.set(outcome.status, (delivered.get(outcome.status) ?? 0) + 1)
          answered++
          if (outcome.status !== 200) return // 503: the server is closing
        }
      })
      try {
        await until(() => answered >= 2 * CLIENTS, 'every client to loop')
        server.child.kill('SIGTERM')
        await Promise.all(clients)
        await server.stop()
      } finally {
        agent.destroy()
        server.child.kill('SIGKILL')
      }
      assert.equal(server.child.exitCode, 0, server.output())
      const logged = new Map<number, number>()
      for (const line of server.output().split('\n')) {
        if (!line.includes('"msg":"request"')) continue
        const { status, url } = JSON.parse(line) as { status: number; url: string }
        if (url.startsWith('/v1/klines')) logged.set(status, (logged.get(status) ?? 0) + 1)
      }
      assert.ok((logged.get(200) ?? 0) >= 2 * CLIENTS, `round ${round}: ${JSON.stringify([...logged])}`)
      assert.deepEqual(
        [...delivered].sort(),
        [...logged].sort(),
        `round ${round}: answers delivered (status, count) vs logged by the server; client errors: ${JSON.stringify(errors)}`,
      )
      // A request sent on a connection that had answered before is answered too (200, or 503 with
      // Connection: close); only a new connection may be refused, once the server stops listening.
      assert.deepEqual(
        errors.filter((e) => e.reused),
        [],
        `round ${round}`,
      )
    }
  })
})
