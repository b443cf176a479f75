/** @module The entry of the ingest thread (ingest-thread.ts): a LiveIngest over its own store connection, one push (or fold step) at a time. */
import { workerData } from 'node:worker_threads'
import { MdqError } from '../domain/errors.js'
import { errorData } from '../runner/query-runner.js'
import { lowerThreadPriority } from '../runner/thread-priority.js'
import { serveTasks, type TaskResult } from '../runner/worker-pool.js'
import { openMarketInWorker } from '../store/backends.js'
import { quotesPushed, type IngestReply, type IngestTask, type IngestThreadConfig } from './ingest-thread.js'
import { LiveIngest } from './live-ingest.js'

/**
 * The ingest thread's nice value: when reads want both cores, its writes wait (a waking query or
 * request thread takes the CPU from it at once), so a feed lengthens answers less; with the CPU to
 * spare it runs as fast as before. At nice 10 it still gets about a tenth of a core against two busy
 * threads: thousands of snapshots a second, many times a whole market's level-1 cadence.
 */
const INGEST_NICE = 10
lowerThreadPriority(INGEST_NICE)

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
