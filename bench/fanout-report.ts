/** @module The fan-out bench's printed figures: each phase per instance, then the summary beside the goals. */
import { SAMPLE_MS, type InstanceResult, type RelayResult, type RunResult } from './fanout-run.js'

export const GOAL_P99_MS = 50

const mb = (bytes: number) => `${Math.round(bytes / 2 ** 20)}`
const ms = (x: number) => x.toFixed(1)
const pct = (share: number) => `${Math.round(share * 100)}%`
const count = (n: number) => n.toLocaleString('en-US')

function line(label: string, ...cells: string[]): void {
  console.log(label.padEnd(44) + cells.map((c) => c.padEnd(30)).join(''))
}

const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]

/**
 * First, highest and last sample in MB; flat when, past the first fifth (warming up), the second
 * half's median is within 10% of the first half's: a leak moves the median up through the run,
 * while a client dropped and replaced again and again makes a sawtooth around a steady one.
 */
export function memoryOf(samples: readonly number[]): { text: string; flat: boolean } {
  const settled = samples.slice(Math.floor(samples.length / 5))
  const half = Math.floor(settled.length / 2)
  const flat = median(settled.slice(half)) <= 1.1 * median(settled.slice(0, half))
  return { text: `${mb(samples[0])} / ${mb(Math.max(...samples))} / ${mb(samples.at(-1)!)} MB`, flat }
}

/** The lowest sample of each whole minute in MB: for a heap, about what the collections leave alive. */
function minuteLows(samples: readonly number[]): string {
  const perMinute = 60_000 / SAMPLE_MS
  const lows: string[] = []
  for (let at = 0; at + perMinute <= samples.length; at += perMinute)
    lows.push(mb(Math.min(...samples.slice(at, at + perMinute))))
  return lows.join(' ')
}

export function printRelay(name: string, r: RelayResult): void {
  console.log(`\n${name}`)
  line('', 'A', 'B')
  const each = (label: string, f: (i: InstanceResult) => string) => line(label, ...r.instances.map(f))
  each('push -> receive p50 / p99 / max (ms)', (i) => `${ms(i.p50Ms)} / ${ms(i.p99Ms)} / ${ms(i.maxMs)}`)
  each('snapshots timed', (i) => count(i.timed))
  each('received / gaps / reordered / strays', (i) => {
    const t = i.totals
    return `${count(t.received)} / ${t.gaps} / ${t.reordered} / ${t.strays}`
  })
  each('their streams closed by the server', (i) =>
    i.totals.closed.length === 0 ? 'none' : i.totals.closed.join('; '),
  )
  each('server CPU (of one core)', (i) => pct(i.cpu))
  each('main thread waiting for a core (ms/s)', (i) => i.waitPerS.toFixed(0))
  each(`RSS first / max / last (every ${SAMPLE_MS / 1000} s)`, (i) => memoryOf(i.rss).text)
  each('  of it anonymous (no mapped files)', (i) => memoryOf(i.anon).text)
  r.instances.forEach((i, k) => console.log(`  anonymous MB on ${'AB'[k]}: ${i.anon.map(mb).join(' ')}`))
  if (r.instances[0].heap.length > 0) each('V8 heap in use, lowest each minute (MB)', (i) => minuteLows(i.heap))
  line('push answered p50 / p99 (ms)', `${ms(r.answerP50Ms)} / ${ms(r.answerP99Ms)}`)
  line('stalled client closed at (s)', r.stalledDrops.map((s) => s.toFixed(0)).join(', ') || 'never')
  line('every client caught up at the end', r.caughtUp ? 'yes' : 'no')
}

/** What both relays shared: Redis, and the bench process that pushes and receives. */
export function printShared(r: RunResult): void {
  console.log('')
  line('Redis CPU / bench CPU (of one core)', `${pct(r.redisCpu)} / ${pct(r.benchCpu)}`)
  line('bench waiting for a core (ms/s)', r.benchWaitPerS.toFixed(0))
  line('bench event loop p99 / latest push (ms)', `${ms(r.loopP99Ms)} / ${ms(r.lateMaxMs)}`)
}

export function printSummary(mdq: RelayResult, bare: RelayResult): void {
  console.log('')
  line('summary', 'mdq', 'bare relay (same run)', 'goal', 'met?')
  for (const [i, name] of ['A', 'B'].entries()) {
    const m = mdq.instances[i]
    const b = bare.instances[i]
    line(
      `p50 / p99 push -> receive on ${name} (ms)`,
      `${ms(m.p50Ms)} / ${ms(m.p99Ms)}`,
      `${ms(b.p50Ms)} / ${ms(b.p99Ms)}`,
      `p99 <= ${GOAL_P99_MS} ms`,
      m.p99Ms <= GOAL_P99_MS ? 'met' : 'missed',
    )
    line(`server CPU on ${name}`, pct(m.cpu), pct(b.cpu))
    line(`  waiting for a core on ${name} (ms/s)`, m.waitPerS.toFixed(0), b.waitPerS.toFixed(0))
    line(`RSS on ${name} first / max / last`, memoryOf(m.rss).text, memoryOf(b.rss).text)
    const anon = memoryOf(m.anon)
    line(`  anonymous`, anon.text, memoryOf(b.anon).text, 'flat', anon.flat ? 'met' : 'missed')
    line(`  V8 heap in use, lowest each minute`, `${minuteLows(m.heap)} MB`)
    const t = m.totals
    line(
      `gaps / reordered on ${name} (clients keeping up)`,
      `${t.gaps} / ${t.reordered}`,
      `${b.totals.gaps} / ${b.totals.reordered}`,
      '0 / 0',
      t.gaps + t.reordered + t.strays === 0 && t.closed.length === 0 ? 'met' : 'missed',
    )
  }
}
