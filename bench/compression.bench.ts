// Compression of the bulk daily pull, end to end and per piece, every variant in one run.
// End to end: the whole market's pull (bulk-pull.ts: /v1/klines/batch, 100 symbols a request, 8
// connections, wrk, the response cache off, a pool of one worker per core) plain (the baseline) and
// compressed: gzip made in the workers by each coder (MDQ_BENCH_COMPRESSION picks a server's), and
// brotli at quality 0 and 1 for a client that accepts br (a batch's brotli is @fastify/compress's
// stream in the main thread: brotli streams made apart cannot be joined as deflate pieces are).
// Rounds alternate between the variants; medians. Each variant's answers are checked first: the
// right Content-Encoding on every batch, and the first batch decoded to the plain bytes.
// Per piece: the JSON of the pull's first BENCH_PIECE_BATCHES batches as the pool cuts them into
// worker tasks, compressed in this thread by each coder, CPU time per bar beside computing that JSON.
// zstd (zlib.zstdCompress) needs Node 22; Node 20 is the floor, so it is not measured.
// Run: npm run bench -- compression   (BENCH_ROUNDS=5, BENCH_PULL_SECONDS=10, BENCH_PIECE_BATCHES=2; MDQ_BENCH_SYMBOLS
// shrinks the store; BENCH_ONLY=pull or BENCH_ONLY=pieces runs one part). Needs wrk (apt-get install -y wrk).
import { mkdtempSync, rmSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  brotliCompressSync,
  brotliDecompressSync,
  constants as zlib,
  crc32,
  gunzipSync,
  inflateRawSync,
} from 'node:zlib'
import { deflatePiece, PIECE_CODERS, type PieceCoder } from '../src/encode/gzip-member.js'
import { taskPieces, type BatchTask } from '../src/runner/query-runner.js'
import { openStores } from '../src/store/backends.js'
import { batchGroups } from '../src/runner/query-pool.js'
import { SymbolContexts } from '../src/query/symbol-context.js'
import { bulkPaths, checkedPull, CONNECTIONS, PER_REQUEST, pull, type Pull } from './bulk-pull.js'
import { fullMarketStore } from './full-market-store.js'
import { loadAverage, median, row } from './measure.js'
import { getBody, startMdq, stopServer, type Server } from './servers.js'
import { requireWrk, wrkFiles } from './wrk.js'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const PULL_SECONDS = Number(process.env.BENCH_PULL_SECONDS ?? 10)
const PIECE_BATCHES = Number(process.env.BENCH_PIECE_BATCHES ?? 2)
const dir = mkdtempSync(join(tmpdir(), 'mdq-bench-compression-'))

const CODER_NAMES: Record<PieceCoder, string> = {
  'js-huffman': 'JS Huffman-only coder',
  'zlib-1': 'zlib deflateRaw level 1',
  'zlib-huffman': 'zlib deflateRaw Z_HUFFMAN_ONLY',
}

/** This thread's CPU ms so far (the per-piece steps all run on it). */
const cpuNow = () => {
  const c = process.cpuUsage()
  return (c.user + c.system) / 1000
}

