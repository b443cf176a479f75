/**
 * @module The ingest log on ClickHouse (MarketStore.ingestLog): a row per logged push and per mark,
 * one INSERT per append, on the metadata server; a day's partition dropped once it is older than
 * LOG_KEEP_DAYS (FORMAT.md "Ingest log").
 */
import type { IngestLog, LogEntry, LogMark } from '../market-store.js'
import { sql, tsv, type Connection } from './connection.js'

export const INGEST_LOG_TABLE = `CREATE TABLE IF NOT EXISTS ingest_log (feed UInt64, seq UInt64, at_ms Int64,
   kind Enum8('entry' = 1, 'mark' = 2), body String)
   ENGINE = MergeTree PARTITION BY toYYYYMMDD(toDateTime(intDiv(at_ms, 1000))) ORDER BY (feed, seq)`

/** Days of log kept: an ingest that starts replays what its dead predecessors left unwritten, if they died within this. */
export const LOG_KEEP_DAYS = 7

export class ClickHouseIngestLog implements IngestLog {
  /** `meta`: the metadata server's writer (reads here must see its writes). */
  constructor(private readonly meta: Connection) {}

  async append(entries: readonly LogEntry[], marks: readonly LogMark[]): Promise<void> {
    if (entries.length + marks.length === 0) return
    const now = Date.now()
    const row = (feed: string, seq: number, kind: 'entry' | 'mark', body: string) =>
      `${sql.int(feed)}\t${sql.int(seq)}\t${now}\t${kind}\t${tsv(body)}\n`
    const body =
      entries.map((e) => row(e.feed, e.seq, 'entry', e.body)).join('') +
      marks.map((m) => row(m.feed, m.seq, 'mark', '')).join('')
    await this.meta.insert('ingest_log', ['feed', 'seq', 'at_ms', 'kind', 'body'], 'TabSeparated', body)
  }

  async unwritten(): Promise<LogEntry[]> {
    const marks = await this.meta.rows("SELECT feed, max(seq) FROM ingest_log WHERE kind = 'mark' GROUP BY feed")
    const u64 = (values: readonly (string | null)[]) => `[${values.map((v) => `toUInt64(${sql.int(v!)})`).join(', ')}]`
    const above = marks.length
      ? `transform(feed, ${u64(marks.map((m) => m[0]))}, ${u64(marks.map((m) => m[1]))}, toUInt64(0))`
      : '0'
    const rows = await this.meta.rows(
      `SELECT toString(feed), seq, body FROM ingest_log WHERE kind = 'entry' AND seq > ${above} ORDER BY at_ms, feed, seq`,
    )
    return rows.map(([feed, seq, body]) => ({ feed: feed!, seq: Number(seq), body: body! }))
  }

  /** Drops the days of log older than LOG_KEEP_DAYS (whole partitions: no rewrite). */
  async dropOld(nowMs = Date.now()): Promise<void> {
    const day = new Date(nowMs - LOG_KEEP_DAYS * 86_400_000).toISOString().slice(0, 10).replace(/-/g, '')
    const old = await this.meta.rows(
      `SELECT DISTINCT partition FROM system.parts WHERE database = currentDatabase() AND table = 'ingest_log'
       AND active AND partition < ${sql.str(day)}`,
    )
    for (const [partition] of old)
      await this.meta.command(`ALTER TABLE ingest_log DROP PARTITION ${sql.int(partition!)}`)
  }
}
