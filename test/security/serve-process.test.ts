// The real `mdq serve` process: no API key reaches its log in any spelling of the query,
// and it exits non-zero with a clear message when it cannot listen (11.6; it hung with --redis-url).
import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { createServer } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { RedisServer } from '../helpers/redis.js'
import { redisServer, requires } from '../helpers/requirements.js'
import { demoDb } from '../helpers/server.js'
import { MDQ_BIN, runMdq, tempDir } from '../helpers/store-files.js'
import { assertNoKeyInLogs, waitFor } from './harness.js'

const { dir, cleanup } = tempDir()
let db: string
before(async () => (db = await demoDb(dir)))
after(cleanup)

function serveProcess(args: readonly string[]): {
  child: ChildProcess
  out: () => string
  err: () => string
  exit: Promise<number | null>
} {
  const child = spawn(process.execPath, [MDQ_BIN(), '--db', db, 'serve', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const exit = once(child, 'exit').then(([code]) => code as number | null) // attached at once: an early exit is not missed
  let out = ''
  let err = ''
  child.stdout!.on('data', (d) => (out += d))
  child.stderr!.on('data', (d) => (err += d))
  return { child, out: () => out, err: () => err, exit }
}

describe('mdq serve: no key in the log', () => {
  it('the key is redacted however the query spells it (api%5Fkey=, ;api_key=, &amp;api_key=, encoded to any depth, in the path, in other parameters)', async () => {
    const key = runMdq(['--db', db, 'keys', 'create', '--name', 'logs']).stdout.trim()
    const secret = key.slice(4)
    const enc = (s: string) => [...s].map((c) => '%' + c.charCodeAt(0).toString(16).padStart(2, '0')).join('')
    /** `text` (already percent-encoded once) encoded `more` times again. */
    const deep = (text: string, more: number): string => (more === 0 ? text : deep(text.replace(/%/g, '%25'), more - 1))
    const server = serveProcess(['--port', '0', '--log-level', 'trace'])
    try {
      await waitFor(() => /on http:\/\/127\.0\.0\.1:\d+/.test(server.out()), 'the server to listen')
      const base = `http://127.0.0.1:${/on http:\/\/127\.0\.0\.1:(\d+)/.exec(server.out())![1]}`
      const queries = [
        `api_key=${key}`,
        `api%5Fkey=${key}`,
        `api%5fkey=${key}`,
        `x=1;api_key=${key}`,
        `&amp;api_key=${key}`,
        `API_KEY=${key}`,
        `apiKey=${key}`,
        `%61pi_key=${key}`,
        `api_key=mdq%5F${secret}`,
        `api_key=${enc(key)}`,
        `api_key=mdq_${secret.slice(0, 20)}%25${secret.slice(20)}`,
        `note=${key}`,
        `note=mdq%255F${secret}`,
        `${key}=1`,
        `api_key[]=${key}`,
        `api_key=${key}&api_key=${key}`,
        // The `_`, or the whole key, percent-encoded 4 to 9 times, in any parameter and in a name.
        ...[4, 5, 6, 9].flatMap((depth) => [
          `foo=mdq${deep('%5F', depth - 1)}${secret}`,
          `note=${deep(enc(key), depth - 1)}`,
          `api${deep('%5F', depth - 1)}key=${key}`,
          `${deep(enc(key), depth - 1)}=1`,
        ]),
      ]
      for (const q of queries) {
        for (const path of ['/v1/klines', '/v1/instruments', '/nope', '/healthz']) {
          const r = await fetch(`${base}${path}?symbol=600519.SH&symbols=600519.SH&${q}`)
          await r.arrayBuffer()
        }
      }
      for (const path of [
        `/v1/${key}`,
        `/v1/mdq%5F${secret}`,
        `/${enc(key)}`,
        `/v1/klines/${key}?x=${key}`,
        `/v1/mdq${deep('%5F', 4)}${secret}`,
        `/v1/${deep(enc(key), 7)}`,
      ])
        await (await fetch(base + path)).arrayBuffer()
      server.child.kill('SIGTERM')
      assert.equal(await server.exit, 0)
      const lines = server.out().trim().split('\n')
      const requests = lines.filter((l) => l.includes('"msg":"request"'))
      assert.ok(requests.length >= queries.length * 4 + 4, `${requests.length} request lines`)
      assert.ok(
        requests.some((l) => l.includes('api_key=[REDACTED]')),
        'the redaction is visible',
      )
      assertNoKeyInLogs([...lines, server.err()], [key])
    } finally {
      server.child.kill('SIGKILL')
    }
  })
})

describe('mdq serve: listen failure', () => {
  let redis: RedisServer | undefined
  const needRedis = requires(redisServer())
  before(async () => {
    if (needRedis.met) redis = await RedisServer.start()
  })
  after(async () => redis?.stop())

  const cases: [string, () => string[], (title: string, fn: () => Promise<void>) => void][] = [
    ['in memory', () => [], it],
    ['with --redis-url', () => ['--redis-url', redis!.url], needRedis.it],
  ]
  for (const [what, extra, test] of cases) {
    test(`exits non-zero with "address already in use" when the port is taken (${what})`, async () => {
      const taken = createServer()
      taken.listen(0, '127.0.0.1')
      await once(taken, 'listening')
      const { port } = taken.address() as { port: number }
      const server = serveProcess(['--port', String(port), ...extra()])
      try {
        const code = await Promise.race([
          server.exit,
          new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 30_000).unref()),
        ])
        assert.notEqual(code, 'hung', `mdq serve still running 30 s after failing to listen; stderr: ${server.err()}`)
        assert.notEqual(code, 0)
        assert.match(
          server.err(),
          new RegExp(`mdq: cannot listen on 127\\.0\\.0\\.1:${port}: the address is already in use`),
        )
      } finally {
        server.child.kill('SIGKILL')
        taken.close()
      }
    })
  }
})
