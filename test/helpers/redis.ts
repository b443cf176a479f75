/** @module A real redis-server (Debian's) on a free loopback port, started and stopped by PID from tests. */
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { createConnection, createServer } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'

async function freePort(): Promise<number> {
  const server = createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as { port: number }
  server.close()
  await once(server, 'close')
  return port
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: '127.0.0.1' }, () => socket.write('PING\r\n'))
    socket.once('data', (d) => {
      socket.destroy()
      resolve(d.toString().startsWith('+PONG'))
    })
    socket.once('error', () => resolve(false))
  })
}

export class RedisServer {
  #child?: ChildProcess
  private constructor(readonly port: number) {}

  static async start(): Promise<RedisServer> {
    const server = new RedisServer(await freePort())
    await server.start()
    return server
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`
  }

  /** The server process's id while it runs (a bench reads its CPU). */
  get pid(): number | undefined {
    return this.#child?.pid
  }

  async start(): Promise<void> {
    this.#child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    )
    const t0 = Date.now()
    while (!(await ping(this.port))) {
      if (Date.now() - t0 > 10_000) throw new Error(`redis-server did not start on port ${this.port}`)
      await sleep(20)
    }
  }

  /** Sends a signal to the server process (SIGSTOP / SIGCONT: a stalled Redis whose TCP connections stay up). */
  signal(signal: NodeJS.Signals): void {
    this.#child?.kill(signal)
  }

  /** Stops the server by its PID and waits until it has exited. */
  async stop(): Promise<void> {
    const child = this.#child
    if (!child || child.exitCode !== null) return
    const exited = once(child, 'exit')
    child.kill('SIGTERM')
    await exited
  }
}

/**
 * The Redis command timeout of limiters in tests that count exact admissions: on a loaded machine a
 * reply can take longer than production's 250 ms, and the fail-open/closed policy would then answer
 * (a 51st admission, or a 503) instead of Redis. The stall tests keep the production default.
 */
export const PATIENT_REDIS_MS = 10_000
