// --stale-while-revalidate over real HTTP, a real SQLite store and a real ingest listener: after a push,
// a cached answer stands in (its own ETag and bytes) while the answer of the new data is computed in
// the background; then the new one is served. Off by default: the read after a push has the pushed bar.
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { MARKETS } from '../../src/domain/market.js'
import type { QuoteSnapshot } from '../../src/domain/minute-bars.js'
import { daysFromCivil } from '../../src/domain/time-zone.js'
import { poolRunner } from '../../src/runner/query-pool.js'
import type { QueryRunner } from '../../src/runner/query-runner.js'
import { parseStoreUrl } from '../../src/store/backends.js'
import { pushedQuote, startIngest, type TestIngest } from '../helpers/ingest-server.js'
import { demoDb, getJson, startServer, type KlinesData, type TestServer } from '../helpers/server.js'
import { runMdq, tempDir } from '../helpers/store-files.js'
import { until } from '../helpers/wait.js'
import { threadNices } from '../helpers/thread-nice.js'
import { metricSum } from '../security/harness.js'

const { dir, cleanup } = tempDir()
after(cleanup)
let stores = 0

/** Monday 2026-01-05, after the demo's last day: a live day. */
const DAY = daysFromCivil(2026, 1, 5)
const at = (h: number, m: number) => MARKETS.SH.zone.midnightUtc(DAY) + (h * 60 + m) * 60_000
/** 600519.SH's snapshot 10 s into minute `m` after 09:30, with `m + 1` hundred shares traded in the day so far. */
const quote = (m: number): QuoteSnapshot => ({
  symbol: '600519.SH',
  timestamp: at(9, 30 + m) + 10_000,
  lastPrice: 261 + m,
  open: 261,
  high: 261 + m,
  low: 261,
  prevClose: 261.68,
  volume: 100 * (m + 1),
  amount: 26_100 * (m + 1),
})
/** Threads have nice values of their own (Linux): elsewhere the background worker runs at the process's. */
const linux = process.platform === 'linux'
const PATH = '/v1/klines?symbol=600519.SH&period=1m&count=3'

/** A server over a demo store of its own (a query runner made for it, if given) with its ingest listener; closed after `run`. */
async function withServer(
  staleMs: number | undefined,
  run: (s: TestServer, ingest: TestIngest) => Promise<void>,
  runnerOf?: (db: string) => QueryRunner,
) {
  const db = await demoDb(join(dir, String(stores++))) // what one test pushed is no other's
  const runner = runnerOf?.(db)
  const server = await startServer(db, {
    ...(runner && { runner }),
    ...(staleMs !== undefined && { staleWhileRevalidateMs: staleMs }),
  })
  const ingest = await startIngest(server)
  try {
    await run(server, ingest)
  } finally {
    await ingest.close()
    await server.close()
    await runner?.close()
  }
}
const read = (s: TestServer, headers: Record<string, string> = {}) =>
  getJson<{ data: KlinesData }>(`${s.url}${PATH}`, { headers: { 'X-API-Key': s.key, ...headers } })
async function push(ingest: TestIngest, q: QuoteSnapshot): Promise<void> {
  const r = await getJson(`${ingest.url}/v1/ingest/quotes`, {
    method: 'POST',
    headers: { 'X-API-Key': ingest.key, 'Content-Type': 'application/json' },
    body: JSON.stringify([{ ...pushedQuote(q), region: 'CN' }]),
  })
  assert.equal(r.status, 200, JSON.stringify(r.body))
}
const lastStamp = (d: KlinesData) => d.timestamp[d.timestamp.length - 1]

