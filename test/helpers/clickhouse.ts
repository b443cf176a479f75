/**
 * @module Real clickhouse-server processes (Debian's) on free loopback ports: one server, or two as a
 * two-shard cluster. Whether the server is installed: requirements.ts's clickhouseServer().
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { Connection } from '../../src/store/clickhouse/connection.js'
import type { KeyStore } from '../../src/store/key-store.js'
import type { MarketStore } from '../../src/store/market-store.js'
import { repoRoot } from './shared-data.js'

const BINARY = 'clickhouse-server'

/** Closes stores as ClickHouseStores.open gives them (a market store and its key store); absent ones are skipped. */
export function closeStores(...stores: ({ market: MarketStore; keys: KeyStore } | undefined)[]): Promise<unknown> {
  return Promise.all(stores.flatMap((s) => [s?.keys.close(), s?.market.close()]))
}

/** A port free on every given loopback address (the cluster's servers share ports on 127.0.0.1 and 127.0.0.2). */
export async function freePort(hosts: readonly string[], taken: Set<number>): Promise<number> {
  for (;;) {
    const probe = createServer()
    probe.listen(0, hosts[0])
    await once(probe, 'listening')
    const { port } = probe.address() as { port: number }
    const others = await Promise.all(
      hosts.slice(1).map(
        (h) =>
          new Promise<boolean>((resolve) => {
            const s = createServer()
            s.once('error', () => resolve(false))
            s.listen(port, h, () => s.close(() => resolve(true)))
          }),
      ),
    )
    probe.close()
    await once(probe, 'close')
    if (others.every(Boolean) && !taken.has(port)) {
      taken.add(port)
      return port
    }
  }
}

interface Ports {
  http: number
  tcp: number
  interserver: number
}

/** The server config every local deployment uses (scripts/clickhouse/, shared with scripts/local-cluster.sh), its {{NAME}}s filled. */
function template(file: string, values: Record<string, string | number>): string {
  const text = readFileSync(join(repoRoot(), 'scripts', 'clickhouse', file), 'utf8')
  return text.replace(/\{\{(\w+)\}\}/g, (_, name: string) => {
    if (!(name in values)) throw new Error(`scripts/clickhouse/${file}: no value for {{${name}}}`)
    return String(values[name])
  })
}

/** Runs one statement over a server's HTTP interface (POST, so writes too; `body` the data of an INSERT); its answer, trimmed. */
export async function clickhouseSql(httpUrl: string, query: string, body?: string): Promise<string> {
  const r = await fetch(`${httpUrl}/?query=${encodeURIComponent(query)}`, {
    method: 'POST',
    ...(body === undefined ? {} : { body }),
  })
  const text = await r.text()
  if (!r.ok) throw new Error(`${query.slice(0, 200)}: ${text.slice(0, 500)}`)
  return text.trim()
}

/** What a test adds to a server's config: XML inside `<yandex>` (config.d) and inside the default profile (users.d). */
export interface ServerOverrides {
  readonly config?: string
  readonly profile?: string
}

export class ClickHouseServer {
  #child?: ChildProcess
  readonly #dir: string

