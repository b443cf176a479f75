// npm run bench: every benchmark, one after another, each printing its own baseline and ratio.
import { spawnSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const only = process.argv.slice(2)
for (const name of [
  'domain.bench.js',
  'import.bench.js',
  'http.bench.js',
  'batch.bench.js',
  'store.bench.js',
  'read-mapping.bench.js',
  'series-index.bench.js',
  'uncached.bench.js',
  'bulk.bench.js',
  'deflate.bench.js',
  'compression.bench.js',
  'work.bench.js',
  'clickhouse.bench.js',
  'commit-log.bench.js',
  'live.bench.js',
  'fanout.bench.js',
]) {
  if (only.length && !only.some((o) => name.includes(o))) continue
  const result = spawnSync(process.execPath, ['--max-old-space-size=8192', join(here, name)], { stdio: 'inherit' })
  if (result.status !== 0) process.exit(result.status ?? 1)
}
