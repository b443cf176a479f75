// Slow or unfinished requests cannot hold the server: 1,000 POSTs with `Content-Length: 100000` and
// one byte of body starved every other client (Fastify's request timeout was 0). Now the header and
// request timeouts answer 408 {code, message} and close; at the connection cap a new client is let in
// by closing the oldest silent (or idle) connection, and one address holds a bounded share.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { demoDb, startServer, type TestServer } from '../helpers/server.js'
import { tempDir } from '../helpers/store-files.js'
import { healthFrom, RawConnection, waitFor } from './harness.js'

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
  // Long timeouts: only the cap can close a connection in these tests.
  const capped = () =>
    startServer(db, {
      limits: {
        maxConnections: 20,
        maxConnectionsPerAddress: 8,
        headersTimeoutMs: 120_000,
        requestTimeoutMs: 240_000,
        idleTimeoutMs: 240_000,
        keepAliveTimeoutMs: 240_000,
      },
    })
  /** `n` connections opened one after another (the server sees them in this order), spread over addresses 127.0.0.11-13. */
  async function openMany(base: URL, n: number, from = (i: number) => `127.0.0.${11 + (i % 3)}`) {
    const conns: RawConnection[] = []
    for (let i = 0; i < n; i++) {
      const c = new RawConnection(base, { from: from(i), halfOpen: true })
      await c.opened()
      conns.push(c)
    }
    return conns
  }
  const connections = (server: TestServer) =>
    new Promise<number>((resolve, reject) =>
      server.app.server.getConnections((err, n) => (err ? reject(err) : resolve(n))),
    )
  /** The connection was told 408 {code, message} and ended by the server. */
  const told408 = (c: RawConnection) => c.ended && /^HTTP\/1\.1 408 /.test(c.received) && answer(c).body.code === 408

  it('a full cap admits a new client by closing the oldest connection without a request, which is told 408', async () => {
    const server = await capped()
    const base = new URL(server.url)
    const silent = await openMany(base, 20)
    try {
      await waitFor(async () => (await connections(server)) === 20, 'the server to hold 20 connections')
      assert.equal(await healthFrom(base, '127.0.0.2'), 200)
      await waitFor(() => silent[0].ended, 'the oldest silent connection to be closed')
      assert.ok(told408(silent[0]), silent[0].received)
      assert.ok(
        silent.slice(1).every((c) => !c.ended && c.received === ''),
        'the other silent connections are kept',
      )
    } finally {
      for (const c of silent) c.socket.destroy()
      await server.close()
    }
  })

  it('with no silent connection, the longest idle kept-alive one is closed to admit a new client', async () => {
    const server = await capped()
    const base = new URL(server.url)
    const idle = await openMany(base, 20)
    try {
      for (const c of idle) {
        c.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n')
        await waitFor(() => c.received.endsWith('}'), 'an answer')
      }
      assert.equal(await healthFrom(base, '127.0.0.2'), 200)
      await waitFor(() => idle[0].ended, 'the longest idle connection to be closed')
      assert.equal(idle[0].received.split('HTTP/1.1 ').length, 2, 'only its own answer, no 408')
      assert.ok(idle.slice(1).every((c) => !c.ended))
    } finally {
      for (const c of idle) c.socket.destroy()
      await server.close()
    }
  })

  it('when every connection is answering, a new one is closed at once; served again once they finish', async () => {
    const server = await capped()
    const base = new URL(server.url)
    const busy = await openMany(base, 20)
    let requests = 0
    server.app.server.on('request', () => requests++)
    try {
      // Each request's head is complete (it is answering), its body never comes.
      for (const c of busy)
        c.write(
          `POST /v1/instruments HTTP/1.1\r\nHost: x\r\nX-API-Key: ${server.key}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`,
        )
      await waitFor(() => requests === 20, 'the server to read 20 requests')
      assert.notEqual(await healthFrom(base, '127.0.0.2'), 200)
      assert.ok(busy.every((c) => !c.ended))
      for (const c of busy) c.socket.destroy()
      await waitFor(async () => (await healthFrom(base, '127.0.0.2')) === 200, 'a new client to be served')
    } finally {
      for (const c of busy) c.socket.destroy()
      await server.close()
    }
  })

  it('one address holds at most maxConnectionsPerAddress: its next connection closes its own oldest silent one (408)', async () => {
    const server = await capped()
    const base = new URL(server.url)
    const one = await openMany(base, 9, () => '127.0.0.21')
    const other = await openMany(base, 4, () => '127.0.0.22')
    try {
      await waitFor(() => one[0].ended, "the address's oldest connection to be closed")
      assert.ok(told408(one[0]), one[0].received)
      assert.ok([...one.slice(1), ...other].every((c) => !c.ended && c.received === ''))
      assert.equal(await healthFrom(base, '127.0.0.2'), 200)
      assert.ok(
        [...one.slice(1), ...other].every((c) => !c.ended),
        'no room was needed: the cap is not full',
      )
    } finally {
      for (const c of [...one, ...other]) c.socket.destroy()
      await server.close()
    }
  })
})
