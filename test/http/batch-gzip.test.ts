// Batch answers with Accept-Encoding: gzip, computed in the main thread (@fastify/compress's stream) and
// in a pool of 2 workers (each group deflated in its worker, one gzip member): gunzipped, the same
// bytes as the plain answer; br and x-no-compression keep @fastify/compress; a failing group cuts
// the gzip answer as it cuts the plain one.
import assert from 'node:assert/strict'
import { copyFileSync, writeFileSync } from 'node:fs'
import { request } from 'node:http'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { brotliDecompressSync, constants, crc32, gunzipSync, inflateRawSync } from 'node:zlib'
import { gzipMember } from '../../src/encode/gzip-member.js'
import { inThreadRunner, type BatchTask } from '../../src/runner/query-runner.js'
import { openStores, parseStoreUrl } from '../../src/store/backends.js'
import { poolRunner } from '../../src/runner/query-pool.js'
import { SymbolContexts } from '../../src/query/symbol-context.js'
import { demoDb, rawRequest, startServer, type TestServer } from '../helpers/server.js'
import { damagedCopy, runMdq, tempDir } from '../helpers/store-files.js'

const { dir, cleanup } = tempDir()
/** The demo store's symbols: with count=10000, one symbol a worker task, so ten groups. */
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
let db: string
const servers: Record<'main thread' | 'pool of 2', TestServer> = {} as never
const runners: { close(): Promise<void> }[] = []
before(async () => {
  db = await demoDb(dir)
  const runner = poolRunner(2, { store: parseStoreUrl(db) }, { blockingReads: true })
  runners.push(runner)
  // The response cache off (batch answers are never cached anyway); in the main thread, or in the pool.
  servers['main thread'] = await startServer(db, { responseCacheBytes: 0 })
  servers['pool of 2'] = await startServer(db, { responseCacheBytes: 0, runner })
})
after(async () => {
  await Promise.all([...Object.values(servers).map((s) => s.close()), ...runners.map((r) => r.close())])
  cleanup()
})

const get = (s: TestServer, path: string, headers: Record<string, string>) =>
  rawRequest(`${s.url}${path}`, { 'X-API-Key': s.key, ...headers })

/** The batch with gzip and without: the gzip answer, checked to decode to the plain bytes. */
async function sameGzip(s: TestServer, path: string): Promise<{ plain: Buffer; gz: Buffer }> {
  const [plain, gz] = await Promise.all([
    get(s, path, { 'Accept-Encoding': 'identity' }),
    get(s, path, { 'Accept-Encoding': 'gzip, deflate' }),
  ])
  assert.equal(plain.status, 200, path)
  assert.equal(gz.status, 200, path)
  assert.equal(plain.headers['content-encoding'], undefined)
  assert.equal(gz.headers['content-encoding'], 'gzip', path)
  assert.match(String(gz.headers.vary), /accept-encoding/i, path)
  assert.equal(gz.headers['content-type'], 'application/json; charset=utf-8')
  assert.equal(gz.headers.etag, plain.headers.etag, 'weak tags: the encoding does not change the tag')
  assert.ok(gunzipSync(gz.body).equals(plain.body), `${path}: gunzipped, the gzip answer differs from the plain one`)
  return { plain: plain.body, gz: gz.body }
}

/** The answer's opening (`{"data":{`) as a stored deflate block (BFINAL 0, BTYPE 00, LEN, NLEN): how the pool's member opens. */
const storedHead = (text: string) =>
  Buffer.concat([Buffer.from([0x00, text.length, 0x00, 0xff - text.length, 0xff]), Buffer.from(text)])

