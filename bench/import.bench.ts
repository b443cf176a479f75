// Import throughput and size on disk: a generated 1m CSV (default 10M rows, 40 CN symbols) through
// `mdq import bars`, in a child process as an operator runs it. Run: npm run bench -- import
// Baseline in the same run: reading the same file with fs and splitting it into lines. Prints the
// import's rows/s and the peak RSS of its process (goals: >= 1M rows/s, <= 512 MB), as medians of
// BENCH_IMPORT_ROUNDS rounds (default 3), the load average printed with each.
// BENCH_IMPORT_ORDER=minute writes the rows interleaved minute by minute over the symbols (as a
// vendor's whole-market 1m file comes), instead of one symbol after another; BENCH_IMPORT_SYMBOLS
// sets the symbol count (default 40). BENCH_IMPORT_MDQ=<path to another checkout's bin/mdq.js> imports
// with that build instead (a before/after comparison on the same file).
import { execFileSync } from 'node:child_process'
import { createReadStream, createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { once } from 'node:events'
import { MARKETS } from '../src/domain/market.js'
import { daysFromCivil, isoWeekday } from '../src/domain/time-zone.js'
import { SqliteMarketStore } from '../src/store/sqlite/sqlite-market-store.js'
import { runWithPeakRss } from '../test/helpers/peak-rss.js'
import { loadAverage, median, rate, row } from './measure.js'

const ROWS = Number(process.env.BENCH_IMPORT_ROWS ?? 10_000_000)
const ROUNDS = Number(process.env.BENCH_IMPORT_ROUNDS ?? 3)
const SYMBOLS = Number(process.env.BENCH_IMPORT_SYMBOLS ?? 40)
const BY_MINUTE = process.env.BENCH_IMPORT_ORDER === 'minute'
const MDQ = process.env.BENCH_IMPORT_MDQ ?? join(import.meta.dirname, '..', '..', 'bin', 'mdq.js')
const dir = mkdtempSync(join(tmpdir(), 'mdq-bench-import-'))
const csv = join(dir, 'bars.csv')
const db = join(dir, 'bench.db')

/** One symbol's 1m rows: a cent random walk, one line per call. */
function symbolRows(s: number): (time: number) => string {
  const symbol = `${String(600000 + s).padStart(6, '0')}.SH`
  let price = 10 + s
  let k = 0
  return (time) => {
    const open = price
    price = Math.max(1, Math.round((price + (((k * 7919) % 7) - 3) / 100) * 100) / 100)
    const high = Math.max(open, price) + 0.01
    const low = Math.min(open, price) - 0.01
    const volume = 100 + ((k++ * 31) % 900)
    return `${symbol},${time},${open.toFixed(2)},${high.toFixed(2)},${low.toFixed(2)},${price.toFixed(2)},${volume},${(volume * 100 * price).toFixed(2)}`
  }
}

/** The session minutes of SH trading days from 2010-01-04 on, as UTC ms, `n` of them. */
function* minutes(n: number): Generator<number> {
  const sh = MARKETS.SH
  for (let d = daysFromCivil(2010, 1, 4), k = 0; ; d++) {
    if (isoWeekday(d) >= 5) continue
    const midnight = sh.zone.midnightUtc(d)
    for (const session of sh.sessions)
      for (let m = session.open; m < session.close; m++, k++) {
        if (k === n) return
        yield midnight + m * 60_000
      }
  }
}

async function generate(): Promise<void> {
  const out = createWriteStream(csv)
  out.write('symbol,time,open,high,low,close,volume,amount\n')
  let lines: string[] = []
  const emit = async (line: string) => {
    lines.push(line)
    if (lines.length < 10_000) return
    if (!out.write(lines.join('\n') + '\n')) await once(out, 'drain')
    lines = []
  }
  const perSymbol = Math.ceil(ROWS / SYMBOLS)
  const walks = Array.from({ length: SYMBOLS }, (_, s) => symbolRows(s))
  let written = 0
  if (BY_MINUTE) {
    for (const time of minutes(perSymbol)) for (const walk of walks) if (written++ < ROWS) await emit(walk(time))
  } else {
    for (const walk of walks) for (const time of minutes(perSymbol)) if (written++ < ROWS) await emit(walk(time))
  }
  if (lines.length && !out.write(lines.join('\n') + '\n')) await once(out, 'drain')
  out.end()
  await once(out, 'finish')
}

async function readLinesBaseline(): Promise<number> {
  let n = 0
  let rest = ''
  for await (const chunk of createReadStream(csv, { encoding: 'utf8', highWaterMark: 1 << 20 })) {
    const parts = (rest + chunk).split('\n')
    rest = parts.pop() ?? ''
    n += parts.length
  }
  return n
}

try {
  console.log(
    `import bench (${MDQ}): ${ROWS.toLocaleString('en-US')} 1m rows over ${SYMBOLS} symbols ${BY_MINUTE ? 'interleaved minute by minute' : 'one after another'}, ${ROUNDS} rounds (baseline and import alternating; medians below)`,
  )
  await generate()
  const size = statSync(csv).size
  const baseMs: number[] = []
  const importMs: number[] = []
  const peakMb: number[] = []
  let out = ''
  row('round', 'baseline ms', 'import ms', 'rows/s', 'peak RSS', 'load average')
  for (let round = 1; round <= ROUNDS; round++) {
    for (const f of [db, `${db}-wal`, `${db}-shm`]) rmSync(f, { force: true })
    let t0 = performance.now()
    await readLinesBaseline()
    baseMs.push(performance.now() - t0)
    t0 = performance.now()
    const run = await runWithPeakRss([], [MDQ, '--db', db, 'import', 'bars', csv, '--period', '1m'])
    importMs.push(performance.now() - t0)
    if (run.status !== 0) throw new Error(`import failed: ${run.stderr}`)
    out = run.stdout
    peakMb.push(run.peakRssBytes / 2 ** 20)
    row(
      String(round),
      baseMs.at(-1)!.toFixed(0),
      importMs.at(-1)!.toFixed(0),
      rate(ROWS, importMs.at(-1)!),
      `${peakMb.at(-1)!.toFixed(0)} MB`,
      loadAverage(),
    )
  }
  // Size on disk once the WAL is folded in.
  const store = SqliteMarketStore.open(db)
  await store.close()
  execFileSync(process.execPath, [
    '-e',
    `const D=require(${JSON.stringify(join(import.meta.dirname, '..', '..', 'node_modules', 'better-sqlite3'))});const d=new D(${JSON.stringify(db)});d.pragma('wal_checkpoint(TRUNCATE)');d.exec('VACUUM');d.close()`,
  ])
  const dbBytes = statSync(db).size
  const base = median(baseMs)
  const imported = median(importMs)
  const peak = Math.max(...peakMb)
  console.log()
  row('workload (median of rounds)', 'ms', 'rows/s', 'vs baseline', 'peak RSS (max)')
  row('baseline: read + split lines', base.toFixed(0), rate(ROWS, base), '1.00', '')
  row(
    'mdq import bars (whole CLI)',
    imported.toFixed(0),
    rate(ROWS, imported),
    (imported / base).toFixed(2),
    `${peak.toFixed(0)} MB`,
  )
  const goal = (met: boolean) => (met ? 'met' : 'MISSED')
  console.log(
    `goal >= 1M rows/s: ${goal(ROWS / (imported / 1000) >= 1e6)}; goal peak RSS <= 512 MB: ${goal(peak <= 512)} (load average at the end ${loadAverage()})`,
  )
  console.log(out.trim())
  console.log(
    `CSV ${(size / ROWS).toFixed(1)} bytes/row; store ${(dbBytes / 1e6).toFixed(1)} MB = ${(dbBytes / ROWS).toFixed(1)} bytes/bar on disk (after checkpoint + VACUUM)`,
  )
} finally {
  rmSync(dir, { recursive: true, force: true })
}
