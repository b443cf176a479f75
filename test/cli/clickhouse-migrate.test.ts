// `mdq migrate` on a two-shard ClickHouse cluster says what it created on each host (and that a
// second run creates nothing), and a `?cluster=` the servers do not know is one line on stderr
// naming the clusters they do know, for every command, with nothing created anywhere; on a server
// writing the default compressed blocks, or over a bars table of larger granules, it says what to change.
import assert from 'node:assert/strict'
import { after, before, describe } from 'node:test'
import { ClickHouseCluster, ClickHouseServer } from '../helpers/clickhouse.js'
import { clickhouseServer, requires } from '../helpers/requirements.js'
import { runMdq } from '../helpers/store-files.js'

const need = requires(clickhouseServer())

async function query(server: ClickHouseServer, sql: string): Promise<string[]> {
  const r = await fetch(`${server.httpUrl}/`, { method: 'POST', body: sql })
  const text = await r.text()
  assert.equal(r.status, 200, text)
  return text === '' ? [] : text.trim().split('\n')
}

describe('mdq migrate and ?cluster= on a two-shard cluster', () => {
  let cluster: ClickHouseCluster
  before(async () => {
    if (need.met) cluster = await ClickHouseCluster.start()
  })
  after(() => cluster?.destroy())
  const host = (i: number) => `127.0.0.${i + 1}:${cluster.servers[0].ports.http}`
  const tablesOn = (i: number, db: string) =>
    query(cluster.servers[i], `SELECT name FROM system.tables WHERE database = '${db}' ORDER BY name`)

  need.it('says per host which database and tables it created, then that there is nothing to create', async () => {
    const url = cluster.storeUrl('mdq')
    const first = runMdq(['--store', url, 'migrate'])
    assert.equal(first.status, 0, first.stderr)
    const lines = first.stdout.split('\n')
    assert.equal(lines.length, 4, first.stdout)
    assert.equal(lines[2], `store ${url} is at the current schema`)
    for (const i of [0, 1]) {
      const made = new RegExp(`^${host(i)}: created database mdq and tables (.+)$`).exec(lines[i])
      assert.ok(made, lines[i])
      const present = await tablesOn(i, 'mdq')
      assert.deepEqual(made[1].split(', ').sort(), present, 'exactly the tables now there')
      assert.ok(present.includes('bars') && present.includes('bars_local'), 'every shard holds bars')
      assert.equal(present.includes('api_keys'), i === 0, 'keys and metadata on the first shard only')
    }

    const again = runMdq(['--store', url, 'migrate'])
    assert.equal(
      again.stdout,
      [0, 1].map((i) => `${host(i)}: nothing to create (database mdq and its tables are there)\n`).join('') +
        `store ${url} is at the current schema\n`,
    )

    await query(cluster.servers[1], 'DROP TABLE mdq.bars_local')
    const repaired = runMdq(['--store', url, 'migrate'])
    assert.match(repaired.stdout, new RegExp(`^${host(1)}: created table bars_local$`, 'm'))
    assert.ok((await tablesOn(1, 'mdq')).includes('bars_local'))
  })

  need.it('a cluster the servers do not know is one line for every command, and nothing is created', async () => {
    const url = cluster.storeUrl('elsewhere').replace(`cluster=${ClickHouseCluster.NAME}`, 'cluster=mdq_typo')
    const line = `mdq: ClickHouse at http://${host(0)} has no cluster 'mdq_typo' in its remote_servers config (its clusters: ${ClickHouseCluster.NAME})\n`
    for (const command of [
      ['migrate'],
      ['keys', 'list'],
      ['keys', 'create', '--name', 'x'],
      ['serve', '--port', '0'],
      ['demo'],
      ['vacuum'],
    ]) {
      const r = runMdq(['--store', url, ...command])
      assert.equal(r.status, 1, `${command.join(' ')}: ${r.stdout}`)
      assert.equal(r.stderr, line, command.join(' '))
      assert.equal(r.stdout, '')
    }
    for (const i of [0, 1])
      assert.deepEqual(
        await query(cluster.servers[i], "SELECT name FROM system.databases WHERE name = 'elsewhere'"),
        [],
      )
  })
})

describe('mdq migrate on a server that writes the default compressed blocks', () => {
  let server: ClickHouseServer
  before(async () => {
    if (need.met)
      server = await ClickHouseServer.start({
        profile:
          '<min_compress_block_size>65536</min_compress_block_size><max_compress_block_size>1048576</max_compress_block_size>',
      })
  })
  after(() => server?.destroy())

  need.it('names the profile settings for small reads, and the granules of a bars table made before', async () => {
    const host = new URL(server.httpUrl).host
    const blocks = `${host}: it compresses blocks of 65536 bytes and up: min_compress_block_size = 4096 and max_compress_block_size = 16384 in its default profile cost small reads about a third less of its CPU (docs/design/scaling-out.md)`
    const fresh = runMdq(['--store', server.storeUrl('mdq'), 'migrate'])
    assert.equal(fresh.status, 0, fresh.stderr)
    assert.deepEqual(fresh.stdout.split('\n').slice(1, 2), [blocks], fresh.stdout)
    assert.doesNotMatch(fresh.stdout, /granules/, 'a new store has the current granules')

    // A store whose bars table has ClickHouse's default granules, as stores made before had.
    const created = (await query(server, 'SHOW CREATE TABLE mdq.bars FORMAT TSVRaw')).join('\n')
    await query(server, 'CREATE DATABASE old')
    await query(
      server,
      created.replace('mdq.bars', 'old.bars').replace(/index_granularity = \d+/, 'index_granularity = 8192'),
    )
    const old = runMdq(['--store', server.storeUrl('old'), 'migrate'])
    assert.equal(old.status, 0, old.stderr)
    assert.deepEqual(
      old.stdout.split('\n').slice(1, 3),
      [
        `${host}: its bars table has granules of 8192 rows, a new store's 2048: small reads cost the server more (mdq copy into a new database gives the new layout)`,
        blocks,
      ],
      old.stdout,
    )
  })
})
