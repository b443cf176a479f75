// The real `mdq serve` process: JSON logs with request id, route, status, latency, key id and no key;
// SIGTERM lets an in-flight request finish, then exits 0.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { connect } from 'node:net'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { gunzipSync } from 'node:zlib'
import { MDQ_BIN, runMdq, tempDir } from '../helpers/store-files.js'
import { demoDb } from '../helpers/server.js'
import { until } from '../helpers/wait.js'

describe('mdq serve', () => {
  const { dir, cleanup } = tempDir()
  after(cleanup)

  it('logs one JSON line per request without the key, and shuts down gracefully on SIGTERM', async () => {
    const db = await demoDb(dir)
    const key = runMdq(['--db', db, 'keys', 'create', '--name', 'logs']).stdout.trim()
    assert.match(key, /^mdq_[\w-]{43}$/)
    const child = spawn(process.execPath, [MDQ_BIN(), '--db', db, 'serve', '--port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const exited = once(child, 'exit') // before anything can make it exit
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    const port = (await until(() => /serving .* on http:\/\/127\.0\.0\.1:(\d+)/.exec(out), 'the server to listen'))[1]
    const base = `http://127.0.0.1:${port}`
    const ok = await fetch(`${base}/v1/klines?symbol=600519.SH&api_key=${key}`) // leaves an idle keep-alive connection
    assert.equal(ok.status, 200)
    await ok.text()
    // A request known to be under way: its answer (about 350 KB) has begun to arrive, and the client
    // reads no further until the server has begun shutting down. The answer must still arrive whole.
    const socket = connect(Number(port), '127.0.0.1')
    const chunks: Buffer[] = []
    socket.on('data', (d: Buffer) => chunks.push(d))
    const closed = once(socket, 'close')
    socket.write(
      `GET /v1/klines?symbol=SPY.US&period=1m&count=10000 HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\nConnection: close\r\n\r\n`,
    )
    await until(() => chunks.length > 0, 'the first bytes of the answer')
    socket.pause()
    child.kill('SIGTERM')
    await until(() => out.includes('shutting down'), 'the server to start shutting down')
    socket.resume()
    await closed
    const answer = Buffer.concat(chunks).toString()
    assert.match(answer, /^HTTP\/1\.1 200 OK\r\n/)
    const late = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as { data: { timestamp: number[] } }
    assert.ok(late.data.timestamp.length > 1000)
    // The idle keep-alive connection does not hold the exit (else this waits until the test's deadline).
    const [code] = await exited
    assert.equal(code, 0)
    const lines = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
    const request = lines.find((l) => l.msg === 'request' && l.route === '/v1/klines')!
    assert.ok(request, out)
    assert.equal(request.status, 200)
    assert.equal(typeof request.reqId, 'string')
    assert.equal(typeof request.ms, 'number')
    assert.equal(typeof request.keyId, 'number')
    assert.match(String(request.url), /api_key=\[REDACTED\]/)
    assert.ok(!out.includes(key), 'the key never appears in the logs')
    assert.ok(lines.some((l) => String(l.msg).startsWith('shutting down')))
    assert.equal(join(dir, 'demo.db'), db)
  })
})

describe('mdq serve --workers 1', () => {
  const { dir, cleanup } = tempDir()
  after(cleanup)

  it('on SIGTERM finishes an in-flight gzip answer computed in a worker thread, then exits 0', async () => {
    const db = await demoDb(dir)
    const key = runMdq(['--db', db, 'keys', 'create', '--name', 'pooled']).stdout.trim()
    const child = spawn(process.execPath, [MDQ_BIN(), '--db', db, 'serve', '--port', '0', '--workers', '1'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const exited = once(child, 'exit')
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    const port = (await until(() => /serving .* on http:\/\/127\.0\.0\.1:(\d+)/.exec(out), 'the server to listen'))[1]
    const socket = connect(Number(port), '127.0.0.1')
    const chunks: Buffer[] = []
    socket.on('data', (d: Buffer) => chunks.push(d))
    const closed = once(socket, 'close')
    socket.write(
      `GET /v1/klines?symbol=SPY.US&period=1m&count=10000 HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n`,
    )
    await until(() => chunks.length > 0, 'the first bytes of the answer')
    socket.pause()
    child.kill('SIGTERM')
    await until(() => out.includes('shutting down'), 'the server to start shutting down')
    socket.resume()
    await closed
    const answer = Buffer.concat(chunks)
    const end = answer.indexOf('\r\n\r\n')
    const head = answer.subarray(0, end).toString()
    assert.match(head, /^HTTP\/1\.1 200 OK\r\n/)
    assert.match(head, /\r\ncontent-encoding: gzip\r\n/i)
    assert.match(head, /\r\ncontent-length: \d+\r\n/i, 'a cached answer goes out whole, with its length')
    const late = JSON.parse(gunzipSync(answer.subarray(end + 4)).toString()) as { data: { timestamp: number[] } }
    assert.ok(late.data.timestamp.length > 1000)
    const [code] = await exited
    assert.equal(code, 0)
  })
})

describe('mdq start (npm start) on a fresh checkout', () => {
  const { dir, cleanup } = tempDir()
  after(cleanup)

  it('builds the demo store, prints a key once, and serves the README example: a forward-adjusted weekly kline of 600519.SH', async () => {
    const db = join(dir, 'fresh', 'mdq.db')
    const child = spawn(process.execPath, [MDQ_BIN(), '--db', db, 'start', '--port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const exited = once(child, 'exit') // attached at once: the exit may come before it is awaited
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (err += d))
    try {
      await until(() => /on http:\/\/127\.0\.0\.1:(\d+)/.test(out), 'the server to listen')
      const key = /Demo API key \(shown once, keep it\): (mdq_[\w-]+)/.exec(err)?.[1]
      assert.ok(key, err)
      const port = /on http:\/\/127\.0\.0\.1:(\d+)/.exec(out)![1]
      const r = await fetch(`http://127.0.0.1:${port}/v1/klines?symbol=600519.SH&period=1w&adjust=forward&count=5`, {
        headers: { 'X-API-Key': key },
      })
      assert.equal(r.status, 200)
      const body = (await r.json()) as { data: { timestamp: number[]; close: number[] } }
      assert.equal(body.data.timestamp.length, 5)
      assert.ok(
        body.data.timestamp.every((t) => new Date(t + 8 * 3_600_000).getUTCDay() === 1),
        'weekly bars start on Mondays, local time',
      )
    } finally {
      child.kill('SIGTERM')
      await exited
    }
  })
})
