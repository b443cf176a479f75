/** @module The live half of `mdq serve`: the ingest listener (`--ingest-port`) and the store's background upkeep of appends. */
import type { FastifyBaseLogger, FastifyInstance, FastifyServerOptions } from 'fastify'
import { buildIngestApp } from '../http/ingest-app.js'
import type { HttpLimits } from '../http/limits.js'
import type { Metrics } from '../http/observability.js'
import { ThreadedIngest } from '../ingest/ingest-thread.js'
import { countedIngest, LiveIngest, publishingIngest } from '../ingest/live-ingest.js'
import type { LiveFeed } from '../live/live-feed.js'
import type { StoreLocation } from '../store/backends.js'
import type { KeyStore } from '../store/key-store.js'
import type { IngestLog, MarketStore } from '../store/market-store.js'

/** Between upkeep steps while there is more to do, and when there was none. */
const STEP_MS = 50
const IDLE_MS = 1000

export interface IngestListenerOptions {
  readonly store: MarketStore
  /**
   * Where `store` is (and its keys, when given apart): a store whose writes hold the thread is then
   * written on a thread of its own, so that pushes never stall the public API's answers.
   */
  readonly at?: { readonly store: StoreLocation; readonly keys?: StoreLocation }
  readonly keys: KeyStore
  readonly feed: LiveFeed
  readonly metrics: Metrics
  readonly logger: FastifyServerOptions['logger']
  readonly limits?: Partial<HttpLimits>
  /** Quote pushes answered once logged (in `ingestLog`, else the store's: MarketStore.ingestLog), their bars written behind. */
  readonly logged?: boolean
  /** Logged pushes: a write behind at most this often while they keep coming (LiveIngest `writeEveryMs`). */
  readonly writeEveryMs?: number
  /** Logged pushes: the log they go in, when not the store's. */
  readonly ingestLog?: IngestLog
  /** The ingest thread's nice value (a store whose writes hold the thread: SQLite). */
  readonly nice?: number
}

/**
 * How long a group of quote pushes waits for the pushers the write before it answered (LiveIngest
 * `gatherMs`), where a write waits on a server (not SQLite's, which never waits): on loopback a
 * pusher's next push arrives and is parsed within a few ms, where a write to a server takes tens of ms.
 */
const GATHER_MS = 5

/**
 * The ingest app, its pushes counted into the server's metrics and published to `feed`; and where
 * the store's upkeep of appends runs when the ingest has a thread of its own (`foldAppends`).
 */
export async function ingestApp(
  o: IngestListenerOptions,
): Promise<{ readonly app: FastifyInstance; readonly foldAppends?: () => Promise<boolean> }> {
  const ingestLog = o.logged ? (o.ingestLog ?? o.store.ingestLog) : undefined // serve refuses `logged` without one
  const threaded =
    o.at && o.store.capabilities.blockingReads ? new ThreadedIngest({ ...o.at, nice: o.nice }) : undefined
  const live = threaded
    ? undefined
    : new LiveIngest(o.store, {
        gatherMs: o.store.capabilities.blockingReads ? 0 : GATHER_MS,
        ...(ingestLog && { ingestLog, writeEveryMs: o.writeEveryMs ?? 0 }),
      })
  const writes = threaded ?? live!
  const ingest = countedIngest(publishingIngest(writes, o.feed), {
    rows: (kind, n) => o.metrics.ingestRows.inc({ kind }, n),
    ignored: (reason, n) => o.metrics.ingestIgnored.inc({ reason }, n),
  })
  const app = await buildIngestApp({ ingest, keys: o.keys, metrics: o.metrics, logger: o.logger, limits: o.limits })
  if (threaded) app.addHook('onClose', threaded.close)
  if (ingestLog && live) {
    const log = app.log
    live.onWriteFailed((err) => {
      o.metrics.ingestWriteFailures.inc()
      log.warn({ err }, 'writing logged pushes failed; retrying')
    })
    o.metrics.watchWriteBehind(() => live.unwrittenSymbols)
    // What an ingest killed before writing left in the log is written now, not at the first push.
    void live
      .recover()
      .catch((err: unknown) => log.warn({ err }, 'replaying the ingest log failed; retried at the first push'))
    // Pushes answered are written before the store closes (else at the next start, from the log).
    app.addHook('onClose', () => live.settled().catch(() => undefined))
  }
  return { app, ...(threaded && { foldAppends: threaded.foldAppends }) }
}

/**
 * Runs the store's upkeep of appends (MarketStore.foldAppends, or `fold` where it runs elsewhere) in
 * steps until stopped: a failed step (the store busy or away) is logged once per kind and tried again later.
 */
export function keepFoldingAppends(
  store: MarketStore,
  log: FastifyBaseLogger,
  fold = store.foldAppends?.bind(store),
): () => Promise<void> {
  if (fold === undefined) return async () => {}
  let stopped = false
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> = Promise.resolve()
  let lastFailure = ''
  const step = () => {
    running = fold()
      .then(
        (more) => {
          lastFailure = ''
          return more
        },
        (err: unknown) => {
          const reason = err instanceof Error ? err.message : String(err)
          if (reason !== lastFailure) log.warn({ reason }, 'folding appends failed; retrying')
          lastFailure = reason
          return false
        },
      )
      .then((more) => {
        if (!stopped) timer = setTimeout(step, more ? STEP_MS : IDLE_MS)
      })
  }
  timer = setTimeout(step, IDLE_MS)
  return async () => {
    stopped = true
    clearTimeout(timer)
    await running
  }
}
