/** @module Child servers for the benches: `mdq serve` or the bare baseline, started on a free port and stopped by PID. */
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { request, type Agent } from 'node:http'
import { join } from 'node:path'

export interface Server {
  readonly child: ChildProcess
  readonly url: string
}

const here = import.meta.dirname
/**
 * The built CLI, and bench/bare-server.ts, as paths a child process runs. BENCH_MDQ=<another
 * checkout's bin/mdq.js> serves with that build instead (the code before a change, measured beside
 * the same baselines; a bench's in-process rows still run this checkout's code).
 */
export const mdqBin = process.env.BENCH_MDQ ?? join(here, '..', '..', 'bin', 'mdq.js')
export const bareServer = join(here, 'bare-server.js')

/**
 * Runs `node ...args` (with `env` added to this process's environment) and resolves once it prints
 * the port it listens on (mdq's log line, or the bare server's lone port number); rejects if it exits first.
 */
export function startServer(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<Server> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } })
  let out = ''
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`${args[0]} exited (${code}) before listening: ${out}`))
    child.once('exit', onExit)
    child.stdout!.on('data', (d: Buffer) => {
      out += d
      const m = /127\.0\.0\.1:(\d+)/.exec(out) ?? /^(\d+)\s*$/m.exec(out)
      if (!m) return
      child.off('exit', onExit)
      child.stdout!.removeAllListeners('data')
      child.stdout!.resume()
      resolve({ child, url: `http://127.0.0.1:${m[1]}` })
    })
  })
}

/** `mdq --db <db> serve` on a free port, with its flags (and `env` added to the environment). */
export const startMdq = (db: string, flags: readonly string[] = [], env: NodeJS.ProcessEnv = {}): Promise<Server> =>
  startServer([mdqBin, '--db', db, 'serve', '--port', '0', ...flags], env)

/** Stops a child server and waits for it to exit. */
export async function stopServer(server: Server): Promise<void> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return
  server.child.kill('SIGTERM')
  await once(server.child, 'exit')
}

/** A 200 answer's body as sent (node:http does not decode it), asked with the key and `accept` as Accept-Encoding. */
export function getBody(url: string, key: string, accept = 'identity', agent?: Agent): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, headers: { 'X-API-Key': key, 'Accept-Encoding': accept } }, (res) => {
      const parts: Buffer[] = []
      res.on('data', (c: Buffer) => parts.push(c))
      res.on('end', () =>
        res.statusCode === 200 ? resolve(Buffer.concat(parts)) : reject(new Error(`${url}: ${res.statusCode}`)),
      )
    })
    req.on('error', reject)
    req.end()
  })
}

/** `mdq --db <db> serve --ingest-port 0` (or over `--store`; `env` added to the environment), resolved once both listeners print their address. */
export function startMdqWithIngest(
  storeArgs: readonly string[],
  flags: readonly string[] = [],
  env: NodeJS.ProcessEnv = {},
): Promise<Server & { readonly ingest: string }> {
  const child = spawn(
    process.execPath,
    [mdqBin, ...storeArgs, 'serve', '--port', '0', '--ingest-port', '0', ...flags],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, ...env },
    },
  )
  let out = ''
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`mdq serve exited (${code}) before listening: ${out}`))
    child.once('exit', onExit)
    child.stdout!.on('data', (d: Buffer) => {
      out += d
      const api = /serving .* on http:\/\/127\.0\.0\.1:(\d+)/.exec(out)
      const ingest = /ingest listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out)
      if (!api || !ingest) return
      child.off('exit', onExit)
      child.stdout!.removeAllListeners('data')
      child.stdout!.resume()
      resolve({ child, url: `http://127.0.0.1:${api[1]}`, ingest: `http://127.0.0.1:${ingest[1]}` })
    })
  })
}
