/** @module The ClickHouse backend's one entry point: both stores over one topology, schema made or upgraded on open. */
import type { KeyStore } from '../key-store.js'
import { ClickHouseKeyStore } from './clickhouse-key-store.js'
import { ClickHouseMarketStore } from './clickhouse-market-store.js'
import type { ClickHouseConfig } from './config.js'
import { advice, closeTopology, connect, migrate, missingSchema, type HostSchema } from './schema.js'

export { parseClickHouseUrl, type ClickHouseConfig } from './config.js'
export type { HostSchema } from './schema.js'
export { ClickHouseMarketStore } from './clickhouse-market-store.js'

export const ClickHouseStores = {
  /** Connects, creates the database and tables if missing (every shard's with a cluster), and opens both stores. */
  async open(config: ClickHouseConfig): Promise<{ market: ClickHouseMarketStore; keys: KeyStore }> {
    const t = await connect(config)
    try {
      await migrate(t, config)
      const market = await ClickHouseMarketStore.open(t, { blockRows: config.insertBlockRows })
      const keys = await ClickHouseKeyStore.open(t.meta, t.metaWriter, t.health)
      return { market, keys }
    } catch (err) {
      await closeTopology(t)
      throw err
    }
  },

  /** `mdq migrate`: the schema only; what each host lacked before (so what was created), and advice on its bars. */
  async migrate(config: ClickHouseConfig): Promise<HostSchema[]> {
    const t = await connect(config)
    try {
      const created = await migrate(t, config)
      const lines = await advice(t, config)
      return created.map((h, i) => ({ ...h, advice: lines[i] }))
    } finally {
      await closeTopology(t)
    }
  },

  /** What each host lacks of the current schema, creating nothing (every list empty: the store is there). */
  async missing(config: ClickHouseConfig): Promise<HostSchema[]> {
    const t = await connect(config)
    try {
      return await missingSchema(t, config)
    } finally {
      await closeTopology(t)
    }
  },
}
