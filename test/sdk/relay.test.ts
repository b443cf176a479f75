// The README's Python relay (TickFlow's on_quotes -> POST /v1/ingest/quotes), run as written against a
// stand-in TickFlow stream made by `mdq replay --serve-stream`, into a real `mdq serve --ingest-port`;
// then the official SDK reads what was pushed (klines.intraday, klines.get, quotes) and finds the
// replayed day's bars exactly.
import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { barCount, sliceBars, type Bars } from '../../src/domain/bars.js'
import { MARKETS, parseSymbol } from '../../src/domain/market.js'
import { DAY_MS, daysFromCivil } from '../../src/domain/time-zone.js'
import { SqliteMarketStore } from '../../src/store/sqlite/sqlite-market-store.js'
import { PYTHON, SDK_DIR, runSdkScript, sdkMissing } from '../helpers/python-sdk.js'
import { pythonLibs, requires } from '../helpers/requirements.js'
import { spawnServe, type ServeProcess } from '../helpers/serve-process.js'
import { demoDb, getJson, type KlinesData } from '../helpers/server.js'
import { runMdq, spawnMdq, tempDir } from '../helpers/store-files.js'
import { repoRoot } from '../helpers/shared-data.js'

const need = requires(sdkMissing(), pythonLibs('httpx', 'websockets'))
const { dir, cleanup } = tempDir('mdq-relay-')
const SYMBOLS = ['600519.SH', '00700.HK', 'AAPL.US']
/** Wednesday 2026-01-07: the replayed day is stamped as this day. */
const ONTO = daysFromCivil(2026, 1, 7)
const children: ChildProcess[] = []
let server: ServeProcess | undefined
let source: string

before(async () => {
  if (!need.met) return
  source = await demoDb(dir)
})
after(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
  await server?.stop()
  cleanup()
})

/** The README's relay: the ```python block that starts with `# relay.py`. */
function readmeRelay(): string {
  const readme = readFileSync(join(repoRoot(), 'README.md'), 'utf8')
  const block = /```python\n(# relay\.py[\s\S]*?)```/.exec(readme)
  assert.ok(block, 'README.md has no ```python block starting with # relay.py')
  return block[1]
}

