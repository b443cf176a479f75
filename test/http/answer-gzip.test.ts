// /v1/klines and /v1/klines/intraday answers with Accept-Encoding: gzip. No response cache: in a pool
// of 2 workers each answer is gzipped in its worker (one gzip member, routes.ts `uncachedAnswer`), in
// the main thread by @fastify/compress. Either way, gunzipped, the plain answer byte for byte; answers
// under the threshold, x-no-compression, br and 304s as @fastify/compress has them. With a response
// cache, the pool's worker makes the member beside the plain answer and the cache keeps both.
import { parseStoreUrl } from '../../src/store/backends.js'
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { brotliDecompressSync, crc32, gunzipSync, inflateRawSync } from 'node:zlib'
import { poolRunner } from '../../src/runner/query-pool.js'
import { demoDb, rawRequest, startServer, type TestServer } from '../helpers/server.js'
import { tempDir } from '../helpers/store-files.js'

const { dir, cleanup } = tempDir()
const servers: Record<'main thread' | 'pool of 2' | 'pool of 2, cached', TestServer> = {} as never
const runners: { close(): Promise<void> }[] = []
before(async () => {
  const db = await demoDb(dir)
  const runner = poolRunner(2, { store: parseStoreUrl(db) }, { blockingReads: true })
  runners.push(runner)
  servers['main thread'] = await startServer(db, { responseCacheBytes: 0 })
  servers['pool of 2'] = await startServer(db, { responseCacheBytes: 0, runner })
  servers['pool of 2, cached'] = await startServer(db, { runner })
})
after(async () => {
  await Promise.all([...Object.values(servers).map((s) => s.close()), ...runners.map((r) => r.close())])
  cleanup()
})

const get = (s: TestServer, path: string, headers: Record<string, string>) =>
  rawRequest(`${s.url}${path}`, { 'X-API-Key': s.key, ...headers })

/** Large answers (a daily history, a 1m window, a day of 1m bars), each well over the 1,024-byte threshold. */
const LARGE = [
  '/v1/klines?symbol=600519.SH&count=10000&adjust=forward',
  '/v1/klines?symbol=000001.SZ&period=1m&count=1000&adjust=backward',
  '/v1/klines/intraday?symbol=600519.SH&period=1m',
]

