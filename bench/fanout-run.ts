/**
 * @module The fan-out bench's run: mdq and the bare baseline side by side, so that both meet the same
 * moments of a shared machine. Each gets its own clients on both its instances; the feed is pushed to
 * the instance A of each on its schedule (each push sent at its time whether or not the previous one
 * has been answered, as a feed does, to each relay in turn, alternating who goes first); each server's
 * resident memory is sampled and each stalled client reopened whenever its server drops it; then
 * what each instance's clients received, and when.
 */
import { createHistogram, monitorEventLoopDelay, performance, type RecordableHistogram } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { pushBody, pushCount, type FanoutFeed } from './fanout-feed.js'
import { Fleet, type FleetOptions, type StalledClient } from './fanout-fleet.js'
import { cpuMs, cpuWaitMs, residentBytes } from './measure.js'

/** Two instances sharing one Redis, as the bench sees them: mdq, or the bare baseline. */
export interface Relay {
  /** Instance A's push endpoint (its ingest listener's base URL). */
  readonly pushUrl: string
  /** The stream servers' base URLs, A first. */
  readonly bases: readonly string[]
  /** Their process ids. */
  readonly pids: readonly number[]
  /** The key pushes carry. */
  readonly pushKey: string
  /** Clients instance A has closed for being too slow, so far (none for a relay that never closes one). */
  readonly dropped: () => Promise<number>
  /** Bytes of V8 heap in use on an instance now, when it tells (mdq's /metrics). */
  readonly heapUsed?: (instance: number) => Promise<number>
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
  /** V8 heap in use at the same moments, when the relay tells (its lows are what collections leave). */
  readonly heap: readonly number[]
}

export interface RelayResult {
  readonly instances: readonly InstanceResult[]
  readonly answerP50Ms: number
  readonly answerP99Ms: number
  /** Seconds from the first push at which instance A closed the stalled client. */
  readonly stalledDrops: readonly number[]
  /** Every client that keeps up had its last cycle of every symbol within the drain time. */
  readonly caughtUp: boolean
}

export interface RunResult {
  /** Per relay, in the order given. */
  readonly relays: readonly RelayResult[]
  /** The latest any push was sent after its time (the bench falling behind its own schedule). */
  readonly lateMaxMs: number
  readonly redisCpu: number
  /** The bench process's own share of one core, and its event loop's p99 delay (ms): the clients' own lag. */
  readonly benchCpu: number
  readonly benchWaitPerS: number
  readonly loopP99Ms: number
}

export const SAMPLE_MS = 5000
const DRAIN_MS = 15_000
const LOOP_RESOLUTION_MS = 10

const ms = (h: RecordableHistogram, p: number) => (h.count === 0 ? NaN : h.percentile(p) / 1000)

/** One relay's clients, pushes and samples through the run. */
class RelayRun {
  readonly answers = createHistogram()
  readonly rss: number[][]
  readonly anon: number[][]
  readonly heap: number[][]
  readonly stalledDrops: number[] = []
  #droppedSoFar = 0
  #cpu0: number[] = []
  #wait0: number[] = []

  private constructor(
    readonly relay: Relay,
    /** When each push was sent (performance.now()): the fleet times each snapshot from it. */
    readonly pushedAt: Float64Array,
    readonly fleet: Fleet,
    readonly stalled: StalledClient,
  ) {
    this.rss = relay.pids.map(() => [])
    this.anon = relay.pids.map(() => [])
    this.heap = relay.pids.map(() => [])
  }

  static async open(feed: FanoutFeed, relay: Relay, readKey: string, opts: FleetOptions): Promise<RelayRun> {
    const pushedAt = new Float64Array(pushCount(feed))
    const fleet = await Fleet.open(feed, relay.bases, readKey, pushedAt, opts)
    const stalled = Fleet.stalled(relay.bases[0], readKey, feed.symbols)
    await stalled.open()
    const run = new RelayRun(relay, pushedAt, fleet, stalled)
    run.#droppedSoFar = await relay.dropped()
    return run
  }

  async begin(): Promise<void> {
    this.#cpu0 = this.relay.pids.map((pid) => cpuMs(pid))
    this.#wait0 = this.relay.pids.map((pid) => cpuWaitMs(pid))
    await this.sampleMemory()
  }

  async sampleMemory(): Promise<void> {
    const { pids, heapUsed } = this.relay
    for (const [i, pid] of pids.entries()) {
      const m = residentBytes(pid)
      this.rss[i].push(m.rss)
      this.anon[i].push(m.anon)
      if (heapUsed !== undefined) this.heap[i].push(await heapUsed(i))
    }
  }

