import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Outbox, type OutboxCounts } from './outbox.js'
import type { Snapshot } from './stream-hub.js'

/** The socket's side: messages sent, and the write completions the test releases (a client reading, or not). */
function socket() {
  const sent: string[] = []
  const pending: (() => void)[] = []
  return {
    sent,
    send: (text: string, done: () => void) => {
      sent.push(text)
      pending.push(done)
    },
    /** The client reads everything sent so far. */
    drain: () => pending.splice(0).forEach((done) => done()),
  }
}
const snap = (symbol: string, t: number, channel: 'quotes' | 'depth' = 'quotes'): Snapshot => ({
  channel,
  symbol,
  timestamp: t,
  json: `{"s":"${symbol}","t":${t}}`,
})
const counts = (): OutboxCounts => ({ messages: 0, snapshots: 0, conflated: 0 })

describe('Outbox', () => {
  it('sends every snapshot while the client keeps up: one message per channel and batch', () => {
    const s = socket()
    const c = counts()
    const box = new Outbox(s, { highWaterBytes: 1000, lowWaterBytes: 100 }, c)
    box.deliver(snap('A.US', 1))
    box.deliver(snap('A.US', 2))
    box.deliver(snap('B.US', 1, 'depth'))
    box.flush()
    assert.deepEqual(s.sent, [
      '{"op":"quotes","data":[{"s":"A.US","t":1},{"s":"A.US","t":2}]}',
      '{"op":"depth","data":[{"s":"B.US","t":1}]}',
    ])
    assert.deepEqual(c, { messages: 2, snapshots: 3, conflated: 0 })
  })

  it('once behind, keeps only the latest per symbol and channel, and sends those when the client has caught up', () => {
    const s = socket()
    const c = counts()
    let now = 0
    const box = new Outbox(s, { highWaterBytes: 50, lowWaterBytes: 0 }, c, () => now)
    box.deliver(snap('A.US', 1))
    box.deliver(snap('B.US', 1))
    now = 7
    box.flush() // 63 bytes unwritten: behind from now on
    assert.equal(box.behindSinceMs, 7)
    for (let t = 2; t < 100; t++) {
      box.deliver(snap('B.US', t))
      box.deliver(snap('A.US', t))
      box.deliver(snap('A.US', t, 'depth'))
      box.flush()
    }
    assert.equal(s.sent.length, 1)
    assert.equal(box.heldSnapshots, 3)
    assert.equal(c.conflated, 3 * 97)
    now = 9
    s.drain()
    assert.deepEqual(s.sent.slice(1), [
      '{"op":"quotes","data":[{"s":"B.US","t":99},{"s":"A.US","t":99}]}',
      '{"op":"depth","data":[{"s":"A.US","t":99}]}',
    ])
    assert.equal(box.heldSnapshots, 0)
    assert.equal(box.behindSinceMs, 9) // what it caught up with is past the high water again, until read
    s.drain()
    assert.equal(box.behindSinceMs, undefined)
  })

  it('sends replies at once, ahead of held snapshots, and nothing after close', () => {
    const s = socket()
    const box = new Outbox(s, { highWaterBytes: 10, lowWaterBytes: 0 }, counts())
    box.reply({ op: 'subscribed', total: 1 })
    box.deliver(snap('A.US', 1))
    box.flush()
    box.reply({ op: 'pong' })
    assert.deepEqual(s.sent, ['{"op":"subscribed","total":1}', '{"op":"pong"}'])
    assert.ok(box.unwrittenBytes > 10)
    box.close()
    s.drain()
    assert.equal(s.sent.length, 2)
  })
})
