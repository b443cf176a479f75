/** @module One ClickHouse HTTP endpoint through @clickhouse/client, with SQL literals and failures mapped to STORE_UNAVAILABLE. */
import { ClickHouseLogLevel, createClient, type ClickHouseClient } from '@clickhouse/client'
import { Readable } from 'node:stream'
import { MdqError } from '../../domain/errors.js'

/** Reads give up after this, so a request facing a dead or frozen server fails within 2 s. */
export const READ_TIMEOUT_MS = 1800
/** Writes carry large blocks; they get longer, but still end. */
export const WRITE_TIMEOUT_MS = 300_000

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
  readonly #where: string

  constructor(
    readonly endpoint: Endpoint,
    readonly timeoutMs = READ_TIMEOUT_MS,
  ) {
    this.#where = `ClickHouse at ${endpoint.url}`
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
    })
  }

  async #run<T>(what: () => Promise<T>): Promise<T> {
    // The client's request_timeout covers the socket; the signal bounds the whole exchange as well.
    try {
      return await what()
    } catch (err) {
      throw this.unavailable(err)
    }
  }

  unavailable(err: unknown): MdqError {
    if (err instanceof MdqError) return err
    const message = err instanceof Error ? err.message.split('\n')[0].slice(0, 300) : String(err)
    return new MdqError('STORE_UNAVAILABLE', `${this.#where} failed: ${message}`)
  }

  #signal(): AbortSignal {
    return AbortSignal.timeout(this.timeoutMs + 50)
  }

  /** A statement without a result (DDL, ALTER, small INSERT ... VALUES). */
  async command(query: string): Promise<void> {
    await this.#run(() => this.#client.command({ query, abort_signal: this.#signal() }))
  }

  /** Rows as TabSeparated text split into fields, NULL as null (small results only). */
  async rows(query: string): Promise<(string | null)[][]> {
    const text = await this.#run(async () => {
      const rs = await this.#client.query({ query, format: 'TabSeparated', abort_signal: this.#signal() })
      return rs.text()
    })
    if (text === '') return []
    return text.replace(/\n$/, '').split('\n').map((line) => line.split('\t').map(unescapeTsv))
  }

  /** Rows of a small JSONEachRow result (Int64 come as strings, tuples as arrays). */
  async json<T>(query: string): Promise<T[]> {
    return this.#run(async () => {
      const rs = await this.#client.query({ query, format: 'JSONEachRow', abort_signal: this.#signal() })
      return rs.json<T>()
    })
  }

  /** The raw bytes of a `... FORMAT RowBinary` query. */
  async bytes(query: string): Promise<Buffer> {
    return this.#run(async () => {
      const { stream } = await this.#client.exec({ query, abort_signal: this.#signal() })
      const parts: Buffer[] = []
      for await (const part of stream) parts.push(part as Buffer)
      return parts.length === 1 ? parts[0] : Buffer.concat(parts)
    })
  }

  /** `INSERT INTO table (columns) FORMAT <format>` with a body already encoded in that format. */
  async insert(table: string, columns: readonly string[], format: 'RowBinary' | 'TabSeparated', body: Buffer | string, settings: Record<string, 0 | 1> = {}): Promise<void> {
    const query = `INSERT INTO ${table} (${columns.join(', ')}) FORMAT ${format}`
    await this.#run(async () => {
      const { stream } = await this.#client.exec({ query, values: Readable.from([body]), clickhouse_settings: settings, abort_signal: this.#signal() })
      for await (const chunk of stream) void chunk // drain the (empty) answer so the socket is reused
    })
  }

  async close(): Promise<void> {
    await this.#client.close()
  }
}

const TSV_ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', '0': '\0', '\\': '\\', "'": "'", b: '\b', f: '\f' }

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
