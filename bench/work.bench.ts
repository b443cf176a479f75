// The work a query worker does per bar of the bulk daily pull, in-process (no HTTP, no pool): batch
// tasks of whole forward-adjusted daily histories (one symbol a task, as the pool cuts them) through taskPieces (read, decode,
// prev_close, adjust, JSON), then what the worker does with the pieces (one buffer of its own; or one
// Huffman-only deflate piece for gzip, copied into one buffer too), each step's share apart: SQLite read + chunk decode alone,
// readKlines (+ prev_close and adjust), the answer's JSON, the copy, the deflate.
// Baseline in the same run: BENCH_BASELINE=/path/to/other/dist (e.g. /work/main/dist) runs that build's
// taskPieces and deflatePiece on the same tasks, rounds alternating.
// Run: npm run bench -- work   (BENCH_ROUNDS=3, BENCH_BATCHES=10 requests' symbols, BENCH_GROUP=1 symbol a task; MDQ_BENCH_SYMBOLS picks the store;
// BENCH_ONLY=gzip keeps the steps named so, beside the read)
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import type { deflatePiece as DeflatePiece } from '../src/encode/gzip-member.js'
import { deflatePiece } from '../src/encode/gzip-member.js'
import type { BatchTask, taskPieces as TaskPieces } from '../src/runner/query-runner.js'
import { taskPieces } from '../src/runner/query-runner.js'
import { openStores } from '../src/store/backends.js'
import { barCount } from '../src/domain/bars.js'
import { readKlines } from '../src/query/klines.js'
import { SymbolContexts } from '../src/query/symbol-context.js'
import type { MarketStore } from '../src/store/market-store.js'
import { fullMarketStore } from './full-market-store.js'
import { loadAverage, median, row } from './measure.js'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const BATCHES = Number(process.env.BENCH_BATCHES ?? 10)
/** Symbols per task: the pool cuts a batch into tasks of about 10,000 bars (one symbol at count=10000). */
const PER_TASK = Number(process.env.BENCH_GROUP ?? 1)
/** The whole market's pull is BENCH_BATCHES requests of 100 symbols. */
const PER_REQUEST = 100

const market = await fullMarketStore()
const { market: store, keys } = await openStores({ store: market.db, create: false })
await keys.close()
const contexts = new SymbolContexts(store)
const range = { count: 10_000, adjust: 'forward' as const }
const tasks: BatchTask[] = []
const symbols = market.symbols.slice(0, BATCHES * PER_REQUEST)
for (let i = 0; i < symbols.length; i += PER_TASK)
  tasks.push({ kind: 'klines-batch', symbols: symbols.slice(i, i + PER_TASK), period: '1d', range })

interface Build {
  readonly name: string
  readonly taskPieces: typeof TaskPieces
  readonly deflatePiece: typeof DeflatePiece
  /** Whether its deflatePiece takes the pieces as they are (else they are joined first, as that build's worker does). */
  readonly takesPieces: boolean
  /** The store and contexts as that build opens them (its own chunk decoding). */
  readonly store: MarketStore
  readonly contexts: SymbolContexts
}
const builds: Build[] = [{ name: 'this build', taskPieces, deflatePiece, takesPieces: true, store, contexts }]
if (process.env.BENCH_BASELINE) {
  const dist = process.env.BENCH_BASELINE
  const runner = (await import(join(dist, 'src/runner/query-runner.js'))) as { taskPieces: typeof TaskPieces }
  const gzip = (await import(join(dist, 'src/encode/gzip-member.js'))) as { deflatePiece: typeof DeflatePiece }
  const open = (await import(join(dist, 'src/store/backends.js'))) as { openStores: typeof openStores }
  const symbolContexts = (await import(join(dist, 'src/query/symbol-context.js'))) as {
    SymbolContexts: typeof SymbolContexts
  }
  const stores = await open.openStores({ store: market.db, create: false })
  await stores.keys.close()
  const baseStore = stores.market
  builds.unshift({
    name: 'baseline',
    taskPieces: runner.taskPieces,
    deflatePiece: gzip.deflatePiece,
    takesPieces: false,
    store: baseStore,
    contexts: new symbolContexts.SymbolContexts(baseStore),
  })
}

