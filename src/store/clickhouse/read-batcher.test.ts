import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { firstOf, ReadBatcher } from './read-batcher.js'

/** A query sent by the batcher, answered (each read doubled) or failed when the test says so. */
interface Query {
  readonly key: string
  readonly reads: readonly number[]
  answer(): void
  fail(err: Error): void
}

/** A batcher over a send that holds every query until the test answers it; `sent` lists them in order. */
function held(take: (waiting: readonly number[]) => readonly number[] = firstOf(100), maxInFlight?: number) {
  const sent: Query[] = []
  const batcher = new ReadBatcher<string, number, number>({
    take,
    maxInFlight,
    send: (key, reads) =>
      new Promise((resolve, reject) =>
        sent.push({ key, reads, answer: () => resolve(reads.map((r) => r * 2)), fail: reject }),
      ),
  })
  return { batcher, sent }
}

describe('ReadBatcher', () => {
  it('sends the reads of one turn as one query and answers each its own', async () => {
    const { batcher, sent } = held()
    const answers = Promise.all([1, 2, 3].map((r) => batcher.read('s', r)))
    await nextTurn()
    assert.deepEqual(
      sent.map((q) => q.reads),
      [[1, 2, 3]],
    )
    sent[0].answer()
    assert.deepEqual(await answers, [2, 4, 6])
  })

  it('keeps at most maxInFlight queries out; reads that come meanwhile go together once one ends', async () => {
    const { batcher, sent } = held(firstOf(100), 2)
    const first = batcher.read('s', 1)
    await nextTurn()
    const second = batcher.read('s', 2)
    await nextTurn()
    const later = [3, 4, 5].map((r) => batcher.read('s', r))
    await nextTurn()
    await nextTurn()
    assert.deepEqual(
      sent.map((q) => q.reads),
      [[1], [2]],
      'two out, the rest waiting',
    )
    sent[1].answer()
    assert.equal(await second, 4)
    await nextTurn()
    assert.deepEqual(
      sent.map((q) => q.reads),
      [[1], [2], [3, 4, 5]],
    )
    sent[0].answer()
    sent[2].answer()
    assert.equal(await first, 2)
    assert.deepEqual(await Promise.all(later), [6, 8, 10])
  })

  it('never mixes keys in a query, and sends the older key first', async () => {
    const { batcher, sent } = held(firstOf(100), 1)
    const reads = [batcher.read('old', 1), batcher.read('new', 2), batcher.read('old', 3)]
    await nextTurn()
    assert.deepEqual(
      sent.map((q) => [q.key, q.reads]),
      [['old', [1, 3]]],
    )
    sent[0].answer()
    assert.equal(await reads[0], 2)
    await nextTurn()
    assert.deepEqual(
      sent.map((q) => [q.key, q.reads]),
      [
        ['old', [1, 3]],
        ['new', [2]],
      ],
    )
    sent[1].answer()
    assert.deepEqual(await Promise.all(reads), [2, 4, 6])
  })

  it('sends what the take rule picks; the rest wait for the next query, in their order', async () => {
    const evens = (waiting: readonly number[]) => waiting.flatMap((r, i) => (r % 2 === 0 ? [i] : []))
    const { batcher, sent } = held((w) => (w[0] % 2 === 0 ? evens(w) : [0]), 4)
    const reads = [2, 4, 1, 6, 3, 5].map((r) => batcher.read('s', r))
    await nextTurn()
    assert.deepEqual(
      sent.map((q) => q.reads),
      [[2, 4, 6], [1], [3], [5]],
    )
    for (const q of sent) q.answer()
    assert.deepEqual(await Promise.all(reads), [4, 8, 2, 12, 6, 10])
  })

  it('sends the first waiting read even when the rule picks none', async () => {
    const { batcher, sent } = held(() => [], 1)
    const read = batcher.read('s', 7)
    await nextTurn()
    assert.deepEqual(
      sent.map((q) => q.reads),
      [[7]],
    )
    sent[0].answer()
    assert.equal(await read, 14)
  })

  it("fails a failed query's reads only", async () => {
    const { batcher, sent } = held(firstOf(1), 2)
    const bad = batcher.read('s', 1)
    const good = batcher.read('s', 2)
    await nextTurn()
    sent[0].fail(new Error('server away'))
    sent[1].answer()
    await assert.rejects(bad, /server away/)
    assert.equal(await good, 4)
  })
})
