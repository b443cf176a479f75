/** @module The ClickHouse backend's one entry point: both stores over one topology, schema made on first use. */
import type { KeyStore } from '../key-store.js'
import { ClickHouseKeyStore } from './clickhouse-key-store.js'
import { ClickHouseMarketStore } from './clickhouse-market-store.js'
import type { ClickHouseConfig } from './config.js'
import { closeTopology, connect, migrate } from './schema.js'

export { parseClickHouseUrl, type ClickHouseConfig } from './config.js'
export { ClickHouseMarketStore } from './clickhouse-market-store.js'

export const ClickHouseStores = {
  /** Connects, creates the database and tables if missing (every shard's with a cluster), and opens both stores. */
  async open(config: ClickHouseConfig): Promise<{ market: ClickHouseMarketStore; keys: KeyStore }> {
    const t = await connect(config)
    try {
      await migrate(t, config)
      const market = await ClickHouseMarketStore.open(t, config.dailyCacheBytes)
      const keys = await ClickHouseKeyStore.open(t.meta, t.metaWriter, t.health)
      return { market, keys }
    } catch (err) {
      await closeTopology(t)
      throw err
    }
  },

  /** `mdq migrate`: the schema only. */
  async migrate(config: ClickHouseConfig): Promise<void> {
    const t = await connect(config)
    try {
      await migrate(t, config)
    } finally {
      await closeTopology(t)
    }
  },
}
