import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { membersOn, universeOfRows } from './universe.js'

const fields = { id: 'X', name: 'X', region: null, category: null, description: null }

describe('universes', () => {
  it('a plain list is the same on every day; a dated one has the spells covering the day, out dates exclusive', () => {
    const plain = universeOfRows(fields, [
      { symbol: 'A.US', inDate: null, outDate: null },
      { symbol: 'B.US', inDate: null, outDate: null },
    ])
    assert.deepEqual(plain, { ...fields, symbols: ['A.US', 'B.US'] })
    assert.deepEqual(
      membersOn(plain, () => '1999-01-01'),
      ['A.US', 'B.US'],
    )
    const dated = universeOfRows(fields, [
      { symbol: 'A.US', inDate: '2020-01-01', outDate: '2021-01-01' },
      { symbol: 'B.US', inDate: null, outDate: '2020-06-01' },
      { symbol: 'A.US', inDate: '2022-01-01', outDate: null },
    ])
    assert.deepEqual(dated.symbols, ['A.US'], 'today: the members not yet out')
    const on = (day: string) => membersOn(dated, () => day)
    assert.deepEqual(on('2019-12-31'), ['B.US'])
    assert.deepEqual(on('2020-01-01'), ['A.US', 'B.US'])
    assert.deepEqual(on('2020-06-01'), ['A.US'])
    assert.deepEqual(on('2021-01-01'), [])
    assert.deepEqual(on('2022-01-01'), ['A.US'])
  })
})
