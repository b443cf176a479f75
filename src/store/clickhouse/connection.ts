/** @module One ClickHouse HTTP endpoint through @clickhouse/client, with SQL literals and failures mapped to STORE_UNAVAILABLE. */
import { ClickHouseLogLevel, createClient, type ClickHouseClient } from '@clickhouse/client'
import { setMaxListeners } from 'node:events'
import { Readable } from 'node:stream'
import { MdqError } from '../../domain/errors.js'
import { patientDeadline } from '../../lib/deadline.js'
import { HttpRows, MAX_QUERY_BYTES } from './http-rows.js'

/**
 * A ceiling for reads: a big legitimate read on a loaded server may take seconds, so a dead or frozen
 * server is not detected by this but by the Health pings, which abort every request within 2 s.
 */
export const READ_TIMEOUT_MS = 30_000
/** Writes carry large blocks; they get longer, but still end. */
export const WRITE_TIMEOUT_MS = 300_000
/** A ping (`/ping`, answered without running a query) slower than this means the server is gone. */
export const PING_TIMEOUT_MS = 1500
export const PING_INTERVAL_MS = 250

/**
 * How long the pings must fail before writes are given up: an import of many minutes should not die
 * of one slow ping on a loaded machine (a write waits for its own timeout otherwise), reads should.
 */
export const WRITE_OUTAGE_MS = 30_000

/** A controller whose signal every request in flight listens to: any number of them (no leak warning past ten). */
function outageController(): AbortController {
  const c = new AbortController()
  setMaxListeners(0, c.signal)
  return c
}

/**
 * Liveness of the servers a store uses, from pings every 250 ms: while one fails, every read in
 * flight is aborted and new ones fail at once with STORE_UNAVAILABLE; writes once the pings have
 * failed for WRITE_OUTAGE_MS. The first good ping ends it.
 */
export class Health {
  #down: MdqError | undefined
  #downSince = 0
  #controller = outageController()
  #writes = outageController()
  #timer: NodeJS.Timeout | undefined
  #pinging = false

  constructor(private readonly targets: readonly Connection[]) {}

  start(): void {
    this.#timer = setInterval(() => void this.#round(), PING_INTERVAL_MS)
    this.#timer.unref()
  }

  async #round(): Promise<void> {
    if (this.#pinging) return
    this.#pinging = true
    try {
      const failed = (await Promise.all(this.targets.map((c) => c.ping()))).find((e) => e !== undefined)
      if (failed && !this.#down) {
        this.#down = failed
        this.#downSince = Date.now()
        this.#controller.abort(failed)
      } else if (failed && this.#down && !this.#writes.signal.aborted && this.#longDown()) {
        this.#writes.abort(this.#down)
      } else if (!failed && this.#down) {
        this.#down = undefined
        this.#controller = outageController()
        if (this.#writes.signal.aborted) this.#writes = outageController()
      }
    } finally {
      this.#pinging = false
    }
  }

  #longDown(): boolean {
    return this.#down !== undefined && Date.now() - this.#downSince >= WRITE_OUTAGE_MS
  }

