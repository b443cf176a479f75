// A restarted server's streams answer a subscribe with what was pushed before it stopped: each
// symbol's latest quote and depth, as the store keeps them, not nothing until the next push.
import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { MARKETS } from '../../src/domain/market.js'
import { daysFromCivil } from '../../src/domain/time-zone.js'
import { pushedQuote } from '../helpers/ingest-server.js'
import { spawnServe } from '../helpers/serve-process.js'
import { demoDb, getJson } from '../helpers/server.js'
import { runMdq, tempDir } from '../helpers/store-files.js'
import { StreamClient, streamUrl } from '../helpers/stream-client.js'

const { dir, cleanup } = tempDir()
after(cleanup)

/** Wednesday 2026-11-18, 10:00 in Shanghai: a weekday before any clock this runs on. */
const AT = MARKETS.SH.zone.midnightUtc(daysFromCivil(2026, 11, 18)) + 10 * 3_600_000

describe('streams after a restart', () => {
  it('a subscribe answers the latest quote and depth pushed before a SIGKILL', async () => {
    const db = await demoDb(dir)
    const feedKey = runMdq(['--db', db, 'keys', 'create', '--name', 'feed', '--scope', 'ingest']).stdout.trim()
    const readKey = runMdq(['--db', db, 'keys', 'create', '--name', 'reader']).stdout.trim()
    const quote = pushedQuote({
      symbol: '601318.SH',
      timestamp: AT,
      lastPrice: 45.6,
      open: 45,
      high: 46,
      low: 44.8,
      prevClose: 45.1,
      volume: 1200,
      amount: 54_720.5,
    })
    const depth = {
      symbol: '601318.SH',
      timestamp: AT + 1000,
      bid_prices: [45.59, 45.58],
      bid_volumes: [10, 20],
      ask_prices: [45.61],
      ask_volumes: [5],
    }
    const first = await spawnServe(['--db', db], ['--ingest-port', '0'])
    try {
      for (const [path, rows] of [
        ['quotes', [quote]],
        ['depth', [depth]],
      ] as const) {
        const r = await getJson<{ data: { accepted: number } }>(`${first.ingest}/v1/ingest/${path}`, {
          method: 'POST',
          headers: { 'X-API-Key': feedKey, 'Content-Type': 'application/json' },
          body: JSON.stringify(rows),
        })
        assert.equal(r.body.data.accepted, 1, `${path}: ${JSON.stringify(r.body)}`)
      }
    } finally {
      await first.kill()
    }
    const second = await spawnServe(['--db', db])
    const client = await StreamClient.open(streamUrl(second.base, readKey))
    try {
      assert.equal((await client.request({ op: 'subscribe', channel: 'quotes', symbols: ['601318.SH'] })).total, 1)
      const quotes = await client.next((m) => m.op === 'quotes', 'the latest quote')
      assert.deepEqual(
        quotes.data?.map((q) => [q.symbol, q.timestamp, q.last_price, q.volume]),
        [['601318.SH', AT, 45.6, 1200]],
      )
      assert.equal((await client.request({ op: 'subscribe', channel: 'depth', symbols: ['601318.SH'] })).total, 1)
      const depths = await client.next((m) => m.op === 'depth', 'the latest depth')
      assert.deepEqual(
        depths.data?.map((d) => [d.symbol, d.timestamp, d.bid_prices]),
        [['601318.SH', AT + 1000, [45.59, 45.58]]],
      )
    } finally {
      client.ws.terminate()
      await second.stop()
    }
  })
})
