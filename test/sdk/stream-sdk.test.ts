// The official TickFlow SDK's live half (sync and async clients, Debian's python3-websockets) against a
// running mdq: tf.stream with both channels (subscribed before and after connect), unsubscribe, a
// server restart it reconnects to and resubscribes on, tf.realtime, depth.get and a live quote in
// quotes.get_by_symbols. The test publishes the snapshots; the script reports what the SDK saw.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { after, before, describe } from 'node:test'
import { MARKETS } from '../../src/domain/market.js'
import { StreamHub } from '../../src/live/stream-hub.js'
import { PYTHON, SDK_DIR, sdkMissing } from '../helpers/python-sdk.js'
import { pythonLibs, requires } from '../helpers/requirements.js'
import { demoDb, startServer, type TestServer } from '../helpers/server.js'
import { repoRoot } from '../helpers/shared-data.js'
import { depthSnapshot, quoteSnapshot } from '../helpers/snapshots.js'
import { tempDir } from '../helpers/store-files.js'
import { until } from '../helpers/wait.js'

const need = requires(sdkMissing(), pythonLibs('websockets'))
// Wednesday 2026-11-18 10:00 in Shanghai, the server's clock; the snapshots are of the minute before.
const NOW = MARKETS.SH.zone.utcOf(2026, 11, 18, 10 * 60)
const T = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`t${i}`, NOW - 60_000 + i * 1000]))
const SYMBOL = '600000.SH'
const REALTIME = '601318.SH'

type Item = Record<string, unknown> & { symbol: string; timestamp: number }
interface Report {
  quote_after_unsubscribe: boolean
  quotes: Item[]
  depth: Item[]
  errors: string[]
  realtime: Item[]
  depth_get: Item
  quotes_by_symbols: Item[]
  refused?: string
}

/** A metric's value from /metrics. */
async function metric(server: TestServer, name: string): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text()
  return Number(
    text
      .split('\n')
      .find((l) => l.startsWith(`${name} `))
      ?.split(' ')
      .pop(),
  )
}

describe('the TickFlow SDK live: tf.stream, tf.realtime, depth.get, live quotes', () => {
  const { dir, cleanup } = tempDir()
  let db: string
  before(async () => {
    if (need.met) db = await demoDb(dir)
  })
  after(cleanup)

  /** Runs the script against a server of its own, answering each of its steps; resolves with its report. */
  async function drive(mode: 'sync' | 'async'): Promise<Report> {
    const hub = new StreamHub()
    let server = await startServer(db, { live: { hub }, now: () => NOW })
    try {
      return await steps(mode, hub, server, (restarted) => (server = restarted))
    } finally {
      await server.close()
    }
  }

  async function steps(
    mode: 'sync' | 'async',
    hub: StreamHub,
    first: TestServer,
    restarted: (server: TestServer) => void,
  ): Promise<Report> {
    let server = first
    const key = server.key
    const base = server.url
    const port = Number(new URL(base).port)
    hub.publish([
      quoteSnapshot(SYMBOL, T.t0, 10.0),
      depthSnapshot(SYMBOL, T.t0, 10.0),
      quoteSnapshot(REALTIME, T.t0, 50.0),
    ])
    const scenario = { symbol: SYMBOL, realtime_symbol: REALTIME, quote_symbols: [SYMBOL, '000001.SZ'], t: T }
    const child = spawn(
      PYTHON,
      [join(repoRoot(), 'test', 'sdk', 'stream_sdk.py'), base, key, mode, JSON.stringify(scenario)],
      {
        env: { ...process.env, PYTHONPATH: SDK_DIR },
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    )
    let stderr = ''
    child.stderr.on('data', (d) => (stderr += String(d)))
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))
    const go = () => child.stdin.write('go\n')
    let report: Report | undefined
    for await (const line of createInterface({ input: child.stdout })) {
      const msg = JSON.parse(line) as { ready?: string; report?: Report }
      if (msg.report) report = msg.report
      else if (msg.ready === 'live') {
        for (let i = 1; i <= 5; i++)
          hub.publish([
            quoteSnapshot(SYMBOL, T[`t${i}`], 10 + i / 100),
            depthSnapshot(SYMBOL, T[`t${i}`], 10 + i / 100),
          ])
        go()
      } else if (msg.ready === 'unsubscribed') {
        // The unsubscribe is on its way; the server has applied it once its quotes subscriptions are gone.
        await until(
          async () => (await metric(server, 'mdq_stream_subscriptions{channel="quotes"}')) === 0,
          'the unsubscribe',
        )
        hub.publish([quoteSnapshot(SYMBOL, T.t6, 10.06), depthSnapshot(SYMBOL, T.t6, 10.06)])
        go()
      } else if (msg.ready === 'restart') {
        await server.close() // tells the stream 1001, going away
        server = await startServer(db, { live: { hub }, now: () => NOW }, port)
        restarted(server)
        go()
      } else if (msg.ready === 'resubscribed') {
        hub.publish([depthSnapshot(SYMBOL, T.t7, 10.07)])
        go()
      }
    }
    const code = await exited
    assert.equal(code, 0, `stream_sdk.py ${mode} failed:\n${stderr}`)
    assert.ok(report, 'no report')
    return report
  }

  for (const mode of ['sync', 'async'] as const)
    need.it(
      `${mode}: every snapshot of both channels in order, unsubscribe, reconnect and resubscribe after a restart`,
      async () => {
        const r = await drive(mode)
        const times = (items: Item[], symbol: string) =>
          items.filter((i) => i.symbol === symbol).map((i) => i.timestamp - NOW)
        assert.deepEqual(times(r.quotes, SYMBOL), [-60_000, -59_000, -58_000, -57_000, -56_000, -55_000])
        assert.equal(r.quote_after_unsubscribe, false)
        // t0..t6, t6 again at the resubscribe after the restart, then t7.
        assert.deepEqual(
          times(r.depth, SYMBOL),
          [-60_000, -59_000, -58_000, -57_000, -56_000, -55_000, -54_000, -54_000, -53_000],
        )
        assert.deepEqual(r.quotes[1], JSON.parse(quoteSnapshot(SYMBOL, T.t1, 10.01).json))
        assert.deepEqual(r.errors, [])
        assert.deepEqual(r.realtime, [JSON.parse(quoteSnapshot(REALTIME, T.t0, 50.0).json)])
        assert.deepEqual(r.depth_get, JSON.parse(depthSnapshot(SYMBOL, T.t7, 10.07).json))
        // The quote pushed today answers for the symbol; the other comes from its stored bars.
        const [live, stored] = r.quotes_by_symbols
        assert.deepEqual(live, { ...JSON.parse(quoteSnapshot(SYMBOL, T.t6, 10.06).json), session: 'regular' })
        assert.equal(stored.symbol, '000001.SZ')
        assert.ok(stored.timestamp < NOW - 86_400_000)
        if (mode === 'sync')
          // Debian's websockets (10.4) gives the SDK the refusal's status in its message, not the response it looks for.
          assert.match(r.refused ?? '', /HTTP 401/)
      },
    )
})
