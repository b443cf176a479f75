/**
 * @module The whole market's daily pull through /v1/klines/batch (100 symbols a request, 8
 * connections), loaded by wrk: one checked pull through node:http records each batch's bytes, then
 * wrk takes the batches in turn and its bytes are counted as bars along that list. The bulk and
 * compression benches share it.
 */
import { Agent, request } from 'node:http'
import { performance } from 'node:perf_hooks'
import type { FullMarketStore } from './full-market-store.js'
import { cpuMs, machineCpuMs } from './measure.js'
import type { Server } from './servers.js'
import { wrkLoad } from './wrk.js'

export const CONNECTIONS = 8
export const PER_REQUEST = 100

/** The pull's requests (100 symbols each, forward-adjusted daily, count=10000) and each one's bars. */
export function bulkPaths(market: FullMarketStore): { paths: string[]; barsPerBatch: number[] } {
  const paths: string[] = []
  const barsPerBatch: number[] = []
  const barsPerSymbol = market.dailyBars / market.symbols.length
  for (let i = 0; i < market.symbols.length; i += PER_REQUEST) {
    const batch = market.symbols.slice(i, i + PER_REQUEST)
    paths.push(`/v1/klines/batch?symbols=${batch.join(',')}&period=1d&adjust=forward&count=10000`)
    barsPerBatch.push(batch.length * barsPerSymbol)
  }
  return { paths, barsPerBatch }
}

/** One GET; resolves with the body's byte length and its Content-Encoding (the client neither parses nor decompresses). */
function get(agent: Agent, url: string, key: string, encoding: string): Promise<{ bytes: number; coding: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, headers: { 'X-API-Key': key, 'Accept-Encoding': encoding } }, (res) => {
      let bytes = 0
      res.on('data', (c: Buffer) => (bytes += c.length))
      res.on('end', () =>
        res.statusCode === 200
          ? resolve({ bytes, coding: String(res.headers['content-encoding'] ?? 'identity') })
          : reject(new Error(`${url.slice(0, 120)}: ${res.statusCode}`)),
      )
    })
    req.on('error', reject)
    req.end()
  })
}

/**
 * Each batch's body bytes, from one whole pull over 8 keep-alive connections (every answer must be a
 * 200, and with `coding` in that Content-Encoding).
 */
export async function checkedPull(
  server: Server,
  paths: readonly string[],
  key: string,
  encoding: string,
  coding?: string,
): Promise<number[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS })
  const bytes: number[] = []
  let next = 0
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (next < paths.length) {
        const i = next++
        const answer = await get(agent, server.url + paths[i], key, encoding)
        if (coding !== undefined && answer.coding !== coding)
          throw new Error(`${paths[i].slice(0, 80)}: Content-Encoding ${answer.coding}, not ${coding}`)
        bytes[i] = answer.bytes
      }
    }),
  )
  agent.destroy()
  return bytes
}

export interface Pull {
  /** Bars read per second: wrk's bytes counted along the batches in turn. */
  rate: number
  cores: number
  /** The main thread's CPU seconds per second (the rest is the workers' and V8's helper threads'). */
  mainCores: number
  /** wrk's cores meanwhile, on the same machine. */
  clientCores: number
  /** The machine's idle cores meanwhile, and its cores in interrupts (loopback TCP's receiving, charged to no process). */
  idleCores: number
  irqCores: number
}

/**
 * wrk takes the batches in turn over 8 connections for `seconds`. The server's CPU is sampled over
 * that window by the clock here (wrk's own start and end are a few ms off); its bytes are turned
 * into bars by walking the batches' bytes in the order it asked for them (answers in flight at the
 * end count by the share read).
 */
export async function pull(
  server: Server,
  files: { script: string; paths: string },
  key: string,
  encoding: string,
  batchBytes: readonly number[],
  barsPerBatch: readonly number[],
  seconds: number,
): Promise<Pull> {
  const pid = server.child.pid!
  const cpu0 = cpuMs(pid)
  const main0 = cpuMs(pid, pid)
  const machine0 = machineCpuMs()
  const t0 = performance.now()
  const sample = () => {
    const machine = machineCpuMs()
    return {
      cpu: cpuMs(pid) - cpu0,
      main: cpuMs(pid, pid) - main0,
      idle: machine.idle - machine0.idle,
      irq: machine.irq - machine0.irq,
      ms: performance.now() - t0,
    }
  }
  let sampled: ReturnType<typeof sample> | undefined
  const timer = setTimeout(() => (sampled = sample()), seconds * 1000)
  const load = await wrkLoad(server.url, key, files, seconds, CONNECTIONS, { order: 'cycle', encoding })
  clearTimeout(timer)
  sampled ??= sample()
  let bars = 0
  for (let left = load.bytes, i = 0; left > 0; i = (i + 1) % batchBytes.length) {
    const part = Math.min(1, left / batchBytes[i])
    bars += part * barsPerBatch[i]
    left -= batchBytes[i]
  }
  return {
    rate: bars / load.seconds,
    cores: sampled.cpu / sampled.ms,
    mainCores: sampled.main / sampled.ms,
    clientCores: load.cpu / load.seconds,
    idleCores: sampled.idle / sampled.ms,
    irqCores: sampled.irq / sampled.ms,
  }
}
