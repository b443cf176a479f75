/** @module An ingest listener (as mdq serve --ingest-port builds it) beside a test server's public app, over the same store, on a loopback port. */
import type { FastifyInstance } from 'fastify'
import type { QuoteSnapshot } from '../../src/domain/minute-bars.js'
import { ingestApp } from '../../src/cli/ingest-listener.js'
import type { HttpLimits } from '../../src/http/limits.js'
import { Metrics } from '../../src/http/observability.js'
import { streamFeed } from '../../src/live/feed-snapshots.js'
import { InProcessLiveFeed, type LiveEvent } from '../../src/live/live-feed.js'
import type { StreamHub } from '../../src/live/stream-hub.js'
import { newKey, type TestServer } from './server.js'

export interface TestIngest {
  readonly url: string
  readonly app: FastifyInstance
  readonly feed: InProcessLiveFeed
  /** The listener's metrics, counted as mdq serve counts them. */
  readonly metrics: Metrics
  /** Every batch of events published, in order. */
  readonly published: (readonly LiveEvent[])[]
  /** A key of scope ingest. */
  readonly key: string
  close(): Promise<void>
}

/** `hub`: the streams what is accepted goes out on, as `mdq serve` wires them (the server's, given in its `live` option). */
export async function startIngest(
  server: TestServer,
  limits: Partial<HttpLimits> = {},
  hub?: StreamHub,
): Promise<TestIngest> {
  const feed = new InProcessLiveFeed()
  const published: (readonly LiveEvent[])[] = []
  feed.subscribe((events) => published.push(events))
  if (hub) streamFeed(feed, hub)
  const metrics = new Metrics()
  const at = server.location && { store: server.location } // SQLite: pushes written on the ingest thread, as mdq serve does
  const { app } = await ingestApp({ store: server.store, at, keys: server.keys, feed, metrics, logger: false, limits })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  return {
    url: `http://127.0.0.1:${port}`,
    app,
    feed,
    metrics,
    published,
    key: await newKey(server.keys, 'feed', {}, 'ingest'),
    close: () => app.close(),
  }
}

/** A snapshot as a feed pushes it to POST /v1/ingest/quotes (TickFlow's Quote fields). */
export const pushedQuote = (q: QuoteSnapshot) => ({
  symbol: q.symbol,
  timestamp: q.timestamp,
  last_price: q.lastPrice,
  open: q.open,
  high: q.high,
  low: q.low,
  prev_close: q.prevClose,
  volume: q.volume,
  amount: q.amount,
})
