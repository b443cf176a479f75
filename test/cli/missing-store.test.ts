// Commands that only use a store refuse one that is not there, as `mdq serve` does, and create
// nothing: every key command on a mistyped SQLite path, and on a ClickHouse database that lacks
// mdq's tables (a typo in the URL, or a server never migrated). `mdq start` still builds the demo
// on an empty ClickHouse, as on a fresh SQLite path.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { ClickHouseServer } from '../helpers/clickhouse.js'
import { clickhouseServer, requires } from '../helpers/requirements.js'
import { MDQ_BIN, runMdq, tempDir } from '../helpers/store-files.js'
import { until } from '../helpers/wait.js'

const KEY_COMMANDS = [
  ['keys', 'create', '--name', 'typo'],
  ['keys', 'list'],
  ['keys', 'revoke', '1'],
  ['keys', 'set-rate', '1', '--rate', '10/min'],
] as const

const HINT = 'create it with mdq migrate, mdq demo or mdq import'

describe('key commands on a SQLite store that does not exist', () => {
  const { dir, cleanup } = tempDir()
  after(cleanup)

  it('create, list, revoke and set-rate exit 1 with one line naming the store, and create no file', () => {
    const typo = join(dir, 'data', 'mdq2.db')
    const runs = [
      ...KEY_COMMANDS.map((command) => ['--store', typo, ...command]),
      ['--store', `sqlite:${typo}`, 'keys', 'list'],
      ['--db', typo, 'keys', 'create', '--name', 'typo'],
    ]
    for (const args of runs) {
      const r = runMdq(args)
      assert.equal(r.status, 1, `${args.join(' ')}: ${r.stdout}`)
      assert.equal(r.stdout, '', 'no key printed, no empty list')
      assert.equal(r.stderr, `mdq: no store at ${typo}: ${HINT}\n`)
    }
    assert.deepEqual(readdirSync(dir), [], 'neither the store nor a keys file beside it')
  })
})

describe('key commands and serve on a ClickHouse without mdq tables', () => {
  const need = requires(clickhouseServer())
  let server: ClickHouseServer
  before(async () => {
    if (need.met) server = await ClickHouseServer.start()
  })
  after(() => server?.destroy())
  const databases = async () =>
    (await (await fetch(`${server.httpUrl}/?query=${encodeURIComponent('SELECT name FROM system.databases')}`)).text())
      .trim()
      .split('\n')
      .sort()
  const query = async (sql: string) => {
    const r = await fetch(`${server.httpUrl}/`, { method: 'POST', body: sql })
    assert.equal(r.status, 200, await r.text())
  }

  need.it('refuse an unmigrated database with one line saying to run mdq migrate, and create nothing', async () => {
    const url = server.storeUrl('mdq_typo')
    const shown = `clickhouse://127.0.0.1:${server.ports.http}/mdq_typo`
    const before = await databases()
    for (const command of KEY_COMMANDS) {
      const r = runMdq(['--store', url, ...command])
      assert.equal(r.status, 1, `${command.join(' ')}: ${r.stdout}`)
      assert.equal(r.stdout, '')
      assert.equal(r.stderr, `mdq: no store at ${shown}: ${HINT}\n`)
    }
    for (const command of [['serve', '--port', '0'], ['vacuum'], ['delete', 'instruments', '600000.SH']]) {
      const r = runMdq(['--store', url, ...command])
      assert.equal(r.status, 1, `${command.join(' ')}: ${r.stdout}`)
      assert.equal(
        r.stderr,
        `mdq: no store at ${shown} (no database mdq_typo on 127.0.0.1:${server.ports.http}): ${HINT}\n`,
      )
    }
    assert.deepEqual(await databases(), before, 'no database created')

    // A database mdq did not make, or one that lost a table, is not a store either.
    await query('CREATE DATABASE mdq_typo')
    assert.equal(runMdq(['--store', url, 'keys', 'list']).stderr, `mdq: no store at ${shown}: ${HINT}\n`)
    assert.equal(runMdq(['--store', url, 'migrate']).status, 0)
    const key = runMdq(['--store', url, 'keys', 'create', '--name', 'after-migrate'])
    assert.equal(key.status, 0, key.stderr)
    assert.match(key.stdout, /^mdq_[\w-]{43}\n$/)
    assert.match(runMdq(['--store', url, 'keys', 'list']).stdout, /\tafter-migrate\tread\tactive\t/)
    await query('DROP TABLE mdq_typo.api_keys')
    const serve = runMdq(['--store', url, 'serve', '--port', '0'])
    assert.equal(serve.status, 1)
    assert.equal(
      serve.stderr,
      `mdq: no store at ${shown} (no table api_keys on 127.0.0.1:${server.ports.http}): ${HINT}\n`,
    )
    assert.equal(runMdq(['--store', url, 'keys', 'list']).status, 1)
  })

  need.it('mdq start builds the demo on an empty ClickHouse, prints a key and serves it', async () => {
    const child = spawn(process.execPath, [MDQ_BIN(), '--store', server.storeUrl('fresh'), 'start', '--port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const exited = once(child, 'exit')
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (err += d))
    try {
      await until(() => /on http:\/\/127\.0\.0\.1:\d+/.test(out) || child.exitCode !== null, 'the server to listen')
      const port = /on http:\/\/127\.0\.0\.1:(\d+)/.exec(out)?.[1]
      assert.ok(port, `mdq start exited: ${err}`)
      assert.match(err, /^No store at clickhouse:\/\/.*\/fresh: building the demo data set\.\.\.\ndemo store /)
      const key = /Demo API key \(shown once, keep it\): (mdq_[\w-]+)/.exec(err)![1]
      const r = await fetch(`http://127.0.0.1:${port}/v1/klines?symbol=600519.SH&period=1w&count=5`, {
        headers: { 'X-API-Key': key },
      })
      assert.equal(r.status, 200)
      assert.equal(((await r.json()) as { data: { close: number[] } }).data.close.length, 5)
    } finally {
      child.kill('SIGTERM')
      await exited
    }
  })
})
