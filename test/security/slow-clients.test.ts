// Slow or unfinished requests cannot hold the server: 1,000 POSTs with `Content-Length: 100000` and
// one byte of body starved every other client (Fastify's request timeout was 0). Now the header and
// request timeouts answer 408 {code, message} and close, and a connection cap turns away the excess.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { demoDb, startServer, type TestServer } from '../helpers/server.js'
import { tempDir } from '../helpers/store-files.js'
import { RawConnection, waitFor } from './harness.js'

const { dir, cleanup } = tempDir()
let db: string
before(async () => (db = await demoDb(dir)))
after(cleanup)

/** The JSON body of the one answer a raw connection received. */
function answer(conn: RawConnection): { status: number; body: { code?: number; message?: string } } {
  const [head, body] = conn.received.split('\r\n\r\n')
  return {
    status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]),
    body: JSON.parse(body) as { code?: number; message?: string },
  }
}

describe('slow clients', () => {
  let server: TestServer
  let base: URL
  before(async () => {
    // Short timeouts so the test is quick; the defaults (10 s, 30 s) are the same mechanism.
    server = await startServer(db, { limits: { headersTimeoutMs: 1000, requestTimeoutMs: 2000 } })
    base = new URL(server.url)
  })
  after(() => server.close())

  it('many connections sending a body (or headers) slowly do not starve a normal client, and get 408 {code, message}', async () => {
    const slowBodies = Array.from({ length: 60 }, () => new RawConnection(base))
    const slowHeads = Array.from({ length: 20 }, () => new RawConnection(base))
    await Promise.all([...slowBodies, ...slowHeads].map((c) => c.opened()))
    for (const c of slowBodies)
      c.write(
        `POST /v1/instruments HTTP/1.1\r\nHost: x\r\nX-API-Key: ${server.key}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`,
      )
    for (const c of slowHeads) c.write(`GET /v1/klines?symbol=600519.SH HTTP/1.1\r\nHost: x\r\nX-API-`)
    // A byte now and then keeps each one "active" (an idle timeout alone would not end them).
    const trickle = setInterval(() => {
      for (const c of slowBodies) c.write(' ')
      for (const c of slowHeads) c.write('A')
    }, 200)
    try {
      const normal = await fetch(`${server.url}/v1/klines?symbol=600519.SH&count=5`, {
        headers: { 'X-API-Key': server.key },
        signal: AbortSignal.timeout(30_000),
      })
      assert.equal(normal.status, 200)
      assert.equal(((await normal.json()) as { data: { close: number[] } }).data.close.length, 5)
      await waitFor(
        () => [...slowBodies, ...slowHeads].every((c) => c.closed),
        'every slow connection to be closed by the server',
      )
    } finally {
      clearInterval(trickle)
      for (const c of [...slowBodies, ...slowHeads]) c.socket.destroy()
    }
    for (const c of [...slowBodies, ...slowHeads]) {
      if (c.received === '') continue // closed without an answer: allowed (the client was still sending)
      const { status, body } = answer(c)
      assert.equal(status, 408, c.received)
      assert.equal(body.code, 408)
      assert.match(String(body.message), /did not arrive in time/)
    }
    assert.ok(slowBodies.filter((c) => c.received !== '').length > 0, 'the slow bodies were told 408')
    // And the server still serves.
    assert.equal((await fetch(`${server.url}/healthz`)).status, 200)
  })
})

describe('connection cap', () => {
  let server: TestServer
  before(async () => {
    // Long timeouts: only the cap can close a connection during this test.
    server = await startServer(db, {
      limits: { maxConnections: 20, headersTimeoutMs: 120_000, requestTimeoutMs: 240_000, idleTimeoutMs: 240_000 },
    })
  })
  after(() => server.close())

  it('connections beyond maxConnections are closed at once; the held ones keep the server usable once released', async () => {
    const base = new URL(server.url)
    const held = Array.from({ length: 30 }, () => new RawConnection(base))
    try {
      await Promise.all(held.map((c) => c.opened().catch(() => {})))
      await waitFor(() => held.filter((c) => c.closed).length >= 10, '10 connections over the cap to be closed')
      assert.equal(held.filter((c) => c.closed).length, 10)
      assert.ok(held.every((c) => c.received === ''))
    } finally {
      for (const c of held) c.socket.destroy()
    }
    await waitFor(
      async () =>
        (await fetch(`${server.url}/healthz`).then(
          (r) => r.status,
          () => 0,
        )) === 200,
      'a normal request to succeed after the held connections closed',
    )
  })
})
