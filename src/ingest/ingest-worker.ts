/** @module The entry of the ingest thread (ingest-thread.ts): a LiveIngest over its own store connection, one push (or fold step) at a time. */
import { workerData } from 'node:worker_threads'
import { MdqError } from '../domain/errors.js'
import { errorData } from '../runner/query-runner.js'
import { lowerThreadPriority } from '../runner/thread-priority.js'
import { serveTasks, type TaskResult } from '../runner/worker-pool.js'
import { openMarketInWorker } from '../store/backends.js'
import { quotesPushed, type IngestReply, type IngestTask, type IngestThreadConfig } from './ingest-thread.js'
import { LiveIngest } from './live-ingest.js'

// A lower priority (serve --ingest-nice): reads that want the CPU take it from the ingest at once.
const { nice } = workerData as IngestThreadConfig
if (nice) lowerThreadPriority(nice)

let opened: Promise<LiveIngest> | undefined
async function open({ store, keys }: IngestThreadConfig) {
  return new LiveIngest(await openMarketInWorker(store, keys))
}

async function run(task: IngestTask): Promise<TaskResult<IngestReply>> {
  try {
    opened ??= open(workerData as IngestThreadConfig)
    opened.catch(() => (opened = undefined)) // a store that comes back is opened on the next push
    const ingest = await opened
    if (task.kind === 'fold') return { result: { more: await ingest.foldStep() } }
    if (task.kind === 'quotes') return { result: quotesPushed(await ingest.writeQuotes(task.rows), task.rows) }
    const pushed = task.kind === 'bars' ? await ingest.writeBars(task.rows) : await ingest.writeDepth(task.rows)
    return { result: pushed }
  } catch (err) {
    if (err instanceof MdqError) return { result: { error: errorData(err) } }
    throw err
  }
}

serveTasks(run)
