import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { StreamHub, type Snapshot, type Subscriber } from './stream-hub.js'

/** A subscriber that records each flush as the list of JSON texts delivered before it. */
function recorder(): Subscriber & { flushes: string[][] } {
  let pending: string[] = []
  const flushes: string[][] = []
  return {
    flushes,
    deliver: (s) => void pending.push(s.json),
    flush: () => {
      flushes.push(pending)
      pending = []
    },
  }
}
const quote = (symbol: string, timestamp: number, price = timestamp): Snapshot => ({
  channel: 'quotes',
  symbol,
  timestamp,
  json: `{"symbol":"${symbol}","last_price":${price}}`,
})

describe('StreamHub', () => {
  it('passes each snapshot to the subscribers of its symbol and channel only, one flush per batch', () => {
    const hub = new StreamHub()
    const a = recorder()
    const b = recorder()
    hub.subscribe(a, 'quotes', ['600000.SH', 'AAPL.US'])
    hub.subscribe(b, 'depth', ['600000.SH'])
    hub.publish([quote('600000.SH', 1), quote('AAPL.US', 2), quote('00700.HK', 3)])
    assert.deepEqual(a.flushes, [[quote('600000.SH', 1).json, quote('AAPL.US', 2).json]])
    assert.deepEqual(b.flushes, [])
    hub.unsubscribe(a, 'quotes', ['AAPL.US'])
    hub.publish([quote('AAPL.US', 4)])
    assert.equal(a.flushes.length, 1)
    assert.equal(hub.subscribedPairs('quotes'), 1)
  })

  it('answers a new subscription with the latest snapshot of each symbol that has one', () => {
    const hub = new StreamHub()
    hub.publish([quote('600000.SH', 1), quote('600000.SH', 2)])
    assert.deepEqual(hub.subscribe(recorder(), 'quotes', ['600000.SH', 'AAPL.US']), [quote('600000.SH', 2)])
    assert.deepEqual(hub.subscribe(recorder(), 'depth', ['600000.SH']), [])
  })

  it('passes on nothing older than, or repeating, the latest of its symbol and channel (two instances meet here)', () => {
    const hub = new StreamHub()
    const a = recorder()
    hub.subscribe(a, 'quotes', ['600000.SH'])
    hub.publish([quote('600000.SH', 5)])
    hub.receive({ snapshots: [quote('600000.SH', 4), quote('600000.SH', 5)], publishedMs: 0 })
    hub.receive({ snapshots: [quote('600000.SH', 5, 99)], publishedMs: 0 }) // same time, other figures: a correction
    assert.deepEqual(a.flushes, [[quote('600000.SH', 5).json], [quote('600000.SH', 5, 99).json]])
    assert.equal(hub.counts.stale, 2)
    assert.equal(hub.latest('quotes', '600000.SH')?.json, quote('600000.SH', 5, 99).json)
  })

  it('hands what is published here to the fan-out, and what it receives to no one else', () => {
    const hub = new StreamHub(() => 1000)
    const out: number[] = []
    hub.onPublish((batch) => out.push(batch.snapshots.length, batch.publishedMs))
    hub.publish([quote('600000.SH', 1)])
    hub.receive({ snapshots: [quote('AAPL.US', 1)], publishedMs: 5 })
    assert.deepEqual(out, [1, 1000])
    const seen: string[] = []
    hub.onDelivered((batch, origin, nowMs) => seen.push(`${origin} ${nowMs - batch.publishedMs}`))
    hub.receive({ snapshots: [quote('AAPL.US', 2)], publishedMs: 990 })
    hub.publish([quote('600000.SH', 2)])
    assert.deepEqual(seen, ['remote 10', 'local 0'])
  })
})
