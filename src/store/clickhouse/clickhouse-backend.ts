/** @module The ClickHouse backend as the CLI sees it: `clickhouse://...` URLs, market data and keys in one database, vacuum. */
import type { StoreBackend, StoreLocation } from '../backend.js'
import type { KeyStore } from '../key-store.js'
import type { MarketStore } from '../market-store.js'
import { ClickHouseMarketStore, ClickHouseStores } from './clickhouse-stores.js'
import { parseClickHouseUrl, redact, type ClickHouseConfig } from './config.js'

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
  // The schema is made on first use by any command, so a reachable server always holds a store.
  exists: async () => true,
  async open(at, { keys }) {
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
