import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { LiveSymbolSeqs } from './live-tables.js'

/** The live_symbols rows as a file holds them: each symbol's last mark. */
function file() {
  const marks = new Map<string, number>()
  return {
    mark: (symbol: string, seq: number) => marks.set(symbol, seq),
    since: (seq: number) => [...marks].filter(([, s]) => s > seq),
  }
}

describe('LiveSymbolSeqs (per-symbol versions of a SQLite store)', () => {
  it('a symbol as of each sequence caught up to, the one before kept', () => {
    const f = file()
    const seqs = new LiveSymbolSeqs()
    f.mark('A', 3)
    f.mark('B', 4)
    seqs.catchUp(f.since, 4)
    f.mark('A', 6)
    seqs.catchUp(f.since, 7)
    assert.deepEqual(
      [seqs.at('A', 4), seqs.at('A', 7), seqs.at('B', 7), seqs.at('C', 7)],
      [3, 6, 4, 0],
      'A before and after its second mark, B unmoved, C never marked',
    )
    f.mark('A', 8)
    seqs.catchUp(f.since, 9)
    assert.equal(seqs.at('A', 4), undefined, 'moved twice since: not known')
  })

  it('a mark committed after the version was read hides what the symbol had then: a miss, never an older mark', () => {
    const f = file()
    const seqs = new LiveSymbolSeqs()
    f.mark('A', 5)
    seqs.catchUp(f.since, 10)
    // The version is read at 12 (A marked at 12), then A is marked again at 13 before the catch-up reads the rows.
    f.mark('A', 12)
    f.mark('A', 13)
    seqs.catchUp(f.since, 12)
    assert.equal(seqs.at('A', 12), undefined, 'A as of 12 was 12, a mark the file no longer holds')
    assert.equal(seqs.at('A', 10), undefined)
    seqs.catchUp(f.since, 13)
    assert.equal(seqs.at('A', 13), 13)
  })

  it('a symbol logged by several commits since the last catch-up: its highest counts, the one before is what was caught up to', () => {
    const log: [string, number][] = []
    const since = (seq: number) => log.filter(([, s]) => s > seq)
    const seqs = new LiveSymbolSeqs()
    log.push(['A', 3])
    seqs.catchUp(since, 4)
    log.push(['A', 5], ['B', 6], ['A', 8])
    seqs.catchUp(since, 9)
    assert.deepEqual(
      [seqs.at('A', 4), seqs.at('A', 9), seqs.at('B', 4), seqs.at('B', 9)],
      [3, 8, 0, 6],
      'A as of each sequence caught up to; B first marked after 4',
    )
  })
})