  /** A new client that never reads, once the server has dropped the last one. */
  async replaceStalled(atS: number): Promise<void> {
    const dropped = await this.relay.dropped()
    if (dropped <= this.#droppedSoFar) return
    this.#droppedSoFar = dropped
    this.stalledDrops.push(atS)
    await this.stalled.open()
  }

  async push(push: number, body: string): Promise<void> {
    const sent = (this.pushedAt[push] = performance.now())
    const r = await fetch(`${this.relay.pushUrl}/v1/ingest/quotes`, {
      method: 'POST',
      headers: { 'X-API-Key': this.relay.pushKey, 'Content-Type': 'application/json' },
      body,
    })
    const text = await r.text()
    if (r.status !== 200) throw new Error(`push ${push}: ${r.status} ${text}`)
    this.answers.record(Math.max(1, Math.round((performance.now() - sent) * 1000)))
  }

  /** CPU share and waits per second over the pushes, read as they end. */
  usage(pushedMs: number): { cpu: number[]; waits: number[] } {
    return {
      cpu: this.relay.pids.map((pid, i) => (cpuMs(pid) - this.#cpu0[i]) / pushedMs),
      waits: this.relay.pids.map((pid, i) => ((cpuWaitMs(pid) - this.#wait0[i]) / pushedMs) * 1000),
    }
  }

  result(usage: { cpu: number[]; waits: number[] }, caughtUp: boolean): RelayResult {
    const { fleet } = this
    return {
      instances: this.relay.bases.map((_, i) => ({
        p50Ms: ms(fleet.latency[i], 50),
        p99Ms: ms(fleet.latency[i], 99),
        maxMs: fleet.latency[i].count === 0 ? NaN : fleet.latency[i].max / 1000,
        timed: fleet.latency[i].count,
        totals: fleet.totals(i),
        cpu: usage.cpu[i],
        waitPerS: usage.waits[i],
        rss: this.rss[i],
        anon: this.anon[i],
        heap: this.heap[i],
      })),
      answerP50Ms: ms(this.answers, 50),
      answerP99Ms: ms(this.answers, 99),
      stalledDrops: this.stalledDrops,
      caughtUp,
    }
  }
}

/** Pushes the whole feed to every relay with its clients and its stalled client connected, and measures. */
export async function runSideBySide(
  feed: FanoutFeed,
  relays: readonly Relay[],
  readKey: string,
  redisPid: number,
  opts: FleetOptions,
): Promise<RunResult> {
  const runs: RelayRun[] = []
  for (const relay of relays) runs.push(await RelayRun.open(feed, relay, readKey, opts))
  const loop = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS })
  let failure: unknown
  let lateMaxMs = 0
  const start = performance.now() + 200
  let sampling = Promise.resolve()
  const sample = async () => {
    for (const run of runs) {
      await run.sampleMemory()
      await run.replaceStalled((performance.now() - start) / 1000)
    }
  }
  const sampler = setInterval(() => {
    sampling = sampling.then(sample).catch((err: unknown) => void (failure ??= err))
  }, SAMPLE_MS)
  await sleep(start - performance.now())
  for (const run of runs) await run.begin()
  const wait0 = cpuWaitMs(process.pid)
  const redis0 = cpuMs(redisPid)
  const bench0 = process.cpuUsage()
  loop.enable()
  const pending: Promise<void>[] = []
  for (let push = 0; push < pushCount(feed) && failure === undefined; push++) {
    const body = pushBody(feed, push)
    const due = start + push * feed.pushMs
    if (due > performance.now()) await sleep(due - performance.now())
    lateMaxMs = Math.max(lateMaxMs, performance.now() - due)
    for (let r = 0; r < runs.length; r++)
      pending.push(runs[(push + r) % runs.length].push(push, body).catch((err: unknown) => void (failure ??= err)))
  }
  await Promise.all(pending)
  const pushedMs = performance.now() - start
  const usages = runs.map((run) => run.usage(pushedMs))
  const benchWaitPerS = ((cpuWaitMs(process.pid) - wait0) / pushedMs) * 1000
  const redisCpu = (cpuMs(redisPid) - redis0) / pushedMs
  const used = process.cpuUsage(bench0)
  loop.disable()
  clearInterval(sampler)
  await sampling
  if (failure !== undefined) throw failure
  const drainUntil = performance.now() + DRAIN_MS
  while (!runs.every((run) => run.fleet.caughtUp()) && performance.now() < drainUntil) await sleep(100)
  const results = runs.map((run, i) => run.result(usages[i], run.fleet.caughtUp()))
  for (const run of runs) {
    run.fleet.finish()
    run.stalled.close()
  }
  return {
    relays: results,
    lateMaxMs,
    redisCpu,
    benchCpu: (used.user + used.system) / 1000 / pushedMs,
    benchWaitPerS,
    // The histogram holds whole timer intervals: the delay is what passes the timer's own.
    loopP99Ms: loop.percentile(99) / 1e6 - LOOP_RESOLUTION_MS,
  }
}
