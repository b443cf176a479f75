// The official TickFlow SDK's live half (sync and async clients, Debian's python3-websockets) against a
// running mdq, end to end: the test pushes quotes and depth to the ingest listener (POST
// /v1/ingest/quotes, /v1/ingest/depth); the script, through tf.stream (both channels, subscribed
// before and after connect), unsubscribe, a server restart it reconnects to and resubscribes on,
// tf.realtime, depth.get and quotes.get_by_symbols, reports what the SDK saw.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { after, before, describe } from 'node:test'
import { MARKETS } from '../../src/domain/market.js'
import { StreamHub } from '../../src/live/stream-hub.js'
import { startIngest, type TestIngest } from '../helpers/ingest-server.js'
import { PYTHON, SDK_DIR, sdkMissing } from '../helpers/python-sdk.js'
import { pythonLibs, requires } from '../helpers/requirements.js'
import { demoDb, startServer, type TestServer } from '../helpers/server.js'
import { repoRoot } from '../helpers/shared-data.js'
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

/** TickFlow Quote objects as a feed pushes them: the i-th of the day's snapshots, the day's figures cumulative. */
const quote = (symbol: string, i: number, base: number) => {
  const last = Math.round((base + i / 100) * 100) / 100
  const volume = 1000 * (i + 1)
  return {
    symbol,
    timestamp: T[`t${i}`],
    last_price: last,
    open: base,
    high: last,
    low: base,
    prev_close: base - 0.1,
    volume,
    amount: Math.round(volume * 100 * last * 100) / 100,
  }
}
const depth = (symbol: string, i: number) => ({
  symbol,
  timestamp: T[`t${i}`],
  bid_prices: [10 + i / 100, 9.99 + i / 100],
  bid_volumes: [100, 200 + i],
  ask_prices: [10.01 + i / 100, 10.02 + i / 100],
  ask_volumes: [300, 400],
})

/** A metric's value from /metrics (NaN on a kept-alive connection to the server before a restart, which is closed). */
async function metric(server: TestServer, name: string): Promise<number> {
  const text = await fetch(`${server.url}/metrics`)
    .then((r) => r.text())
    .catch(() => '')
  return Number(
    text
      .split('\n')
      .find((l) => l.startsWith(`${name} `))
      ?.split(' ')
      .pop(),
  )
}

/** A server and its ingest listener over one store, wired as `mdq serve --ingest-port` wires them. */
interface Instance {
  server: TestServer
  ingest: TestIngest
}

async function start(db: string, port = 0): Promise<Instance> {
  const hub = new StreamHub()
  const server = await startServer(db, { live: { hub }, now: () => NOW }, port)
  return { server, ingest: await startIngest(server, {}, hub) }
}

async function stop(i: Instance): Promise<void> {
  await i.ingest.close()
  await i.server.close() // tells the streams 1001, going away
}

async function push(i: Instance, kind: 'quotes' | 'depth', rows: unknown[]): Promise<void> {
  const res = await fetch(`${i.ingest.url}/v1/ingest/${kind}`, {
    method: 'POST',
    headers: { 'X-API-Key': i.ingest.key, 'Content-Type': 'application/json' },
    body: JSON.stringify(rows),
  })
  assert.equal(res.status, 200, await res.text())
}

