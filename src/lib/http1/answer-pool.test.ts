import assert from 'node:assert/strict'
import { once } from 'node:events'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net'
import { after, describe, it } from 'node:test'
import fc from 'fast-check'
import { AnswerParse, AnswerPool, type ExchangeError } from './answer-pool.js'

/** A signal that never aborts, one per exchange as callers' deadlines are. */
const never = () => new AbortController().signal
const text = (status: number, body: Buffer) => `${status} ${body.toString('utf8')}`

/** An HTTP server on loopback answering with `handle`; closed after the file's tests. */
async function serve(handle: (req: IncomingMessage, body: string, res: ServerResponse) => void): Promise<Server> {
  const server = createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (c: string) => (body += c))
    req.on('end', () => handle(req, body, res))
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  after(() => server.close())
  return server
}

const poolOf = (server: { address(): AddressInfo | string | null }, idleMs = 1000, maxSockets = 256) => {
  const pool = new AnswerPool({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, idleMs, maxSockets })
  after(() => pool.close())
  return pool
}

describe('AnswerParse', () => {
  const answer = (chunks: readonly string[]) =>
    `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nKeep-Alive: timeout=3\r\n\r\n${chunks
      .map((c) => `${Buffer.byteLength(c).toString(16)}\r\n${c}\r\n`)
      .join('')}0\r\n\r\n`

  const parse = (bytes: Buffer, cuts: readonly number[], first = 4) => {
    let out: { status: number; body: string; keepAlive: boolean } | Error | undefined
    const p = new AnswerParse(Buffer.alloc(first), (err, a) => {
      out = err ?? {
        status: a!.status,
        body: a!.body.body.toString('utf8', 0, a!.body.length),
        keepAlive: a!.keepAlive,
      }
    })
    // Each piece arrives as the socket would hand it: in a reused buffer with bytes beyond it.
    const read = Buffer.alloc(bytes.length + 7, 0x78)
    let at = 0
    for (const cut of [...cuts, bytes.length]) {
      bytes.copy(read, 0, at, cut)
      p.feed(read, cut - at)
      at = cut
    }
    return out
  }

  it('gathers a chunked body however the bytes are split, into a body buffer grown as needed', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ minLength: 1, maxLength: 40 }), { maxLength: 6 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        (chunks, cutsAt) => {
          const bytes = Buffer.from(answer(chunks))
          const cuts = [...new Set(cutsAt.map((c) => c % bytes.length))].sort((a, b) => a - b)
          assert.deepEqual(parse(bytes, cuts), { status: 200, body: chunks.join(''), keepAlive: true })
        },
      ),
    )
  })

  it('reads a Content-Length body, an error status and Connection: close', () => {
    const bytes = Buffer.from(
      'HTTP/1.1 500 Internal Server Error\r\nContent-Length: 5\r\nConnection: close\r\n\r\noops!',
    )
    for (let cut = 1; cut < bytes.length; cut++)
      assert.deepEqual(parse(bytes, [cut]), { status: 500, body: 'oops!', keepAlive: false })
  })

  it('takes chunk extensions and trailer lines, split anywhere', () => {
    const bytes = Buffer.from(
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;name=v\r\nabc\r\n2\r\nde\r\n0\r\nX-Trailer: 1\r\n\r\n',
    )
    for (let cut = 1; cut < bytes.length; cut++)
      assert.deepEqual(parse(bytes, [cut]), { status: 200, body: 'abcde', keepAlive: true })
  })

  it('refuses what is not an answer: a bad chunk size, bytes past the end, no length', () => {
    assert.throws(
      () => parse(Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n'), []),
      /bad chunk size/,
    )
    assert.throws(() => parse(Buffer.from(`${answer(['a'])}HTTP/1.1`), []), /more bytes than the answer/)
    assert.throws(
      () => parse(Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n0\r\n\r\n'), []),
      /bad chunk end/,
    )
    assert.throws(() => parse(Buffer.from('HTTP/1.1 200 OK\r\n\r\nabc'), []), /neither a length nor chunks/)
    assert.throws(() => parse(Buffer.from('SSH-2.0-OpenSSH\r\n\r\n'), []), /not an HTTP answer/)
  })
})

