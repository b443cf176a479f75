// TickFlow's streams over real WebSockets against a real server: the handshake's answers, both
// channels, the deprecated quotes endpoint, replies and errors (snapshots published in-process to the
// server's hub); GET /v1/depth, and today's quotes in /v1/quotes and on the streams, as pushed to the
// ingest listener.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { join } from 'node:path'
import { MARKETS } from '../../src/domain/market.js'
import { importFile } from '../../src/ingest/import-file.js'
import { StreamHub } from '../../src/live/stream-hub.js'
import { demoDb, getJson, newKey, startServer, type TestServer } from '../helpers/server.js'
import { tempDir, writeCsv } from '../helpers/store-files.js'
import { StreamClient, streamUrl } from '../helpers/stream-client.js'
import { depthSnapshot, quoteSnapshot } from '../helpers/snapshots.js'
import { startIngest } from '../helpers/ingest-server.js'
import { until } from '../helpers/wait.js'
import { DAILY } from '../helpers/day-by-day.js'

const SH = MARKETS.SH.zone
// Wednesday 2026-11-18 10:00 in Shanghai: a session is on.
const NOW = SH.utcOf(2026, 11, 18, 10 * 60)

describe('streams: handshake, channels, replies', () => {
  const { dir, cleanup } = tempDir()
  const hub = new StreamHub()
  const logs: string[] = []
  let server: TestServer
  before(async () => {
    server = await startServer(await demoDb(dir), {
      live: { hub, caps: { connectionsPerKey: 3 } },
      now: () => NOW,
      logger: { level: 'info', stream: { write: (line: string) => void logs.push(line) } },
    })
  })
  after(async () => {
    await server.close()
    cleanup()
  })
  const open = (path = 'stream', key = server.key) => StreamClient.open(streamUrl(server.url, key, path))

  it('refuses a handshake with an HTTP status and a JSON {code, message} the SDK reads as its reason', async () => {
    const missing = await StreamClient.refusal(streamUrl(server.url, undefined))
    assert.equal(missing.status, 401)
    assert.match(missing.body.message, /Missing API key/)
    assert.equal(missing.headers['content-type'], 'application/json; charset=utf-8')
    const unknown = await StreamClient.refusal(streamUrl(server.url, 'mdq_not_a_key'))
    assert.deepEqual(unknown.body, { code: 401, message: 'Unknown API key.' })
    const elsewhere = await StreamClient.refusal(
      `${server.url.replace('http', 'ws')}/v1/klines?symbol=600519.SH&api_key=${server.key}`,
    )
    assert.equal(elsewhere.status, 404)
    assert.match(elsewhere.body.message, /No WebSocket endpoint at \/v1\/klines/)
    const plain = await getJson<{ code: number; message: string }>(`${server.url}/v1/ws/stream`, {
      headers: { 'X-API-Key': server.key },
    })
    assert.equal(plain.status, 426)
    assert.equal(plain.headers.get('upgrade'), 'websocket')
  })

  let capped = ''
  it('takes the key in the X-API-Key header too, and refuses a key at its connection cap with 429', async () => {
    const key = (capped = await newKey(server.keys, 'capped'))
    const opened = [
      await StreamClient.open(streamUrl(server.url, undefined), { headers: { 'X-API-Key': key } }),
      await open('stream', key),
      await open('quotes', key),
    ]
    const refused = await StreamClient.refusal(streamUrl(server.url, key))
    assert.equal(refused.status, 429)
    assert.equal(refused.body.code, 429)
    assert.match(refused.body.message, /already has 3 stream connections open/)
    await opened[0].close()
    // The slot is free again once the server has seen the close.
    const again = await until(
      () => open('stream', key).catch(() => undefined),
      'a connection once one of three is closed',
    )
    await Promise.all([again, ...opened.slice(1)].map((c) => c.close()))
  })

  it('quotes and depth channels: subscribed replies, the latest snapshot at once, then every snapshot in order; unsubscribe stops them', async () => {
    hub.publish([quoteSnapshot('600000.SH', NOW - 3000, 10.5), depthSnapshot('600000.SH', NOW - 3000, 10.49)])
    const client = await open()
    const subscribed = await client.request({ op: 'subscribe', channel: 'quotes', symbols: ['600000.sh', 'AAPL.US'] })
    assert.deepEqual(subscribed, { op: 'subscribed', channel: 'quotes', symbols: ['600000.SH', 'AAPL.US'], total: 2 })
    const first = await client.next((m) => m.op === 'quotes', 'the latest quote')
    assert.deepEqual(first.data, [JSON.parse(quoteSnapshot('600000.SH', NOW - 3000, 10.5).json)])
    assert.equal((await client.request({ op: 'subscribe', channel: 'depth', symbols: ['600000.SH'] })).total, 1)
    await client.next((m) => m.op === 'depth', 'the latest depth')
    for (let i = 1; i <= 20; i++)
      hub.publish([
        quoteSnapshot('600000.SH', NOW + i * 1000, 10.5 + i / 100),
        quoteSnapshot('000001.SZ', NOW + i * 1000, 9), // not subscribed
        depthSnapshot('600000.SH', NOW + i * 1000, 10.49 + i / 100),
      ])
    await until(() => client.items('quotes').length === 21 && client.items('depth').length === 21, 'every snapshot')
    assert.deepEqual(
      client.items('quotes').map((q) => q.timestamp),
      Array.from({ length: 21 }, (_, i) => NOW + (i === 0 ? -3000 : i * 1000)),
    )
    // Prices keep their fraction part on the wire, as in every mdq answer.
    assert.match(JSON.stringify(client.messages.find((m) => m.op === 'depth')), /"bid_prices":\[10\.49,10\.48\]/)
    const raw: string[] = []
    client.ws.on('message', (d) => raw.push(String(d)))
    hub.publish([quoteSnapshot('600000.SH', NOW + 30_000, 11)])
    await until(() => raw.length === 1, 'one more quote')
    assert.match(raw[0], /^\{"op":"quotes","data":\[\{"symbol":"600000.SH",.*"last_price":11\.0,/)
    const gone = await client.request({ op: 'unsubscribe', channel: 'quotes', symbols: ['600000.SH', 'MSFT.US'] })
    assert.deepEqual(gone, { op: 'unsubscribed', channel: 'quotes', symbols: ['600000.SH'], total: 1 })
    hub.publish([quoteSnapshot('600000.SH', NOW + 40_000, 12), depthSnapshot('600000.SH', NOW + 40_000, 12)])
    await until(() => client.items('depth').length === 22, 'the depth snapshot after the unsubscribe')
    assert.equal(client.items('quotes').length, 22)
    await client.close()
  })

  it('/v1/ws/quotes (tf.realtime): subscribe without a channel, quotes only', async () => {
    const client = await open('quotes')
    assert.deepEqual(await client.request({ op: 'subscribe', symbols: ['000001.SZ'] }), {
      op: 'subscribed',
      channel: 'quotes',
      symbols: ['000001.SZ'],
      total: 1,
    })
    const refused = await client.request({ op: 'subscribe', channel: 'depth', symbols: ['000001.SZ'] })
    assert.equal(refused.op, 'error')
    assert.match(String(refused.message), /'channel' must be one of quotes; got "depth"/)
    hub.publish([quoteSnapshot('000001.SZ', NOW + 50_000, 9.5), depthSnapshot('000001.SZ', NOW + 50_000, 9.5)])
    await until(() => client.items('quotes').some((q) => q.timestamp === NOW + 50_000), 'the quote')
    assert.ok(!client.messages.some((m) => m.op === 'depth'))
    await client.close()
  })

  it('answers a bad message with an error op naming what is wrong, and pings with pong; the stream stays open', async () => {
    const client = await open()
    const errors = [
      await client.request('not json'),
      await client.request({ op: 'subscribe', channel: 'trades', symbols: ['600000.SH'] }),
      await client.request({ op: 'subscribe', channel: 'quotes', symbols: ['600000.XX'] }),
      await client.request({ op: 'subscribe', channel: 'quotes' }),
    ]
    assert.deepEqual(
      errors.map((e) => [e.op, e.code]),
      errors.map(() => ['error', 400]),
    )
    assert.match(String(errors[1].message), /'channel' must be one of quotes, depth; got "trades"/)
    assert.match(String(errors[2].message), /unknown exchange 'XX'/)
    assert.match(String(errors[3].message), /'symbols' must be a non-empty array/)
    const binary = client.messages.length
    client.ws.send(Buffer.from([1, 2, 3]))
    assert.match(String((await client.next((m) => m.op === 'error', 'the binary refusal', binary)).message), /text/)
    assert.deepEqual(await client.request({ op: 'ping' }), { op: 'pong' })
    assert.equal(
      (await client.request({ op: 'subscribe', channel: 'quotes', symbols: ['600000.SH'] })).op,
      'subscribed',
    )
    await client.close()
  })

  it('GET /v1/depth answers the latest depth pushed to the ingest listener; /v1/quotes a quote pushed today, with its session now', async () => {
    const ingest = await startIngest(server, {}, hub)
    const push = async (kind: 'quotes' | 'depth', row: object) => {
      const res = await fetch(`${ingest.url}/v1/ingest/${kind}`, {
        method: 'POST',
        headers: { 'X-API-Key': ingest.key, 'Content-Type': 'application/json' },
        body: JSON.stringify([row]),
      })
      assert.equal(res.status, 200, await res.text())
    }
    const headers = { 'X-API-Key': server.key }
    try {
      const book = {
        symbol: '600519.SH',
        timestamp: NOW - 1000,
        bid_prices: [1500.5, 1500.0],
        bid_volumes: [3, 12],
        ask_prices: [1501.0, 1502.25],
        ask_volumes: [7, 1],
      }
      await push('depth', book)
      const depth = await getJson<{ data: unknown }>(`${server.url}/v1/depth?symbol=600519.sh`, { headers })
      assert.equal(depth.status, 200)
      assert.deepEqual(depth.body.data, { ...book, region: 'CN' })
      type Quote = { symbol: string; timestamp: number; last_price: number; session: string }
      const quotes = async () =>
        (await getJson<{ data: Quote[] }>(`${server.url}/v1/quotes?symbols=600519.SH,600000.SH,000001.SZ`, { headers }))
          .body.data
      const moutai = (at: number, last: number) => ({
        symbol: '600519.SH',
        timestamp: at,
        last_price: last,
        open: 1490,
        high: 1510,
        low: 1480,
        prev_close: 1495,
        volume: 100,
        amount: 15_000_000,
      })
      // Pushed yesterday: the stored bars it built answer (stamped as a bar is, not as the snapshot was), closed.
      const yesterday = NOW - 86_400_000 - 30_000
      await push('quotes', moutai(yesterday, 1499))
      const [old] = await quotes()
      assert.deepEqual([old.last_price, old.session], [1499, 'closed'])
      assert.notEqual(old.timestamp, yesterday)
      // Pushed today, in the session running now: it answers as pushed, regular.
      await push('quotes', moutai(NOW - 60_000, 1501.25))
      const [live, pufa, pingan] = await quotes()
      assert.deepEqual(
        [live.symbol, live.timestamp, live.last_price, live.session],
        ['600519.SH', NOW - 60_000, 1501.25, 'regular'],
      )
      assert.ok(pufa.timestamp < NOW - 86_400_000) // nothing pushed for it: its stored bars, in the order asked
      assert.equal(pingan.symbol, '000001.SZ')
    } finally {
      await ingest.close()
    }
  })

  it("a quote pushed to the ingest listener streams with the ext GET /v1/quotes answers for it: the instrument's name first, else the pushed one", async () => {
    const ingest = await startIngest(server, {}, hub)
    const headers = { 'X-API-Key': server.key }
    // 601318.SH has an instrument row with a name; 688999.SH none until its first push makes a bare one.
    const listed = await getJson<{ data: { symbol: string; name: string | null }[] }>(
      `${server.url}/v1/instruments?symbols=601318.SH,688999.SH`,
      { headers },
    )
    assert.deepEqual(
      listed.body.data.map((i) => [i.symbol, typeof i.name]),
      [['601318.SH', 'string']],
    )
    const named = listed.body.data[0].name
    const pushed = (symbol: string, at: number, ext?: object) => ({
      symbol,
      timestamp: at,
      last_price: 5.5,
      open: 5.4,
      high: 5.6,
      low: 5.3,
      prev_close: 5.45,
      volume: 3000,
      amount: 1_650_000,
      ...(ext && { ext }),
    })
    const push = async (rows: object[]) => {
      const res = await fetch(`${ingest.url}/v1/ingest/quotes`, {
        method: 'POST',
        headers: { 'X-API-Key': ingest.key, 'Content-Type': 'application/json' },
        body: JSON.stringify(rows),
      })
      assert.equal(res.status, 200, await res.text())
    }
    const symbols = ['601318.SH', '688999.SH']
    const stream = await open()
    const realtime = await open('quotes')
    try {
      assert.equal((await stream.request({ op: 'subscribe', channel: 'quotes', symbols })).op, 'subscribed')
      assert.equal((await realtime.request({ op: 'subscribe', symbols })).op, 'subscribed')
      const rest = async () =>
        (await getJson<{ data: Record<string, unknown>[] }>(`${server.url}/v1/quotes?symbols=${symbols}`, { headers }))
          .body.data
      const streamed = async (client: StreamClient, at: number) => {
        await until(() => client.items('quotes').filter((q) => q.timestamp === at).length === 2, 'both quotes')
        return client.items('quotes').filter((q) => q.timestamp === at)
      }
      // Without an ext: the instrument's name on both.
      await push(symbols.map((s) => pushed(s, NOW - 2000)))
      const plain = await rest()
      assert.equal((plain[0].ext as { name: unknown }).name, named)
      assert.equal((plain[1].ext as { name: unknown }).name, null)
      assert.deepEqual(await streamed(stream, NOW - 2000), plain)
      assert.deepEqual(await streamed(realtime, NOW - 2000), plain)
      // A pushed ext.name yields to the instrument's; its other members pass through.
      const ext = { name: 'Feed name', turnover_rate: 0.0123 }
      await push(symbols.map((s) => pushed(s, NOW - 1000, ext)))
      const withExt = await rest()
      assert.deepEqual(
        withExt.map((q) => q.ext),
        [named, 'Feed name'].map((name) => ({
          type: 'cn_equity',
          name,
          change_amount: 0.05,
          change_pct: 0.009174,
          amplitude: 0.055046,
          turnover_rate: 0.0123,
        })),
      )
      assert.deepEqual(await streamed(stream, NOW - 1000), withExt)
      assert.deepEqual(await streamed(realtime, NOW - 1000), withExt)
      // An import renames the instrument while the feed runs: the next quote streams with the new name.
      await importFile(
        server.store,
        'instruments',
        writeCsv(join(dir, 'i.csv'), 'symbol,name', ['601318.SH,Renamed']),
        DAILY,
      )
      await push(symbols.map((s) => pushed(s, NOW - 500, ext)))
      const renamed = await rest()
      assert.equal((renamed[0].ext as { name: unknown }).name, 'Renamed')
      assert.deepEqual(await streamed(stream, NOW - 500), renamed)
    } finally {
      await Promise.all([stream.close(), realtime.close()])
      await ingest.close()
    }
  })

  it('no log line carries a key, whatever the handshake or the stream did', async () => {
    await until(() => logs.some((l) => l.includes('"stream closed"')), 'the stream log lines')
    const all = logs.join('\n')
    assert.ok(all.includes('"stream opened"'))
    for (const secret of [server.key, capped, 'mdq_not_a_key']) assert.ok(!all.includes(secret), 'a key in the log')
    assert.ok(!all.includes('api_key=mdq'), 'an unredacted api_key in the log')
  })
})
