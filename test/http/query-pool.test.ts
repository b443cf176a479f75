// The worker pool (mdq serve --workers N) answers byte for byte what the main thread answers, errors included.
import { parseStoreUrl } from '../../src/store/backends.js'
import assert from 'node:assert/strict'
import { copyFileSync, writeFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { poolRunner } from '../../src/runner/query-pool.js'
import { workerCount } from '../../src/cli/serve-command.js'
import { ADJUSTS } from '../../src/domain/adjust.js'
import { PERIODS } from '../../src/domain/period.js'
import { spawnServe, type ServeProcess } from '../helpers/serve-process.js'
import { demoDb, rawRequest, startServer, type TestServer } from '../helpers/server.js'
import { damagedCopy, runMdq, tempDir } from '../helpers/store-files.js'

const { dir, cleanup } = tempDir()
let db: string
let inThread: TestServer
let pooled: TestServer
const pool = () => poolRunner(2, { store: parseStoreUrl(db) }, { blockingReads: true })
let runner: ReturnType<typeof pool>
before(async () => {
  db = await demoDb(dir)
  runner = pool()
  // The response cache off: every answer below is computed, by the main thread or by a worker.
  inThread = await startServer(db, { responseCacheBytes: 0 })
  pooled = await startServer(db, { responseCacheBytes: 0, runner })
})
after(async () => {
  await Promise.all([inThread.close(), pooled.close(), runner.close()])
  cleanup()
})

const raw = (s: TestServer, path: string, headers: Record<string, string> = {}) =>
  rawRequest(`${s.url}${path}`, { 'X-API-Key': s.key, 'Accept-Encoding': 'identity', ...headers })

async function sameAnswer(path: string): Promise<number> {
  const [a, b] = await Promise.all([raw(inThread, path), raw(pooled, path)])
  assert.equal(b.status, a.status, path)
  assert.equal(b.headers['content-type'], a.headers['content-type'], path)
  assert.ok(b.body.equals(a.body), `${path}: the pool's bytes differ from the main thread's`)
  return a.status
}

describe('the query worker pool', () => {
  it('answers /v1/klines byte for byte as the main thread, for every period and adjust mode', async () => {
    for (const symbol of ['600519.SH', '000001.SZ', 'AAPL.US', '00700.HK'])
      for (const period of PERIODS)
        for (const adjust of ADJUSTS)
          assert.equal(await sameAnswer(`/v1/klines?symbol=${symbol}&period=${period}&adjust=${adjust}&count=700`), 200)
    const all = JSON.parse(
      (await raw(inThread, '/v1/klines?symbol=600000.SH&count=300&adjust=none')).body.toString(),
    ) as { data: { timestamp: number[] } }
    const [from, to] = [all.data.timestamp[50], all.data.timestamp[250]]
    assert.equal(
      await sameAnswer(
        `/v1/klines?symbol=600000.SH&period=1w&count=10&start_time=${from}&end_time=${to}&adjust=backward_additive`,
      ),
      200,
    )
  })

  it('answers batch, intraday and intraday batch byte for byte, streamed in order across workers', async () => {
    // 10 known symbols and an unknown one (left out): with 10 symbols a worker task, two groups.
    const symbols = [
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
      '999999.SH',
    ]
    for (const period of ['1d', '1w', '60m', '1m'])
      for (const adjust of ['forward', 'none'])
        assert.equal(
          await sameAnswer(`/v1/klines/batch?symbols=${symbols.join(',')}&period=${period}&adjust=${adjust}&count=500`),
          200,
        )
    for (const period of ['1m', '5m', '30m']) {
      assert.equal(await sameAnswer(`/v1/klines/intraday?symbol=600519.SH&period=${period}`), 200)
      assert.equal(
        await sameAnswer(`/v1/klines/intraday/batch?symbols=${symbols.join(',')}&period=${period}&count=50`),
        200,
      )
    }
    const body = JSON.parse(
      (await raw(pooled, `/v1/klines/batch?symbols=${symbols.join(',')}&count=3`)).body.toString(),
    ) as { data: Record<string, unknown> }
    assert.deepEqual(Object.keys(body.data), symbols.slice(0, -1), 'every known symbol, in the order asked')
  })

  it('a failure inside a worker reaches the client as from the main thread: unknown symbol 404, malformed 400', async () => {
    assert.equal(await sameAnswer('/v1/klines?symbol=999999.SH'), 404)
    assert.equal(await sameAnswer('/v1/klines/intraday?symbol=999999.SH'), 404)
    assert.equal(await sameAnswer('/v1/klines?symbol=NOPE'), 400)
    const r = await raw(pooled, '/v1/klines?symbol=999999.SH')
    assert.deepEqual(JSON.parse(r.body.toString()), {
      code: 404,
      message: "Unknown symbol '999999.SH': no such instrument in this store.",
    })
  })

  it('a store a worker cannot read is a 503 {code, message}; a corrupt chunk answers as in the main thread', async () => {
    // The main thread's store is fine, the workers' file is not a database: only a worker can fail here.
    const broken = join(dir, 'not-sqlite.db')
    copyFileSync(db, broken)
    writeFileSync(join(dir, 'garbage.db'), Buffer.alloc(4096, 0x42))
    const onBroken = poolRunner(1, { store: parseStoreUrl(join(dir, 'garbage.db')) }, { blockingReads: true })
    const server = await startServer(broken, { responseCacheBytes: 0, runner: onBroken })
    try {
      const r = await raw(server, '/v1/klines?symbol=600519.SH')
      assert.equal(r.status, 503)
      assert.deepEqual(JSON.parse(r.body.toString()), {
        code: 503,
        message: 'The store cannot be opened: SQLITE_NOTADB.',
      })
    } finally {
      await Promise.all([server.close(), onBroken.close()])
    }

    // One chunk's bytes overwritten: whatever the main thread answers (status and body), the pool answers too.
    const corrupt = damagedCopy(db, join(dir, 'corrupt.db'))
    const corruptPool = poolRunner(1, { store: parseStoreUrl(corrupt) }, { blockingReads: true })
    const [a, b] = [
      await startServer(corrupt, { responseCacheBytes: 0 }),
      await startServer(corrupt, { responseCacheBytes: 0, runner: corruptPool }),
    ]
    try {
      const path = '/v1/klines?symbol=600519.SH&count=5000&adjust=none'
      const [ra, rb] = [await raw(a, path), await raw(b, path)]
      assert.equal(rb.status, ra.status)
      assert.ok(rb.body.equals(ra.body), `${rb.body.toString().slice(0, 200)} vs ${ra.body.toString().slice(0, 200)}`)
    } finally {
      await Promise.all([a.close(), b.close(), corruptPool.close()])
    }
  })

  it("exposes the queue of the pool and the workers' store reads on /metrics", async () => {
    await raw(pooled, '/v1/klines?symbol=601318.SH&count=50')
    const text = await (await fetch(`${pooled.url}/metrics`)).text()
    assert.match(text, /^mdq_query_queue_size \d+$/m)
    const count = /^mdq_store_read_duration_seconds_count\{operation="bars"\} (\d+)$/m.exec(text)
    assert.ok(count && Number(count[1]) > 0, 'reads made in workers are counted')
  })
})

describe('--workers', () => {
  it('takes a whole number 0..256', () => {
    assert.equal(workerCount('0'), 0)
    assert.equal(workerCount('4'), 4)
    for (const bad of ['-1', '1.5', 'two', '', '257'])
      assert.throws(() => workerCount(bad), /whole number of worker threads/, bad)
  })

  it('mdq serve refuses a bad --workers or MDQ_WORKERS, naming it', () => {
    const flag = runMdq(['--db', db, 'serve', '--port', '0', '--workers', 'many'])
    assert.notEqual(flag.status, 0)
    assert.match(flag.stderr, /--workers <n>.*whole number of worker threads/)
    const env = runMdq(['--db', db, 'serve', '--port', '0'], { MDQ_WORKERS: '-2' })
    assert.notEqual(env.status, 0)
    assert.match(env.stderr, /--workers <n>.*whole number of worker threads/)
  })

  it('mdq serve logs how many query threads it runs: one per core by default, else as --workers says', async () => {
    const workersLogged = (p: ServeProcess) =>
      (
        JSON.parse(
          p
            .output()
            .split('\n')
            .find((l) => l.includes('mdq serving'))!,
        ) as { workers: number }
      ).workers
    const servers = await Promise.all([
      spawnServe(['--db', db]),
      spawnServe(['--db', db], ['--workers', '3']),
      spawnServe(['--db', db], ['--workers', '0']),
    ])
    try {
      assert.deepEqual(servers.map(workersLogged), [availableParallelism(), 3, 0])
    } finally {
      await Promise.all(servers.map((p) => p.stop()))
    }
  })

  it('mdq serve --workers 2 answers as --workers 0, through the real CLI', async () => {
    const created = runMdq(['--db', db, 'keys', 'create', '--name', 'pool'])
    const key = /mdq_[A-Za-z0-9_-]+/.exec(created.stdout + created.stderr)?.[0]
    assert.ok(key, 'a key was created')
    const [two, zero] = await Promise.all([
      spawnServe(['--db', db], ['--workers', '2', '--cache-mb', '0']),
      spawnServe(['--db', db], ['--workers', '0', '--cache-mb', '0']),
    ])
    try {
      for (const path of [
        '/v1/klines?symbol=600519.SH&count=3000&adjust=forward',
        '/v1/klines/batch?symbols=600519.SH,AAPL.US&period=1w',
        '/v1/klines?symbol=999999.SH',
      ]) {
        const a = await rawRequest(`${zero.base}${path}`, { 'X-API-Key': key })
        const b = await rawRequest(`${two.base}${path}`, { 'X-API-Key': key })
        assert.equal(b.status, a.status, path)
        assert.ok(b.body.equals(a.body), path)
      }
    } finally {
      await Promise.all([two.stop(), zero.stop()])
    }
  })
})
