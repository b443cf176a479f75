// scripts/local-cluster.sh end to end, as the docs walk it: start (two ClickHouse shards, Redis, two
// mdq instances, all under one directory), import through the env file it writes, a request through
// each instance (one rate limit shared through Redis), status, stop: every process it started is gone.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, describe } from 'node:test'
import { freePort } from '../helpers/clickhouse.js'
import { clickhouseServer, redisServer, requires } from '../helpers/requirements.js'
import { repoRoot } from '../helpers/shared-data.js'
import { tempDir, writeCsv } from '../helpers/store-files.js'

const need = requires(clickhouseServer(), redisServer())
const DAYS = ['2024-01-02', '2024-01-03', '2024-01-04']

interface Run {
  readonly status: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs bash with `args` to its end (the servers it starts write to files, so its pipes close when it exits). */
async function bash(args: readonly string[], env: NodeJS.ProcessEnv): Promise<Run> {
  const child = spawn('bash', args, { cwd: repoRoot(), env: { ...process.env, ...env } })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d) => (stdout += d))
  child.stderr.on('data', (d) => (stderr += d))
  const [status] = (await once(child, 'close')) as [number | null]
  return { status, stdout, stderr }
}

/** PIDs of running processes whose command line mentions `text`. */
function processesMentioning(text: string): number[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(text)
      } catch {
        return false // gone meanwhile
      }
    })
    .map(Number)
}

describe('scripts/local-cluster.sh', () => {
  const { dir, cleanup } = tempDir('mdq-local-cluster-')
  const cluster = join(dir, 'cluster')
  const script = join(repoRoot(), 'scripts', 'local-cluster.sh')
  let env: NodeJS.ProcessEnv = {}
  after(async () => {
    await bash([script, 'stop', cluster], env) // after a failure midway, too
    cleanup()
  })

  need.it(
    'starts two shards, Redis and two instances, serves an import through both, and stops all of it',
    async () => {
      const taken = new Set<number>()
      const both = ['127.0.0.1', '127.0.0.2']
      const local = ['127.0.0.1']
      env = {
        CH_HTTP_PORT: String(await freePort(both, taken)),
        CH_TCP_PORT: String(await freePort(both, taken)),
        CH_INTERSERVER_PORT: String(await freePort(both, taken)),
        REDIS_PORT: String(await freePort(local, taken)),
        MDQ_PORTS: `${await freePort(local, taken)} ${await freePort(local, taken)}`,
      }
      const started = await bash([script, 'start', cluster], env)
      assert.equal(started.status, 0, started.stderr + started.stdout)
      const store = `clickhouse://127.0.0.1:${env.CH_HTTP_PORT}/mdq?cluster=mdq_local`
      const instances = env.MDQ_PORTS!.split(' ').map((p) => `http://127.0.0.1:${p}`)
      assert.match(
        started.stdout,
        new RegExp(`^127\\.0\\.0\\.2:${env.CH_HTTP_PORT}: created database mdq and tables`, 'm'),
      )
      assert.match(started.stdout, new RegExp(`^store: +${store.replace(/[?.]/g, '\\$&')}$`, 'm'))
      assert.match(started.stdout, new RegExp(`^instances: +${instances.join(' ')} `, 'm'))

      const status = await bash([script, 'status', cluster], env)
      assert.equal(status.status, 0, status.stdout)
      const pids = [...status.stdout.matchAll(/^(\w+): running \(pid (\d+)\)$/gm)].map(
        (m) => [m[1], Number(m[2])] as const,
      )
      assert.deepEqual(
        pids.map(([name]) => name),
        ['ch1', 'ch2', 'redis', 'mdq1', 'mdq2'],
      )

      // Every mdq command takes the store from the env file the script wrote.
      const csv = writeCsv(join(dir, 'bars.csv'), 'symbol,time,open,high,low,close,volume', [
        ...DAYS.map((d, i) => `600000.SH,${d},${10 + i},${11 + i},${9 + i},${10.5 + i},1000`),
        ...DAYS.map((d, i) => `AAPL.US,${d},${180 + i},${182 + i},${179 + i},${181.25 + i},2000`),
      ])
      const mdq = (args: string) => bash(['-c', `source '${cluster}/env' && node bin/mdq.js ${args}`], env)
      const imported = await mdq(`import bars '${csv}'`)
      assert.equal(imported.status, 0, imported.stderr)
      const created = await mdq('keys create --name local --rate 2/min --burst 2')
      assert.equal(created.status, 0, created.stderr)
      const key = created.stdout.trim()

      const closes = async (base: string, symbol: string) => {
        const r = await fetch(`${base}/v1/klines?symbol=${symbol}&period=1d&count=3`, { headers: { 'X-API-Key': key } })
        const body = (await r.json()) as { data?: { close: number[] } }
        return { status: r.status, close: body.data?.close }
      }
      assert.deepEqual(await closes(instances[0], '600000.SH'), { status: 200, close: [10.5, 11.5, 12.5] })
      assert.deepEqual(await closes(instances[1], 'AAPL.US'), { status: 200, close: [181.25, 182.25, 183.25] })
      assert.equal((await closes(instances[0], 'AAPL.US')).status, 429, 'the burst of 2 is shared by both instances')

      const stopped = await bash([script, 'stop', cluster], env)
      assert.equal(stopped.status, 0, stopped.stderr)
      const finished = await bash([script, 'status', cluster], env)
      assert.equal(finished.status, 1)
      assert.equal(finished.stdout, 'ch1: stopped\nch2: stopped\nredis: stopped\nmdq1: stopped\nmdq2: stopped\n')
      for (const [name, pid] of pids)
        assert.throws(() => process.kill(pid, 0), { code: 'ESRCH' }, `${name} (pid ${pid}) still runs`)
      assert.deepEqual(processesMentioning(cluster), [], 'nothing started from the cluster directory runs')
    },
  )
})
