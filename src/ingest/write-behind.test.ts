// Writing behind a logged ingest: what arrives while a write runs goes into the next; a failed write
// is put back under what came since (the newer wins) and tried again; a log entry is marked only once
// a write that covers it is in, and an entry that built nothing is marked only when nothing older waits;
// a write follows the one before at once, or with a cadence waits for its time unless flushed.
import assert from 'node:assert/strict'
import { it } from 'node:test'
import type { BarRow } from '../domain/bars.js'
import type { IngestLog, LogEntry, LogMark } from '../store/market-store.js'
import { WriteBehind, type Writes } from './write-behind.js'

const bar = (timestamp: number, close: number): BarRow => ({
  timestamp,
  open: close,
  high: close,
  low: close,
  close,
  volume: 1,
  amount: close,
  prevClose: close,
})

/** Writes of one symbol's minute bars (its latest quote stands in as a marker that there is something to write). */
function writes(...bars: BarRow[]): Writes {
  const latest = new Map([['600000.SH', {} as never]])
  return { minutes: new Map([['600000.SH', new Map(bars.map((b) => [b.timestamp, b]))]]), days: new Map(), latest }
}

/** An in-memory log: only its marks matter here. */
function memoryLog(): IngestLog & { marks: LogMark[] } {
  const marks: LogMark[] = []
  return {
    marks,
    append: async (_entries: readonly LogEntry[], m: readonly LogMark[]) => void marks.push(...m),
    unwritten: async () => [],
  }
}

it('a failed write is put back under what came since and tried again; entries are marked once written', async () => {
  const log = memoryLog()
  const written: number[][] = []
  let fail = true
  let release: () => void = () => undefined
  const behind = new WriteBehind(log, async (w) => {
    // The first write waits until the second batch has arrived, then fails (the store away).
    if (fail) {
      await new Promise<void>((r) => (release = r))
      fail = false
      throw new Error('the store is away')
    }
    written.push([...w.minutes.get('600000.SH')!.values()].map((b) => b.close))
  })
  const failures: unknown[] = []
  behind.onFailed((err) => failures.push(err))
  behind.add(writes(bar(60_000, 10), bar(120_000, 11)), [['7', 1]])
  behind.add(writes(bar(120_000, 12)), [['7', 2]]) // newer: the same minute formed further
  assert.deepEqual(log.marks, [])
  assert.equal(behind.unwrittenSymbols, 2, 'one symbol in the write under way, the same one held for the next')
  release()
  await behind.drain().catch(() => undefined) // the failed try rejects; the retry follows on its timer
  await behind.drain()
  assert.equal(failures.length, 1)
  assert.deepEqual(written, [[10, 12]], 'one write of both, the newer minute winning over the put-back one')
  assert.deepEqual(log.marks, [{ feed: '7', seq: 2 }])
  assert.equal(behind.unwrittenSymbols, 0)
})

it('an entry that built nothing is marked at once only when nothing older waits to be written', async () => {
  const log = memoryLog()
  let release: () => void = () => undefined
  const behind = new WriteBehind(log, () => new Promise<void>((r) => (release = r)))
  behind.add(writes(bar(60_000, 10)), [['7', 1]])
  behind.add({ minutes: new Map(), days: new Map(), latest: new Map() }, [['7', 2]])
  assert.deepEqual(behind.takeMarks(), [], 'entry 1 is not written yet: no mark may cover it')
  release()
  await behind.drain()
  assert.deepEqual(log.marks, [{ feed: '7', seq: 1 }])
  behind.add({ minutes: new Map(), days: new Map(), latest: new Map() }, [['7', 3]])
  assert.deepEqual(behind.takeMarks(), [{ feed: '7', seq: 3 }], 'idle: marked at once')
})

/** A write behind whose writes record their closes and wait until `release()` lets the next one end. */
function gatedWrites(everyMs?: number) {
  const written: number[][] = []
  let release: () => void = () => undefined
  let started: () => void = () => undefined
  const behind = new WriteBehind(
    memoryLog(),
    async (w) => {
      written.push([...w.minutes.get('600000.SH')!.values()].map((b) => b.close))
      started()
      await new Promise<void>((r) => (release = r))
    },
    everyMs,
  )
  return {
    behind,
    written,
    /** Resolves when the next write has begun. */
    nextStart: () => new Promise<void>((r) => (started = r)),
    release: () => release(),
  }
}

it('a write begins as soon as the one before ends', async () => {
  const { behind, written, nextStart, release } = gatedWrites()
  let start = nextStart()
  behind.add(writes(bar(60_000, 10)), [['7', 1]])
  await start
  behind.add(writes(bar(60_000, 11)), [['7', 2]])
  start = nextStart()
  release()
  await start
  assert.deepEqual(written, [[10], [11]])
  release()
  await behind.drain()
})

it('with a cadence a write waits for its time; a flush (the pushes paused) writes what is held at once', async () => {
  const { behind, written, nextStart, release } = gatedWrites(60_000)
  let start = nextStart()
  behind.add(writes(bar(60_000, 10)), [['7', 1]]) // nothing written before: at once
  await start
  behind.add(writes(bar(60_000, 11)), [['7', 2]])
  behind.add(writes(bar(120_000, 12)), [['7', 3]])
  release()
  await new Promise((r) => setTimeout(r, 50))
  assert.deepEqual(written, [[10]], 'the second write waits for its minute')
  assert.equal(behind.unwrittenSymbols, 1)
  start = nextStart()
  behind.flush()
  await start
  assert.deepEqual(written, [[10], [11, 12]], 'flushed: both pushes since in one write')
  release()
  await behind.drain()
  assert.equal(behind.unwrittenSymbols, 0)
})

it('shows what it holds and what is being written until the write is in, with a revision per change', async () => {
  let release: () => void = () => undefined
  const behind = new WriteBehind(memoryLog(), () => new Promise<void>((r) => (release = r)))
  assert.equal(behind.revisionAll, undefined, 'nothing unwritten')
  behind.add(writes(bar(60_000, 10), bar(120_000, 11)), [['7', 1]]) // taken by a write at once, which waits
  const first = behind.revision('600000.SH')
  assert.notEqual(first, undefined)
  behind.add(writes(bar(120_000, 12), bar(180_000, 13)), [['7', 2]]) // held for the next write
  const second = behind.revision('600000.SH')!
  assert.ok(second > first!, 'a change moves the revision')
  assert.equal(behind.revisionAll, second)
  // The write under way's minute under the held one at the same time: the newer wins.
  assert.deepEqual(
    behind.bars('600000.SH', '1m').map((b) => [b.timestamp, b.close]),
    [
      [60_000, 10],
      [120_000, 12],
      [180_000, 13],
    ],
  )
  assert.deepEqual(behind.bars('600519.SH', '1m'), [])
  release() // the first write is in: what it took leaves, what is held stays
  await new Promise((r) => setImmediate(r))
  assert.deepEqual(
    behind.bars('600000.SH', '1m').map((b) => b.close),
    [12, 13],
  )
  assert.equal(behind.revision('600000.SH'), second, 'still held')
  release() // the second write, begun once the first ended
  await behind.drain()
  assert.deepEqual(behind.bars('600000.SH', '1m'), [])
  assert.equal(behind.quote('600000.SH'), undefined)
  // Written: its revision stays a while, for a reader that took the store's state before the write.
  assert.equal(behind.revision('600000.SH'), second)
  assert.equal(behind.revision('600519.SH'), undefined)
})
