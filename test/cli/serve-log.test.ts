// The log of a running `mdq serve` is seen as it happens: a request's line and a "rate limiter
// unreachable" error reach a piped stdout while the server runs (they used to wait in a 4 KB buffer
// until shutdown), as JSON lines; on a terminal the lines are readable, one per request.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createServer } from 'node:net'
import { stripVTControlCharacters } from 'node:util'
import { after, before, describe, it } from 'node:test'
import { requires, terminal } from '../helpers/requirements.js'
import { spawnServe, type ServeProcess } from '../helpers/serve-process.js'
import { demoDb } from '../helpers/server.js'
import { MDQ_BIN, runMdq, tempDir } from '../helpers/store-files.js'
import { until } from '../helpers/wait.js'

const { dir, cleanup } = tempDir()
let db: string
let key: string
before(async () => {
  db = await demoDb(dir)
  key = runMdq(['--db', db, 'keys', 'create', '--name', 'log']).stdout.trim()
})
after(cleanup)

/** A loopback port that nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as { port: number }
  server.close()
  await once(server, 'close')
  return port
}

/** Each line a JSON object (the log's format off a terminal). */
const jsonLines = (text: string) =>
  text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>)

describe('mdq serve log, piped', () => {
  let server: ServeProcess
  after(() => server?.stop())

  it("a request's line reaches stdout while the server runs, as JSON", async () => {
    server = await spawnServe(['--db', db], ['--workers', '0'])
    const r = await fetch(`${server.base}/v1/klines?symbol=600519.SH&count=3`, { headers: { 'X-API-Key': key } })
    assert.equal(r.status, 200)
    await until(() => server.output().includes('"url":"/v1/klines?symbol=600519.SH&count=3"'), 'the request line')
    assert.equal(server.child.exitCode, null, 'still serving')
    const request = jsonLines(server.output()).find((l) => l.msg === 'request')
    assert.equal(request?.status, 200)
    assert.equal(request?.route, '/v1/klines')
  })

  it('"rate limiter unreachable" reaches stdout at the first failure, not at shutdown', async () => {
    const redis = `redis://127.0.0.1:${await closedPort()}`
    const limited = await spawnServe(['--db', db], ['--workers', '0', '--redis-url', redis, '--redis-timeout', '100'])
    try {
      const r = await fetch(`${limited.base}/v1/klines?symbol=600519.SH&count=3`, { headers: { 'X-API-Key': key } })
      assert.equal(r.status, 200) // fail-open
      await until(() => limited.output().includes('rate limiter unreachable'), 'the limiter error line')
      assert.equal(limited.child.exitCode, null, 'still serving')
      const error = jsonLines(limited.output()).find((l) => String(l.msg).startsWith('rate limiter unreachable'))
      assert.equal(error?.level, 50)
    } finally {
      await limited.stop()
    }
  })
})

describe('mdq start log, on a terminal', () => {
  const needs = requires(terminal())
  needs.it('is one readable line per request, not JSON', async () => {
    // `script` gives the server a pseudo-terminal as stdout; its own process group stops together.
    const command = `${process.execPath} ${MDQ_BIN()} --db ${db} start --port 0 --workers 0`
    const child = spawn('script', ['-qfec', command, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'], detached: true })
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    const exited = once(child, 'exit')
    // Colours and the terminal's line ends removed: what a reader sees.
    const plain = () => stripVTControlCharacters(out).replace(/\r/g, '')
    try {
      const port = (await until(() => /on http:\/\/127\.0\.0\.1:(\d+)/.exec(plain()), 'the address line'))[1]
      const r = await fetch(`http://127.0.0.1:${port}/v1/klines?symbol=600519.SH&count=3`, {
        headers: { 'X-API-Key': key },
      })
      assert.equal(r.status, 200)
      await until(
        () => /GET \/v1\/klines\?symbol=600519\.SH&count=3 200 [\d.]+ ms key \d+\n/.test(plain()),
        'the request line',
      )
      const lines = plain().trim().split('\n')
      assert.ok(
        lines.every((l) => !l.startsWith('{')),
        `no JSON lines on a terminal:\n${plain()}`,
      )
      assert.match(plain(), /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: mdq serving .* on http:\/\/127\.0\.0\.1:\d+$/m)
    } finally {
      process.kill(-child.pid!, 'SIGTERM')
      await exited
    }
  })
})
