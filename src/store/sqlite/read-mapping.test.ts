import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { FED_GAP_MS, ReadMapping, REST_MS } from './read-mapping.js'
import { MAP_BYTES, openDb, type Db } from './sqlite-db.js'

const dir = mkdtempSync(join(tmpdir(), 'mdq-read-mapping-'))
after(() => rmSync(dir, { recursive: true, force: true }))

/** A reader and a writer on one new file, and a clock the test moves. */
function connections(name: string) {
  const path = join(dir, `${name}.db`)
  const writer = openDb(path)
  writer.exec('CREATE TABLE t (x INTEGER)')
  const reader = openDb(path)
  const clock = { ms: 0 }
  const mapping = new ReadMapping(reader, () => clock.ms)
  const version = () => reader.pragma('data_version', { simple: true }) as number
  return {
    reader,
    clock,
    mapping,
    /** What the reader sees now, as the store reads it before each answer. */
    observe: () => mapping.observe(version()),
    commit: () => writer.prepare('INSERT INTO t VALUES (1)').run(),
    close: () => (reader.close(), writer.close()),
  }
}

const mmapSize = (db: Db) => db.pragma('mmap_size', { simple: true })

describe('ReadMapping (a SQLite reader unmaps the file while another connection commits often)', () => {
  it('stays mapped over commits far apart, reads page by page from the second of two close ones, maps again after a rest', () => {
    const c = connections('policy')
    c.observe()
    c.commit()
    c.clock.ms = 5_000
    c.observe()
    c.commit()
    c.clock.ms = 5_000 + FED_GAP_MS + 1
    c.observe()
    assert.equal(mmapSize(c.reader), MAP_BYTES, 'commits more than the gap apart: mapped')
    c.commit()
    c.clock.ms += FED_GAP_MS - 1
    c.observe()
    assert.equal(c.mapping.mapped, false)
    assert.equal(mmapSize(c.reader), 0, 'two commits within the gap: unmapped')
    const changedAt = c.clock.ms
    c.clock.ms = changedAt + REST_MS - 1
    c.observe()
    assert.equal(mmapSize(c.reader), 0, 'not yet rested')
    c.clock.ms = changedAt + REST_MS
    c.observe()
    assert.equal(c.mapping.mapped, true)
    assert.equal(mmapSize(c.reader), MAP_BYTES, 'no commit for the rest period: mapped again')
    assert.equal(c.reader.prepare('SELECT count(*) FROM t').pluck().get(), 3, 'the reads see every commit')
    c.close()
  })

  it('a change decided inside a read transaction waits for its end', () => {
    const c = connections('transaction')
    c.observe()
    c.commit()
    c.clock.ms = 100
    c.observe()
    c.commit()
    c.reader.exec('BEGIN')
    assert.equal(c.reader.prepare('SELECT count(*) FROM t').pluck().get(), 2)
    c.clock.ms = 200
    c.observe()
    assert.equal(c.mapping.mapped, true, 'inside the transaction: unchanged')
    assert.equal(mmapSize(c.reader), MAP_BYTES)
    c.reader.exec('COMMIT')
    c.mapping.apply()
    assert.equal(c.mapping.mapped, false)
    assert.equal(mmapSize(c.reader), 0, 'applied once the transaction ended')
    c.close()
  })
})
