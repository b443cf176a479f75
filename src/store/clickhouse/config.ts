/** @module Where a ClickHouse store lives: `clickhouse://[user[:password]@]host:port/database[?cluster=NAME]`. */

export interface ClickHouseConfig {
  /** HTTP endpoint of the entry server, e.g. `http://127.0.0.1:8123`. */
  readonly url: string
  readonly username: string
  readonly password: string
  readonly database: string
  /** A cluster of the servers' `remote_servers` config: bars go to a Distributed table over its shards. */
  readonly cluster?: string
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/

/** Parses a store URL; throws an Error naming what is wrong (the CLI reports it as a bad --store). */
export function parseClickHouseUrl(url: string): ClickHouseConfig {
  let u: URL
  try {
    u = new URL(url)
  } catch {
    throw new Error(`'${redact(url)}' is not a URL of the form clickhouse://[user[:password]@]host:port/database[?cluster=NAME].`)
  }
  if (u.protocol !== 'clickhouse:') throw new Error(`'${redact(url)}' does not start with clickhouse://.`)
  if (!u.hostname || !u.port) throw new Error(`'${redact(url)}' needs host:port (the HTTP port, usually 8123).`)
  const database = decodeURIComponent(u.pathname.replace(/^\//, ''))
  if (!NAME.test(database)) throw new Error(`'${redact(url)}' needs a database name of letters, digits and _ as its path.`)
  for (const key of u.searchParams.keys()) if (key !== 'cluster') throw new Error(`Unknown option '${key}' in the ClickHouse store URL (only 'cluster').`)
  const cluster = u.searchParams.get('cluster') ?? undefined
  if (cluster !== undefined && !NAME.test(cluster)) throw new Error(`cluster '${cluster}' must be letters, digits and _.`)
  return {
    url: `http://${u.hostname}:${u.port}`,
    username: decodeURIComponent(u.username) || 'default',
    password: decodeURIComponent(u.password),
    database,
    ...(cluster ? { cluster } : {}),
  }
}

/** The URL without its password, for messages and logs. */
export function redact(url: string): string {
  return url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@')
}
