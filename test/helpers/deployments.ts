/**
 * @module The deployments the shared HTTP suites run against (Hono style: one suite, every
 * deployment runs it, skipping only by a capability the deployment declares it lacks): the embedded
 * SQLite one, and two mdq instances serving a two-shard ClickHouse cluster and sharing Redis.
 */
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before } from 'node:test'
import type { AppOptions } from '../../src/http/app.js'
import { RedisRateLimiter } from '../../src/auth/rate-limiter.js'
import { POLL_MS } from '../../src/store/clickhouse/clickhouse-market-store.js'
import type { KeyStore } from '../../src/store/key-store.js'
import type { MarketStore } from '../../src/store/market-store.js'
import { ClickHouseCluster } from './clickhouse.js'
import { PATIENT_REDIS_MS, RedisServer } from './redis.js'
import { clickhouseServer, itRequiring, redisServer } from './requirements.js'
import { startServer, type TestServer } from './server.js'
import { runMdq, tempDir } from './store-files.js'

/** What a test may need beyond the HTTP contract itself. */
export type Capability = 'storeFile'

export interface Deployment {
  readonly name: string
  /** A missing prerequisite (a server not installed), or false: a skip here, a failure under CI=true. */
  readonly skip: string | false
  /** The capabilities this deployment lacks, each with the reason. */
  readonly lacks: Partial<Record<Capability, string>>
  /** How long a key change can take to reach a running instance beyond the auth cache's own 0.5 s (a remote store polls). */
  readonly keysPollMs: number
  /** The checks /readyz reports (a shared rate limiter adds its backend). */
  readonly readyChecks: readonly string[]
  /** Starts it over a store that `load` fills (given the store's URL) before any instance starts. */
  start(load: (storeUrl: string) => Promise<unknown> | void, extra?: Partial<AppOptions>): Promise<Deployed>
}

export interface Deployed {
  /** The --store URL, for the mdq CLI. */
  readonly storeUrl: string
  /** Every instance serving the store. */
  readonly instances: readonly TestServer[]
  /** The base URL of the next instance: consecutive requests alternate between the instances. */
  readonly url: string
  /** A key valid on every instance. */
  readonly key: string
  readonly store: MarketStore
  readonly keys: KeyStore
  close(): Promise<void>
}

function deployed(storeUrl: string, instances: readonly TestServer[], close: () => Promise<void>): Deployed {
  let next = 0
  return {
    storeUrl,
    instances,
    get url() {
      return instances[next++ % instances.length].url
    },
    key: instances[0].key,
    store: instances[0].store,
    keys: instances[0].keys,
    close,
  }
}

export const SQLITE: Deployment = {
  name: 'SQLite (one instance)',
  skip: false,
  lacks: {},
  readyChecks: ['store', 'keys'],
  keysPollMs: 0,
  async start(load, extra = {}) {
    const { dir, cleanup } = tempDir()
    const storeUrl = join(dir, 'mdq.db')
    await load(storeUrl)
    const server = await startServer(storeUrl, extra)
    return deployed(storeUrl, [server], async () => {
      await server.close()
      cleanup()
    })
  },
}

/** Two instances on the cluster, one Redis rate-limit budget (defaults high enough never to bite; a key's own quota does). */
export const CLICKHOUSE_CLUSTER: Deployment = {
  name: 'two instances on a two-shard ClickHouse cluster sharing Redis',
  skip: clickhouseServer() || redisServer(),
  readyChecks: ['store', 'keys', 'redis'],
  keysPollMs: POLL_MS,
  lacks: {
    storeFile: 'the store is a ClickHouse cluster, not a file (its outages: test/http/clickhouse-serve.test.ts)',
  },
  async start(load, extra = {}) {
    const [cluster, redis] = await Promise.all([ClickHouseCluster.start(), RedisServer.start()])
    const instances: TestServer[] = []
    const close = async () => {
      await Promise.all(instances.map((s) => s.close()))
      await Promise.all([cluster.destroy(), redis.stop()])
    }
    try {
      const storeUrl = cluster.storeUrl('mdq')
      await load(storeUrl)
      for (let i = 0; i < 2; i++) {
        const rateLimit = {
          limiter: new RedisRateLimiter(redis.url, 'mdq-test:', PATIENT_REDIS_MS),
          defaults: { ratePerMin: 1e9, burst: 1e9 },
          failOpen: false,
        }
        instances.push(await startServer(storeUrl, { rateLimit, ...extra }))
      }
      return deployed(storeUrl, instances, close)
    } catch (err) {
      await close()
      throw err
    }
  },
}

