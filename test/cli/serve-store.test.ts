// `mdq serve` never creates a store: a missing path or a 0-byte file is refused with one line;
// `mdq migrate` creates one that serve then serves; --store URLs and MDQ_STORE name it like --db.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { parseStoreUrl } from '../../src/store/backends.js'
import { spawnServe } from '../helpers/serve-process.js'
import { MDQ_BIN, runMdq, tempDir } from '../helpers/store-files.js'

const { dir, cleanup } = tempDir()
after(cleanup)

/** Runs `mdq ... serve --port 0` to its end (it must exit by itself: refusing, not serving). */
function serveMust(args: readonly string[], env: NodeJS.ProcessEnv = {}) {
  return spawnSync(process.execPath, [MDQ_BIN(), ...args, 'serve', '--port', '0'], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, ...env },
  })
}

describe('mdq serve and the store it is given', () => {
  it('refuses a missing store path with one line, exit 1, and creates no file', () => {
    const path = join(dir, 'nowhere', 'mdq.db')
    for (const args of [
      ['--db', path],
      ['--store', `sqlite:${path}`],
    ]) {
      const r = serveMust(args)
      assert.equal(r.status, 1, r.stdout)
      assert.equal(
        r.stderr,
        `mdq: no store at ${path} (no such file): create it with mdq migrate, mdq demo or mdq import\n`,
      )
    }
    const viaEnv = serveMust([], { MDQ_STORE: `sqlite:${path}` })
    assert.equal(viaEnv.status, 1)
    assert.match(viaEnv.stderr, /^mdq: no store at .*nowhere\/mdq\.db \(no such file\)/)
    assert.equal(existsSync(join(dir, 'nowhere')), false)
  })

  it('refuses a 0-byte store file and leaves it empty', () => {
    const path = join(dir, 'empty.db')
    writeFileSync(path, '')
    const r = serveMust(['--db', path])
    assert.equal(r.status, 1)
    assert.equal(
      r.stderr,
      `mdq: no store at ${path} (an empty file): create it with mdq migrate, mdq demo or mdq import\n`,
    )
    assert.equal(statSync(path).size, 0)
    assert.equal(existsSync(join(dir, 'empty.keys.db')), false)
  })

  it('mdq migrate creates the store and its keys file; serve then answers /readyz', async () => {
    const path = join(dir, 'migrated.db')
    const m = runMdq(['--store', `sqlite:${path}`, 'migrate'])
    assert.equal(m.status, 0, m.stderr)
    assert.equal(m.stdout, `store ${path} is at the current schema\n`)
    assert.ok(existsSync(path) && existsSync(join(dir, 'migrated.keys.db')))
    assert.equal(
      runMdq(['--store', `sqlite:${path}`, 'migrate']).status,
      0,
      'a second migrate changes nothing and succeeds',
    )
    const server = await spawnServe(['--store', `sqlite:${path}`])
    try {
      const r = await fetch(`${server.base}/readyz`)
      assert.equal(r.status, 200)
      assert.deepEqual(await r.json(), { status: 'ready', checks: { store: 'ok', keys: 'ok' } })
    } finally {
      await server.stop()
    }
  })

  it('--keys puts the keys where it says; bad store URLs are one clear line', async () => {
    const path = join(dir, 'split.db')
    const keysPath = join(dir, 'elsewhere-keys.db')
    assert.equal(runMdq(['--db', path, '--keys', `sqlite:${keysPath}`, 'migrate']).status, 0)
    const key = runMdq(['--db', path, '--keys', keysPath, 'keys', 'create', '--name', 'split']).stdout.trim()
    assert.ok(existsSync(keysPath) && !existsSync(join(dir, 'split.keys.db')))
    const server = await spawnServe(['--db', path])
    const elsewhere = await spawnServe(['--db', path, '--keys', keysPath])
    try {
      const ask = (base: string) =>
        fetch(`${base}/v1/instruments?symbols=600000.SH`, { headers: { 'X-API-Key': key } }).then(
          async (r) => (await r.arrayBuffer(), r.status),
        )
      assert.equal(await ask(server.base), 401, 'the default keys file beside the store does not hold it')
      assert.equal(await ask(elsewhere.base), 200)
    } finally {
      await Promise.all([server.stop(), elsewhere.stop()])
    }
    const same = runMdq(['--db', path, '--keys', `sqlite:${path}`, 'keys', 'list'])
    assert.equal(same.status, 1)
    assert.match(
      same.stderr,
      /^mdq: --keys 'sqlite:.*split\.db' is the store file itself: keys need a file of their own/,
    )
    for (const [url, why] of [
      ['postgres://h:5432/db', 'unknown scheme'],
      ['clickhouse://localhost/db', 'no port'],
      ['clickhouse://localhost:8123/bad-name', 'the database must be a plain identifier'],
      ['clickhouse://localhost:8123/mdq?shards=2', "unknown parameter 'shards'"],
    ]) {
      const r = runMdq(['--store', url, 'migrate'])
      assert.equal(r.status, 1)
      assert.equal(r.stderr.split('\n').length, 2, r.stderr)
      assert.ok(
        r.stderr.startsWith(`mdq: --store '${url}': ${why}`) && r.stderr.includes('(expected sqlite:PATH'),
        r.stderr,
      )
    }
  })

  it('parses store URLs into typed locations: sqlite paths, and ClickHouse user, password, host, port, database and cluster', () => {
    assert.deepEqual(parseStoreUrl('sqlite:./data/mdq.db'), { scheme: 'sqlite', path: './data/mdq.db' })
    assert.deepEqual(parseStoreUrl('sqlite:///var/lib/mdq.db'), { scheme: 'sqlite', path: '/var/lib/mdq.db' })
    assert.deepEqual(parseStoreUrl('/tmp/x.db'), { scheme: 'sqlite', path: '/tmp/x.db' })
    assert.deepEqual(parseStoreUrl('clickhouse://reader:s%40cret@ch1.internal:8123/market?cluster=two_shards'), {
      scheme: 'clickhouse',
      config: {
        url: 'http://ch1.internal:8123',
        username: 'reader',
        password: 's@cret',
        database: 'market',
        cluster: 'two_shards',
      },
    })
    assert.deepEqual(parseStoreUrl('clickhouse://127.0.0.1:18123/mdq'), {
      scheme: 'clickhouse',
      config: { url: 'http://127.0.0.1:18123', username: 'default', password: '', database: 'mdq' },
    })
    assert.throws(
      () => parseStoreUrl('clickhouse://u:secret@ch1/mdq'),
      (err: Error) =>
        err.message.startsWith("--store 'clickhouse://u:***@ch1/mdq': no port") && !err.message.includes('secret'),
    )
    assert.throws(() => parseStoreUrl('mysql://h:3306/db', '--keys'), /--keys 'mysql:\/\/h:3306\/db': unknown scheme/)
    assert.throws(() => parseStoreUrl('sqlite:'), /--store 'sqlite:': no file path/)
  })
})
