/**
 * @module What one import sends, gathered: bar rows of many series into large RowBinary blocks (two
 * in flight, so the next is encoded while the server takes one), small-table rows per table until
 * the commit. An import of 5,000 one-bar series is then a handful of INSERTs, not 10,000, and each
 * INSERT is one part per shard.
 */
import type { Connection } from './connection.js'
import { BarRows } from './row-binary.js'

/** Bar INSERTs in flight at once: the server parses each on one thread, so two keep two of its cores busy. */
const IN_FLIGHT = 2

export class BarBlocks {
  /** The block being gathered: the writer adds rows to it, then calls `added`. */
  readonly rows = new BarRows()
  #sending: Promise<void>[] = []

  constructor(
    private readonly send: (body: Buffer) => Promise<void>,
    private readonly blockRows: number,
  ) {}

  /** After rows were added: sends the block once `blockRows` have gathered (a failure of an earlier one throws here). */
  async added(): Promise<void> {
    if (this.rows.rows >= this.blockRows) await this.#flush()
  }

  async #flush(): Promise<void> {
    if (this.rows.rows === 0) return
    const body = this.rows.take()
    if (this.#sending.length >= IN_FLIGHT) await this.#sending.shift()
    const sent = this.send(body)
    sent.catch(() => undefined) // awaited by added or finish; this only keeps a later failure from going unhandled first
    this.#sending.push(sent)
  }

  /** Sends what is left and waits for every block; throws the first failure. None is left running. */
  async finish(): Promise<void> {
    let failure: { reason: unknown } | undefined
    try {
      await this.#flush()
    } catch (reason) {
      failure = { reason }
    }
    const settled = await Promise.allSettled(this.#sending)
    this.#sending = []
    failure ??= settled.find((r) => r.status === 'rejected')
    if (failure) throw failure.reason
  }

  /** Drops what is gathered and waits for the blocks in flight, failed or not (a rollback). */
  async abandon(): Promise<void> {
    this.rows.take()
    await Promise.allSettled(this.#sending)
    this.#sending = []
  }
}

interface TableRows {
  readonly columns: readonly string[]
  readonly format: 'RowBinary' | 'TabSeparated'
  bodies: (Buffer | string)[]
  bytes: number
}

/** A table's gathered rows are sent once they pass this size (statements' JSON can be large), so an import's memory stays bounded. */
const META_FLUSH_BYTES = 16 << 20

/** Rows of the small tables, per table, sent in one INSERT each by `finish` (or earlier, past META_FLUSH_BYTES). */
export class MetaRows {
  readonly #tables = new Map<string, TableRows>()
  readonly #sent: Promise<void>[] = []
  /** Every table given rows, sent or not. */
  readonly written = new Set<string>()

  /** `settings`: of every INSERT (a cluster's Distributed tables are written synchronously). */
  constructor(
    private readonly meta: Connection,
    private readonly settings: Record<string, 0 | 1> = {},
  ) {}

  add(table: string, columns: readonly string[], format: TableRows['format'], body: Buffer | string): void {
    this.written.add(table)
    let rows = this.#tables.get(table)
    if (!rows) this.#tables.set(table, (rows = { columns, format, bodies: [], bytes: 0 }))
    rows.bodies.push(body)
    rows.bytes += body.length
    if (rows.bytes >= META_FLUSH_BYTES) {
      const sent = this.#send(table, rows)
      sent.catch(() => undefined) // awaited by finish; this only keeps a failure from going unhandled first
      this.#sent.push(sent)
    }
  }

  #send(table: string, rows: TableRows): Promise<void> {
    const { columns, format, bodies } = rows
    rows.bodies = []
    rows.bytes = 0
    const body = format === 'RowBinary' ? Buffer.concat(bodies as Buffer[]) : (bodies as string[]).join('')
    return this.meta.insert(table, columns, format, body, this.settings)
  }

  /** Waits while more than `most` sends are under way (a table written in bulk keeps the import's memory bounded); throws a failed one. */
  async backlog(most: number): Promise<void> {
    while (this.#sent.length > most) await this.#sent.shift()
  }

  /** Sends what is left, one INSERT per table, and waits for every send; throws the first failure. */
  async finish(): Promise<void> {
    for (const [table, rows] of this.#tables) if (rows.bodies.length) this.#sent.push(this.#send(table, rows))
    this.#tables.clear()
    const settled = await Promise.allSettled(this.#sent.splice(0))
    const failed = settled.find((r) => r.status === 'rejected')
    if (failed) throw failed.reason
  }

  /** Drops what is gathered and waits for the sends under way, failed or not (a rollback: then its rows are removed). */
  async abandon(): Promise<void> {
    this.#tables.clear()
    await Promise.allSettled(this.#sent.splice(0))
  }
}