describe('batch answers with Accept-Encoding: gzip', () => {
  for (const where of ['main thread', 'pool of 2'] as const) {
    it(`${where}: gunzipped, byte for byte the plain answer, for ten groups, one symbol, and none`, async () => {
      const s = servers[where]
      const many = await sameGzip(s, `/v1/klines/batch?symbols=${SYMBOLS.join(',')}&count=10000&adjust=forward`)
      assert.deepEqual(Object.keys((JSON.parse(many.plain.toString()) as { data: object }).data), SYMBOLS)
      assert.ok(
        many.plain.length > 1 << 20 && many.gz.length < many.plain.length / 2,
        `${many.plain.length} B plain, ${many.gz.length} B gzip`,
      )
      await sameGzip(s, `/v1/klines/batch?symbols=${SYMBOLS.join(',')}&period=1m&count=3000`)
      await sameGzip(s, '/v1/klines/batch?symbols=AAPL.US&period=1w&adjust=backward')
      await sameGzip(s, `/v1/klines/intraday/batch?symbols=${SYMBOLS.join(',')}&period=5m`)
      const none = await sameGzip(s, '/v1/klines/batch?symbols=999999.SH')
      assert.equal(none.plain.toString(), '{"unknown_symbols":["999999.SH"],"data":{}}')
    })
  }

  it("pool of 2: one gzip member of the workers' pieces (raw inflate between header and trailer gives the whole answer; CRC-32 and length in the trailer)", async () => {
    for (const [path, head] of [
      [`/v1/klines/batch?symbols=${SYMBOLS.join(',')}&count=10000`, '{"data":{'],
      ['/v1/klines/batch?symbols=600519.SH&count=10000', '{"data":{'],
      ['/v1/klines/batch?symbols=999999.SH', '{"unknown_symbols":["999999.SH"],"data":{'],
    ]) {
      const { plain, gz } = await sameGzip(servers['pool of 2'], path)
      assert.deepEqual([...gz.subarray(0, 4)], [0x1f, 0x8b, 0x08, 0x00], 'a gzip header without optional fields')
      const stored = storedHead(head)
      assert.ok(
        gz.subarray(10, 10 + stored.length).equals(stored),
        'the framing is stored by the main thread, not deflated by @fastify/compress',
      )
      // A second member would end the first deflate stream early: the raw inflate of one stream would fall short.
      assert.ok(inflateRawSync(gz.subarray(10, -8)).equals(plain), path)
      assert.equal(gz.readUInt32LE(gz.length - 8), crc32(plain))
      assert.equal(gz.readUInt32LE(gz.length - 4), plain.length)
    }
  })

  it('br, a br-preferring client, and x-no-compression keep @fastify/compress (or plain); a 304 carries no Content-Encoding', async () => {
    const s = servers['pool of 2']
    const path = `/v1/klines/batch?symbols=${SYMBOLS.slice(0, 3).join(',')}&count=2000`
    const plain = await get(s, path, { 'Accept-Encoding': 'identity' })
    for (const header of ['br', 'gzip, deflate, br', 'br;q=1, gzip;q=0.5']) {
      const r = await get(s, path, { 'Accept-Encoding': header })
      assert.equal(r.headers['content-encoding'], 'br', header)
      assert.ok(brotliDecompressSync(r.body).equals(plain.body), header)
    }
    const none = await get(s, path, { 'Accept-Encoding': 'gzip', 'x-no-compression': '1' })
    assert.equal(none.headers['content-encoding'], undefined)
    assert.ok(none.body.equals(plain.body))
    const again = await get(s, path, { 'Accept-Encoding': 'gzip', 'If-None-Match': String(plain.headers.etag) })
    assert.equal(again.status, 304)
    assert.equal(again.headers['content-encoding'], undefined)
  })
})

/** The status, Content-Encoding, bytes received and whether the answer was cut (the connection reset before its end). */
function outcome(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; encoding: string | undefined; body: Buffer; cut: boolean }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      const chunks: Buffer[] = []
      const done = (cut: boolean) =>
        resolve({
          status: res.statusCode ?? 0,
          encoding: res.headers['content-encoding'],
          body: Buffer.concat(chunks),
          cut,
        })
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => done(false))
      res.on('error', () => done(true))
    })
    req.on('error', reject)
    req.end()
  })
}