describe('the TickFlow SDK live, fed through the ingest listener: tf.stream, tf.realtime, depth.get, live quotes', () => {
  const { dir, cleanup } = tempDir()
  let db: string
  before(async () => {
    if (need.met) db = await demoDb(dir)
  })
  after(cleanup)

  /** Runs the script against an instance of its own (a fresh store), answering each of its steps; resolves with its report. */
  async function drive(mode: 'sync' | 'async'): Promise<Report> {
    const { cpSync } = await import('node:fs')
    const own = join(dir, `${mode}.db`)
    cpSync(db, own)
    let inst = await start(own)
    try {
      const key = inst.server.key
      const base = inst.server.url
      const port = Number(new URL(base).port)
      await push(inst, 'quotes', [quote(SYMBOL, 0, 10), quote(REALTIME, 0, 50)])
      await push(inst, 'depth', [depth(SYMBOL, 0)])
      const scenario = { symbol: SYMBOL, realtime_symbol: REALTIME, quote_symbols: [SYMBOL, '000001.SZ'], t: T }
      const child = spawn(
        PYTHON,
        [join(repoRoot(), 'test', 'sdk', 'stream_sdk.py'), base, key, mode, JSON.stringify(scenario)],
        { env: { ...process.env, PYTHONPATH: SDK_DIR }, stdio: ['pipe', 'pipe', 'pipe'] },
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
          for (let i = 1; i <= 5; i++) {
            await push(inst, 'quotes', [quote(SYMBOL, i, 10)])
            await push(inst, 'depth', [depth(SYMBOL, i)])
          }
          go()
        } else if (msg.ready === 'unsubscribed') {
          // The unsubscribe is on its way; the server has applied it once its quotes subscriptions are gone.
          await until(
            async () => (await metric(inst.server, 'mdq_stream_subscriptions{channel="quotes"}')) === 0,
            'the unsubscribe',
          )
          await push(inst, 'quotes', [quote(SYMBOL, 6, 10)])
          await push(inst, 'depth', [depth(SYMBOL, 6)])
          go()
        } else if (msg.ready === 'restart') {
          await stop(inst)
          inst = await start(own, port)
          // The SDK reconnects on its own and subscribes again: then the next depth reaches it.
          await until(
            async () => (await metric(inst.server, 'mdq_stream_subscriptions{channel="depth"}')) === 1,
            'the resubscription after the restart',
          )
          await push(inst, 'depth', [depth(SYMBOL, 7)])
          await push(inst, 'quotes', [quote(REALTIME, 7, 50)])
          go()
        }
      }
      const code = await exited
      assert.equal(code, 0, `stream_sdk.py ${mode} failed:\n${stderr}`)
      assert.ok(report, 'no report')
      return report
    } finally {
      await stop(inst)
    }
  }

  for (const mode of ['sync', 'async'] as const)
    need.it(
      `${mode}: every pushed snapshot of both channels in order, unsubscribe, reconnect and resubscribe after a restart`,
      async () => {
        const r = await drive(mode)
        const times = (items: Item[], symbol: string) =>
          items.filter((i) => i.symbol === symbol).map((i) => i.timestamp - NOW)
        assert.deepEqual(times(r.quotes, SYMBOL), [-60_000, -59_000, -58_000, -57_000, -56_000, -55_000])
        assert.equal(r.quote_after_unsubscribe, false)
        // t0..t6, then t7 pushed after the restart.
        assert.deepEqual(
          times(r.depth, SYMBOL),
          [-60_000, -59_000, -58_000, -57_000, -56_000, -55_000, -54_000, -53_000],
        )
        const [live, stored] = r.quotes_by_symbols
        const name = (live.ext as { name: unknown }).name
        assert.equal(typeof name, 'string')
        // A quote as pushed, TickFlow's Quote: the session of its own time, the change against prev_close,
        // named as quotes.get_by_symbols names it (the instrument's name).
        assert.deepEqual(r.quotes[1], {
          symbol: SYMBOL,
          region: 'CN',
          timestamp: T.t1,
          last_price: 10.01,
          open: 10.0,
          high: 10.01,
          low: 10.0,
          volume: 2000,
          amount: 2002000.0,
          prev_close: 9.9,
          session: 'regular',
          ext: { type: 'cn_equity', name, change_amount: 0.11, change_pct: 0.011111, amplitude: 0.00101 },
        })
        assert.deepEqual(r.errors, [])
        assert.deepEqual(
          r.realtime.map((q) => [q.symbol, q.timestamp - NOW, q.last_price]),
          [[REALTIME, -53_000, 50.07]],
        )
        assert.deepEqual(r.depth_get, { ...depth(SYMBOL, 7), region: 'CN' })
        // The quote pushed today answers for the symbol; the other comes from its stored bars.
        assert.deepEqual(
          [live.symbol, live.timestamp, live.last_price, live.volume, live.session],
          [SYMBOL, T.t6, 10.06, 7000, 'regular'],
        )
        assert.equal(stored.symbol, '000001.SZ')
        assert.ok(stored.timestamp < NOW - 86_400_000)
        if (mode === 'sync')
          // Debian's websockets (10.4) gives the SDK the refusal's status in its message, not the response it looks for.
          assert.match(r.refused ?? '', /HTTP 401/)
      },
    )
})
