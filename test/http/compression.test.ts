// Compression that costs little: cached answers keep their compressed bytes; the encoding follows Accept-Encoding.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { acceptedEncoding } from '../../src/http/compression.js'
import { demoDb, rawRequest, startServer, type TestServer } from '../helpers/server.js'
import { tempDir } from '../helpers/store-files.js'

const { dir, cleanup } = tempDir()
let server: TestServer
before(async () => {
  server = await startServer(await demoDb(dir))
})
after(async () => {
  await server.close()
  cleanup()
})

const get = (path: string, encoding: string) =>
  rawRequest(`${server.url}${path}`, { 'X-API-Key': server.key, 'Accept-Encoding': encoding })
const cacheHits = async () =>
  Number(/^mdq_response_cache_hits_total (\d+)$/m.exec(await (await fetch(`${server.url}/metrics`)).text())![1])

describe('compressed answers', () => {
  it('a cached answer is compressed once: repeats send the same compressed bytes, which decode to the plain answer', async () => {
    const path = '/v1/klines?symbol=600519.SH&count=1500&adjust=backward'
    const plain = await get(path, 'identity')
    assert.equal(plain.headers['content-encoding'], undefined)
    for (const [header, encoding, decode] of [
      ['gzip, deflate', 'gzip', gunzipSync],
      ['gzip, deflate, br', 'br', brotliDecompressSync],
    ] as const) {
      const hits = await cacheHits()
      const [first, second] = [await get(path, header), await get(path, header)]
      assert.equal(first.status, 200)
      assert.equal(first.headers['content-encoding'], encoding)
      assert.match(String(first.headers.vary), /accept-encoding/i)
      assert.ok(first.body.equals(second.body), 'the cached compressed bytes')
      assert.ok(decode(first.body).equals(plain.body), 'decodes to the plain bytes')
      assert.ok(first.body.length < plain.body.length / 2, 'a fast level still halves a JSON answer')
      assert.equal(
        (await cacheHits()) - hits,
        2,
        'each request one hit of the answer, none counted for its compressed form',
      )
    }
  })

  it('x-no-compression: a cached answer stays plain for such a client, the first time and repeated, while a gzip client keeps getting the kept gzip bytes', async () => {
    const path = '/v1/klines?symbol=000001.SZ&count=1500&adjust=forward'
    const plain = await get(path, 'identity')
    const gzipped = [await get(path, 'gzip'), await get(path, 'gzip')]
    for (let i = 0; i < 3; i++) {
      const none = await rawRequest(`${server.url}${path}`, {
        'X-API-Key': server.key,
        'Accept-Encoding': 'gzip',
        'x-no-compression': '1',
      })
      assert.deepEqual(
        [none.status, none.headers['content-encoding']],
        [200, undefined],
        `request ${i + 1} with x-no-compression was compressed`,
      )
      assert.ok(none.body.equals(plain.body))
    }
    const after = await get(path, 'gzip')
    assert.equal(after.headers['content-encoding'], 'gzip')
    assert.ok(after.body.equals(gzipped[1].body) && gzipped[0].body.equals(gzipped[1].body), 'the kept gzip bytes')
    assert.ok(gunzipSync(after.body).equals(plain.body))
  })

  it('Accept-Encoding: the highest q wins, br before gzip on a tie; q=0 refuses; identity and unknown ones are plain', () => {
    assert.equal(acceptedEncoding('gzip, deflate'), 'gzip')
    assert.equal(acceptedEncoding('gzip, br'), 'br')
    assert.equal(acceptedEncoding('br;q=0.5, gzip'), 'gzip')
    assert.equal(acceptedEncoding('br;q=0, gzip;q=0.1'), 'gzip')
    assert.equal(acceptedEncoding('*'), 'gzip')
    assert.equal(acceptedEncoding('x-gzip'), 'gzip')
    assert.equal(acceptedEncoding('identity'), undefined)
    assert.equal(acceptedEncoding('deflate, zstd'), undefined)
    assert.equal(acceptedEncoding(undefined), undefined)
  })
})
