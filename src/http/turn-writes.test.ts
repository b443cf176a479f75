import assert from 'node:assert/strict'
import { once } from 'node:events'
import { createServer, get, type RequestListener, type Server } from 'node:http'
import { connect, type AddressInfo } from 'node:net'
import { after, describe, it } from 'node:test'
import { TurnEndResponse } from './turn-writes.js'

const servers: Server[] = []
after(() => servers.forEach((s) => s.close()))

/** A real HTTP server on loopback whose connections write at the turn's end; resolves to its port. */
async function serve(handler: RequestListener, hold = true): Promise<number> {
  const server = hold ? createServer({ ServerResponse: TurnEndResponse }, handler) : createServer(handler)
  servers.push(server)
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return (server.address() as AddressInfo).port
}

/** One GET on a fresh connection: status and body. */
async function fetchText(port: number, path = '/'): Promise<{ status: number; body: string }> {
  const res = await new Promise<import('node:http').IncomingMessage>((resolve, reject) =>
    get({ port, host: '127.0.0.1', path, agent: false }, resolve).on('error', reject),
  )
  let body = ''
  res.setEncoding('utf8')
  for await (const piece of res) body += piece
  return { status: res.statusCode ?? 0, body }
}

describe('TurnEndResponse', () => {
  it('keeps an ended answer in its socket until the turn ends, then writes it whole', async () => {
    const seen: { ended: boolean; heldBytes: number; heldAtTurnEnd?: number }[] = []
    const port = await serve((req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' })
      res.end(`answer to ${req.url}`)
      const s = { ended: res.writableEnded, heldBytes: res.socket?.writableLength ?? -1 } as (typeof seen)[number]
      seen.push(s)
      setImmediate(() => setImmediate(() => (s.heldAtTurnEnd = res.socket?.writableLength ?? 0)))
    })
    assert.deepEqual(await fetchText(port, '/a'), { status: 200, body: 'answer to /a' })
    assert.equal(seen.length, 1)
    assert.equal(seen[0].ended, true, 'the response is ended when its handler ends it')
    assert.ok(
      seen[0].heldBytes > 'answer to /a'.length,
      `the head and body wait in the socket (${seen[0].heldBytes} bytes)`,
    )
    await new Promise((r) => setImmediate(r))
    assert.equal(seen[0].heldAtTurnEnd, 0, 'and are written once the turn ends')
  })

  it('writes at once without it (the behaviour the module changes)', async () => {
    let heldBytes = -1
    const port = await serve((_req, res) => {
      res.end('now')
      heldBytes = res.socket?.writableLength ?? -1
    }, false)
    assert.deepEqual(await fetchText(port), { status: 200, body: 'now' })
    assert.equal(heldBytes, 0)
  })

  it('answers pipelined requests of one connection whole and in order', async () => {
    const port = await serve((req, res) => res.end(`<${req.url}>`))
    const socket = connect(port, '127.0.0.1')
    await once(socket, 'connect')
    const paths = Array.from({ length: 20 }, (_, i) => `/p${i}`)
    socket.write(
      paths.map((p) => `GET ${p} HTTP/1.1\r\nHost: x\r\n\r\n`).join('') +
        'GET /last HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    )
    let text = ''
    socket.setEncoding('latin1')
    for await (const piece of socket) text += piece
    const bodies = [...text.matchAll(/\r\n\r\n(<[^>]*>)/g)].map((m) => m[1])
    assert.deepEqual(
      bodies,
      [...paths, '/last'].map((p) => `<${p}>`),
    )
    assert.equal(text.match(/HTTP\/1\.1 200 OK/g)?.length, 21)
  })

  it("writes the other connections' answers when one connection is destroyed while its answer is held", async () => {
    let n = 0
    const port = await serve((req, res) => {
      res.end(`body of ${req.url}`)
      if (req.url === '/dropped') res.socket?.destroy()
      n++
    })
    const [dropped, kept] = await Promise.allSettled([fetchText(port, '/dropped'), fetchText(port, '/kept')])
    assert.equal(dropped.status, 'rejected', 'the destroyed connection gets nothing')
    assert.deepEqual(kept.status === 'fulfilled' && kept.value, { status: 200, body: 'body of /kept' })
    assert.equal(n, 2)
  })

  it("writes a streamed answer's pieces as they come: only its end waits", async () => {
    const seen: number[] = []
    const port = await serve(async (_req, res) => {
      res.write('piece one,')
      await new Promise((r) => process.nextTick(r)) // Node uncorks a write on the next tick
      seen.push(res.socket?.writableLength ?? -1)
      res.end('the end')
      seen.push(res.socket?.writableLength ?? -1)
    })
    assert.deepEqual(await fetchText(port), { status: 200, body: 'piece one,the end' })
    assert.equal(seen[0], 0, 'the piece was written at once')
    assert.ok(seen[1] > 0, 'the end waits in the socket')
  })

  it('carries a streamed answer larger than the socket buffer whole, with backpressure', async () => {
    const piece = Buffer.alloc(64 * 1024, 'x')
    const pieces = 64
    const port = await serve(async (_req, res) => {
      for (let i = 0; i < pieces; i++) if (!res.write(piece)) await once(res, 'drain')
      res.end('end')
    })
    const { status, body } = await fetchText(port)
    assert.equal(status, 200)
    assert.equal(body.length, pieces * piece.length + 3)
    assert.ok(body.endsWith('xend'))
  })
})
