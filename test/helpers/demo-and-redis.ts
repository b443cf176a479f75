/** @module A test file's demo store and, when its Redis requirement is met, a Redis server: made before its tests, removed after. */
import { after, before } from 'node:test'
import { RedisServer } from './redis.js'
import { demoDb } from './server.js'
import { tempDir } from './store-files.js'

export interface DemoAndRedis {
  /** The temp dir the store is in (for the test's own files too). */
  readonly dir: string
  /** The demo store's path, set once `before` has run. */
  db: string
  redis: RedisServer | undefined
}

export function demoAndRedis(needRedis: { readonly met: boolean }): DemoAndRedis {
  const { dir, cleanup } = tempDir()
  const env: DemoAndRedis = { dir, db: '', redis: undefined }
  before(async () => {
    env.db = await demoDb(dir)
    if (needRedis.met) env.redis = await RedisServer.start()
  })
  after(async () => {
    await env.redis?.stop()
    cleanup()
  })
  return env
}
