/**
 * @module A load from `wrk` (C, epoll): fixed paths with the API key, picked at random or in turn, so
 * the client costs the shared cores far less than a node:http client in the bench process and the
 * server is measured more truly. wrk is a Debian package (`apt-get install wrk`); a bench that needs it fails
 * clearly without it.
 */
import { execFileSync, spawn } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { median } from './measure.js'

/** What one wrk run measured: latencies in ms over every request it completed. */
export interface WrkLoad {
  readonly requests: number
  readonly perS: number
  readonly p50: number
  readonly p99: number
  /** Bytes read (headers and bodies, the last answers' in part), and the run's seconds. */
  readonly bytes: number
  readonly seconds: number
  /** wrk's own CPU seconds (Lua's os.clock): the client's share of the shared cores. */
  readonly cpu: number
  /** Requests that failed or were answered other than 2xx (only with `countErrors`; otherwise any fails the load). */
  readonly errors: number
}

/**
 * How the paths are picked: at random, or in turn from the first (each connection takes the next),
 * the Accept-Encoding sent, and a pace: at most `perS` requests a second over all connections (each
 * waits connections/perS s between its answer and its next request), so the load measures answers'
 * latency below the server's saturation rather than the queue at it.
 */
export interface WrkOptions {
  readonly order?: 'random' | 'cycle'
  readonly encoding?: string
  readonly perS?: number
  /** Count failed and non-2xx answers (WrkLoad.errors) rather than fail the load: for loads where a refusal is the figure. */
  readonly countErrors?: boolean
}

/**
 * The script: each request the next of the paths file's lines (`cycle`) or a random pick, with the
 * key and the encoding; at the end one JSON line of wrk's own figures. Any error or non-2xx answer
 * is counted, and the load then fails (a 404 or 401 would measure the wrong bytes). One wrk thread
 * (-t1), so `cycle` is one turn over the connections. os.clock() is C's clock(): the CPU of the
 * whole wrk process, all its threads.
 */
const SCRIPT = `
local paths = {}
local order = "random"
local turn = 0
function init(args)
  for line in io.lines(args[1]) do paths[#paths + 1] = line end
  wrk.headers["X-API-Key"] = args[2]
  math.randomseed(tonumber(args[3]))
  wrk.headers["Accept-Encoding"] = args[4]
  order = args[5]
  pause = tonumber(args[6])
end
function request()
  if order == "cycle" then
    turn = turn % #paths + 1
    return wrk.format("GET", paths[turn])
  end
  return wrk.format("GET", paths[math.random(#paths)])
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRK {"requests":%d,"us":%d,"bytes":%d,"p50":%d,"p99":%d,"errors":%d,"cpu":%.3f}\\n',
    summary.requests, summary.duration, summary.bytes, latency:percentile(50), latency:percentile(99),
    e.connect + e.read + e.write + e.status + e.timeout, os.clock()))
end
`
/** The script with a pause before each request of a connection (wrk times a request from its sending). */
const PACED_SCRIPT = `${SCRIPT}
function delay()
  return pause
end
`

/** Throws a clear error when wrk is not installed (benches are not run in CI; the README says how to get it). */
export function requireWrk(): void {
  try {
    execFileSync('wrk', ['--version'], { stdio: 'ignore' })
  } catch (err) {
    // wrk --version exits 1 after printing its usage: only a missing binary is an error.
    if ((err as { code?: string }).code === 'ENOENT') throw new Error('this bench needs wrk (apt-get install -y wrk)')
  }
}

/** Writes the script and the paths into `dir`; returns the arguments of each load. */
export function wrkFiles(dir: string, paths: readonly string[]): WrkFiles {
  const files = {
    script: join(dir, 'random-paths.lua'),
    paced: join(dir, 'paced-paths.lua'),
    paths: join(dir, 'paths.txt'),
  }
  writeFileSync(files.script, SCRIPT)
  writeFileSync(files.paced, PACED_SCRIPT)
  writeFileSync(files.paths, paths.join('\n') + '\n')
  return files
}

/** The scripts (unpaced and paced) and the paths file of a load. */
export interface WrkFiles {
  readonly script: string
  readonly paced?: string
  readonly paths: string
}

let seed = 1

/** A server's median req/s, p50 and p99 over its rounds. */
export type MedianLoad = Pick<WrkLoad, 'perS' | 'p50' | 'p99'>

/**
 * The servers take turns with one load over `rounds` rounds of `seconds` (after a warm-up second
 * each: JIT, caches), as the shared machine's noise asks; each server's medians, in `urls`' order.
 */
export async function alternatingLoads(
  urls: readonly string[],
  key: string,
  files: WrkFiles,
  seconds: number,
  rounds: number,
  connections = 32,
): Promise<MedianLoad[]> {
  for (const url of urls) await wrkLoad(url, key, files, 1, connections)
  const loads = urls.map(() => [] as WrkLoad[])
  for (let round = 0; round < rounds; round++) {
    for (const [i, url] of urls.entries()) loads[i].push(await wrkLoad(url, key, files, seconds, connections))
  }
  return loads.map((l) => ({
    perS: median(l.map((r) => r.perS)),
    p50: median(l.map((r) => r.p50)),
    p99: median(l.map((r) => r.p99)),
  }))
}

/** `connections` keep-alive connections on one wrk thread for `seconds`. */
export function wrkLoad(
  base: string,
  key: string,
  files: WrkFiles,
  seconds: number,
  connections = 32,
  options: WrkOptions = {},
): Promise<WrkLoad> {
  const { order = 'random', encoding = 'identity', perS, countErrors = false } = options
  if (perS !== undefined && !files.paced) throw new Error('a paced load needs the paced script (wrkFiles)')
  const args = [
    '-t1',
    `-c${connections}`,
    `-d${seconds}s`,
    '--timeout',
    '10s',
    '-s',
    perS === undefined ? files.script : files.paced!,
    base,
    '--',
    files.paths,
    key,
    String(seed++),
    encoding,
    order,
    String(perS === undefined ? 0 : Math.round((connections * 1000) / perS)),
  ]
  const child = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  child.stdout.on('data', (d) => (out += d))
  return new Promise((resolve, reject) => {
    child.on('error', reject)
    child.on('exit', (code) => {
      const line = /^WRK (.*)$/m.exec(out)
      if (code !== 0 || !line) return reject(new Error(`wrk exited ${code}: ${out}`))
      const r = JSON.parse(line[1]) as {
        requests: number
        us: number
        bytes: number
        p50: number
        p99: number
        errors: number
        cpu: number
      }
      if (r.errors > 0 && !countErrors)
        return reject(new Error(`wrk: ${r.errors} of ${r.requests} requests failed or were not 2xx: ${out}`))
      const seconds = r.us / 1e6
      resolve({
        requests: r.requests,
        perS: r.requests / seconds,
        p50: r.p50 / 1000,
        p99: r.p99 / 1000,
        bytes: r.bytes,
        seconds,
        cpu: r.cpu,
        errors: r.errors,
      })
    })
  })
}