  /** Throws while the servers are down; else a signal that fires when they go down. */
  signal(): AbortSignal {
    if (this.#down) throw this.#down
    return this.#controller.signal
  }

  /** As `signal`, for writes: only an outage of WRITE_OUTAGE_MS counts. */
  writeSignal(): AbortSignal {
    if (this.#longDown()) throw this.#down!
    return this.#writes.signal
  }

  stop(): void {
    clearInterval(this.#timer)
  }
}

export interface Endpoint {
  readonly url: string
  readonly username: string
  readonly password: string
  /** Absent: the server's default database (for CREATE DATABASE). */
  readonly database?: string
}

/**
 * 18.16 predates query parameters ({name:Type}), so values go into the SQL as literals made here,
 * and nowhere else: strings quoted and escaped, numbers checked to be finite integers.
 */
export const sql = {
  str(s: string): string {
    return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`
  },
  int(n: number | bigint | string): string {
    const s = String(n)
    if (!/^-?\d+$/.test(s)) throw new Error(`not an integer: ${s}`)
    return s
  },
  float(n: number): string {
    if (!Number.isFinite(n)) throw new Error(`not a finite number: ${n}`)
    return String(n)
  },
  list(items: readonly string[]): string {
    return items.length ? items.join(', ') : 'NULL'
  },
}

export class Connection {
  readonly #client: ClickHouseClient
  readonly #rows: HttpRows
  readonly #where: string

  constructor(
    readonly endpoint: Endpoint,
    readonly timeoutMs = READ_TIMEOUT_MS,
    private readonly health?: Health,
    /** Writes: ended by an outage only once it has lasted WRITE_OUTAGE_MS (Health.writeSignal). */
    private readonly writes = false,
  ) {
    this.#where = `ClickHouse at ${endpoint.url}`
    this.#rows = new HttpRows(endpoint)
    this.#client = createClient({
      url: endpoint.url,
      username: endpoint.username,
      password: endpoint.password,
      ...(endpoint.database ? { database: endpoint.database } : {}),
      request_timeout: timeoutMs,
      // A server restart closes idle sockets; the client drops them before the server's 3 s keep-alive does.
      keep_alive: { enabled: true, idle_socket_ttl: 1500 },
      application: 'mdq',
      // Failures reach the caller as MdqErrors; the client's own console logging would only repeat them.
      log: { level: ClickHouseLogLevel.OFF },
      // Vacuum and the snapshot name imports in the query text: more than the 256 KiB default at worst.
      clickhouse_settings: { max_query_size: String(MAX_QUERY_BYTES) },
    })
  }

  async #run<T>(what: (signal: AbortSignal) => Promise<T>): Promise<T> {
    let deadline: { signal: AbortSignal; clear(): void } | undefined
    try {
      // The client's request_timeout covers the socket; the signal bounds the whole exchange and ends it on an outage.
      const outage = this.health ? this.#outage(this.health) : undefined
      deadline = patientDeadline(this.timeoutMs, () => new Error(`no answer within ${this.timeoutMs} ms`), outage)
      return await what(deadline.signal)
    } catch (err) {
      if (this.health) this.#outage(this.health) // throws the outage itself when that is why the request ended
      throw this.unavailable(err)
    } finally {
      deadline?.clear()
    }
  }

  #outage(health: Health): AbortSignal {
    return this.writes ? health.writeSignal() : health.signal()
  }

  /** Undefined when `/ping` answers within PING_TIMEOUT_MS, else the failure. */
  async ping(): Promise<MdqError | undefined> {
    const deadline = patientDeadline(
      PING_TIMEOUT_MS,
      () => new Error(`no answer to /ping within ${PING_TIMEOUT_MS} ms`),
    )
    const r = await this.#client
      .ping({ select: false, abort_signal: deadline.signal })
      .catch((err: unknown) => ({ success: false as const, error: err }))
    deadline.clear()
    return r.success ? undefined : this.unavailable(r.error)
  }

  unavailable(err: unknown): MdqError {
    if (err instanceof MdqError) return err
    const message = err instanceof Error ? err.message.split('\n')[0].slice(0, 300) : String(err)
    return new MdqError('STORE_UNAVAILABLE', `${this.#where} failed: ${message}`)
  }

  /** A statement without a result (DDL, ALTER, small INSERT ... VALUES). */
  async command(query: string): Promise<void> {
    await this.#run((signal) => this.#client.command({ query, abort_signal: signal }))
  }

  /** Rows as TabSeparated text split into fields, NULL as null (small results only). */
  async rows(query: string): Promise<(string | null)[][]> {
    const text = await this.#run(async (signal) => {
      const rs = await this.#client.query({ query, format: 'TabSeparated', abort_signal: signal })
      return rs.text()
    })
    if (text === '') return []
    return text
      .replace(/\n$/, '')
      .split('\n')
      .map((line) => line.split('\t').map(unescapeTsv))
  }

  /** Rows of a small JSONEachRow result (Int64 come as strings, tuples as arrays). */
  async json<T>(query: string): Promise<T[]> {
    return this.#run(async (signal) => {
      const rs = await this.#client.query({ query, format: 'JSONEachRow', abort_signal: signal })
      return rs.json<T>()
    })
  }

  /**
   * `decode` of the bytes of a `... FORMAT RowBinary` query's answer (with `settings` for this query
   * only); the bytes are valid only during the call.
   */
  async read<T>(query: string, settings: Record<string, number>, decode: (answer: Buffer) => T): Promise<T> {
    return this.#run((signal) => this.#rows.read(query, settings, signal, decode))
  }

  /** `INSERT INTO table (columns) FORMAT <format>` with a body already encoded in that format. */
  async insert(
    table: string,
    columns: readonly string[],
    format: 'RowBinary' | 'TabSeparated',
    body: Buffer | string,
    settings: Record<string, 0 | 1> = {},
  ): Promise<void> {
    const query = `INSERT INTO ${table} (${columns.join(', ')}) FORMAT ${format}`
    await this.#run(async (signal) => {
      const { stream } = await this.#client.exec({
        query,
        values: Readable.from([body]),
        clickhouse_settings: settings,
        abort_signal: signal,
      })
      for await (const chunk of stream) void chunk // drain the (empty) answer so the socket is reused
    })
  }

  async close(): Promise<void> {
    this.#rows.close()
    await this.#client.close()
  }
}

const TSV_ESCAPES: Record<string, string> = {
  n: '\n',
  t: '\t',
  r: '\r',
  '0': '\0',
  '\\': '\\',
  "'": "'",
  b: '\b',
  f: '\f',
}

function unescapeTsv(field: string): string | null {
  if (field === '\\N') return null
  return field.includes('\\') ? field.replace(/\\(.)/g, (_, c: string) => TSV_ESCAPES[c] ?? c) : field
}

/** A field for a TabSeparated body; null as \N. */
export function tsv(value: string | number | null): string {
  if (value === null) return '\\N'
  if (typeof value === 'number') return sql.float(value)
  return value.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r')
}
