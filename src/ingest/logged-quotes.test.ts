// A logged push comes back as pushed: every number exact (prices that are no short binary fraction,
// cumulative volumes past 2^32), `ext` as given, and in fewer bytes than the pushed objects.
import assert from 'node:assert/strict'
import { it } from 'node:test'
import type { PushedQuote } from '../live/live-feed.js'
import { entryBody, quotesOfEntry } from './logged-quotes.js'

it('a logged push comes back exactly as pushed, ext included, in fewer bytes', () => {
  const quotes: PushedQuote[] = [
    {
      snapshot: {
        symbol: '600519.SH',
        timestamp: 1767576610000,
        lastPrice: 1452.53,
        open: 0.1 + 0.2,
        high: 1455,
        low: 1448.07,
        prevClose: 1449.99,
        volume: 5_000_000_123,
        amount: 7_262_650_178.59,
      },
      ext: { name: '贵州茅台', turnover_rate: 0.0123, halted: false, note: null },
    },
    {
      snapshot: {
        symbol: 'AAPL.US',
        timestamp: 1767576611001,
        lastPrice: 271.4,
        open: 0,
        high: 0,
        low: 0,
        prevClose: 270.01,
        volume: 0,
        amount: 0,
      },
    },
  ]
  const body = entryBody(quotes)
  assert.deepEqual(quotesOfEntry(body), quotes)
  assert.ok(
    body.length < JSON.stringify(quotes).length * 0.75,
    `${body.length} against ${JSON.stringify(quotes).length}`,
  )
})