describe('a group that fails in a worker, with gzip', () => {
  it('a store the workers cannot read: the gzip answer is cut after its head, as the plain one; br answers a plain 503 {code, message}', async () => {
    writeFileSync(join(dir, 'garbage.db'), Buffer.alloc(4096, 0x42))
    const onGarbage = poolRunner(1, { store: parseStoreUrl(join(dir, 'garbage.db')) }, { blockingReads: true })
    runners.push(onGarbage)
    const s = await startServer(db, { responseCacheBytes: 0, runner: onGarbage })
    try {
      const url = `${s.url}/v1/klines/batch?symbols=${SYMBOLS.join(',')}&count=100`
      const plain = await outcome(url, { 'X-API-Key': s.key, 'Accept-Encoding': 'identity' })
      assert.deepEqual(
        { status: plain.status, cut: plain.cut, body: plain.body.toString() },
        { status: 200, cut: true, body: '{"data":{' },
      )
      const gz = await outcome(url, { 'X-API-Key': s.key, 'Accept-Encoding': 'gzip' })
      assert.deepEqual(
        { status: gz.status, encoding: gz.encoding, cut: gz.cut },
        { status: 200, encoding: 'gzip', cut: true },
      )
      assert.equal(
        inflateRawSync(gz.body.subarray(10), { finishFlush: constants.Z_SYNC_FLUSH }).toString(),
        '{"data":{',
      )
      // @fastify/compress's stream fails before its first byte: the error answer is plain JSON, not labelled br.
      const br = await outcome(url, { 'X-API-Key': s.key, 'Accept-Encoding': 'br' })
      assert.deepEqual(
        { status: br.status, encoding: br.encoding, body: JSON.parse(br.body.toString()) as unknown },
        {
          status: 503,
          encoding: undefined,
          body: { code: 503, message: 'The store cannot be opened: SQLITE_NOTADB.' },
        },
      )
    } finally {
      await s.close()
    }
  })

  it("a damaged chunk in the last group: the gzip answer is cut, as the plain one, after a part of the healthy symbols' answer", async () => {
    const corrupt = damagedCopy(db, join(dir, 'corrupt.db'))
    const corruptPool = poolRunner(2, { store: parseStoreUrl(corrupt) }, { blockingReads: true })
    runners.push(corruptPool)
    const s = await startServer(corrupt, { responseCacheBytes: 0, runner: corruptPool })
    try {
      const url = `${s.url}/v1/klines/batch?symbols=${[...SYMBOLS.slice(1), '600519.SH'].join(',')}&count=10000`
      const whole = (
        await rawRequest(
          `${servers['pool of 2'].url}/v1/klines/batch?symbols=${SYMBOLS.slice(1).join(',')}&count=10000`,
          { 'X-API-Key': servers['pool of 2'].key, 'Accept-Encoding': 'identity' },
        )
      ).body
      const plain = await outcome(url, { 'X-API-Key': s.key, 'Accept-Encoding': 'identity' })
      const gz = await outcome(url, { 'X-API-Key': s.key, 'Accept-Encoding': 'gzip' })
      assert.deepEqual([plain.status, plain.cut, gz.status, gz.encoding, gz.cut], [200, true, 200, 'gzip', true])
      // What arrived of each is a beginning of the healthy symbols' answer (how much depends on what was in flight), never its end.
      const received = inflateRawSync(gz.body.subarray(10), { finishFlush: constants.Z_SYNC_FLUSH })
      for (const got of [plain.body, received])
        assert.ok(
          got.length >= 9 && got.length < whole.length - 1 && got.equals(whole.subarray(0, got.length)),
          `${got.length} B received of ${whole.length}`,
        )
    } finally {
      await s.close()
    }
  })
})

/** A batch answer's members framed as the route frames them. */
async function* framed<T>(members: AsyncIterable<T | string>): AsyncGenerator<T | string> {
  yield '{"data":{'
  yield* members
  yield '}}'
}
async function drain<T>(pieces: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const p of pieces) out.push(p)
  return out
}
const bytesOf = (pieces: readonly (Buffer | string)[]) =>
  Buffer.concat(pieces.map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : p)))

describe("workers whose store is at another data version than the main thread's (just after an import)", () => {
  it('the gzip pieces are computed again in the main thread, at its version: the member decodes to its answer', async () => {
    // The main thread's store had bars deleted (a new data version); the workers still read the old file.
    const newer = join(dir, 'newer.db')
    copyFileSync(db, newer)
    const deleted = runMdq([
      '--db',
      newer,
      'delete',
      'bars',
      '--symbol',
      'AAPL.US',
      '--period',
      '1d',
      '--from',
      '2020-01-01',
    ])
    assert.equal(deleted.status, 0, deleted.stderr)
    const { market, keys } = await openStores({ store: newer, create: false })
    const runner = poolRunner(2, { store: parseStoreUrl(db) }, { blockingReads: true })
    runners.push(runner)
    try {
      const contexts = new SymbolContexts(market)
      runner.useMainStore!(market, contexts)
      const task: BatchTask = {
        kind: 'klines-batch',
        symbols: SYMBOLS,
        period: '1d',
        range: { count: 10000, adjust: 'forward' },
      }
      const expected = bytesOf(await drain(framed(inThreadRunner(market, contexts).batch(task))))
      const old = (
        await rawRequest(
          `${servers['pool of 2'].url}/v1/klines/batch?symbols=${SYMBOLS.join(',')}&count=10000&adjust=forward`,
          { 'X-API-Key': servers['pool of 2'].key, 'Accept-Encoding': 'identity' },
        )
      ).body
      assert.ok(!old.equals(expected), 'the two versions answer differently')
      const member = Buffer.concat(await drain(gzipMember(framed(runner.deflatedBatch!(task)))))
      assert.ok(gunzipSync(member).equals(expected), "gzip: the main thread's version")
      assert.ok(bytesOf(await drain(framed(runner.batch(task)))).equals(expected), "plain: the main thread's version")
    } finally {
      await Promise.all([market.close(), keys.close()])
    }
  })
})