describe('AnswerPool', () => {
  it('POSTs the body and hands `read` the answer; a kept socket carries the next exchanges', async () => {
    const sockets = new Set<Socket>()
    const server = await serve((req, body, res) => {
      sockets.add(req.socket)
      // No Content-Length: Node's server sends the body chunked, one chunk per write.
      res.write(`${req.method} ${req.url} ${req.headers['x-mdq']} `)
      res.end(body.toUpperCase())
    })
    const pool = poolOf(server)
    for (const word of ['abc', 'de', 'f'.repeat(3 << 20)])
      assert.equal(
        await pool.post({ path: '/q?x=1', headers: 'X-Mdq: yes\r\n', body: Buffer.from(word), signal: never() }, text),
        `200 POST /q?x=1 yes ${word.toUpperCase()}`,
      )
    assert.equal(sockets.size, 1)
  })

  it('runs exchanges at once on sockets of their own', async () => {
    // The server answers none until all twelve are under way: run one at a time, they would never end.
    const held: (() => void)[] = []
    const server = await serve((_req, body, res) => {
      held.push(() => res.end(body))
      if (held.length === 12) for (const answer of held) answer()
    })
    const pool = poolOf(server)
    const words = Array.from({ length: 12 }, (_, i) => `w${i}`)
    assert.deepEqual(
      await Promise.all(
        words.map((w) =>
          pool.post({ path: '/', headers: '', body: Buffer.from(w), signal: never() }, (_s, b) => b.toString()),
        ),
      ),
      words,
    )
  })

  it('runs at most maxSockets exchanges at once; the rest wait their turn, and one that aborts while waiting leaves the queue', async () => {
    let open = 0
    let most = 0
    const server = await serve((_req, body, res) => {
      most = Math.max(most, ++open)
      setTimeout(() => {
        open--
        res.end(body)
      }, 10)
    })
    const pool = poolOf(server, 1000, 2)
    const ac = new AbortController()
    const words = Array.from({ length: 7 }, (_, i) => `w${i}`)
    const posts = words.map((w, i) =>
      pool.post({ path: '/', headers: '', body: Buffer.from(w), signal: i === 5 ? ac.signal : never() }, (_s, b) =>
        b.toString(),
      ),
    )
    ac.abort(new Error('gave up'))
    const settled = await Promise.allSettled(posts)
    assert.deepEqual(
      settled.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message)),
      words.map((w, i) => (i === 5 ? 'gave up' : w)),
    )
    assert.equal(most, 2)
  })

  it('close fails the exchanges waiting for a socket at once; the one under way finishes', async () => {
    const server = await serve((_req, body, res) => setTimeout(() => res.end(body), 50))
    const pool = poolOf(server, 1000, 1)
    const post = (w: string) => pool.post({ path: '/', headers: '', body: Buffer.from(w), signal: never() }, text)
    let firstDone = false
    const first = post('first').finally(() => (firstDone = true))
    const waiting = post('second')
    pool.close()
    await assert.rejects(waiting, /connection pool closed/)
    assert.equal(firstDone, false, 'failed before the exchange under way ended')
    assert.equal(await first, '200 first')
    await assert.rejects(post('third'), /connection pool closed/)
  })

  it("marks a failure on a kept socket the server closed before answering as `reused` (the caller's retry), not a first one", async () => {
    let requests = 0
    const tcp = createTcpServer((socket) => {
      socket.on('data', () => {
        requests++
        // The first request is answered and the socket kept; the second is dropped unanswered.
        if (requests === 1) socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok')
        else socket.destroy()
      })
    })
    tcp.listen(0, '127.0.0.1')
    await once(tcp, 'listening')
    after(() => tcp.close())
    const pool = poolOf(tcp)
    assert.equal(await pool.post({ path: '/', headers: '', body: Buffer.from('1'), signal: never() }, text), '200 ok')
    const err = (await pool
      .post({ path: '/', headers: '', body: Buffer.from('2'), signal: never() }, text)
      .catch((e: unknown) => e)) as ExchangeError
    assert.ok(err instanceof Error)
    assert.equal(err.reused, true)
    const fresh = (await pool
      .post({ path: '/', headers: '', body: Buffer.from('3'), signal: never() }, text)
      .catch((e: unknown) => e)) as ExchangeError
    assert.ok(fresh instanceof Error)
    assert.notEqual(fresh.reused, true)
  })

  it('ends an exchange on abort with the signal’s reason, and the next exchange still works', async () => {
    const server = await serve((_req, body, res) => {
      if (body === 'slow') setTimeout(() => res.end('late'), 5000).unref()
      else res.end(body)
    })
    const pool = poolOf(server)
    const ac = new AbortController()
    const slow = pool.post({ path: '/', headers: '', body: Buffer.from('slow'), signal: ac.signal }, text)
    setTimeout(() => ac.abort(new Error('deadline')), 20)
    await assert.rejects(slow, /deadline/)
    assert.equal(
      await pool.post({ path: '/', headers: '', body: Buffer.from('quick'), signal: never() }, text),
      '200 quick',
    )
  })

  it('closes a socket idle for idleMs, and a refused connection fails the exchange', async () => {
    const closed: Socket[] = []
    const server = await serve((req, body, res) => {
      req.socket.once('close', () => closed.push(req.socket))
      res.end(body)
    })
    server.keepAliveTimeout = 60_000 // only the client's idle timer closes the socket
    const pool = poolOf(server, 50)
    assert.equal(await pool.post({ path: '/', headers: '', body: Buffer.from('a'), signal: never() }, text), '200 a')
    while (closed.length === 0) await new Promise((r) => setTimeout(r, 10))
    assert.equal(await pool.post({ path: '/', headers: '', body: Buffer.from('b'), signal: never() }, text), '200 b')

    const free = createTcpServer().listen(0, '127.0.0.1')
    await once(free, 'listening')
    const port = (free.address() as AddressInfo).port
    free.close()
    await once(free, 'close')
    const gone = new AnswerPool({ host: '127.0.0.1', port, idleMs: 50, maxSockets: 1 })
    await assert.rejects(
      gone.post({ path: '/', headers: '', body: Buffer.from('c'), signal: never() }, text),
      /ECONNREFUSED/,
    )
    gone.close()
  })

  it('keeps no socket the server closes: while idle, by Connection: close, or after more bytes than the answer', async () => {
    const connections: Socket[] = []
    const tcp = createTcpServer((socket) => {
      connections.push(socket)
      socket.on('data', (d: Buffer) => {
        const word = /\r\n\r\n(.*)$/s.exec(d.toString('latin1'))![1]
        const answer = (extra: string) => `HTTP/1.1 200 OK\r\nContent-Length: ${word.length}\r\n${extra}\r\n${word}`
        if (word === 'fin') {
          socket.end(answer('')) // answered, then closed while the client holds it idle
        } else if (word === 'close') socket.write(answer('Connection: close\r\n'))
        else if (word === 'extra') socket.write(`${answer('')}HTTP/1.1 200 OK\r\n`)
        else socket.write(answer(''))
      })
    })
    tcp.listen(0, '127.0.0.1')
    await once(tcp, 'listening')
    after(() => tcp.close())
    const pool = poolOf(tcp)
    const post = (w: string) => pool.post({ path: '/', headers: '', body: Buffer.from(w), signal: never() }, text)
    assert.equal(await post('fin'), '200 fin')
    await new Promise((r) => setTimeout(r, 50)) // the FIN arrives while the socket is idle
    assert.equal(await post('a'), '200 a')
    assert.equal(await post('close'), '200 close')
    assert.equal(await post('b'), '200 b')
    assert.equal(await post('extra'), '200 extra')
    assert.equal(await post('c'), '200 c')
    // fin, then a fresh socket for a and close, a fresh one for b and extra, a fresh one for c.
    assert.equal(connections.length, 4)
  })
})
