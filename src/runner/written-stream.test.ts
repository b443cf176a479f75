import assert from 'node:assert/strict'
import { once } from 'node:events'
import { connect, createServer, type AddressInfo, type Socket } from 'node:net'
import { Readable, Writable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { describe, it } from 'node:test'
import { createGzip, gunzipSync } from 'node:zlib'
import { writtenStream } from './written-stream.js'

/** A destination that completes each write only when told: the write callbacks are the test's to run. */
class HeldWrites extends Writable {
  readonly held: { chunk: Buffer; done: (err?: Error) => void }[] = []
  readonly received: Buffer[] = []
  constructor(highWaterMark = 4) {
    super({ highWaterMark })
  }
  override _write(chunk: Buffer, _encoding: string, done: (err?: Error) => void): void {
    this.received.push(Buffer.from(chunk))
    this.held.push({ chunk, done })
  }
}

const piece = (fill: number, length = 10) => Buffer.alloc(length, fill)
/** Resolves once `check()` holds, polling each turn of the event loop (no fixed sleeps); fails after 10 s. */
async function until(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000
  while (!check()) {
    assert.ok(Date.now() < deadline, `still waiting for ${check.toString()}`)
    await new Promise((r) => setImmediate(r))
  }
}

describe('writtenStream', () => {
  it('reports each Buffer piece only once its write callback has run, in order; text pieces never', async () => {
    const pieces = [piece(1), ',', piece(2), piece(3)]
    const reported: Buffer[] = []
    const dest = new HeldWrites()
    writtenStream(Readable.from(pieces, { objectMode: true }), (p) => reported.push(p)).pipe(dest)
    await until(() => dest.held.length === 1)
    assert.deepEqual(reported, [], 'nothing before the first write completes')
    dest.held.shift()!.done()
    await until(() => dest.held.length === 1)
    assert.deepEqual(reported, [pieces[0]])
    assert.equal(dest.received[1].toString(), ',')
    dest.held.shift()!.done() // the comma
    await until(() => dest.held.length === 1)
    assert.deepEqual(reported, [pieces[0]], 'the comma is not reported')
    dest.held.shift()!.done()
    await until(() => dest.held.length === 1)
    assert.deepEqual(reported, [pieces[0], pieces[2]])
    dest.held.shift()!.done()
    await once(dest, 'finish')
    assert.deepEqual(reported, [pieces[0], pieces[2], pieces[3]])
    assert.ok(
      reported.every((p, i) => p === [pieces[0], pieces[2], pieces[3]][i]),
      'the very Buffers given, not copies',
    )
  })

  it('never reports a piece whose write failed, and closes its source', async () => {
    let closed = false
    async function* pieces() {
      try {
        for (let i = 1; ; i++) yield piece(i)
      } finally {
        closed = true
      }
    }
    const reported: Buffer[] = []
    const dest = new HeldWrites()
    dest.on('error', () => {})
    const stream = writtenStream(pieces(), (p) => reported.push(p))
    stream.pipe(dest)
    await until(() => dest.held.length === 1)
    dest.held.shift()!.done(new Error('the socket failed'))
    await until(() => dest.destroyed)
    await until(() => closed)
    await until(() => stream.destroyed)
    assert.deepEqual(reported, [])
    assert.equal(dest.received.length, 1, 'nothing written after the failure')
  })

  it('stops reading its source when the destination closes before the end (a client that left), reporting no piece still queued', async () => {
    let closed = false
    let made = 0
    async function* pieces() {
      try {
        for (;;) yield piece(++made, 1000)
      } finally {
        closed = true
      }
    }
    const reported: Buffer[] = []
    const dest = new HeldWrites(3500) // room for four pieces: the first being written, three queued
    const stream = writtenStream(pieces(), (p) => reported.push(p))
    stream.pipe(dest)
    await until(() => made >= 4)
    dest.held.shift()!.done() // the first piece written
    await until(() => reported.length === 1)
    dest.destroy()
    await until(() => closed && stream.destroyed)
    await new Promise((r) => setImmediate(r))
    assert.equal(reported.length, 1, 'the queued pieces are never reported')
    assert.equal(made, 4, 'no piece made past the one that filled the destination')
  })

  it('piped to a destination already destroyed (a client gone before the first piece), it stops at once', async () => {
    let closed = false
    async function* pieces() {
      try {
        for (;;) yield piece(1, 1000)
      } finally {
        closed = true
      }
    }
    const dest = new HeldWrites()
    dest.destroy()
    await once(dest, 'close')
    const reported: Buffer[] = []
    const stream = writtenStream(pieces(), (p) => reported.push(p))
    stream.pipe(dest)
    await until(() => closed && stream.destroyed)
    assert.deepEqual(reported, [])
  })

  it('sends the same bytes as Readable.from over a real socket, each Buffer piece reported once', async () => {
    const pieces = Array.from({ length: 40 }, (_, i) => (i % 2 ? ',' : piece(i, 256 * 1024)))
    const got: Buffer[] = []
    const server = createServer((socket: Socket) => socket.on('data', (c: Buffer) => got.push(c)))
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    const client = connect((server.address() as AddressInfo).port, '127.0.0.1')
    await once(client, 'connect')
    const reported = new Set<Buffer>()
    let twice = 0
    const stream = writtenStream(Readable.from(pieces, { objectMode: true }), (p) =>
      reported.has(p) ? twice++ : reported.add(p),
    )
    stream.pipe(client)
    await once(client, 'finish')
    await until(() => got.reduce((n, c) => n + c.length, 0) === 20 * 256 * 1024 + 20)
    server.close()
    client.destroy()
    assert.ok(Buffer.concat(got).equals(Buffer.concat(pieces.map((p) => (typeof p === 'string' ? Buffer.from(p) : p)))))
    assert.equal(reported.size, 20)
    assert.equal(twice, 0)
  })

  it('through pipeline() into a gzip stream (as @fastify/compress feeds one): the same bytes, every piece reported', async () => {
    const pieces = [piece(7, 50_000), ',', piece(8, 50_000)]
    const reported: Buffer[] = []
    const out: Buffer[] = []
    const collect = new Writable({ write: (c: Buffer, _encoding, done) => done(void out.push(c)) })
    await pipeline(
      writtenStream(Readable.from(pieces, { objectMode: true }), (p) => reported.push(p)),
      createGzip(),
      collect,
    )
    assert.ok(
      gunzipSync(Buffer.concat(out)).equals(
        Buffer.concat([pieces[0] as Buffer, Buffer.from(','), pieces[2] as Buffer]),
      ),
    )
    assert.deepEqual(reported, [pieces[0], pieces[2]])
  })

  it("read without pipe() (resume, for await: a HEAD route), it gives Readable.from's bytes and reports nothing", async () => {
    const pieces = [piece(1), ',', piece(2)]
    const reported: Buffer[] = []
    const chunks: Buffer[] = []
    for await (const c of writtenStream(Readable.from(pieces, { objectMode: true }), (p) => reported.push(p)))
      chunks.push(c as Buffer)
    assert.ok(Buffer.concat(chunks).equals(Buffer.concat([piece(1), Buffer.from(','), piece(2)])))
    assert.deepEqual(reported, [])
  })

  it('fails with the error of its source, before or after the first piece', async () => {
    for (const before of [0, 1]) {
      async function* pieces() {
        if (before) yield piece(1)
        throw new Error('the store is damaged')
      }
      const dest = new Writable({ write: (_chunk, _encoding, done) => done() })
      const stream = writtenStream(pieces(), () => {})
      stream.pipe(dest)
      const [err] = (await once(stream, 'error')) as [Error]
      assert.equal(err.message, 'the store is damaged')
    }
  })
})
