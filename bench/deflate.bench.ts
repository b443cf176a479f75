// How a worker deflates its piece of a gzip batch (src/encode/gzip-member.ts): Huffman codes only, in JS
// (huffman-deflate.ts) and by zlib (Z_HUFFMAN_ONLY, what it replaced), against deflate level 1 (the
// baseline, @fastify/compress's level), on the JSON the
// workers write for a bulk pull (full-market store, 2 symbols x 20 years of forward-adjusted daily
// bars a piece), beside the CPU time it takes to compute that JSON. Alternating rounds, medians of CPU time.
// Run: npm run bench -- deflate   (BENCH_ROUNDS=5; MDQ_BENCH_SYMBOLS as for the bulk bench; BENCH_BASELINE=/path/to/other/dist,
// e.g. /work/main/dist, adds that build's JS coder)
import { join } from 'node:path'
import { constants as zlib, crc32, deflateRawSync, type ZlibOptions } from 'node:zlib'
import { GZIP_LEVEL } from '../src/encode/compression.js'
import { rawHuffmanDeflate } from '../src/encode/deflate/huffman-deflate.js'
import { JsonBytes } from '../src/encode/json-bytes.js'
import { batchPieces } from '../src/runner/query-runner.js'
import { openStores } from '../src/store/backends.js'
import { SymbolContexts } from '../src/query/symbol-context.js'
import { fullMarketStore } from './full-market-store.js'
import { loadAverage, median, row } from './measure.js'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
/** This process's CPU ms so far: it moves far less with the machine's load than wall time (each step runs on this thread alone). */
const cpuNow = () => {
  const c = process.cpuUsage()
  return (c.user + c.system) / 1000
}
const PIECES = 10

const market = await fullMarketStore()
const { market: store, keys } = await openStores({ store: market.db, create: false })
await keys.close()
const contexts = new SymbolContexts(store)
const range = { count: 10_000, adjust: 'forward' as const }

/** The pieces' JSON, as the workers write it; returns the bytes and the ms it took. */
async function compute(): Promise<{ pieces: Buffer[]; ms: number }> {
  const t0 = cpuNow()
  const pieces: Buffer[] = []
  for (let i = 0; i < PIECES; i++) {
    const parts: Buffer[] = []
    for await (const some of batchPieces(
      store,
      contexts,
      { kind: 'klines-batch', symbols: market.symbols.slice(2 * i, 2 * i + 2), period: '1d', range },
      new JsonBytes(),
    ))
      parts.push(...some)
    pieces.push(Buffer.concat(parts))
  }
  return { pieces, ms: cpuNow() - t0 }
}

const zlibDeflate = (options: ZlibOptions) => (p: Buffer) =>
  deflateRawSync(p, { ...options, finishFlush: zlib.Z_SYNC_FLUSH })
const variants: [string, (p: Buffer) => Buffer][] = [
  [`deflate level ${GZIP_LEVEL} (baseline)`, zlibDeflate({ level: GZIP_LEVEL })],
  ['zlib Huffman only', zlibDeflate({ level: GZIP_LEVEL, strategy: zlib.Z_HUFFMAN_ONLY })],
  ['JS Huffman only (rawHuffmanDeflate)', rawHuffmanDeflate],
]
if (process.env.BENCH_BASELINE) {
  const baseline = (await import(join(process.env.BENCH_BASELINE, 'src/encode/deflate/huffman-deflate.js'))) as {
    rawHuffmanDeflate: typeof rawHuffmanDeflate
  }
  variants.push(['JS Huffman only, baseline build', (p) => baseline.rawHuffmanDeflate(p)])
}
const times = { compute: [] as number[], crc: [] as number[], deflate: variants.map(() => [] as number[]) }
const sizes = variants.map(() => 0)
let plain = 0
await compute() // warm-up: JIT, page cache
for (let round = 0; round < ROUNDS; round++) {
  const { pieces, ms } = await compute()
  times.compute.push(ms)
  plain = pieces.reduce((n, p) => n + p.length, 0)
  let t0 = cpuNow()
  for (const p of pieces) crc32(p)
  times.crc.push(cpuNow() - t0)
  for (const [v, [, deflate]] of variants.entries()) {
    t0 = cpuNow()
    sizes[v] = 0
    for (const p of pieces) sizes[v] += deflate(p).length
    times.deflate[v].push(cpuNow() - t0)
  }
}
await store.close()

const load = loadAverage()
console.log(
  `\ndeflating a worker's piece: ${PIECES} pieces of 2 symbols x up to 10,000 daily bars, forward (${(plain / 1e6).toFixed(1)} MB of JSON); median of ${ROUNDS} rounds; load ${load}`,
)
row('step', 'CPU ms', 'MB/CPU s', 'bytes out', 'vs compute')
const computeMs = median(times.compute)
row('computing the JSON (reference)', computeMs.toFixed(1), (plain / 1e3 / computeMs).toFixed(0), '', '1.00')
row(
  'CRC-32',
  median(times.crc).toFixed(1),
  (plain / 1e3 / median(times.crc)).toFixed(0),
  '',
  (median(times.crc) / computeMs).toFixed(2),
)
for (const [v, [name]] of variants.entries()) {
  const ms = median(times.deflate[v])
  row(name, ms.toFixed(1), (plain / 1e3 / ms).toFixed(0), (sizes[v] / plain).toFixed(3), (ms / computeMs).toFixed(2))
}
for (let v = 1; v < variants.length; v++)
  console.log(
    `${variants[v][0]}: ${(median(times.deflate[0]) / median(times.deflate[v])).toFixed(2)}x the speed of level ${GZIP_LEVEL}, ${(sizes[v] / sizes[0]).toFixed(3)} of its bytes`,
  )
