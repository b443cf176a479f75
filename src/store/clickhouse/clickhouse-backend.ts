/** @module The ClickHouse backend as the CLI sees it: `clickhouse://...` URLs, market data and keys in one database, vacuum. */
import { MdqError } from '../../domain/errors.js'
import type { StoreBackend, StoreLocation } from '../backend.js'
import type { KeyStore } from '../key-store.js'
import type { MarketStore } from '../market-store.js'
import { ClickHouseMarketStore, ClickHouseStores, type HostSchema } from './clickhouse-stores.js'
import { parseClickHouseUrl, redact, type ClickHouseConfig } from './config.js'
import { HEARTBEAT_MS, MIN_GRACE_MS } from './import-states.js'
import { ADDED_TABLES } from './schema.js'

export interface ClickHouseLocation extends StoreLocation {
  readonly scheme: 'clickhouse'
  readonly config: ClickHouseConfig
}

/** Only the keys of a store opened with its market side: closing them closes both. */
async function keysOnly(config: ClickHouseConfig): Promise<KeyStore> {
  const both = await ClickHouseStores.open(config)
  const k = both.keys
  return {
    createKey: k.createKey.bind(k),
    listKeys: k.listKeys.bind(k),
    findKey: k.findKey.bind(k),
    revokeKey: k.revokeKey.bind(k),
    setKeyRate: k.setKeyRate.bind(k),
    keysVersion: k.keysVersion.bind(k),
    check: k.check.bind(k),
    close: async () => void (await Promise.all([k.close(), both.market.close()])),
  }
}

const tables = (names: readonly string[]) => `table${names.length > 1 ? 's' : ''} ${names.join(', ')}`

/** Why the store is not there (its database, or tables it should have, missing somewhere), or undefined when it is. */
function absence(hosts: readonly HostSchema[], database: string): string | undefined {
  const gaps = hosts.flatMap((h) => {
    // A store from before a table was added is there: opening it adds the table (schema.ts ADDED_TABLES).
    const lost = h.tables.filter((t) => !ADDED_TABLES.has(t))
    return h.database
      ? [`no database ${database} on ${h.host}`]
      : lost.length
        ? [`no ${tables(lost)} on ${h.host}`]
        : []
  })
  return gaps.length ? gaps.join('; ') : undefined
}

function vacuumable(store: MarketStore): ClickHouseMarketStore {
  if (!(store instanceof ClickHouseMarketStore)) throw new Error('not a ClickHouse store')
  return store
}

export const clickhouseBackend: StoreBackend<ClickHouseLocation> = {
  scheme: 'clickhouse',
  urlForms: 'clickhouse://[user[:password]@]host:port/database[?cluster=NAME]',
  accepts: (url) => url.startsWith('clickhouse://'),
  parse: (url) => ({ scheme: 'clickhouse', config: parseClickHouseUrl(url) }),
  display: ({ config: c }) =>
    `clickhouse://${c.url.replace(/^http:\/\//, '')}/${c.database}${c.cluster ? `?cluster=${c.cluster}` : ''}`,
  redact,
  // The database and every table of the current schema on every host; an unreachable server is an error, not a no.
  exists: async (at) => absence(await ClickHouseStores.missing(at.config), at.config.database) === undefined,
  async open(at, { create, keys }) {
    if (!create) {
      const why = absence(await ClickHouseStores.missing(at.config), at.config.database)
      if (why)
        throw new MdqError(
          'STORE_UNAVAILABLE',
          `no store at ${clickhouseBackend.display(at)} (${why}): create it with mdq migrate, mdq demo or mdq import`,
        )
    }
    const both = await ClickHouseStores.open(at.config)
    if (keys === undefined) return both
    try {
      return { market: both.market, keys: await keys() }
    } catch (err) {
      await both.market.close()
      throw err
    } finally {
      await both.keys.close()
    }
  },
  openKeysOf: (at) => keysOnly(at.config),
  openKeys: (at) => keysOnly(at.config),
  async migrate(at) {
    const db = at.config.database
    return (await ClickHouseStores.migrate(at.config)).flatMap((h) => {
      const made = [...(h.database ? [`database ${db}`] : []), ...(h.tables.length ? [tables(h.tables)] : [])]
      return [
        `${h.host}: ${made.length ? `created ${made.join(' and ')}` : `nothing to create (database ${db} and its tables are there)`}`,
        ...(h.advice ?? []).map((a) => `${h.host}: ${a}`),
      ]
    })
  },
  vacuumGrace: {
    minMs: MIN_GRACE_MS,
    why: `a running import shows a sign of life every ${HEARTBEAT_MS / 1000} s, so a shorter grace would take imports still running for dead (they would then fail to commit)`,
  },
  async vacuum(store, { graceMs }) {
    const ch = vacuumable(store)
    const removed = await ch.vacuum({ graceMs })
    const c = await ch.compact({ graceMs })
    return [
      `removed the rows of ${removed} unfinished import(s)`,
      `removed ${c.supersededRows} superseded and ${c.hiddenRows} deleted row(s), ${c.tombstones} tombstone(s)${c.pending ? ' (removals still running: the tombstones go on a later vacuum)' : ''}`,
    ]
  },
}
