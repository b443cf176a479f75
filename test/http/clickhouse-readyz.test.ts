// /readyz on a ClickHouse that still accepts connections and answers /ping but runs no query: every
// query slot of the server is taken by queries that hang (each reads a URL that never answers), so
// mdq's queries wait in the server's queue. /readyz answers 503 naming the checks that did not answer,
// while a klines request is still waiting for the server (it waits for its read timeout), and is
// ready again once the slots are free; and the same when the server is frozen outright.
import assert from 'node:assert/strict'
import { createServer, type Socket } from 'node:net'
import { once } from 'node:events'
import { after, before, describe } from 'node:test'
import { ClickHouseServer } from '../helpers/clickhouse.js'
import { clickhouseServer, requires } from '../helpers/requirements.js'
import { spawnServe, type ServeProcess } from '../helpers/serve-process.js'
import { runMdq } from '../helpers/store-files.js'
import { until } from '../helpers/wait.js'

const need = requires(clickhouseServer())
/** Query slots of the server; the test takes them all. */
const SLOTS = 3

describe('/readyz when ClickHouse stops running queries', () => {
  let server: ClickHouseServer
  let mdq: ServeProcess | undefined
  const hung: Socket[] = []
  const blackHole = createServer((socket) => hung.push(socket)) // accepts, never answers
  before(async () => {
    if (!need.met) return
    server = await ClickHouseServer.start({
      config: `<max_concurrent_queries>${SLOTS}</max_concurrent_queries>`,
      // A query beyond the slots waits in the queue (the default gives up after 5 s).
      profile: '<queue_max_wait_ms>600000</queue_max_wait_ms>',
    })
    blackHole.listen(0, '127.0.0.1')
    await once(blackHole, 'listening')
  })
  after(async () => {
    for (const s of hung) s.destroy()
    blackHole.close()
    await mdq?.stop()
    await server?.destroy()
  })

  need.it('answers 503 with the checks that timed out while queries hang, and 200 once they run', async () => {
    const url = server.storeUrl('mdq')
    const demo = runMdq(['--store', url, 'demo'])
    assert.equal(demo.status, 0, demo.stderr)
    const key = runMdq(['--store', url, 'keys', 'create', '--name', 'ready']).stdout.trim()
    mdq = await spawnServe(['--store', url], ['--workers', '0', '--cache-mb', '0'])
    const readyz = async () => {
      const r = await fetch(`${mdq!.base}/readyz`)
      return { status: r.status, body: (await r.json()) as { checks: Record<string, string> } }
    }
    await until(async () => (await readyz()).status === 200, '/readyz 200 before the outage')

    // Every slot taken by a query that hangs; the server still answers /ping.
    const { port } = blackHole.address() as { port: number }
    const hanging = Array.from({ length: SLOTS }, () =>
      fetch(`${server.httpUrl}/`, {
        method: 'POST',
        body: `SELECT * FROM url('http://127.0.0.1:${port}/', CSV, 'x String')`,
      }).then((r) => r.text()),
    )
    await until(() => hung.length === SLOTS, 'every query slot to hang')
    assert.equal((await fetch(`${server.httpUrl}/ping`)).status, 200)

    // A klines request waits in the server's queue up to its read timeout, while /readyz must answer
    // at once. On a loaded machine one of mdq's pings may miss its deadline, and the brief outage it
    // declares ends both early: then the pair is tried again (the code before never passes a try:
    // /readyz waited out the read timeout of each check in turn, after the klines request ended).
    const tries: string[] = []
    let waiting: Promise<Response> | undefined
    for (let attempt = 0; attempt < 5 && !waiting; attempt++) {
      let settled: string | undefined
      const klines = fetch(`${mdq.base}/v1/klines?symbol=600519.SH&period=1m&count=50`, {
        headers: { 'X-API-Key': key },
      })
      void klines.then(
        async (r) => (settled = `${r.status} ${(await r.clone().text()).slice(0, 200)}`),
        (err: Error) => (settled = err.message),
      )
      const notReady = await readyz()
      assert.equal(notReady.status, 503)
      const timedOut = notReady.body.checks.store === 'timeout' && notReady.body.checks.keys === 'timeout'
      if (timedOut && settled === undefined) waiting = klines
      else tries.push(`checks ${JSON.stringify(notReady.body.checks)}, klines ${settled ?? 'still waiting'}`)
    }
    assert.ok(waiting, `/readyz never answered "timeout" while a query still waited: ${tries.join('; ')}`)

    for (const s of hung) s.destroy()
    await Promise.all(hanging)
    const answered = await waiting
    assert.equal(answered.status, 200, await answered.clone().text())
    assert.equal(((await answered.json()) as { data: { close: number[] } }).data.close.length, 50)
    await until(async () => (await readyz()).status === 200, '/readyz 200 after the outage')

    // Frozen outright (SIGSTOP): not even /ping answers; the same 503, and ready again once it runs.
    await server.pause(true)
    try {
      await until(async () => (await readyz()).status === 503, '/readyz 503 while the server is frozen')
    } finally {
      await server.pause(false)
    }
    await until(async () => (await readyz()).status === 200, '/readyz 200 after the freeze')
  })
})
