/**
 * @module Plain range reads sent together: those issued in one turn of the event loop, and those that
 * come while the store's queries are all in flight, go as one query (a worker running many requests
 * at once, a batch reading its histories, a busy server): `PREWHERE (symbol = .. AND period = .. AND
 * ts BETWEEN ..) OR ...`, the rows split by series. A query costs a round trip, a parse and a plan
 * whatever its size: shared, they cost a read little beyond the rows it returns, and under load the
 * server answers a few large queries rather than many small ones competing for its cores.
 */
import { allocBars, type Bars } from '../../domain/bars.js'
import type { ChunkPeriod } from '../market-store.js'
import { sql, type Connection } from './connection.js'
import { PERIOD_CODE, READ_ROW, decodeInto } from './row-binary.js'
import { hiddenBy, type Snapshot } from './snapshot.js'
import type { Tombstone } from './metadata.js'

/** Reads at most this many together: one query's text and answer stay modest. */
const MAX_TOGETHER = 64
/**
 * The settings of a small read: one thread (18.16 starts its threads per query, and a second one only
 * waits on a busy machine), and read buffers of 64 KiB rather than 1 MiB per column (a read of a few
 * granules otherwise copies a megabyte of each column it names).
 */
export const SMALL_READ = { max_threads: 1, max_read_buffer_size: 65_536 }
/** Queries in flight at once; reads that come meanwhile wait for the next, together. */
const MAX_IN_FLIGHT = 2
/** The value columns, as the single reads read them. */
const VALUE_COLUMNS = 'pscale, open, high, low, close, prev_close, vscale, volume, amount'

export interface RangeRead {
  readonly symbol: string
  readonly period: ChunkPeriod
  readonly lo: number
  readonly to: number
  /** The series' tombstones that meet [lo, to]. */
  readonly deletes: readonly Tombstone[]
}

interface Pending extends RangeRead {
  readonly resolve: (bars: { bars: Bars; vscales: Uint8Array }) => void
  readonly reject: (err: unknown) => void
}

export class CoalescedReads {
  /** Pending reads by the snapshot they read: a query filters by one visible set. */
  readonly #pending = new Map<Snapshot, Pending[]>()
  #scheduled = false
  #inFlight = 0

  constructor(private readonly entry: Connection) {}

  /** The rows of one series in [lo, to] (unsorted) and each row's volume scale. */
  read(s: Snapshot, r: RangeRead): Promise<{ bars: Bars; vscales: Uint8Array }> {
    return new Promise((resolve, reject) => {
      const list = this.#pending.get(s) ?? []
      list.push({ ...r, resolve, reject })
      this.#pending.set(s, list)
      this.#schedule()
    })
  }

  /** A flush at the end of this turn, if a query may start. */
  #schedule(): void {
    if (this.#scheduled || this.#inFlight >= MAX_IN_FLIGHT || this.#pending.size === 0) return
    this.#scheduled = true
    setImmediate(() => this.#flush())
  }

  /** Sends waiting reads, oldest snapshot first, while queries may start. */
  #flush(): void {
    this.#scheduled = false
    for (const [s, list] of this.#pending) {
      while (list.length > 0 && this.#inFlight < MAX_IN_FLIGHT) void this.#send(s, list.splice(0, MAX_TOGETHER))
      if (list.length > 0) return
      this.#pending.delete(s)
    }
  }

  async #send(s: Snapshot, reads: readonly Pending[]): Promise<void> {
    this.#inFlight++
    try {
      const series = (r: RangeRead) => `symbol = ${sql.str(r.symbol)} AND period = ${sql.str(r.period)}`
      const ranges = reads.map(
        (r) => `(${series(r)} AND ts >= ${sql.int(Math.ceil(r.lo))} AND ts <= ${sql.int(Math.floor(r.to))})`,
      )
      const hidden = reads.flatMap((r) => r.deletes.map((t) => ` AND NOT (${series(r)} AND ${hiddenBy(t, 'ts')})`))
      const buf = await this.entry.bytes(
        `SELECT symbol, toUInt8(period), ts, ${VALUE_COLUMNS} FROM bars PREWHERE ${ranges.join(' OR ')}
         WHERE ${s.visibleSql}${[...new Set(hidden)].join('')} FORMAT RowBinary`,
        SMALL_READ,
      )
      const split = splitBySeries(buf)
      const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength)
      for (const r of reads) {
        const rows = split.get(`${r.symbol}\t${PERIOD_CODE[r.period]}`) ?? []
        // Two reads of one series share its rows: each keeps its own range.
        const inRange: number[] = []
        for (const at of rows) {
          const ts = dv.getInt32(at + 4, true) * 4294967296 + dv.getUint32(at, true)
          if (ts >= r.lo && ts <= r.to) inRange.push(at)
        }
        const bars = allocBars(inRange.length)
        const vscales = new Uint8Array(inRange.length)
        for (let i = 0; i < inRange.length; i++) vscales[i] = decodeInto(dv, buf, inRange[i], bars, i)
        r.resolve({ bars, vscales })
      }
    } catch (err) {
      for (const r of reads) r.reject(err)
    } finally {
      this.#inFlight--
      this.#schedule()
    }
  }
}

/**
 * Row offsets (of each row's `ts`) per `${symbol}\t${period code}`, from `symbol String, period UInt8,
 * ts, ...` rows. A series' rows come in runs (each part is sorted by series), so a row's key is made
 * only where its symbol bytes or period differ from the row before.
 */
function splitBySeries(buf: Buffer): Map<string, number[]> {
  const out = new Map<string, number[]>()
  let list: number[] = []
  let prevAt = -1
  let prevLen = -1
  let at = 0
  while (at < buf.length) {
    let len = 0
    let shift = 0
    for (;;) {
      const b = buf[at++]
      len |= (b & 127) << shift
      if (b < 128) break
      shift += 7
    }
    let same = len === prevLen && buf[at + len] === buf[prevAt + len]
    for (let k = 0; same && k < len; k++) same = buf[at + k] === buf[prevAt + k]
    if (!same) {
      const key = `${buf.toString('utf8', at, at + len)}\t${buf[at + len]}`
      list = out.get(key) ?? []
      out.set(key, list)
      prevAt = at
      prevLen = len
    }
    at += len + 1
    list.push(at)
    at += READ_ROW
  }
  if (at !== buf.length) throw new Error(`RowBinary answer of ${buf.length} bytes is not whole rows`)
  return out
}
