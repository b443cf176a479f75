// Every failure answers JSON {code, message}, also Fastify's own and Node's (bad URL, 413 read by the
// client rather than a reset, 503 while shutting down); ETags only on successful answers; browser
// hardening headers on the pages; POST {"symbols": "a,b"} accepted.
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { connect } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { demoDb, startServer, type TestServer } from '../helpers/server.js'
import { tempDir } from '../helpers/store-files.js'
import { RawConnection, assertErrorBody, send, waitFor } from './harness.js'

const { dir, cleanup } = tempDir()
let db: string
let server: TestServer
let base: URL
before(async () => {
  db = await demoDb(dir)
  server = await startServer(db)
  base = new URL(server.url)
})
after(async () => {
  await server.close()
  cleanup()
})

describe('error bodies', () => {
  it("Fastify's bad-URL error (a malformed percent-escape in the path) is a 400 {code, message}", async () => {
    for (const path of ['/%', '/v1/klines%zz', '/docs/%E0%A4%A']) {
      const r = await send(base, undefined, 'GET', path, {})
      assert.equal(r.status, 400, path)
      assertErrorBody(r.status, r.headers, r.body, path)
    }
  })

  for (const [what, chunked] of [
    ['with Content-Length', false],
    ['chunked', true],
  ] as const) {
    it(`a body over the 1 MB limit (${what}) is a 413 the client reads, not a connection reset`, async () => {
      // 32 MB: more than the loopback socket buffers hold, so the server must read the body for the
      // client to finish sending it. A server that answers and closes with the body unread resets
      // the connection: the client's writes fail (EPIPE / ECONNRESET) and the 413 may be lost.
      const size = 32 << 20
      const socket = connect(Number(base.port), base.hostname)
      await once(socket, 'connect')
      let received = ''
      socket.on('data', (d: Buffer) => (received += d.toString('utf8')))
      let failure: Error | undefined
      socket.on('error', (err) => (failure = err))
      const write = async (data: string | Buffer) => {
        if (failure) throw failure
        if (!socket.write(data)) await Promise.race([once(socket, 'drain'), once(socket, 'close')])
      }
      try {
        await write(
          `POST /v1/instruments HTTP/1.1\r\nHost: x\r\nX-API-Key: ${server.key}\r\nContent-Type: application/json\r\n${chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${size}`}\r\n\r\n`,
        )
        const chunk = Buffer.alloc(256 << 10, 0x20)
        for (let sent = 0; sent < size; sent += chunk.length)
          await write(
            chunked
              ? Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')])
              : chunk,
          )
        if (chunked) await write('0\r\n\r\n')
        await waitFor(() => failure !== undefined || /\r\n\r\n\{.*\}/s.test(received), 'the answer')
      } finally {
        socket.destroy()
      }
      assert.equal(
        failure,
        undefined,
        `the client saw ${failure?.message} after receiving ${JSON.stringify(received.slice(0, 80))}`,
      )
      const [head, body] = received.split('\r\n\r\n')
      assert.match(head, /^HTTP\/1\.1 413 /)
      assertErrorBody(
        413,
        new Headers({ 'content-type': /content-type: ([^\r]+)/i.exec(head)?.[1] ?? '' }),
        body,
        'POST 32 MB',
      )
    })
  }

  it('a request arriving while the server shuts down is a 503 {code, message} with Connection: close', async () => {
    const own = await startServer(db)
    const url = new URL(own.url)
    const conn = new RawConnection(url)
    await conn.opened()
    // Request 1 is under way (its body not yet sent) when the shutdown starts.
    const arrived = once(own.app.server, 'request')
    const body = '{"symbols":["600519.SH"]}'
    conn.write(
      `POST /v1/instruments HTTP/1.1\r\nHost: x\r\nX-API-Key: ${own.key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 11)}`,
    )
    await arrived
    const closed = own.app.close()
    await waitFor(() => !own.app.server.listening, 'the server to stop listening')
    // Its body, then request 2 pipelined behind it on the same connection: request 2 reaches a closing server.
    conn.write(
      `${body.slice(11)}GET /v1/instruments?symbols=600519.SH HTTP/1.1\r\nHost: x\r\nX-API-Key: ${own.key}\r\n\r\n`,
    )
    await waitFor(() => conn.closed, 'the server to close the connection after answering')
    await closed
    await own.close() // the stores, and the worker pool under MDQ_TEST_WORKERS (whose threads would keep this file's process alive)
    const answers = conn.received.split(/(?=HTTP\/1\.1 )/)
    assert.equal(answers.length, 2, conn.received)
    assert.match(answers[0], /^HTTP\/1\.1 200/)
    const [head, text] = answers[1].split('\r\n\r\n')
    assert.match(head, /^HTTP\/1\.1 503/)
    assert.match(head, /connection: close/i)
    assert.match(head, /content-type: application\/json/i)
    const parsed = JSON.parse(text) as { code: number; message: string }
    assert.equal(parsed.code, 503)
    assert.match(parsed.message, /shutting down/)
  })
})

describe('ETag and If-None-Match', () => {
  const get = (path: string, headers: Record<string, string> = {}) =>
    send(base, undefined, 'GET', path, { 'x-api-key': server.key, ...headers })

  for (const [what, path, status] of [
    ['an unknown symbol (404)', '/v1/klines?symbol=688999.SH', 404],
    ['a malformed symbol (400)', '/v1/klines?symbol=600519.XX', 400],
    ['a bad range (400)', '/v1/klines?symbol=600519.SH&start_time=20000000000&end_time=10000000000', 400],
    ['a malformed batch (400)', '/v1/instruments?symbols=6005.SH', 400],
    ['ex-factors of a malformed symbol (400)', '/v1/klines/ex-factors?symbols=nope', 400],
  ] as const) {
    it(`If-None-Match: * never turns ${what} into a 304, and the error carries no ETag`, async () => {
      for (const inm of ['*', 'W/"x", *']) {
        const r = await get(path, { 'if-none-match': inm })
        assert.equal(r.status, status, `${path} with If-None-Match: ${inm}`)
        assert.equal(r.headers.etag, undefined)
        assertErrorBody(r.status, r.headers, r.body, path)
      }
    })
  }

  it('a successful answer is tagged, and its tag (or *) gives a 304 with the same tag', async () => {
    const path = '/v1/klines?symbol=600000.SH&count=7&adjust=backward'
    const first = await get(path)
    assert.equal(first.status, 200)
    const tag = String(first.headers.etag)
    assert.match(tag, /^W\/"/)
    for (const inm of [tag, '*']) {
      const again = await get(path, { 'if-none-match': inm })
      assert.equal(again.status, 304)
      assert.equal(again.headers.etag, tag)
    }
    // `*` on a request never answered before: computed first, then 304 because it succeeded.
    const fresh = await get('/v1/klines?symbol=600000.SH&count=8&adjust=backward', { 'if-none-match': '*' })
    assert.equal(fresh.status, 304)
  })
})

describe('browser hardening on the pages', () => {
  for (const path of ['/', '/docs', '/docs/static/index.html']) {
    it(`${path}: Content-Security-Policy (own scripts only, no framing), nosniff, X-Frame-Options`, async () => {
      const r = await send(base, undefined, 'GET', path, {})
      assert.ok(r.status === 200 || r.status === 302, `${path}: ${r.status}`)
      const csp = String(r.headers['content-security-policy'])
      assert.match(csp, /default-src 'self'/)
      assert.match(csp, /script-src 'self'(;|$)/)
      assert.match(csp, /frame-ancestors 'none'/)
      assert.doesNotMatch(csp, /upgrade-insecure-requests/) // mdq is often served over plain HTTP
      assert.equal(r.headers['x-content-type-options'], 'nosniff')
      assert.equal(r.headers['x-frame-options'], 'DENY')
    })
  }
})

describe('POST /v1/instruments', () => {
  it('accepts {"symbols": "a,b"}, the comma-separated string form, like GET', async () => {
    const post = await send(
      base,
      undefined,
      'POST',
      '/v1/instruments',
      { 'x-api-key': server.key, 'content-type': 'application/json' },
      JSON.stringify({ symbols: '600519.SH, aapl.us' }),
    )
    assert.equal(post.status, 200, post.body)
    const get = await send(base, undefined, 'GET', '/v1/instruments?symbols=600519.SH,aapl.us', {
      'x-api-key': server.key,
    })
    assert.deepEqual(JSON.parse(post.body), JSON.parse(get.body))
    assert.deepEqual(
      (JSON.parse(post.body) as { data: { symbol: string }[] }).data.map((d) => d.symbol),
      ['600519.SH', 'AAPL.US'],
    )
  })
})