/** The end-to-end pull of every variant, alternating; prints its table. */
async function endToEnd(market: Awaited<ReturnType<typeof fullMarketStore>>): Promise<void> {
  const workers = availableParallelism()
  const servers = new Map<string, Server>()
  const serve = async (variant: string) => {
    servers.set(
      variant,
      await startMdq(market.db, ['--rate-limit', 'off', '--cache-mb', '0', '--workers', String(workers)], {
        MDQ_BENCH_COMPRESSION: variant,
      }),
    )
    return servers.get(variant)!
  }
  const variants: { name: string; server: Server; accept: string; coding: string }[] = [
    { name: 'plain (identity, baseline)', server: await serve('js-huffman'), accept: 'identity', coding: 'identity' },
  ]
  for (const coder of PIECE_CODERS)
    variants.push({
      name: `gzip: ${CODER_NAMES[coder]} (workers)`,
      server: servers.get(coder) ?? (await serve(coder)),
      accept: 'gzip, deflate',
      coding: 'gzip',
    })
  for (const quality of [0, 1])
    variants.push({
      name: `br: quality ${quality} (main thread)`,
      server: await serve(`br-${quality}`),
      accept: 'br',
      coding: 'br',
    })
  try {
    const { paths, barsPerBatch } = bulkPaths(market)
    const files = wrkFiles(dir, paths)
    // Every answer decodes to the plain bytes (checked on the first batch: a whole pull would take minutes more).
    const first = (accept: string, server: Server) => getBody(server.url + paths[0], market.key, accept)
    const plain = await first('identity', variants[0].server)
    for (const v of variants.slice(1)) {
      const body = await first(v.accept, v.server)
      const decoded = v.coding === 'gzip' ? gunzipSync(body) : brotliDecompressSync(body)
      if (!decoded.equals(plain)) throw new Error(`${v.name}: the first batch does not decode to the plain answer`)
    }
    // The checked pulls (also the warm-up: JIT, page cache): every batch a 200 in its encoding.
    const batchBytes: number[][] = []
    for (const v of variants) batchBytes.push(await checkedPull(v.server, paths, market.key, v.accept, v.coding))
    const results = variants.map(() => [] as Pull[])
    for (let round = 0; round < ROUNDS; round++)
      for (const [i, v] of variants.entries())
        results[i].push(await pull(v.server, files, market.key, v.accept, batchBytes[i], barsPerBatch, PULL_SECONDS))

    console.log(
      `\nbulk pull, end to end: ${market.symbols.length} symbols, ${market.dailyBars.toLocaleString('en')} daily bars, forward, uncached (--cache-mb 0), --workers ${workers}, ${PER_REQUEST} symbols a request, ${CONNECTIONS} connections (wrk, ${PULL_SECONDS} s a round, the batches in turn); median of ${ROUNDS} alternating rounds; load ${loadAverage()}`,
    )
    // CPU: the server process's (all threads) per million bars; bytes: the body bytes of a whole pull per bar.
    row(
      'variant',
      'bars/s',
      'vs plain',
      'vs JS coder',
      'cores',
      'CPU s/Mbars',
      'main s/Mbars',
      'bytes/bar',
      'client',
      'idle',
    )
    const rate = (i: number) => median(results[i].map((x) => x.rate))
    const js = variants.findIndex((v) => v.name.includes(CODER_NAMES['js-huffman']))
    for (const [i, v] of variants.entries()) {
      const mid = (of: (x: Pull) => number) => median(results[i].map(of))
      row(
        v.name,
        `${(rate(i) / 1e6).toFixed(2)}M`,
        (rate(i) / rate(0)).toFixed(2),
        (rate(i) / rate(js)).toFixed(2),
        mid((x) => x.cores).toFixed(2),
        mid((x) => (x.cores / x.rate) * 1e6).toFixed(3),
        mid((x) => (x.mainCores / x.rate) * 1e6).toFixed(3),
        (batchBytes[i].reduce((a, b) => a + b, 0) / market.dailyBars).toFixed(2),
        mid((x) => x.clientCores).toFixed(2),
        mid((x) => x.idleCores).toFixed(2),
      )
    }
    const zlibBest = Math.max(
      ...variants.flatMap((v, i) =>
        v.coding === 'gzip' && !v.name.includes(CODER_NAMES['js-huffman']) ? [rate(i)] : [],
      ),
    )
    console.log(
      `JS coder against the fastest zlib variant, end to end: ${(rate(js) / zlibBest).toFixed(2)}x (kept only at >= 1.3x)`,
    )
  } finally {
    for (const server of servers.values()) await stopServer(server)
  }
}

