// Python clients send Accept-Encoding: gzip: a batch gzipped group by group in the worker pool, decoded
// by httpx (which reads only a gzip stream's first member) and by the official TickFlow SDK, is the
// plain answer byte for byte.
import { parseStoreUrl } from '../../src/store/backends.js'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { poolRunner } from '../../src/runner/query-pool.js'
import { runSdkScript, sdkSkip } from '../helpers/python-sdk.js'
import { demoDb, rawRequest, startServer, type KlinesData, type TestServer } from '../helpers/server.js'
import { tempDir } from '../helpers/store-files.js'

interface Report {
  direct: { status: number; sent: string; encoding: string | null; length: number; sha256: string }
  sdk: { seen: [sent: string, encoding: string | null][]; batch: Record<string, KlinesData> }
}

/** With count=10000, one symbol a worker task: ten groups, each deflated in a worker. */
const SYMBOLS = [
  '600519.SH',
  '000001.SZ',
  'AAPL.US',
  '00700.HK',
  '600000.SH',
  '601318.SH',
  '000858.SZ',
  '510300.SH',
  '09988.HK',
  'SPY.US',
]
const skip = sdkSkip()

describe('gzip batch answers from the worker pool, read by Python clients', () => {
  const { dir, cleanup } = tempDir()
  const runners: { close(): Promise<void> }[] = []
  let server: TestServer | undefined
  before(async () => {
    if (skip) return
    const db = await demoDb(dir)
    const runner = poolRunner(2, { store: parseStoreUrl(db) }, { blockingReads: true })
    runners.push(runner)
    server = await startServer(db, { responseCacheBytes: 0, runner })
  })
  after(async () => {
    await server?.close()
    await Promise.all(runners.map((r) => r.close()))
    cleanup()
  })

  it('httpx and the TickFlow SDK (klines.batch) decode it to the plain answer, byte for byte', { skip }, async () => {
    const s = server!
    for (const [symbols, count] of [
      [SYMBOLS, 10000],
      [['600519.SH'], 10000],
    ] as const) {
      const plain = (
        await rawRequest(`${s.url}/v1/klines/batch?symbols=${symbols.join(',')}&count=${count}`, {
          'X-API-Key': s.key,
          'Accept-Encoding': 'identity',
        })
      ).body
      const r = await runSdkScript<Report>('batch_gzip.py', [s.url, s.key, JSON.stringify(symbols), String(count)])
      assert.deepEqual(
        { ...r.direct, sent: r.direct.sent.includes('gzip') },
        {
          status: 200,
          sent: true,
          encoding: 'gzip',
          length: plain.length,
          sha256: createHash('sha256').update(plain).digest('hex'),
        },
        'httpx: the decoded bytes are the plain answer',
      )
      assert.ok(
        r.sdk.seen.length > 0 && r.sdk.seen.every(([sent, encoding]) => sent.includes('gzip') && encoding === 'gzip'),
        `the SDK asked for and got gzip: ${JSON.stringify(r.sdk.seen)}`,
      )
      assert.deepEqual(
        r.sdk.batch,
        (JSON.parse(plain.toString()) as { data: Record<string, KlinesData> }).data,
        'the SDK: every symbol, every bar',
      )
    }
  })
})
