/**
 * @module `mdq start --live`: the store's latest day of 1m bars of the demo's symbols replayed as
 * today's quotes into the server's own ingest listener, through HTTP as any feed pushes, so the demo
 * shows a live market. Each symbol's day is stamped as the latest weekday up to today in its market.
 */
import { generateKey, hashKey } from '../auth/api-keys.js'
import { DEMO_SPECS } from '../demo/demo-data.js'
import type { QuoteSnapshot } from '../domain/minute-bars.js'
import { pushQuotes } from '../replay/ingest-client.js'
import { paced } from '../replay/pacer.js'
import { planReplay } from '../replay/replay-plan.js'
import { openKeyStore, withStores, type StoreLocation } from '../store/backends.js'

export interface DemoFeedOptions {
  readonly store: StoreLocation
  readonly keys?: StoreLocation
  /** The running server's ingest listener. */
  readonly ingestUrl: string
  /** Times real speed. */
  readonly speed: number
  readonly log: (line: string) => void
  readonly now?: () => number
}

/**
 * Plans the replay, makes a key of scope ingest for it (revoked once the day is played), and pushes
 * the snapshots as their time comes; resolves when the day is played.
 */
export async function runDemoFeed(o: DemoFeedOptions): Promise<void> {
  const now = o.now ?? Date.now
  const symbols = DEMO_SPECS.map((s) => s.symbol)
  const snapshots: QuoteSnapshot[] = await withStores({ store: o.store, keys: o.keys, create: false }, (s) =>
    planReplay(s.market, { symbols, latestDays: 1, endingOn: now(), perMinute: 3 }),
  )
  const keys = await openKeyStore({ store: o.store, keys: o.keys })
  const key = generateKey()
  const made = await keys.createKey({
    name: 'demo feed',
    hash: hashKey(key),
    scope: 'ingest',
    ratePerMin: null,
    burst: null,
  })
  try {
    o.log(
      `Live demo: replaying the latest day of ${symbols.join(', ')} as today's quotes at ${o.speed}x into ${o.ingestUrl}`,
    )
    const total = { accepted: 0, ignored: 0 }
    for await (const batch of paced(snapshots, { speed: o.speed, batch: 500 })) {
      const c = await pushQuotes(o.ingestUrl, key, batch, (failure, waitMs) =>
        o.log(`Live demo: a push failed (${failure}); sending it again in ${waitMs} ms`),
      )
      total.accepted += c.accepted
      total.ignored += c.stale + c.duplicate
    }
    o.log(`Live demo: the day is played (${total.accepted} snapshots taken, ${total.ignored} already there)`)
  } finally {
    await keys.revokeKey(made.id)
    await keys.close()
  }
}