/** CPU (all threads: V8's GC helpers too) and wall ms of fn. */
async function timed(fn: () => Promise<number>): Promise<{ cpuMs: number; wallMs: number; bars: number }> {
  const c0 = process.cpuUsage()
  const t0 = performance.now()
  const bars = await fn()
  const wallMs = performance.now() - t0
  const c = process.cpuUsage(c0)
  return { cpuMs: (c.user + c.system) / 1000, wallMs, bars }
}

/** Copies pieces into one ArrayBuffer, as the worker's `own` does before moving it. */
function own(pieces: readonly Buffer[]): Uint8Array {
  const out = new Uint8Array(new ArrayBuffer(pieces.reduce((n, p) => n + p.length, 0)))
  let at = 0
  for (const p of pieces) {
    out.set(p, at)
    at += p.length
  }
  return out
}

let barsPerRound = 0
const steps: Record<string, () => Promise<number>> = {
  'readKlines: + prev_close, adjust': async () => {
    let n = 0
    for (const t of tasks)
      for (const symbol of t.symbols)
        n += barCount(await readKlines(store, contexts, { symbol, period: '1d', ...range }))
    return n
  },
}
for (const b of builds) {
  const { store, contexts } = b
  steps[`${b.name}: read (SQLite + decode)`] = async () => {
    let n = 0
    for (const t of tasks)
      for (const symbol of t.symbols)
        n += barCount(await store.readBars({ symbol, period: '1d', limit: range.count + 1 }))
    return n
  }
  steps[`${b.name}: taskPieces (+ JSON)`] = async () => {
    let bytes = 0
    for (const t of tasks) for (const p of await b.taskPieces(store, contexts, t)) bytes += p.length
    return bytes
  }
  steps[`${b.name}: plain task (+ own buffer)`] = async () => {
    let bytes = 0
    for (const t of tasks) bytes += own(await b.taskPieces(store, contexts, t)).length
    return bytes
  }
  steps[`${b.name}: gzip task (+ deflate, copy)`] = async () => {
    let bytes = 0
    for (const t of tasks) {
      const pieces = await b.taskPieces(store, contexts, t)
      // As the worker does: the deflated bytes copied into a buffer of their own (a build without `borrow` copies them twice).
      bytes += own([b.deflatePiece(b.takesPieces ? pieces : Buffer.concat(pieces), { borrow: true }).deflated]).length
    }
    return bytes
  }
}

// BENCH_ONLY=substring keeps the steps whose name holds it (for a --cpu-prof of one step).
const only = process.env.BENCH_ONLY
if (only) for (const name of Object.keys(steps)) if (!name.includes(only)) delete steps[name]
const results = new Map<string, { cpu: number[]; wall: number[]; out: number }>()
for (const name of Object.keys(steps)) results.set(name, { cpu: [], wall: [], out: 0 })
for (const fn of Object.values(steps)) await fn() // warm-up: JIT, page cache, symbol contexts
for (const t of tasks)
  for (const symbol of t.symbols)
    barsPerRound += barCount(await store.readBars({ symbol, period: '1d', limit: range.count + 1 }))
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, fn] of Object.entries(steps)) {
    const r = await timed(fn)
    const acc = results.get(name)!
    acc.cpu.push(r.cpuMs)
    acc.wall.push(r.wallMs)
    acc.out = r.bars
  }
}
await Promise.all(builds.map((b) => b.store.close()))

console.log(
  `\nthe work per bar of the bulk daily pull, in-process: ${tasks.length} tasks of ${PER_TASK} symbol(s), ${barsPerRound.toLocaleString('en')} forward-adjusted daily bars (${market.db}); median of ${ROUNDS} rounds; load ${loadAverage()}${process.env.BENCH_BASELINE ? `; baseline: ${process.env.BENCH_BASELINE}` : ''}`,
)
row('step', 'CPU ns/bar', 'wall ns/bar', 'bytes/bar')
for (const [name, r] of results) {
  const bytes = name.includes('read') ? '' : (r.out / barsPerRound).toFixed(1)
  row(
    name,
    ((median(r.cpu) * 1e6) / barsPerRound).toFixed(0),
    ((median(r.wall) * 1e6) / barsPerRound).toFixed(0),
    bytes,
  )
}
