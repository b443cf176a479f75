// /v1/klines/batch of 100 symbols x 1,000 daily bars (forward, uncached) against 100 separate /v1/klines
// calls over one keep-alive connection, in the same run, against the same `mdq serve` process.
// Run: npm run bench -- batch    (BENCH_ROUNDS=7 alternating rounds by default; the median is reported)
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { generateKey, hashKey } from '../src/auth/api-keys.js'
import { bareInstrument } from '../src/domain/instrument.js'
import { openStores } from '../src/store/backends.js'
import { tradingDays, walkBars } from '../test/helpers/arbitraries.js'
import { median, row } from './measure.js'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7)
const SYMBOLS = Array.from({ length: 100 }, (_, i) => `${600000 + i}.SH`)
const BARS = 1000
const dir = mkdtempSync(join(tmpdir(), 'mdq-bench-batch-'))
const db = join(dir, 'batch.db')

/** 1,200 daily bars per symbol and 8 ex-factor events each, so forward adjustment is real work. */
async function buildStore(): Promise<string> {
  const days = tradingDays('SH', 16000, 1200)
  const { market: store, keys } = await openStores({ store: db, create: true })
  await store.write({
    instruments: SYMBOLS.map((s) => bareInstrument(s, { type: 'stock' })),
    bars: SYMBOLS.map((symbol, i) => ({ symbol, period: '1d' as const, bars: walkBars(days, [i / 100, 0.4, 0.6]) })),
    exFactors: SYMBOLS.map((symbol, i) => ({
      symbol,
      events: Array.from({ length: 8 }, (_, k) => ({
        timestamp: days[100 + k * 130 + (i % 7)],
        exFactor: 1.02 + k / 100,
      })),
    })),
  })
  const key = generateKey()
  await keys.createKey({ name: 'bench', hash: hashKey(key), ratePerMin: null, burst: null })
  await store.close()
  await keys.close()
  return key
}

const agent = new Agent({ keepAlive: true, maxSockets: 1 })
/** One GET over the single keep-alive connection; resolves with the body's byte length. */
function get(url: string, key: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, headers: { 'X-API-Key': key, 'Accept-Encoding': 'identity' } }, (res) => {
      let bytes = 0
      res.on('data', (c: Buffer) => (bytes += c.length))
      res.on('end', () => (res.statusCode === 200 ? resolve(bytes) : reject(new Error(`${url}: ${res.statusCode}`))))
    })
    req.on('error', reject)
    req.end()
  })
}

try {
  const key = await buildStore()
  const child = spawn(
    process.execPath,
    [
      join(import.meta.dirname, '..', '..', 'bin', 'mdq.js'),
      '--db',
      db,
      'serve',
      '--port',
      '0',
      '--cache-mb',
      '0',
      '--rate-limit',
      'off',
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  )
  let out = ''
  child.stdout!.on('data', (d) => (out += d))
  child.on('exit', (code) => code && process.exit(code))
  while (!/127\.0\.0\.1:(\d+)/.test(out)) await new Promise((r) => setTimeout(r, 20))
  const base = `http://127.0.0.1:${/127\.0\.0\.1:(\d+)/.exec(out)![1]}`
  const q = `count=${BARS}&adjust=forward&period=1d`
  const separate = async () => {
    let bytes = 0
    for (const s of SYMBOLS) bytes += await get(`${base}/v1/klines?symbol=${s}&${q}`, key)
    return bytes
  }
  const batch = () => get(`${base}/v1/klines/batch?symbols=${SYMBOLS.join(',')}&${q}`, key)
  await separate() // warm-up: code paths, SQLite page cache
  await batch()
  const times = { separate: [] as number[], batch: [] as number[] }
  let bytes = { separate: 0, batch: 0 }
  for (let r = 0; r < ROUNDS; r++) {
    for (const [name, fn] of [
      ['separate', separate],
      ['batch', batch],
    ] as const) {
      const t0 = performance.now()
      bytes = { ...bytes, [name]: await fn() }
      times[name].push(performance.now() - t0)
    }
  }
  child.kill('SIGTERM')
  const bars = SYMBOLS.length * BARS
  console.log(
    `\nbatch: ${SYMBOLS.length} symbols x ${BARS} daily bars, forward, uncached (--cache-mb 0), one keep-alive connection, median of ${ROUNDS} alternating rounds`,
  )
  row('workload', 'ms', 'bars/s', 'MB')
  const perS = (ms: number) => `${(((bars / ms) * 1000) / 1e6).toFixed(2)}M`
  row(
    '100 separate /v1/klines (baseline)',
    median(times.separate).toFixed(1),
    perS(median(times.separate)),
    (bytes.separate / 1e6).toFixed(1),
  )
  row('one /v1/klines/batch', median(times.batch).toFixed(1), perS(median(times.batch)), (bytes.batch / 1e6).toFixed(1))
  console.log(`batch / separate: ${(median(times.separate) / median(times.batch)).toFixed(2)}x (goal >= 3x)`)
} finally {
  agent.destroy()
  rmSync(dir, { recursive: true, force: true })
}