/** Each coder in this thread on the pieces the workers write for the pull's first batches; prints its table. */
async function perPiece(market: Awaited<ReturnType<typeof fullMarketStore>>): Promise<void> {
  const { market: store, keys } = await openStores({ store: market.db, create: false })
  await keys.close()
  const contexts = new SymbolContexts(store)
  const range = { count: 10_000, adjust: 'forward' as const }
  const tasks: BatchTask[] = []
  for (let b = 0; b < PIECE_BATCHES; b++)
    tasks.push(
      ...batchGroups(
        {
          kind: 'klines-batch',
          symbols: market.symbols.slice(b * PER_REQUEST, (b + 1) * PER_REQUEST),
          period: '1d',
          range,
        },
        availableParallelism(),
      ),
    )
  const bars = tasks.reduce((n, t) => n + t.symbols.length, 0) * (market.dailyBars / market.symbols.length)
  const compute = async () => {
    const pieces: Buffer[][] = []
    for (const t of tasks) pieces.push(await taskPieces(store, contexts, t))
    return pieces
  }
  const coders: [string, (pieces: Buffer[]) => Uint8Array][] = [
    ...PIECE_CODERS.map(
      (coder) =>
        [CODER_NAMES[coder], (pieces: Buffer[]) => deflatePiece(pieces, { borrow: true, coder }).deflated] as [
          string,
          (pieces: Buffer[]) => Uint8Array,
        ],
    ),
    ...[0, 1].map(
      (quality) =>
        [
          `brotli quality ${quality}`,
          (pieces: Buffer[]) => {
            const joined = Buffer.concat(pieces)
            return brotliCompressSync(joined, {
              params: { [zlib.BROTLI_PARAM_QUALITY]: quality, [zlib.BROTLI_PARAM_SIZE_HINT]: joined.length },
            })
          },
        ] as [string, (pieces: Buffer[]) => Uint8Array],
    ),
  ]
  // Correct first: each deflate piece inflates to its bytes, each brotli piece decompresses to them.
  const sample = (await compute()).slice(0, 4)
  for (const [name, code] of coders)
    for (const pieces of sample) {
      const out = Buffer.from(code(pieces))
      const back = name.startsWith('brotli')
        ? brotliDecompressSync(out)
        : inflateRawSync(out, { finishFlush: zlib.Z_SYNC_FLUSH })
      if (!back.equals(Buffer.concat(pieces))) throw new Error(`${name}: a piece does not decode to its bytes`)
    }
  const times = { compute: [] as number[], crc: [] as number[], code: coders.map(() => [] as number[]) }
  const sizes = coders.map(() => 0)
  let plain = 0
  for (let round = 0; round < ROUNDS; round++) {
    let t0 = cpuNow()
    const pieces = await compute()
    times.compute.push(cpuNow() - t0)
    plain = pieces.reduce((n, p) => n + p.reduce((m, q) => m + q.length, 0), 0)
    t0 = cpuNow()
    for (const p of pieces) for (const q of p) crc32(q)
    times.crc.push(cpuNow() - t0)
    // Rotated each round, so no coder always runs right after the JSON was made (warm caches) or last.
    for (let k = 0; k < coders.length; k++) {
      const c = (k + round) % coders.length
      t0 = cpuNow()
      let size = 0
      for (const p of pieces) size += coders[c][1](p).length
      times.code[c].push(cpuNow() - t0)
      sizes[c] = size
    }
  }
  await store.close()
  console.log(
    `\nper piece, in one thread: ${tasks.length} worker tasks (the first ${PIECE_BATCHES} batches of the pull, cut as the pool cuts them), ${bars.toLocaleString('en')} bars, ${(plain / 1e6).toFixed(1)} MB of JSON; median of ${ROUNDS} rounds; load ${loadAverage()}`,
  )
  row('step', 'CPU ns/bar', 'MB/CPU s', 'bytes/bar', 'of the JSON', 'vs JSON CPU', 'vs JS coder')
  const perBar = (ms: number) => ((ms * 1e6) / bars).toFixed(0)
  const computeMs = median(times.compute)
  row(
    'computing the JSON (baseline)',
    perBar(computeMs),
    (plain / 1e3 / computeMs).toFixed(0),
    (plain / bars).toFixed(2),
    '1.000',
    '1.00',
    '',
  )
  row(
    'CRC-32 (for the gzip trailer)',
    perBar(median(times.crc)),
    (plain / 1e3 / median(times.crc)).toFixed(0),
    '',
    '',
    (median(times.crc) / computeMs).toFixed(2),
    '',
  )
  const jsMs = median(times.code[0])
  for (const [c, [name]] of coders.entries()) {
    const ms = median(times.code[c])
    row(
      name,
      perBar(ms),
      (plain / 1e3 / ms).toFixed(0),
      (sizes[c] / bars).toFixed(2),
      (sizes[c] / plain).toFixed(3),
      (ms / computeMs).toFixed(2),
      (jsMs / ms).toFixed(2),
    )
  }
}

try {
  requireWrk()
  const market = await fullMarketStore()
  if (process.env.BENCH_ONLY !== 'pieces') await endToEnd(market)
  if (process.env.BENCH_ONLY !== 'pull') await perPiece(market)
} finally {
  rmSync(dir, { recursive: true, force: true })
}
