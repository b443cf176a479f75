/** @module Where a ClickHouse store lives: `clickhouse://[user[:password]@]host:port/database[?cluster=NAME]`. */

export interface ClickHouseConfig {
  /** HTTP endpoint of the entry server, e.g. `http://127.0.0.1:8123`. */
  readonly url: string
  readonly username: string
  readonly password: string
  readonly database: string
  /** A cluster of the servers' `remote_servers` config: bars go to a Distributed table over its shards. */
  readonly cluster?: string
  /** Bar rows per INSERT of an import (default 500,000). Not part of the URL: tests make it small, to see blocks sent before the commit. */
  readonly insertBlockRows?: number
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/

/**
 * Parses a store URL (the one parser: the registry in src/store/backends.ts wraps its errors with
 * the flag's name). Throws an Error whose message is the bare reason, never the password.
 */
export function parseClickHouseUrl(url: string): ClickHouseConfig {
  let u: URL
  try {
    u = new URL(url)
  } catch {
    throw new Error('not a URL')
  }
  if (u.protocol !== 'clickhouse:') throw new Error('does not start with clickhouse://')
  if (!u.hostname) throw new Error('no host')
  if (!u.port) throw new Error('no port (the HTTP port, usually 8123)')
  const database = decodeURIComponent(u.pathname.replace(/^\//, ''))
  if (!NAME.test(database)) throw new Error('the database must be a plain identifier')
  for (const key of u.searchParams.keys()) if (key !== 'cluster') throw new Error(`unknown parameter '${key}'`)
  const cluster = u.searchParams.get('cluster') ?? undefined
  if (cluster !== undefined && !NAME.test(cluster)) throw new Error('the cluster must be a plain identifier')
  return {
    url: `http://${u.host}`,
    username: decodeURIComponent(u.username) || 'default',
    password: decodeURIComponent(u.password),
    database,
    ...(cluster !== undefined && { cluster }),
  }
}

/** The URL without its password, for messages and logs. */
export function redact(url: string): string {
  return url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@')
}
