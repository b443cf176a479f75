/**
 * @module One phase of the fan-out bench: the clients connect to both instances, the feed is pushed
 * to the first one on its schedule (each push sent at its time whether or not the previous one has
 * been answered, as a feed does), each server's RSS is sampled and the stalled client reopened
 * whenever the server drops it; then what each instance's clients received, and when.
 */
import { createHistogram, monitorEventLoopDelay, performance, type RecordableHistogram } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { pushBody, pushCount, type FanoutFeed } from './fanout-feed.js'
import { Fleet, type FleetOptions } from './fanout-fleet.js'
import { cpuMs, cpuWaitMs, residentBytes } from './measure.js'

/** Two instances sharing one Redis, as the bench sees them: mdq, or the bare baseline. */
export interface Relay {
  /** Instance A's push endpoint (its ingest listener's base URL). */
  readonly pushUrl: string
  /** The stream servers' base URLs, A first. */
  readonly bases: readonly string[]
  /** Their process ids. */
  readonly pids: readonly number[]
  /** Clients instance A has closed for being too slow, so far (none for a relay that never closes one). */
  readonly dropped: () => Promise<number>
}

export interface InstanceResult {
  readonly p50Ms: number
  readonly p99Ms: number
  readonly maxMs: number
  readonly timed: number
  readonly totals: ReturnType<Fleet['totals']>
  /** Share of one core over the pushes. */
  readonly cpu: number
  /** Ms per second its main thread was ready to run and waited for a core. */
  readonly waitPerS: number
  /** Resident set samples (bytes; all, and anonymous), one every `SAMPLE_MS` from the first push. */
  readonly rss: readonly number[]
  readonly anon: readonly number[]
}

export interface PhaseResult {
  readonly instances: readonly InstanceResult[]
  readonly answerP50Ms: number
  readonly answerP99Ms: number
  /** The latest any push was sent after its time (the bench falling behind its own schedule). */
  readonly lateMaxMs: number
  /** Seconds from the first push at which instance A closed the stalled client. */
  readonly stalledDrops: readonly number[]
  readonly redisCpu: number
  /** The bench process's own share of one core, and its event loop's p99 delay (ms): the clients' own lag. */
  readonly benchCpu: number
  readonly benchWaitPerS: number
  readonly loopP99Ms: number
  readonly caughtUp: boolean
}

export const SAMPLE_MS = 5000
const DRAIN_MS = 15_000
const LOOP_RESOLUTION_MS = 10

const ms = (h: RecordableHistogram, p: number) => (h.count === 0 ? NaN : h.percentile(p) / 1000)

/** Pushes the whole feed to `relay` with the fleet and the stalled client connected, and measures. */
export async function runPhase(
  feed: FanoutFeed,
  relay: Relay,
  keys: { readonly read: string; readonly push: string },
  redisPid: number,
  opts: FleetOptions,
): Promise<PhaseResult> {
  const pushedAt = new Float64Array(pushCount(feed))
  const fleet = await Fleet.open(feed, relay.bases, keys.read, pushedAt, opts)
  const stalled = Fleet.stalled(relay.bases[0], keys.read, feed.symbols)
  await stalled.open()
  const answers = createHistogram()
  const loop = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS })
  const rss: number[][] = relay.pids.map(() => [])
  const anon: number[][] = relay.pids.map(() => [])
  const sampleMemory = () =>
    relay.pids.forEach((pid, i) => {
      const m = residentBytes(pid)
      rss[i].push(m.rss)
      anon[i].push(m.anon)
    })
  const stalledDrops: number[] = []
  let droppedSoFar = await relay.dropped()
  let failure: unknown
  let lateMaxMs = 0

  const start = performance.now() + 200
  let sampling = Promise.resolve()
  const sample = async () => {
    sampleMemory()
    const dropped = await relay.dropped()
    if (dropped > droppedSoFar) {
      droppedSoFar = dropped
      stalledDrops.push((performance.now() - start) / 1000)
      await stalled.open() // the next client that never reads
    }
  }
  const sampler = setInterval(() => {
    sampling = sampling.then(sample).catch((err: unknown) => void (failure ??= err))
  }, SAMPLE_MS)
  const cpu0 = relay.pids.map((pid) => cpuMs(pid))
  const wait0 = [...relay.pids, process.pid].map((pid) => cpuWaitMs(pid))
  const redis0 = cpuMs(redisPid)
  const bench0 = process.cpuUsage()
  loop.enable()
  const pending: Promise<void>[] = []
  await sleep(start - performance.now())
  sampleMemory()
  for (let push = 0; push < pushedAt.length && failure === undefined; push++) {
    const body = pushBody(feed, push)
    const due = start + push * feed.pushMs
    if (due > performance.now()) await sleep(due - performance.now())
    const sent = (pushedAt[push] = performance.now())
    lateMaxMs = Math.max(lateMaxMs, sent - due)
    pending.push(
      fetch(`${relay.pushUrl}/v1/ingest/quotes`, {
        method: 'POST',
        headers: { 'X-API-Key': keys.push, 'Content-Type': 'application/json' },
        body,
      })
        .then(async (r) => {
          const text = await r.text()
          if (r.status !== 200) throw new Error(`push ${push}: ${r.status} ${text}`)
          answers.record(Math.max(1, Math.round((performance.now() - sent) * 1000)))
        })
        .catch((err: unknown) => void (failure ??= err)),
    )
  }
  await Promise.all(pending)
  const pushedMs = performance.now() - start
  const cpu = relay.pids.map((pid, i) => (cpuMs(pid) - cpu0[i]) / pushedMs)
  const waits = [...relay.pids, process.pid].map((pid, i) => ((cpuWaitMs(pid) - wait0[i]) / pushedMs) * 1000)
  const redisCpu = (cpuMs(redisPid) - redis0) / pushedMs
  const used = process.cpuUsage(bench0)
  const benchCpu = (used.user + used.system) / 1000 / pushedMs
  loop.disable()
  clearInterval(sampler)
  await sampling
  if (failure !== undefined) throw failure
  const drainUntil = performance.now() + DRAIN_MS
  while (!fleet.caughtUp() && performance.now() < drainUntil) await sleep(100)
  const caughtUp = fleet.caughtUp()
  fleet.finish()
  stalled.close()
  return {
    instances: relay.bases.map((_, i) => ({
      p50Ms: ms(fleet.latency[i], 50),
      p99Ms: ms(fleet.latency[i], 99),
      maxMs: fleet.latency[i].count === 0 ? NaN : fleet.latency[i].max / 1000,
      timed: fleet.latency[i].count,
      totals: fleet.totals(i),
      cpu: cpu[i],
      waitPerS: waits[i],
      rss: rss[i],
      anon: anon[i],
    })),
    answerP50Ms: ms(answers, 50),
    answerP99Ms: ms(answers, 99),
    lateMaxMs,
    stalledDrops,
    redisCpu,
    benchCpu,
    benchWaitPerS: waits[relay.pids.length],
    // The histogram holds whole timer intervals: the delay is what passes the timer's own.
    loopP99Ms: loop.percentile(99) / 1e6 - LOOP_RESOLUTION_MS,
    caughtUp,
  }
}
