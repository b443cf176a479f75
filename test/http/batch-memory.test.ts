// A real `mdq serve` process streams /v1/klines/batch: 100 symbols x 10,000 daily bars (~50 MB of JSON)
// must not raise its peak RSS by more than 64 MB above what serving one symbol's answer took.
import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { bareInstrument } from '../../src/domain/instrument.js'
import { SqliteMarketStore } from '../../src/store/sqlite/sqlite-market-store.js'
import { tradingDays, walkBars } from '../helpers/arbitraries.js'
import { MDQ_BIN, runMdq, tempDir } from '../helpers/store-files.js'

const SYMBOLS = Array.from({ length: 100 }, (_, i) => `${600000 + i}.SH`)
const BARS = 10_000
const MB = 1 << 20

/** Peak resident set size of a process so far (Linux /proc). */
function peakRss(pid: number): number {
  const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  assert.ok(kb, 'VmHWM in /proc/PID/status')
  return Number(kb[1]) * 1024
}

async function readAll(url: string, key: string): Promise<Buffer> {
  const res = await fetch(url, { headers: { 'X-API-Key': key, 'Accept-Encoding': 'identity' } })
  assert.equal(res.status, 200, url)
  return Buffer.from(await res.arrayBuffer())
}

describe('GET /v1/klines/batch memory', () => {
  const { dir, cleanup } = tempDir()
  let child: ChildProcess | undefined
  after(() => {
    child?.kill('SIGKILL')
    cleanup()
  })

  it('100 symbols x 10,000 daily bars: peak RSS rises at most 64 MB above one symbol answer', { skip: existsSync('/proc/self/status') ? false : 'needs Linux /proc to read the peak RSS' }, async () => {
    const db = join(dir, 'wide.db')
    const store = SqliteMarketStore.open(db)
    const days = tradingDays('SH', 0, BARS)
    await store.write({ instruments: SYMBOLS.map((s) => bareInstrument(s, { type: 'stock' })), bars: SYMBOLS.map((symbol, i) => ({ symbol, period: '1d' as const, bars: walkBars(days, [i / 100, 0.3, 0.7]) })) })
    await store.close()
    const key = runMdq(['--db', db, 'keys', 'create', '--name', 'rss']).stdout.trim()
    child = spawn(process.execPath, [MDQ_BIN(), '--db', db, 'serve', '--port', '0', '--cache-mb', '0', '--rate-limit', 'off'], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout!.on('data', (d) => (out += d))
    const t0 = Date.now()
    while (!/on http:\/\/127\.0\.0\.1:(\d+)/.test(out) && Date.now() - t0 < 30_000) await new Promise((r) => setTimeout(r, 20))
    const base = `http://127.0.0.1:${/on http:\/\/127\.0\.0\.1:(\d+)/.exec(out)![1]}`

    // One symbol's whole answer, a few times over (warm code, caches and heap), is the baseline.
    let single = 0
    for (const symbol of SYMBOLS.slice(0, 5)) single = (await readAll(`${base}/v1/klines?symbol=${symbol}&count=${BARS}`, key)).length
    const before = peakRss(child.pid!)
    const batch = await readAll(`${base}/v1/klines/batch?symbols=${SYMBOLS.join(',')}&count=${BARS}`, key)
    const peak = peakRss(child.pid!)

    const data = (JSON.parse(batch.toString('utf8')) as { data: Record<string, { timestamp: number[] }> }).data
    assert.deepEqual(Object.keys(data), SYMBOLS)
    for (const s of SYMBOLS) assert.equal(data[s].timestamp.length, BARS, s)
    assert.ok(batch.length > 50 * single, `the batch answer (${batch.length} B) is the 100 symbols' answers`)
    const rise = peak - before
    assert.ok(rise <= 64 * MB, `peak RSS rose ${(rise / MB).toFixed(1)} MB serving ${(batch.length / MB).toFixed(1)} MB (one symbol: ${(single / MB).toFixed(2)} MB; baseline peak ${(before / MB).toFixed(0)} MB)`)
  })
})
