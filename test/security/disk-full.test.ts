// A full disk, for real (a small tmpfs): an import that fills it fails saying so and stores nothing;
// then `mdq serve` still starts and serves, `mdq keys revoke` still works (the one write that must,
// even after the disk fills up again), and what cannot work says the disk is full. Both used to fail
// with SQLite's "disk I/O error" (a WAL-mode file cannot open without room for its -shm file).
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { closeSync, copyFileSync, mkdirSync, openSync, writeFileSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe } from 'node:test'
import { requires, tmpfsMount } from '../helpers/requirements.js'
import { spawnServe, type ServeProcess } from '../helpers/serve-process.js'
import { demoDb } from '../helpers/server.js'
import { runMdq, tempDir } from '../helpers/store-files.js'

const needs = requires(tmpfsMount())
const { dir, cleanup } = tempDir()
const disk = join(dir, 'disk')
const db = join(disk, 'mdq.db')
const DISK_FULL = /the disk holding .*disk is full \(\d+ KB free\)/
let mounted = false
let server: ServeProcess | undefined
const keys: string[] = []

/** Writes a file of zeros until the disk refuses more: nothing is left on it. */
function fillDisk(name: string): void {
  const fd = openSync(join(disk, name), 'a')
  const block = Buffer.alloc(4096)
  try {
    for (;;) writeSync(fd, block)
  } catch (err) {
    assert.equal((err as NodeJS.ErrnoException).code, 'ENOSPC')
  } finally {
    closeSync(fd)
  }
}

const klines = (key: string) =>
  fetch(`${server!.base}/v1/klines?symbol=600519.SH&count=5`, { headers: { 'X-API-Key': key } })

before(async () => {
  if (!needs.met) return
  const source = await demoDb(dir)
  mkdirSync(disk)
  // 8 MB: the demo store (1.8 MB), its keys and the room each keeps, and a few MB an import fills.
  assert.equal(spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', disk]).status, 0)
  mounted = true
  copyFileSync(source, db)
  copyFileSync(source.replace(/\.db$/, '.keys.db'), db.replace(/\.db$/, '.keys.db'))
  for (const name of ['leaked', 'also leaked', 'kept'])
    keys.push(runMdq(['--db', db, 'keys', 'create', '--name', name]).stdout.trim())
})
after(async () => {
  await server?.stop()
  if (mounted) spawnSync('umount', [disk])
  cleanup()
})

describe('a full disk', () => {
  needs.it('an import that fills the disk fails saying so, and stores nothing', () => {
    const csv = join(dir, 'big.csv')
    const rows = ['symbol,time,open,high,low,close,volume']
    for (let s = 0; s < 200; s++)
      for (let d = 0; d < 2600; d++) {
        const day = new Date(Date.UTC(2005, 0, 3) + d * 86_400_000)
        if (day.getUTCDay() === 0 || day.getUTCDay() === 6) continue
        const p = 10 + ((s * 7 + d * 13) % 100) / 100
        rows.push(
          `${300000 + s}.SZ,${day.toISOString().slice(0, 10)},${p},${p + 0.5},${p - 0.5},${p + 0.1},${1000 + d}`,
        )
      }
    writeFileSync(csv, rows.join('\n') + '\n')
    const before = runMdq(['--db', db, 'keys', 'list']).stdout
    const imported = runMdq(['--db', db, 'import', 'bars', csv, '--period', '1d'])
    assert.equal(imported.status, 1, imported.stdout + imported.stderr)
    assert.match(imported.stderr, DISK_FULL)
    assert.match(imported.stderr, /nothing was written/)
    assert.equal(runMdq(['--db', db, 'keys', 'list']).stdout, before)
  })

  needs.it('mdq serve starts on the full disk and serves', async () => {
    fillDisk('filler-1')
    server = await spawnServe(['--db', db], ['--workers', '0'])
    assert.match(
      server.output(),
      /mdq: warning: the disk holding .* is full: used \d+ KB of the room kept in .*-reserve/,
    )
    const r = await klines(keys[0])
    assert.equal(r.status, 200)
    assert.equal(((await r.json()) as { data: { close: number[] } }).data.close.length, 5)
  })

  needs.it(
    'mdq keys revoke works on the full disk, twice when it fills up again, and the server refuses the keys',
    async () => {
      for (const [id, filler] of [
        [1, 'filler-2'],
        [2, 'filler-3'],
      ] as const) {
        fillDisk(filler)
        const revoked = runMdq(['--db', db, 'keys', 'revoke', String(id)])
        assert.equal(revoked.status, 0, revoked.stderr)
        assert.match(revoked.stdout, new RegExp(`revoked key ${id}`))
        assert.equal((await klines(keys[id - 1])).status, 401)
      }
      assert.equal((await klines(keys[2])).status, 200)
    },
  )

  needs.it('an import into the full disk fails saying so, and the server serves on', async () => {
    fillDisk('filler-4')
    const csv = join(dir, 'small.csv')
    writeFileSync(csv, 'symbol,time,open,high,low,close,volume\n600519.SH,2030-01-02,1,2,0.5,1.5,100\n')
    const imported = runMdq(['--db', db, 'import', 'bars', csv, '--period', '1d'])
    assert.equal(imported.status, 1, imported.stdout + imported.stderr)
    assert.match(imported.stderr, DISK_FULL)
    assert.equal((await klines(keys[2])).status, 200)
  })
})
