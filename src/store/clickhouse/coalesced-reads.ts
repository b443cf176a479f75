/**
 * @module Plain range reads issued in one turn of the event loop, sent as one query: a worker running
 * many requests at once (latest bars of many symbols, a batch's histories) asks the server once for
 * all of them (`PREWHERE (symbol = .. AND period = .. AND ts BETWEEN ..) OR ...`) and splits the rows
 * by series. A query costs a round trip, a parse and a plan whatever its size: shared, they cost a
 * read little beyond the rows it returns.
 */
import { allocBars, type Bars } from '../../domain/bars.js'
import type { ChunkPeriod } from '../market-store.js'
import { sql, type Connection } from './connection.js'
import { PERIOD_CODE, READ_ROW, decodeInto } from './row-binary.js'
import { hiddenBy, type Snapshot } from './snapshot.js'
import type { Tombstone } from './metadata.js'

/** Reads at most this many together: one query's text and answer stay modest. */
const MAX_TOGETHER = 64
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

  constructor(private readonly entry: Connection) {}

  /** The rows of one series in [lo, to] (unsorted) and each row's volume scale. */
  read(s: Snapshot, r: RangeRead): Promise<{ bars: Bars; vscales: Uint8Array }> {
    return new Promise((resolve, reject) => {
      const list = this.#pending.get(s) ?? []
      list.push({ ...r, resolve, reject })
      this.#pending.set(s, list)
      if (!this.#scheduled) {
        this.#scheduled = true
        setImmediate(() => this.#flush())
      }
    })
  }

  #flush(): void {
    this.#scheduled = false
    const all = [...this.#pending]
    this.#pending.clear()
    for (const [s, list] of all)
      for (let i = 0; i < list.length; i += MAX_TOGETHER) void this.#send(s, list.slice(i, i + MAX_TOGETHER))
  }

  async #send(s: Snapshot, reads: readonly Pending[]): Promise<void> {
    try {
      const series = (r: RangeRead) => `symbol = ${sql.str(r.symbol)} AND period = ${sql.str(r.period)}`
      const ranges = reads.map(
        (r) => `(${series(r)} AND ts >= ${sql.int(Math.ceil(r.lo))} AND ts <= ${sql.int(Math.floor(r.to))})`,
      )
      const hidden = reads.flatMap((r) => r.deletes.map((t) => ` AND NOT (${series(r)} AND ${hiddenBy(t, 'ts')})`))
      const buf = await this.entry.bytes(
        `SELECT symbol, toUInt8(period), ts, ${VALUE_COLUMNS} FROM bars PREWHERE ${ranges.join(' OR ')}
         WHERE ${s.visibleSql}${[...new Set(hidden)].join('')} FORMAT RowBinary`,
        { max_threads: 1 },
      )
      const split = splitBySeries(buf)
      const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength)
      for (const r of reads) {
        const rows = split.get(`${r.symbol}\t${PERIOD_CODE[r.period]}`) ?? []
        // Two reads of one series share its rows: each keeps its own range.
        const inRange = rows.filter((at) => {
          const ts = dv.getInt32(at + 4, true) * 4294967296 + dv.getUint32(at, true)
          return ts >= r.lo && ts <= r.to
        })
        const bars = allocBars(inRange.length)
        const vscales = new Uint8Array(inRange.length)
        inRange.forEach((at, i) => (vscales[i] = decodeInto(dv, buf, at, bars, i)))
        r.resolve({ bars, vscales })
      }
    } catch (err) {
      for (const r of reads) r.reject(err)
    }
  }
}

/** Row offsets (of each row's `ts`) per `${symbol}\t${period code}`, from `symbol String, period UInt8, ts, ...` rows. */
function splitBySeries(buf: Buffer): Map<string, number[]> {
  const out = new Map<string, number[]>()
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
    const key = `${buf.toString('utf8', at, at + len)}\t${buf[at + len]}`
    at += len + 1
    const list = out.get(key)
    if (list) list.push(at)
    else out.set(key, [at])
    at += READ_ROW
  }
  if (at !== buf.length) throw new Error(`RowBinary answer of ${buf.length} bytes is not whole rows`)
  return out
}
