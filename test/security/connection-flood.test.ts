// 900 TCP connections that send nothing and never close their side, against a real `mdq serve` with
// its default limits: a fresh client is served all along (the cap admits it by closing the oldest
// silent connection), and each silent connection is told 408 by its header timeout and released at
// once. They used to fill the cap, and a 408'd connection was held until the client closed it (or the
// 60 s idle timeout): everyone else was refused for over a minute.
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { after, before, describe, it } from 'node:test'
import { DEFAULT_HTTP_LIMITS } from '../../src/http/limits.js'
import { spawnServe } from '../helpers/serve-process.js'
import { demoDb } from '../helpers/server.js'
import { tempDir } from '../helpers/store-files.js'
import { healthFrom, RawConnection, waitFor } from './harness.js'

const { dir, cleanup } = tempDir()
let db: string
before(async () => (db = await demoDb(dir)))
after(cleanup)

const { maxConnections, maxConnectionsPerAddress, headersTimeoutMs } = DEFAULT_HTTP_LIMITS
// Enough addresses that none reaches its own cap: only the total cap is tested here.
const ADDRESSES = Math.ceil(maxConnections / (maxConnectionsPerAddress - 1))

describe('a flood of silent connections', () => {
  it(`${maxConnections} silent connections that never close: a fresh client is served throughout, each silent one gets 408 at the header timeout`, async () => {
    const server = await spawnServe(['--db', db], ['--workers', '0'])
    const base = new URL(server.base)
    const silent: RawConnection[] = []
    const probes: (number | string)[] = []
    let probing = true
    try {
      for (let i = 0; i < maxConnections; i++) {
        const c = new RawConnection(base, { from: `127.0.0.${10 + (i % ADDRESSES)}`, halfOpen: true })
        await c.opened()
        silent.push(c)
      }
      const opened = Date.now()
      // A client from another address asks every 250 ms, one at a time, on a new connection each.
      const prober = (async () => {
        while (probing) {
          probes.push(await healthFrom(base, '127.0.0.2'))
          await sleep(250)
        }
      })()
      await waitFor(() => silent.every((c) => c.ended), 'every silent connection to be answered', 120_000)
      const allAnsweredMs = Date.now() - opened
      await sleep(2000) // and the clients keep their side open: the server must not need them to close
      probing = false
      await prober
      assert.ok(
        silent.every((c) => /^HTTP\/1\.1 408 .*\r\n\r\n\{"code":408,/s.test(c.received)),
        'every silent connection is told 408 {code, message}',
      )
      assert.ok(allAnsweredMs >= headersTimeoutMs / 2, `answered after ${allAnsweredMs} ms: not at the header timeout`)
      assert.ok(probes.length >= 10, `${probes.length} probes`)
      assert.deepEqual(
        probes.filter((p) => p !== 200),
        [],
        `${probes.length} probes while the cap was full`,
      )
    } finally {
      probing = false
      for (const c of silent) c.socket.destroy()
      await server.stop()
    }
  })
})
