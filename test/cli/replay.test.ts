// `mdq replay --ingest`: stored 1m bars played back into a running mdq as quote snapshots come out as the
// same bars on the day they are stamped onto; a key without the ingest scope or a missing target is one clear line.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { copyFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { barCount, sliceBars } from '../../src/domain/bars.js'
import { MARKETS } from '../../src/domain/market.js'
import { DAY_MS, daysFromCivil, isoWeekday } from '../../src/domain/time-zone.js'
import { SqliteMarketStore } from '../../src/store/sqlite/sqlite-market-store.js'
import { startStreamServer } from '../../src/replay/stream-server.js'
import { spawnServe, type ServeProcess } from '../helpers/serve-process.js'
import { StreamClient, streamUrl } from '../helpers/stream-client.js'
import { demoDb, getJson, type KlinesData } from '../helpers/server.js'
import { MDQ_BIN, runMdq, tempDir } from '../helpers/store-files.js'

const { dir, cleanup } = tempDir('mdq-replay-')
let source: string
let target: string
let server: ServeProcess
let feedKey: string
let readKey: string

before(async () => {
  source = await demoDb(dir)
  target = join(dir, 'target.db')
  copyFileSync(source, target)
  feedKey = runMdq(['--db', target, 'keys', 'create', '--name', 'feed', '--scope', 'ingest']).stdout.trim()
  readKey = runMdq(['--db', target, 'keys', 'create', '--name', 'reader']).stdout.trim()
  server = await spawnServe(['--db', target], ['--ingest-port', '0', '--workers', '0', '--rate-limit', 'off'])
})
after(async () => {
  await server.stop()
  cleanup()
})

/** `mdq replay` run to its end (asynchronously: the server answering it may be in this process's tests). */
function replay(
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ status: number | null; stderr: string }> {
  const child = spawn(process.execPath, [MDQ_BIN(), '--db', source, 'replay', ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, ...env },
  })
  let stderr = ''
  child.stderr.on('data', (d) => (stderr += d))
  return new Promise((resolve) => child.once('exit', (status) => resolve({ status, stderr })))
}

describe('mdq replay', () => {
  it('pushes the latest day of 1m bars onto another day, where they read back as the same bars', async () => {
    const onto = daysFromCivil(2026, 1, 8)
    const r = await replay(
      ['--symbols', '000001.SZ', '--onto', '2026-01-08', '--speed', 'max', '--ingest', server.ingest!],
      {
        MDQ_INGEST_KEY: feedKey,
      },
    )
    assert.equal(r.status, 0, r.stderr)
    assert.match(r.stderr, /pushed [\d,]+ snapshots in .* s: [\d]+ accepted, 0 stale, 0 repeated/)
    const store = SqliteMarketStore.open(source, { readonly: true })
    const all = await store.readBars({ symbol: '000001.SZ', period: '1m', limit: 1000 })
    await store.close()
    const zone = MARKETS.SZ.zone
    const day = zone.localDay(all.timestamp[barCount(all) - 1])
    const bars = sliceBars(
      all,
      all.timestamp.findIndex((t) => zone.localDay(t) === day),
      barCount(all),
    )
    const got = await getJson<{ data: KlinesData }>(`${server.base}/v1/klines/intraday?symbol=000001.SZ`, {
      headers: { 'X-API-Key': readKey },
    })
    assert.deepEqual(
      got.body.data.timestamp,
      Array.from(bars.timestamp, (t) => t + (onto - day) * DAY_MS),
    )
    for (const f of ['open', 'high', 'low', 'close', 'volume', 'amount'] as const)
      assert.deepEqual(got.body.data[f], Array.from(bars[f]), f)
  })

  it("--onto today stamps the last replayed day as today in each symbol's own zone (the weekday before, on a weekend)", async () => {
    const symbols = ['600519.SH', 'AAPL.US']
    const expected = () =>
      symbols.map((s) => {
        const zone = MARKETS[s.endsWith('.US') ? 'US' : 'SH'].zone
        let last = zone.localDay(Date.now())
        while (isoWeekday(last) >= 5) last--
        let before = last - 1
        while (isoWeekday(before) >= 5) before--
        return [before, last]
      })
    const wanted = expected()
    const r = await replay(
      ['--symbols', symbols.join(','), '--days', '2', '--onto', 'today', '--speed', 'max', '--ingest', server.ingest!],
      { MDQ_INGEST_KEY: feedKey },
    )
    assert.equal(r.status, 0, r.stderr)
    const wantedAfter = expected() // a zone's midnight may pass while it runs
    for (const [i, symbol] of symbols.entries()) {
      const got = await getJson<{ data: KlinesData }>(
        `${server.base}/v1/klines?symbol=${symbol}&period=1m&count=2000&adjust=none`,
        { headers: { 'X-API-Key': readKey } },
      )
      const zone = MARKETS[symbol.endsWith('.US') ? 'US' : 'SH'].zone
      const days = [...new Set(got.body.data.timestamp.map((t) => zone.localDay(t)))].slice(-2)
      assert.ok(
        [wanted[i], wantedAfter[i]].some((w) => w[0] === days[0] && w[1] === days[1]),
        `${symbol}: days ${days} (wanted ${wanted[i]})`,
      )
    }
  })

  it("--serve-stream answers subscribe and unsubscribe as mdq's stream does, and a bad op with an error of code 400", async () => {
    const stream = await startStreamServer('127.0.0.1', 0)
    const client = await StreamClient.open(streamUrl(`http://127.0.0.1:${stream.port}`, 'any'))
    try {
      assert.deepEqual(
        await client.request({ op: 'subscribe', channel: 'quotes', symbols: ['600000.sh', 'AAPL.US'] }),
        {
          op: 'subscribed',
          channel: 'quotes',
          symbols: ['600000.SH', 'AAPL.US'],
          total: 2,
        },
      )
      assert.deepEqual(
        await client.request({ op: 'unsubscribe', channel: 'quotes', symbols: ['AAPL.US', 'MSFT.US'] }),
        {
          op: 'unsubscribed',
          channel: 'quotes',
          symbols: ['AAPL.US'],
          total: 1,
        },
      )
      const bad = await client.request({ op: 'subscribe', channel: 'depth', symbols: ['600000.SH'] })
      assert.deepEqual([bad.op, bad.code], ['error', 400])
    } finally {
      client.ws.terminate()
      await stream.close()
    }
  })

  it('stops with one line for a key without the ingest scope, or without a target', async () => {
    const refused = await replay(['--symbols', '000001.SZ', '--speed', 'max', '--ingest', server.ingest!], {
      MDQ_INGEST_KEY: readKey,
    })
    assert.equal(refused.status, 1)
    assert.match(
      refused.stderr,
      /mdq: 403: This API key has scope 'read'; POST \/v1\/ingest\/quotes needs scope 'ingest'/,
    )
    assert.doesNotMatch(refused.stderr, /\n\s+at /, 'no stack trace')
    const nowhere = await replay(['--symbols', '000001.SZ'])
    assert.equal(nowhere.status, 1)
    assert.match(nowhere.stderr, /give one of --ingest URL \(with --key or MDQ_INGEST_KEY\) or --serve-stream PORT/)
  })
})
