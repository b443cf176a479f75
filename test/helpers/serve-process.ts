/** @module A real `mdq serve` child process on a free loopback port, stopped by PID. */
import { spawn, type ChildProcess } from 'node:child_process'
import { setTimeout as sleep } from 'node:timers/promises'
import { MDQ_BIN } from './store-files.js'

export interface ServeProcess {
  readonly base: string
  /** The ingest listener's base URL, when started with `--ingest-port`. */
  readonly ingest?: string
  readonly child: ChildProcess
  /** Everything it wrote to stdout and stderr so far. */
  output(): string
  stop(): Promise<void>
  /** SIGKILL, and wait for the process to be gone. */
  kill(): Promise<void>
}

/** Starts `mdq <globalArgs> serve --port 0 ...` (or `start`) and waits (up to 30 s) for its address lines. */
export async function spawnServe(
  globalArgs: readonly string[],
  serveArgs: readonly string[] = [],
  command: 'serve' | 'start' = 'serve',
): Promise<ServeProcess> {
  const child = spawn(process.execPath, [MDQ_BIN(), ...globalArgs, command, '--port', '0', ...serveArgs], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  let err = ''
  child.stdout!.on('data', (d) => (out += d))
  child.stderr!.on('data', (d) => (err += d))
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const t0 = Date.now()
  const ingestToo = serveArgs.includes('--ingest-port') || serveArgs.includes('--live')
  const started = () =>
    /serving .* on http:\/\/127\.0\.0\.1:(\d+)/.test(out) &&
    (!ingestToo || /ingest listening on http:\/\/127\.0\.0\.1:(\d+)/.test(out))
  while (!started() && child.exitCode === null && Date.now() - t0 < 30_000) await sleep(20)
  const port = /serving .* on http:\/\/127\.0\.0\.1:(\d+)/.exec(out)?.[1]
  const ingestPort = /ingest listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out)?.[1]
  if (!port || (ingestToo && !ingestPort)) {
    child.kill('SIGKILL')
    throw new Error(`mdq serve did not start: ${err}${out}`)
  }
  return {
    base: `http://127.0.0.1:${port}`,
    ...(ingestPort && { ingest: `http://127.0.0.1:${ingestPort}` }),
    child,
    output: () => out + err,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      await exited
    },
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      await exited
    },
  }
}
