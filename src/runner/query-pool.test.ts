import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { BatchTask } from './query-runner.js'
import { batchGroups } from './query-pool.js'

const symbols = Array.from({ length: 100 }, (_, i) => `${600000 + i}.SH`)
const klines = (count: number): BatchTask => ({
  kind: 'klines-batch',
  symbols,
  period: '1d',
  range: { count, adjust: 'forward' },
})
const sizes = (groups: BatchTask[]) => groups.map((g) => g.symbols.length)

describe('batchGroups: a batch split into worker tasks', () => {
  it('about 10,000 bars a task: one symbol at count=10000, ten at count=1000', () => {
    assert.deepEqual(sizes(batchGroups(klines(10_000), 2)), Array(100).fill(1))
    assert.deepEqual(sizes(batchGroups(klines(1_000), 2)), Array(10).fill(10))
    assert.deepEqual(sizes(batchGroups(klines(3_000), 2)), [...Array(33).fill(3), 1])
  })

  it('small answers are still spread over every worker', () => {
    assert.deepEqual(sizes(batchGroups(klines(100), 2)), [50, 50])
    assert.deepEqual(sizes(batchGroups(klines(1), 4)), [25, 25, 25, 25])
    assert.deepEqual(sizes(batchGroups({ ...klines(100), symbols: ['600000.SH'] }, 2)), [1])
  })

  it('an intraday batch without a count counts one trading day of 1m bars (400) a symbol', () => {
    const task: BatchTask = { kind: 'intraday-batch', symbols, period: '1m' }
    assert.deepEqual(sizes(batchGroups(task, 2)), Array(4).fill(25))
  })

  it('the groups keep every symbol once, in order, with the task otherwise unchanged', () => {
    const groups = batchGroups(klines(3_000), 2)
    assert.deepEqual(
      groups.flatMap((g) => g.symbols),
      symbols,
    )
    for (const g of groups) assert.deepEqual({ ...g, symbols: [] }, { ...klines(3_000), symbols: [] })
  })
})