  private constructor(
    readonly host: string,
    readonly ports: Ports,
    cluster: string | undefined,
    overrides: ServerOverrides,
  ) {
    this.#dir = mkdtempSync(join(tmpdir(), 'mdq-ch-'))
    for (const d of ['log', 'data', 'tmp', 'user_files', 'format_schemas', 'config.d', 'users.d'])
      mkdirSync(join(this.#dir, d))
    const file = (path: string, text: string) => writeFileSync(join(this.#dir, path), text)
    file(
      'config.xml',
      template('config.xml', {
        DIR: this.#dir,
        HOST: host,
        HTTP_PORT: ports.http,
        TCP_PORT: ports.tcp,
        INTERSERVER_PORT: ports.interserver,
      }),
    )
    file('users.xml', template('users.xml', {}))
    if (cluster) file('config.d/cluster.xml', template('cluster.xml', { CLUSTER: cluster, TCP_PORT: ports.tcp }))
    if (overrides.config) file('config.d/test.xml', `<?xml version="1.0"?>\n<yandex>${overrides.config}</yandex>\n`)
    if (overrides.profile)
      file(
        'users.d/test.xml',
        `<?xml version="1.0"?>\n<yandex><profiles><default>${overrides.profile}</default></profiles></yandex>\n`,
      )
  }

  /** A server not yet started, with its config written (the cluster makes its two this way). */
  static prepare(host: string, ports: Ports, cluster?: string): ClickHouseServer {
    return new ClickHouseServer(host, ports, cluster, {})
  }

  /** One server on 127.0.0.1; `overrides` add to its config (a test's limits). */
  static async start(overrides: ServerOverrides = {}): Promise<ClickHouseServer> {
    const taken = new Set<number>()
    const hosts = ['127.0.0.1']
    const server = new ClickHouseServer(
      '127.0.0.1',
      {
        http: await freePort(hosts, taken),
        tcp: await freePort(hosts, taken),
        interserver: await freePort(hosts, taken),
      },
      undefined,
      overrides,
    )
    await server.start()
    return server
  }

  get httpUrl(): string {
    return `http://${this.host}:${this.ports.http}`
  }

  /** The mdq store URL of database `db` (optionally over a cluster). */
  storeUrl(db: string, cluster?: string): string {
    return `clickhouse://${this.host}:${this.ports.http}/${db}${cluster ? `?cluster=${cluster}` : ''}`
  }

  /** A client of database `db` (default: none named) as mdq makes one; the caller closes it. */
  connection(db?: string): Connection {
    return new Connection({ url: this.httpUrl, username: 'default', password: '', ...(db && { database: db }) })
  }

  get pid(): number | undefined {
    return this.#child?.pid
  }

  async start(): Promise<void> {
    this.#child = spawn(BINARY, [`--config-file=${join(this.#dir, 'config.xml')}`], { stdio: 'ignore', cwd: this.#dir })
    const exited = once(this.#child, 'exit')
    const t0 = Date.now()
    for (;;) {
      const ok = await fetch(`${this.httpUrl}/ping`).then(
        (r) => r.ok,
        () => false,
      )
      if (ok) return
      if (this.#child.exitCode !== null || Date.now() - t0 > 60_000) {
        this.#child.kill('SIGKILL')
        await exited
        throw new Error(`clickhouse-server did not start on ${this.httpUrl} (logs in ${this.#dir}/log)`)
      }
      await sleep(50)
    }
  }

  /**
   * Stops the server by its PID and waits until it has exited; the data stays. SIGKILL by default: a
   * crash is the outage tests want, and ClickHouse's clean shutdown takes seconds.
   */
  async stop(signal: 'SIGKILL' | 'SIGTERM' = 'SIGKILL'): Promise<void> {
    const child = this.#child
    if (!child || child.exitCode !== null || child.signalCode !== null) return
    const exited = once(child, 'exit')
    child.kill(signal)
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000)
    await exited
    clearTimeout(timer)
  }

  /**
   * Freezes or thaws the process (a server that accepts connections but never answers). A freeze
   * resolves once every thread is stopped: on a loaded machine a running thread can otherwise still
   * answer a request sent just after the signal.
   */
  async pause(paused: boolean): Promise<void> {
    const child = this.#child
    if (!child?.pid) return
    child.kill(paused ? 'SIGSTOP' : 'SIGCONT')
    if (!paused) return
    const stopped = () => {
      try {
        return readdirSync(`/proc/${child.pid}/task`).every((t) =>
          /^\d+ \(.*\) [tT] /.test(readFileSync(`/proc/${child.pid}/task/${t}/stat`, 'utf8')),
        )
      } catch {
        return true // gone: nothing left to answer
      }
    }
    while (!stopped()) await sleep(5)
  }

  /** Resolves once no merge or mutation runs on the server (background work that would fall on the next measurement). */
  async settled(): Promise<void> {
    const busy = 'SELECT (SELECT count() FROM system.merges) + (SELECT count() FROM system.mutations WHERE is_done = 0)'
    while ((await clickhouseSql(this.httpUrl, busy)) !== '0') await sleep(500)
  }

  async destroy(): Promise<void> {
    await this.pause(false)
    await this.stop()
    rmSync(this.#dir, { recursive: true, force: true })
  }
}

/** Two servers, one shard each, on 127.0.0.1 and 127.0.0.2 with the same ports, as cluster `mdq_two_shards`. */
export class ClickHouseCluster {
  static readonly NAME = 'mdq_two_shards'
  private constructor(readonly servers: readonly ClickHouseServer[]) {}

  static async start(): Promise<ClickHouseCluster> {
    const hosts = ['127.0.0.1', '127.0.0.2']
    const taken = new Set<number>()
    const ports = {
      http: await freePort(hosts, taken),
      tcp: await freePort(hosts, taken),
      interserver: await freePort(hosts, taken),
    }
    const servers = hosts.map((h) => ClickHouseServer.prepare(h, ports, ClickHouseCluster.NAME))
    try {
      await Promise.all(servers.map((s) => s.start()))
    } catch (err) {
      await Promise.all(servers.map((s) => s.destroy()))
      throw err
    }
    return new ClickHouseCluster(servers)
  }

  storeUrl(db: string): string {
    return this.servers[0].storeUrl(db, ClickHouseCluster.NAME)
  }

  async destroy(): Promise<void> {
    await Promise.all(this.servers.map((s) => s.destroy()))
  }
}