/** Resolves with the first match of `pattern` in the child's stderr (rejects if it exits first). */
function stderrMatch(child: ChildProcess, pattern: RegExp, timeoutMs = 60_000): Promise<RegExpExecArray> {
  let text = ''
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${pattern} within ${timeoutMs} ms: ${text}`)), timeoutMs)
    child.stderr!.on('data', (d) => {
      text += d
      const m = pattern.exec(text)
      if (m) {
        clearTimeout(timer)
        resolve(m)
      }
    })
    child.once('exit', (code) => reject(new Error(`exited ${code} before ${pattern}: ${text}`)))
  })
}

/** The source's last day with 1m bars, stamped as ONTO (no DST change between them for any of the symbols). */
async function expected(symbol: string): Promise<Bars> {
  const store = SqliteMarketStore.open(source, { readonly: true })
  try {
    const zone = MARKETS[parseSymbol(symbol).exchange].zone
    const all = await store.readBars({ symbol, period: '1m', limit: 1000 })
    const day = zone.localDay(all.timestamp[barCount(all) - 1])
    const first = all.timestamp.findIndex((t) => zone.localDay(t) === day)
    const bars = sliceBars(all, first, barCount(all))
    for (let i = 0; i < barCount(bars); i++) bars.timestamp[i] += (ONTO - day) * DAY_MS
    return bars
  } finally {
    await store.close()
  }
}

type Columns = Record<'timestamp' | 'open' | 'high' | 'low' | 'close' | 'volume' | 'amount', ArrayLike<number>>
const columns = (d: Columns) =>
  [d.timestamp, d.open, d.high, d.low, d.close, d.volume, d.amount].map((c) => Array.from(c))

describe('the README relay between a TickFlow stream and mdq', () => {
  need.it('relays a replayed day into mdq, where the official SDK reads exactly its bars', async () => {
    const target = join(dir, 'target.db')
    copyFileSync(source, target)
    const feedKey = runMdq(['--db', target, 'keys', 'create', '--name', 'feed', '--scope', 'ingest']).stdout.trim()
    const readKey = runMdq(['--db', target, 'keys', 'create', '--name', 'reader']).stdout.trim()
    server = await spawnServe(['--db', target], ['--ingest-port', '0', '--workers', '0', '--rate-limit', 'off'])
    const replay = spawnMdq([
      '--db',
      source,
      'replay',
      '--symbols',
      SYMBOLS.join(','),
      '--onto',
      '2026-01-07',
      '--speed',
      '2000',
      '--serve-stream',
      '0',
    ])
    children.push(replay)
    const port = (await stderrMatch(replay, /stream on ws:\/\/127\.0\.0\.1:(\d+)/))[1]
    const relayPath = join(dir, 'relay.py')
    writeFileSync(relayPath, readmeRelay())
    const relay = spawn(PYTHON, [relayPath], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        PYTHONPATH: SDK_DIR,
        TICKFLOW_API_KEY: 'upstream-key',
        TICKFLOW_BASE_URL: `http://127.0.0.1:${port}`,
        MDQ_INGEST_URL: server.ingest!,
        MDQ_INGEST_KEY: feedKey,
        SYMBOLS: SYMBOLS.join(','),
      },
    })
    children.push(relay)
    let relayErr = ''
    relay.stderr!.on('data', (d) => (relayErr += d))
    await stderrMatch(replay, /replay finished/, 180_000)
    const wanted = new Map(await Promise.all(SYMBOLS.map(async (s) => [s, await expected(s)] as const)))
    // The relay posts what it is handed: wait until every replayed minute is in mdq.
    const t0 = Date.now()
    for (;;) {
      const counts = await Promise.all(
        SYMBOLS.map(async (s) => {
          const r = await getJson<{ data: KlinesData }>(`${server!.base}/v1/klines/intraday?symbol=${s}`, {
            headers: { 'X-API-Key': readKey },
          })
          assert.equal(r.status, 200, JSON.stringify(r.body))
          return r.body.data.timestamp.at(-1) === wanted.get(s)!.timestamp.at(-1) && r.body.data.timestamp.length
        }),
      )
      if (counts.every((c, k) => c === barCount(wanted.get(SYMBOLS[k])!))) break
      assert.ok(Date.now() - t0 < 120_000, `the relay did not deliver the day: ${counts} ${relayErr.slice(-2000)}`)
      await sleep(200)
    }
    relay.kill('SIGTERM')
    replay.kill('SIGTERM')
    type SdkReport = Record<
      string,
      { intraday: KlinesData; intraday_5m: KlinesData; get_1m: KlinesData; get_1d: KlinesData }
    > & {
      quotes: { symbol: string; last_price: number; timestamp: number; volume: number }[]
    }
    const report = await runSdkScript<SdkReport>('live_reads.py', [server.base, readKey, SYMBOLS.join(',')])
    for (const s of SYMBOLS) {
      const bars = wanted.get(s)!
      const n = barCount(bars)
      assert.deepEqual(columns(report[s].intraday), columns(bars), `${s} intraday`)
      assert.deepEqual(
        columns(report[s].get_1m).map((c) => c.slice(-n)),
        columns(bars),
        `${s} klines 1m`,
      )
      const fiveMinutes = report[s].intraday_5m
      assert.equal(
        fiveMinutes.volume.reduce((a, v) => a + v, 0),
        bars.volume.reduce((a, v) => a + v, 0),
      )
      assert.equal(fiveMinutes.close.at(-1), bars.close[n - 1])
      const day = report[s].get_1d
      assert.equal(day.timestamp[0], MARKETS[parseSymbol(s).exchange].zone.midnightUtc(ONTO))
      assert.equal(day.close[0], bars.close[n - 1])
      assert.equal(
        day.volume[0],
        bars.volume.reduce((a, v) => a + v, 0),
      )
      const quote = report.quotes.find((q) => q.symbol === s)!
      assert.deepEqual([quote.last_price, quote.timestamp], [bars.close[n - 1], bars.timestamp[n - 1]])
    }
  })
})