describe('--stale-while-revalidate', () => {
  it('off (the default): the read right after a push has its bar', async () => {
    await withServer(undefined, async (s, ingest) => {
      assert.equal((await read(s)).status, 200)
      await push(ingest, quote(0))
      const after = await read(s)
      assert.equal(after.status, 200)
      assert.equal(lastStamp(after.body.data), at(9, 30))
    })
  })

  it('on: the cached answer stands in with its own ETag while the new one is computed, then the new one is served', async () => {
    await withServer(60_000, async (s, ingest) => {
      await push(ingest, quote(0))
      const first = await read(s)
      assert.equal(first.status, 200)
      assert.equal(lastStamp(first.body.data), at(9, 30))
      const tag = first.headers.get('etag')!
      assert.equal((await read(s)).headers.get('etag'), tag, 'held') // the fast path's hit, confirming it current

      await push(ingest, quote(1))
      // The first read after the push: the previous answer's tag, so a client holding it hears 304.
      const revalidated = await read(s, { 'If-None-Match': tag })
      assert.equal(revalidated.status, 304)
      assert.equal(revalidated.headers.get('etag'), tag)
      // Then, once computed in the background, the answer of the new data.
      const fresh = await until(async () => {
        const r = await read(s)
        return r.headers.get('etag') !== tag ? r : undefined
      }, 'the answer with the pushed minute')
      assert.equal(fresh.status, 200)
      assert.equal(lastStamp(fresh.body.data), at(9, 31))
      assert.deepEqual(fresh.body.data.timestamp.slice(0, 2), first.body.data.timestamp.slice(1))

      const metrics = await (await fetch(`${s.url}/metrics`)).text()
      assert.ok(metricSum(metrics, 'mdq_response_cache_stale_total') >= 1, 'the stand-in is counted')
    })
  })

  it('on: while the new answer is computed on a worker of lower priority, the fast path sends the stand-in itself', async () => {
    // A real query thread whose answers wait while the test holds them: the computation after the
    // push stays under way for as long as the test needs (a slow store, deterministically).
    let hold: Promise<void> | undefined
    const holding = (db: string): QueryRunner => {
      const inner = poolRunner(1, { store: parseStoreUrl(db) }, { blockingReads: true })
      return {
        ...inner,
        answer: async (task, use) => {
          await hold
          return inner.answer(task, use)
        },
      }
    }
    await withServer(
      60_000,
      async (s, ingest) => {
        await push(ingest, quote(0))
        assert.equal((await read(s)).status, 200)
        const held = await read(s)
        const tag = held.headers.get('etag')!
        const fast = () => s.app.fastAnswers!.answered
        assert.equal(fast(), 1, 'the repeat came from the fast path')
        const lowered = () => threadNices(process.pid).filter((n) => n === 10).length
        if (linux)
          assert.equal(lowered(), 0, 'no thread of lower priority until an answer is computed in the background')

        let release!: () => void
        hold = new Promise((resolve) => (release = resolve))
        await push(ingest, quote(1))
        const first = await read(s) // the full path: starts the computation, sends the stand-in
        assert.equal(first.status, 200)
        assert.equal(first.headers.get('etag'), tag)
        assert.deepEqual(first.body, held.body)
        assert.equal(fast(), 1)
        // A client holding another tag (maybe the newer one, from another instance) is left to the full path.
        const other = await read(s, { 'If-None-Match': 'W/"another"' })
        assert.equal(other.status, 200)
        assert.equal(other.headers.get('etag'), tag)
        assert.equal(fast(), 1)
        for (let i = 0; i < 2; i++) {
          const again = await read(s)
          assert.equal(again.status, 200)
          assert.equal(again.headers.get('etag'), tag)
          assert.deepEqual(again.body, held.body)
        }
        assert.equal(fast(), 3, 'the stand-ins after the first came from the fast path')
        release()
        const fresh = await until(async () => {
          const r = await read(s)
          return r.headers.get('etag') !== tag ? r : undefined
        }, 'the answer with the pushed minute')
        assert.equal(lastStamp(fresh.body.data), at(9, 31))
        // A query thread of its own at nice 10, started for it (the only answer computed in the background).
        if (linux) assert.equal(lowered(), 1)
      },
      holding,
    )
  })

  it('refuses a bound that is not whole milliseconds 0..60000, in one line', () => {
    for (const bad of ['2.5', '-1', '60001', 'soon']) {
      const r = runMdq(['--db', join(dir, 'unused.db'), 'serve', '--port', '0', '--stale-while-revalidate', bad])
      assert.equal(r.status, 1, bad)
      assert.match(r.stderr, /--stale-while-revalidate.*must be a whole number of milliseconds 0\.\.60000 \(0 = off\)/)
    }
  })
})