describe('klines answers with Accept-Encoding: gzip, no response cache', () => {
  for (const where of ['main thread', 'pool of 2'] as const) {
    it(`${where}: gzipped, labelled, same tag, and gunzipped byte for byte the plain answer`, async () => {
      const s = servers[where]
      for (const path of LARGE) {
        const plain = await get(s, path, { 'Accept-Encoding': 'identity' })
        const gz = await get(s, path, { 'Accept-Encoding': 'gzip, deflate' })
        assert.equal(plain.status, 200, path)
        assert.ok(plain.body.length > 4096, `${path}: ${plain.body.length} B`)
        assert.equal(plain.headers['content-encoding'], undefined)
        assert.deepEqual(
          [gz.status, gz.headers['content-encoding'], gz.headers['content-type']],
          [200, 'gzip', 'application/json; charset=utf-8'],
          path,
        )
        assert.match(String(gz.headers.vary), /accept-encoding/i, path)
        assert.equal(gz.headers.etag, plain.headers.etag, 'weak tags: the encoding does not change the tag')
        assert.ok(
          gunzipSync(gz.body).equals(plain.body),
          `${path}: gunzipped, the gzip answer differs from the plain one`,
        )
        assert.ok(gz.body.length < plain.body.length / 2, `${path}: ${gz.body.length} B gzip of ${plain.body.length} B`)
      }
    })
  }

  it("pool of 2 with a response cache: the worker's gzip member, made beside the plain answer, is kept and sent again; the plain answer too", async () => {
    const s = servers['pool of 2, cached']
    const reference = servers['main thread']
    for (const path of LARGE) {
      const plain = (await get(reference, path, { 'Accept-Encoding': 'identity' })).body
      const first = await get(s, path, { 'Accept-Encoding': 'gzip' })
      assert.deepEqual([first.status, first.headers['content-encoding']], [200, 'gzip'], path)
      assert.deepEqual([...first.body.subarray(-10, -8)], [0x03, 0x00], `${path}: not the worker's gzip member`)
      assert.ok(gunzipSync(first.body).equals(plain), `${path}: gunzipped, the gzip answer differs from the plain one`)
      const again = await get(s, path, { 'Accept-Encoding': 'gzip' })
      assert.ok(again.body.equals(first.body), `${path}: the repeat is not the kept member`)
      assert.equal(again.headers.etag, first.headers.etag)
      const identity = await get(s, path, { 'Accept-Encoding': 'identity' })
      assert.deepEqual([identity.headers['content-encoding'], identity.body.equals(plain)], [undefined, true], path)
    }
  })

  it("pool of 2: one gzip member made in the worker (header, the answer's raw deflate ending on the empty final block, CRC-32 and length), with its Content-Length", async () => {
    for (const path of LARGE) {
      const plain = (await get(servers['pool of 2'], path, { 'Accept-Encoding': 'identity' })).body
      const gz = await get(servers['pool of 2'], path, { 'Accept-Encoding': 'gzip' })
      const body = gz.body
      assert.deepEqual([...body.subarray(0, 4)], [0x1f, 0x8b, 0x08, 0x00], 'a gzip header without optional fields')
      // zlib ends its own stream with a final block holding data; the worker's pieces end on a sync flush, then this empty fixed-code block.
      assert.deepEqual([...body.subarray(-10, -8)], [0x03, 0x00], `${path}: not the worker's gzip member`)
      assert.ok(inflateRawSync(body.subarray(10, -8)).equals(plain), path)
      assert.equal(body.readUInt32LE(body.length - 8), crc32(plain))
      assert.equal(body.readUInt32LE(body.length - 4), plain.length)
      assert.equal(gz.headers['content-length'], String(body.length), 'a whole answer, not a stream')
    }
  })

  it('both: a small answer stays plain, x-no-compression is plain, br is br, a 304 and an error carry no Content-Encoding', async () => {
    for (const where of ['main thread', 'pool of 2'] as const) {
      const s = servers[where]
      const small = await get(s, '/v1/klines?symbol=600519.SH&count=3', { 'Accept-Encoding': 'gzip' })
      assert.equal(small.status, 200)
      assert.ok(small.body.length < 1024, `${small.body.length} B`)
      assert.equal(
        small.headers['content-encoding'],
        undefined,
        `${where}: an answer under the threshold was compressed`,
      )
      JSON.parse(small.body.toString())
      const path = LARGE[1]
      const plain = await get(s, path, { 'Accept-Encoding': 'identity' })
      const none = await get(s, path, { 'Accept-Encoding': 'gzip', 'x-no-compression': '1' })
      assert.deepEqual([none.headers['content-encoding'], none.body.equals(plain.body)], [undefined, true], where)
      for (const header of ['br', 'gzip, deflate, br']) {
        const br = await get(s, path, { 'Accept-Encoding': header })
        assert.equal(br.headers['content-encoding'], 'br', `${where}: ${header}`)
        assert.ok(brotliDecompressSync(br.body).equals(plain.body), `${where}: ${header}`)
      }
      const again = await get(s, path, { 'Accept-Encoding': 'gzip', 'If-None-Match': String(plain.headers.etag) })
      assert.deepEqual([again.status, again.headers['content-encoding'], again.body.length], [304, undefined, 0], where)
      const missing = await get(s, '/v1/klines?symbol=999999.SH&period=1m&count=1000', { 'Accept-Encoding': 'gzip' })
      assert.equal(missing.status, 404, where)
      assert.equal(missing.headers['content-encoding'], undefined, where)
      assert.equal((JSON.parse(missing.body.toString()) as { code: number }).code, 404)
    }
  })
})
