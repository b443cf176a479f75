// `mdq demo` through the real CLI: into an empty store it writes the demo; into a store that holds
// the user's data it refuses, changing nothing, unless --force.
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { dumpStore, runMdq, tempDir, writeCsv } from '../helpers/store-files.js'

const { dir, cleanup } = tempDir()
after(cleanup)

describe('mdq demo', () => {
  it('writes the demo into a new store and into an empty one', () => {
    const fresh = runMdq(['--db', join(dir, 'fresh.db'), 'demo'])
    assert.equal(fresh.status, 0, fresh.stderr)
    assert.match(fresh.stdout, /^demo store .*fresh\.db: 10 instruments/)
    const empty = join(dir, 'empty.db')
    assert.equal(runMdq(['--db', empty, 'migrate']).status, 0)
    const r = runMdq(['--db', empty, 'demo'])
    assert.equal(r.status, 0, r.stderr)
  })

  it("refuses a store that holds data, so the demo's 600000.SH does not merge over the user's; --force merges", () => {
    const db = join(dir, 'mine.db')
    const mine = writeCsv(join(dir, 'mine.csv'), 'symbol,time,open,high,low,close,volume', [
      '600000.SH,2024-01-02,7.1,7.2,7.0,7.15,1000',
    ])
    assert.equal(runMdq(['--db', db, 'import', 'bars', mine]).status, 0)
    const before = dumpStore(db)
    const r = runMdq(['--db', db, 'demo'])
    assert.equal(r.status, 1)
    assert.equal(r.stdout, '')
    assert.match(
      r.stderr,
      /^mdq: .*mine\.db already holds data \(1 instruments, 0 universes\): the demo writes into an empty store only, .* give another --store, or --force to merge anyway\n$/,
    )
    assert.equal(dumpStore(db), before, 'nothing written')
    const forced = runMdq(['--db', db, 'demo', '--force'])
    assert.equal(forced.status, 0, forced.stderr)
    assert.notEqual(dumpStore(db), before)
  })
})
