/** @module The entry of the ingest thread (ingest-thread.ts): a LiveIngest over its own store connection, one push (or fold step) at a time. */
import { workerData } from 'node:worker_threads'
import { MdqError } from '../domain/errors.js'
import type { LiveEvent } from '../live/live-feed.js'
import { errorData } from '../runner/query-runner.js'
import { serveTasks, type TaskResult } from '../runner/worker-pool.js'
import { openMarketInWorker } from '../store/backends.js'
import type { MarketStore } from '../store/market-store.js'
import type { IngestReply, IngestTask, IngestThreadConfig } from './ingest-thread.js'
import { LiveIngest } from './live-ingest.js'

/** What the push being run published (the pool runs one task at a time here): it goes back with its outcome. */
let published: readonly LiveEvent[] = []
const feed = { publish: (events: readonly LiveEvent[]) => void (published = events) }

let opened: Promise<{ store: MarketStore; ingest: LiveIngest }> | undefined
async function open({ store: at, keys }: IngestThreadConfig) {
  const store = await openMarketInWorker(at, keys)
  return { store, ingest: new LiveIngest(store, feed) }
}

async function run(task: IngestTask): Promise<TaskResult<IngestReply>> {
  published = []
  try {
    opened ??= open(workerData as IngestThreadConfig)
    opened.catch(() => (opened = undefined)) // a store that comes back is opened on the next push
    const { store, ingest } = await opened
    if (task.kind === 'fold') return { result: { more: (await store.foldAppends?.()) ?? false } }
    const outcome =
      task.kind === 'quotes'
        ? await ingest.pushQuotes(task.rows)
        : task.kind === 'bars'
          ? await ingest.pushBars(task.rows)
          : await ingest.pushDepth(task.rows)
    return { result: { outcome, events: published } }
  } catch (err) {
    if (err instanceof MdqError) return { result: { error: errorData(err) } }
    throw err
  }
}

serveTasks(run)
