/** @module A real mdq server on an ephemeral loopback port over a real SQLite file, for end-to-end tests. */
import type { FastifyInstance } from 'fastify'
import { request } from 'node:http'
import { join } from 'node:path'
import { buildApp, type AppOptions } from '../../src/http/app.js'
import { generateKey, hashKey } from '../../src/auth/api-keys.js'
import { buildDemo } from '../../src/cli/demo-command.js'
import { openStores, parseStoreUrl, type StoreLocation } from '../../src/store/backends.js'
import { poolRunner } from '../../src/runner/query-pool.js'
import type { KeyScope, KeyStore } from '../../src/store/key-store.js'
import type { MarketStore } from '../../src/store/market-store.js'

export interface TestServer {
  readonly url: string
  readonly app: FastifyInstance
  readonly store: MarketStore
  /** Where the store is (undefined for one in memory): a worker thread opens it there. */
  readonly location?: StoreLocation
  readonly keys: KeyStore
  readonly key: string
  close(): Promise<void>
}

export async function newKey(
  keys: KeyStore,
  name = 'test',
  quota: { ratePerMin?: number; burst?: number } = {},
  scope: KeyScope = 'read',
): Promise<string> {
  const key = generateKey()
  await keys.createKey({
    name,
    hash: hashKey(key),
    ratePerMin: quota.ratePerMin ?? null,
    burst: quota.burst ?? null,
    scope,
  })
  return key
}

/**
 * MDQ_TEST_WORKERS=N runs the HTTP suites with their klines queries in a pool of N worker threads
 * (as `mdq serve --workers N`); unset or 0: in the main thread.
 */
const TEST_WORKERS = Number(process.env.MDQ_TEST_WORKERS ?? 0)

/** `port`: 0 for a free one; a given port restarts a server where its clients reconnect. */
export async function startServer(dbPath: string, extra: Partial<AppOptions> = {}, port = 0): Promise<TestServer> {
  const { market: store, keys } = await openStores({ store: dbPath, create: true })
  const location = dbPath === ':memory:' ? undefined : parseStoreUrl(dbPath)
  const runner =
    extra.runner === undefined && TEST_WORKERS > 0 && location
      ? poolRunner(TEST_WORKERS, { store: location }, { blockingReads: true })
      : undefined
  const app = await buildApp({ store, keys, ...(runner && { runner }), ...extra })
  await app.listen({ port, host: '127.0.0.1' })
  const key = await newKey(keys)
  return {
    url: `http://127.0.0.1:${(app.server.address() as { port: number }).port}`,
    app,
    store,
    ...(location && { location }),
    keys,
    key,
    close: async () => {
      await app.close()
      await Promise.all([store.close(), keys.close(), runner?.close()])
    },
  }
}

export async function demoDb(dir: string): Promise<string> {
  const path = join(dir, 'demo.db')
  await buildDemo(path)
  return path
}

export interface Answer<T = unknown> {
  status: number
  headers: Headers
  body: T
}

export async function getJson<T = unknown>(url: string, init: RequestInit = {}): Promise<Answer<T>> {
  const res = await fetch(url, init)
  const text = await res.text()
  return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : undefined) as T }
}

/** A raw request (no automatic decompression), for compression and odd-request tests. */
export function rawRequest(
  url: string,
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }))
    })
    req.on('error', reject)
    req.end()
  })
}

export interface KlinesData {
  timestamp: number[]
  open: number[]
  high: number[]
  low: number[]
  close: number[]
  volume: number[]
  amount: number[]
  prev_close: number[]
}
