// The ClickHouse store URL: every part the README documents, and the mistakes named.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseClickHouseUrl, redact } from '../../src/store/clickhouse/config.js'

describe('parseClickHouseUrl', () => {
  it('reads host, HTTP port, database, user, password and cluster', () => {
    assert.deepEqual(parseClickHouseUrl('clickhouse://ch1:8123/mdq'), {
      url: 'http://ch1:8123',
      username: 'default',
      password: '',
      database: 'mdq',
    })
    assert.deepEqual(parseClickHouseUrl('clickhouse://reader:p%40ss@10.0.0.5:18123/market_data?cluster=mdq_cluster'), {
      url: 'http://10.0.0.5:18123',
      username: 'reader',
      password: 'p@ss',
      database: 'market_data',
      cluster: 'mdq_cluster',
    })
    assert.equal(parseClickHouseUrl('clickhouse://[::1]:8123/mdq').url, 'http://[::1]:8123')
  })
  it('rejects what it cannot use, naming the problem and never the password', () => {
    assert.throws(() => parseClickHouseUrl('http://ch1:8123/mdq'), /does not start with clickhouse:\/\//)
    assert.throws(() => parseClickHouseUrl('clickhouse://ch1/mdq'), /no port/)
    assert.throws(() => parseClickHouseUrl('clickhouse://ch1:8123/'), /the database must be a plain identifier/)
    assert.throws(() => parseClickHouseUrl('clickhouse://ch1:8123/my-db'), /the database must be a plain identifier/)
    assert.throws(() => parseClickHouseUrl('clickhouse://ch1:8123/mdq?shards=2'), /unknown parameter 'shards'/)
    assert.throws(
      () => parseClickHouseUrl('clickhouse://ch1:8123/mdq?cluster=a;b'),
      /the cluster must be a plain identifier/,
    )
    assert.throws(
      () => parseClickHouseUrl('clickhouse://u:secret@ch1/mdq'),
      (err: Error) => !err.message.includes('secret'),
    )
    assert.equal(redact('clickhouse://u:secret@ch1:8123/mdq'), 'clickhouse://u:***@ch1:8123/mdq')
  })
})
