// A SQLite reader's mapping of the store file under another connection's commits: the latest 101
// daily bars of each of 200 symbols read through the store's own chunk read, quiet and with another
// connection committing before each read (a live feed's ingest commits many times a second), by a
// connection that always maps the file, one that never does (both baselines, same run), one unmapped
// while commits come close together (src/store/sqlite/read-mapping.ts) reading the chunks table
// itself, and one as the store reads: that mapping, with the chunk_spans index and the decoded daily
// chunks a reading connection keeps (chunk-cache.ts), against the one before it.
// Run: npm run bench -- read-mapping
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { bareInstrument } from '../src/domain/instrument.js'
import { ChunkCache } from '../src/store/sqlite/chunk-cache.js'
import { readBarsWith } from '../src/store/sqlite/chunks.js'
import { ReadMapping } from '../src/store/sqlite/read-mapping.js'
import { openDb, type Db } from '../src/store/sqlite/sqlite-db.js'
import { SqliteMarketStore } from '../src/store/sqlite/sqlite-market-store.js'
import { storeStatements } from '../src/store/sqlite/sqlite-statements.js'
import { dailyWalk } from './bench-store.js'
import { loadAverage, median, row } from './measure.js'

const SYMBOLS = Array.from({ length: 200 }, (_, i) => `${600000 + i}.SH`)
const DAYS = 3000
const ROUNDS = 5

const dir = mkdtempSync(join(tmpdir(), 'mdq-read-mapping-bench-'))
const path = join(dir, 'store.db')
const store = SqliteMarketStore.open(path)
await store.write({
  instruments: SYMBOLS.map((s) => bareInstrument(s, { type: 'stock' })),
  bars: SYMBOLS.map((symbol, i) => ({ symbol, period: '1d', bars: dailyWalk(DAYS, i) })),
})
await store.close()

// The feed's stand-in: a commit of one row to a table of the bench's own (any commit moves
// PRAGMA data_version and the readers' view of the file alike).
const writer = openDb(path)
writer.exec('CREATE TABLE bench_commits (n INTEGER)')
const commit = writer.prepare('INSERT INTO bench_commits VALUES (?)')

type Mode = 'mapped' | 'page by page' | 'unmapped when fed' | 'as the store reads'
/** Microseconds a read, the median of ROUNDS passes over the symbols; `fed`: another connection commits before each read. */
function perRead(mode: Mode, fed: boolean): number {
  const db: Db = openDb(path, { readonly: true })
  if (mode === 'page by page') db.pragma('mmap_size = 0')
  const mapping = mode === 'unmapped when fed' || mode === 'as the store reads' ? new ReadMapping(db) : undefined
  const cache = mode === 'as the store reads' ? new ChunkCache() : undefined
  const st = storeStatements(db)
  const rounds: number[] = []
  let n = 0
  for (let r = 0; r <= ROUNDS; r++) {
    let us = 0
    for (const symbol of SYMBOLS) {
      if (fed) commit.run(n++)
      const t0 = performance.now()
      // The store reads the data version before each answer (SqliteMarketStore.dataVersion).
      const version = st.changeCounter.get() as number
      mapping?.observe(version)
      const bars = readBarsWith(st, { symbol, period: '1d', limit: 101 }, cache)
      us += (performance.now() - t0) * 1000
      if (bars.timestamp.length !== 101) throw new Error(`${symbol}: ${bars.timestamp.length} bars`)
    }
    if (r > 0) rounds.push(us / SYMBOLS.length) // the first pass warms the page cache
  }
  db.close()
  return median(rounds)
}

console.log(`read mapping (SQLite): ${SYMBOLS.length} symbols x ${DAYS} daily bars, load ${loadAverage()}`)
row('latest 101 daily bars, us a read', 'mapped', 'page by page', 'unmapped when fed', 'as the store reads')
for (const fed of [false, true]) {
  const [mapped, paged, adaptive, kept] = (
    ['mapped', 'page by page', 'unmapped when fed', 'as the store reads'] as const
  ).map((m) => perRead(m, fed))
  row(
    fed ? '  another connection commits each time' : '  quiet',
    mapped.toFixed(1),
    paged.toFixed(1),
    `${adaptive.toFixed(1)} (${(adaptive / Math.min(mapped, paged)).toFixed(2)}x the better)`,
    `${kept.toFixed(1)} (${(kept / adaptive).toFixed(2)}x of that)`,
  )
}
writer.close()
rmSync(dir, { recursive: true, force: true })