export const DEPLOYMENTS = { sqlite: SQLITE, clickhouse: CLICKHOUSE_CLUSTER } as const

/** A Deployed that exists once the file's `before` hook has started the deployment (one start per file). */
export interface DeploymentHandle extends Deployed {
  readonly deployment: Deployment
  /** `it`, skipped when the deployment cannot run or lacks a capability the test needs. */
  it(name: string, fn: () => Promise<void>, needs?: Capability): void
  /** `mdq ARGS --store <this store>`, asserting success. */
  mdq(args: readonly string[]): string
}

/**
 * Registers the file-level hooks that start `d` over `load`'s data and stop it. `skip`: a missing
 * prerequisite of the file's tests on any deployment (reference data), or false. A missing
 * prerequisite skips each test, or fails it under CI=true; a capability the deployment lacks skips it.
 */
export function useDeployment(
  d: Deployment,
  load: (storeUrl: string) => Promise<unknown> | void,
  { skip = false, extra }: { skip?: string | false; extra?: Partial<AppOptions> } = {},
): DeploymentHandle {
  let started: Deployed | undefined
  const skipAll = skip || d.skip
  before(async () => {
    if (!skipAll) started = await d.start(load, extra)
  })
  after(async () => {
    await started?.close()
  })
  const get = (): Deployed => {
    assert.ok(started, `${d.name} is not started`)
    return started
  }
  return {
    deployment: d,
    get storeUrl() {
      return get().storeUrl
    },
    get instances() {
      return get().instances
    },
    get url() {
      return get().url
    },
    get key() {
      return get().key
    },
    get store() {
      return get().store
    },
    get keys() {
      return get().keys
    },
    close: async () => get().close(),
    it(name, fn, needs) {
      itRequiring(skipAll, name, fn, (needs !== undefined && d.lacks[needs]) || false)
    },
    mdq(args) {
      const r = runMdq(['--store', get().storeUrl, ...args])
      assert.equal(r.status, 0, r.stderr)
      return r.stdout
    },
  }
}

/** Status, content type and body bytes of one answer (ETags differ by design between stores: each has its own data version). */
export async function answer(base: string, key: string, path: string, init: RequestInit = {}): Promise<string> {
  const r = await fetch(`${base}${path}`, {
    ...init,
    headers: { 'X-API-Key': key, 'Content-Type': 'application/json', ...(init.headers as Record<string, string>) },
  })
  return `${r.status} ${r.headers.get('content-type')}\n${await r.text()}`
}

/**
 * Asserts that `subject` answers each request byte for byte as `reference` does, the requests
 * alternating between the subject's instances (so each instance answers its share of every kind);
 * a few run at a time. Returns how many were compared.
 */
export async function assertSameAnswers(
  reference: Deployed,
  subject: Deployed,
  requests: readonly (readonly [string, RequestInit?])[],
  parallel = 8,
): Promise<number> {
  let compared = 0
  let next = 0
  const worker = async () => {
    while (next < requests.length) {
      const i = next++
      const [path, init] = requests[i]
      const instance = i % subject.instances.length
      const [want, got] = await Promise.all([
        answer(reference.instances[0].url, reference.key, path, init),
        answer(subject.instances[instance].url, subject.key, path, init),
      ])
      assert.equal(got, want, `instance ${instance + 1} of ${subject.instances.length}: ${path}`)
      compared++
    }
  }
  await Promise.all(Array.from({ length: parallel }, worker))
  return compared
}
