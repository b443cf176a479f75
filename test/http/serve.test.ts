// The real `mdq serve` process: JSON logs with request id, route, status, latency, key id and no key;
// SIGTERM lets an in-flight request finish, then exits 0.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { MDQ_BIN, runMdq, tempDir } from '../helpers/store-files.js'
import { demoDb } from '../helpers/server.js'

describe('mdq serve', () => {
  const { dir, cleanup } = tempDir()
  after(cleanup)

  it('logs one JSON line per request without the key, and shuts down gracefully on SIGTERM', async () => {
    const db = await demoDb(dir)
    const key = runMdq(['--db', db, 'keys', 'create', '--name', 'logs']).stdout.trim()
    assert.match(key, /^mdq_[\w-]{43}$/)
    const child = spawn(process.execPath, [MDQ_BIN(), '--db', db, 'serve', '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] })
    const exited = new Promise((resolve) => child.on('exit', resolve)) // attached at once: the exit may come before it is awaited
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    const t0 = Date.now()
    while (!/serving .* on http:\/\/127\.0\.0\.1:(\d+)/.test(out) && Date.now() - t0 < 10_000) await new Promise((r) => setTimeout(r, 20))
    const port = /on http:\/\/127\.0\.0\.1:(\d+)/.exec(out)![1]
    const base = `http://127.0.0.1:${port}`
    const ok = await fetch(`${base}/v1/klines?symbol=600519.SH&api_key=${key}`)
    assert.equal(ok.status, 200)
    await ok.text()
    const inflight = fetch(`${base}/v1/klines?symbol=SPY.US&period=1m&count=10000`, { headers: { 'X-API-Key': key } })
    await new Promise((r) => setTimeout(r, 5))
    const stopAt = Date.now()
    child.kill('SIGTERM')
    const late = await inflight
    assert.equal(late.status, 200)
    assert.ok(((await late.json()) as { data: { timestamp: number[] } }).data.timestamp.length > 1000)
    const code = await exited
    assert.equal(code, 0)
    assert.ok(Date.now() - stopAt < 5000, `exit took ${Date.now() - stopAt} ms (keep-alive connections must not hold it)`)
    const lines = out.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>)
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

describe('mdq start (npm start) on a fresh checkout', () => {
  const { dir, cleanup } = tempDir()
  after(cleanup)

  it('builds the demo store, prints a key once, and serves the README example: a forward-adjusted weekly kline of 600519.SH', async () => {
    const db = join(dir, 'fresh', 'mdq.db')
    const child = spawn(process.execPath, [MDQ_BIN(), '--db', db, 'start', '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] })
    const exited = new Promise((resolve) => child.on('exit', resolve))
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (err += d))
    try {
      const t0 = Date.now()
      while (!/on http:\/\/127\.0\.0\.1:(\d+)/.test(out) && Date.now() - t0 < 20_000) await new Promise((r) => setTimeout(r, 20))
      const key = /Demo API key \(shown once, keep it\): (mdq_[\w-]+)/.exec(err)?.[1]
      assert.ok(key, err)
      const port = /on http:\/\/127\.0\.0\.1:(\d+)/.exec(out)![1]
      const r = await fetch(`http://127.0.0.1:${port}/v1/klines?symbol=600519.SH&period=1w&adjust=forward&count=5`, { headers: { 'X-API-Key': key } })
      assert.equal(r.status, 200)
      const body = (await r.json()) as { data: { timestamp: number[]; close: number[] } }
      assert.equal(body.data.timestamp.length, 5)
      assert.ok(body.data.timestamp.every((t) => new Date(t + 8 * 3_600_000).getUTCDay() === 1), 'weekly bars start on Mondays, local time')
    } finally {
      child.kill('SIGTERM')
      await exited
    }
  })
})
