// A child process importing generation G of the kill-test data through the ClickHouse store:
// node clickhouse-import-child.js STORE_URL G. Prints "committed" after the commit returns.
import { ClickHouseStores, parseClickHouseUrl } from '../../src/store/clickhouse/clickhouse-stores.js'
import { generationBars, KILL_SYMBOLS } from './kill-data.js'

const [url, gen] = process.argv.slice(2)
const { market, keys } = await ClickHouseStores.open(parseClickHouseUrl(url))
const w = await market.beginWrite()
process.stdout.write('begun\n')
for (const symbol of KILL_SYMBOLS) {
  await w.deleteBars({ symbol, period: '1m' })
  await w.putBars(symbol, '1m', generationBars(Number(gen)))
}
await w.commit()
process.stdout.write('committed\n')
await keys.close()
await market.close()
