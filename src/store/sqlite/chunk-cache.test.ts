// Kept chunks answer exactly as their BLOBs do: a second read takes them from the cache, a fold's
// appended bars and a bar rewritten in place (same span, new figures) are read as written.
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { allocBars, copyBars, rowsOfBars, type Bars } from '../../domain/bars.js'
import { daysFromCivil } from '../../domain/time-zone.js'
import { tempDir } from '../../../test/helpers/store-files.js'
import { tradingDays, walkBars } from '../../../test/helpers/arbitraries.js'
import type { BarQuery } from '../market-store.js'
import { ChunkCache } from './chunk-cache.js'
import { readBarsWith } from './chunks.js'
import { storeStatements } from './sqlite-statements.js'
import { openDb } from './sqlite-db.js'
import { SqliteMarketStore } from './sqlite-market-store.js'

const { dir, cleanup } = tempDir('mdq-chunk-cache-')
after(cleanup)

const SYMBOL = '600000.SH'
const DAYS = tradingDays('SH', daysFromCivil(2021, 1, 4), 900) // a span of more than one 1,024-day chunk

async function put(store: SqliteMarketStore, bars: Bars): Promise<void> {
  const w = await store.beginWrite()
  await w.putBars(SYMBOL, '1d', bars)
  await w.commit()
}

/** A store of DAYS' daily bars but the last `held`, and a reading connection of its own. */
async function fixture(name: string, held = 0) {
  const path = join(dir, name)
  const store = SqliteMarketStore.open(path)
  const all = walkBars(DAYS, [0.3, 0.7, 0.1, 0.9])
  const stored = allocBars(DAYS.length - held)
  copyBars(all, 0, DAYS.length - held, stored, 0)
  await put(store, stored)
  const db = openDb(path)
  const st = storeStatements(db)
  return { store, all, st, close: () => (db.close(), store.close()) }
}

const QUERIES: BarQuery[] = [
  { symbol: SYMBOL, period: '1d', limit: 100 },
  { symbol: SYMBOL, period: '1d', limit: 10_000 },
  { symbol: SYMBOL, period: '1d', fromMs: DAYS[100], toMs: DAYS[700], limit: 1_000 },
  { symbol: SYMBOL, period: '1d', toMs: DAYS[400] - 1, limit: 30 },
]

describe('SQLite chunk cache', () => {
  it('answers as the BLOBs do; a chunk missed twice is kept, and a read after that takes it from the cache', async () => {
    const { st, close } = await fixture('kept.db')
    const cache = new ChunkCache()
    const plain = QUERIES.map((q) => rowsOfBars(readBarsWith(st, q)))
    // First reads: each chunk missed once, read the plain way; second: missed again, read and kept.
    for (let pass = 0; pass < 2; pass++)
      QUERIES.forEach((q, i) => assert.deepEqual(rowsOfBars(readBarsWith(st, q, cache)), plain[i]))
    assert.equal(cache.hits > 0, true, 'the second pass found the chunks its own earlier reads kept')
    const misses = cache.misses
    const again = QUERIES.map((q) => readBarsWith(st, q, cache))
    assert.equal(cache.misses, misses, 'every chunk read a third time was kept')
    again.forEach((bars, i) => assert.deepEqual(rowsOfBars(bars), plain[i]))
    // An answer is the caller's own: changing it leaves the kept chunk as it was.
    again[0].close.fill(-1)
    assert.deepEqual(rowsOfBars(readBarsWith(st, QUERIES[0], cache)), plain[0])
    await close()
  })

  it('keeps nothing a read meets once (a sweep over the market churns nothing)', async () => {
    const { st, close } = await fixture('sweep.db')
    const cache = new ChunkCache()
    const q: BarQuery = { symbol: SYMBOL, period: '1d', limit: 1 }
    assert.deepEqual(rowsOfBars(readBarsWith(st, q, cache)), rowsOfBars(readBarsWith(st, q)))
    readBarsWith(st, q, cache)
    assert.equal(cache.hits, 0, 'the first read kept nothing; the second keeps the chunk')
    readBarsWith(st, q, cache)
    assert.equal(cache.hits, 1)
    await close()
  })

  it('reads the bars a fold appended to a kept chunk', async () => {
    const { store, all, st, close } = await fixture('fold.db', 40)
    const cache = new ChunkCache()
    const q: BarQuery = { symbol: SYMBOL, period: '1d', limit: 200 }
    readBarsWith(st, q, cache)
    readBarsWith(st, q, cache) // kept at its second miss
    const generation = st.meta.get('generation')
    // A day at a time: each an append to the tail, then folded into the last chunk.
    for (let i = DAYS.length - 40; i < DAYS.length; i++) {
      const day = allocBars(1)
      copyBars(all, i, i + 1, day, 0)
      await put(store, day)
    }
    while (await store.foldAppends());
    assert.equal(st.meta.get('generation'), generation, 'appends and folds move no generation: the span tells')
    const misses = cache.misses
    const chunked = readBarsWith(st, q, cache)
    assert.ok(cache.misses > misses, 'the grown chunk was read again, not taken from the cache')
    assert.deepEqual(rowsOfBars(chunked), rowsOfBars(readBarsWith(st, q)))
    assert.equal(
      chunked.timestamp.at(-1),
      DAYS.at(-2),
      'the folded days (all but the newest, left in the tail) are in the chunks',
    )
    await close()
  })

  it('reads a bar rewritten in place (same span and count, new figures) as written', async () => {
    const { store, all, st, close } = await fixture('rewrite.db')
    const cache = new ChunkCache()
    const q: BarQuery = { symbol: SYMBOL, period: '1d', limit: 100 }
    readBarsWith(st, q, cache)
    readBarsWith(st, q, cache) // kept at its second miss
    // Bars at or before the last chunked one go into the chunk itself, and the write moves the generation.
    const fixed = allocBars(3)
    copyBars(all, DAYS.length - 10, DAYS.length - 7, fixed, 0)
    fixed.close.set([11.11, 12.12, 13.13])
    await put(store, fixed)
    const read = readBarsWith(st, q, cache)
    assert.deepEqual(Array.from(read.close.subarray(90, 93)), [11.11, 12.12, 13.13])
    assert.deepEqual(rowsOfBars(read), rowsOfBars(readBarsWith(st, q)))
    await close()
  })

  it('a store made before the index, opened read-only (not migrated), reads as it did', async () => {
    const { store, st, close } = await fixture('old.db')
    const q: BarQuery = { symbol: SYMBOL, period: '1d', limit: 100 }
    const expected = rowsOfBars(readBarsWith(st, q))
    const path = store.path
    await close()
    const raw = openDb(path)
    raw.exec('DROP INDEX chunk_spans; PRAGMA user_version = 8;')
    raw.close()
    const old = SqliteMarketStore.open(path, { readonly: true })
    for (let i = 0; i < 3; i++) assert.deepEqual(rowsOfBars(await old.readBars(q)), expected)
    await old.close()
  })
})
