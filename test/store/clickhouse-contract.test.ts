// The Store contract on ClickHouse: one real server, and a real two-shard cluster of two servers.
import { after, before } from 'node:test'
import { ClickHouseStores, parseClickHouseUrl } from '../../src/store/clickhouse/clickhouse-stores.js'
import { ClickHouseCluster, ClickHouseServer } from '../helpers/clickhouse.js'
import { clickhouseServer } from '../helpers/requirements.js'
import { runStoreContract } from './store-contract.js'

const missing = clickhouseServer()
let single: ClickHouseServer | undefined
let cluster: ClickHouseCluster | undefined
before(async () => {
  if (missing) return
  ;[single, cluster] = await Promise.all([ClickHouseServer.start(), ClickHouseCluster.start()])
})
after(async () => {
  await Promise.all([single?.destroy(), cluster?.destroy()])
})

runStoreContract({
  name: 'clickhouse single server',
  open: () => ClickHouseStores.open(parseClickHouseUrl(single!.storeUrl('contract'))),
  unavailable: missing,
})
runStoreContract({
  name: 'clickhouse two-shard cluster',
  open: () => ClickHouseStores.open(parseClickHouseUrl(cluster!.storeUrl('contract'))),
  unavailable: missing,
})
