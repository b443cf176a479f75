// `npm start` compiles only when dist/ is behind src/: a start from current output serves without
// running tsc; after an edit it compiles first; a build that fails is reported and never served.
// Each case runs the real `npm start` in a copy of the checkout (its own src/ and dist/, the
// repository's node_modules), so touching sources never disturbs the build other tests run from.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { cpSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { demoDb } from '../helpers/server.js'
import { repoRoot } from '../helpers/shared-data.js'
import { tempDir } from '../helpers/store-files.js'
import { until } from '../helpers/wait.js'

const { dir, cleanup } = tempDir('mdq-npm-start-')
const checkout = join(dir, 'checkout')
const mainJs = join(checkout, 'dist', 'src', 'cli', 'main.js')
let db: string

before(async () => {
  db = await demoDb(dir)
  const root = repoRoot()
  mkdirSync(checkout)
  const copy = (what: string) =>
    cpSync(join(root, what), join(checkout, what), { recursive: true, preserveTimestamps: true })
  for (const what of ['package.json', 'tsconfig.json', 'bin', 'scripts', 'src', 'test', join('dist', 'src')]) copy(what)
  for (const what of ['node_modules', 'web']) symlinkSync(join(root, what), join(checkout, what))
})
after(cleanup)

/** Runs `npm start` in the copy until it serves (then stops it) or exits; what it printed and how it ended. */
async function npmStart(args: readonly string[], env: NodeJS.ProcessEnv = {}) {
  const child = spawn('npm', ['start', ...args], {
    cwd: checkout,
    env: { ...process.env, MDQ_STORE: `sqlite:${db}`, MDQ_WORKERS: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // its own process group: npm, the shell and node stop together
  })
  let out = ''
  child.stdout.on('data', (d) => (out += d))
  child.stderr.on('data', (d) => (out += d))
  const exited = once(child, 'exit').then(([code]) => code as number | null)
  let ended = false
  void exited.then(() => (ended = true))
  try {
    // A compile takes a minute on a loaded two-core machine.
    await until(() => ended || /on http:\/\/127\.0\.0\.1:\d+/.test(out), 'npm start to serve or exit', {
      deadlineMs: 240_000,
    })
    const port = /on http:\/\/127\.0\.0\.1:(\d+)/.exec(out)?.[1]
    const health = port === undefined ? undefined : (await fetch(`http://127.0.0.1:${port}/healthz`)).status
    return { out, health, exitCode: ended ? await exited : undefined }
  } finally {
    if (!ended) process.kill(-child.pid!, 'SIGTERM')
    await exited
    // npm may exit before the server it started has closed its store: the group must be gone before
    // the next start (or the directory's removal) meets its files.
    await until(() => !groupAlive(child.pid!), "npm start's processes to end")
  }
}

/** Whether any process of the group `pgid` is still running (a zombie, exited and not yet reaped, is not). */
function groupAlive(pgid: number): boolean {
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue
    let stat: string
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    } catch {
      continue // gone meanwhile
    }
    // pid (comm) state ppid pgrp ...: comm may hold spaces, so read after its closing parenthesis.
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    if (Number(pgrp) === pgid && state !== 'Z') return true
  }
  return false
}

describe('npm start', () => {
  it('from a current build serves at once, without compiling (npm start -- --port N)', async () => {
    const built = statSync(mainJs).mtimeMs
    const run = await npmStart(['--', '--port', '0'])
    assert.equal(run.health, 200, run.out)
    assert.doesNotMatch(run.out, /Compiling|tsc -p/)
    assert.equal(statSync(mainJs).mtimeMs, built, 'dist/ was rewritten')
  })

  it('after a source edit compiles first; a failing build is reported and not served (PORT=N npm start)', async () => {
    const edited = join(checkout, 'src', 'domain', 'bars.ts')
    const source = readFileSync(edited, 'utf8')
    const built = statSync(mainJs).mtimeMs
    writeFileSync(edited, `${source}\nexport const notANumber: number = 'a string'\n`)
    const failed = await npmStart([], { PORT: '0' })
    assert.notEqual(failed.exitCode, 0, failed.out)
    assert.equal(failed.health, undefined, failed.out)
    assert.match(failed.out, /Compiling TypeScript \(sources changed since the last build\)/)
    assert.match(failed.out, /bars\.ts.*error TS2322/)

    // Nothing emitted (noEmitOnError): the output stays older than the sources, so the next start tries again.
    assert.equal(statSync(mainJs).mtimeMs, built, 'a failed build wrote dist/')

    writeFileSync(edited, source)
    const fixed = await npmStart([], { PORT: '0' })
    assert.equal(fixed.health, 200, fixed.out)
    assert.match(fixed.out, /Compiling TypeScript/)
    assert.ok(statSync(mainJs).mtimeMs > built, 'dist/ was rebuilt')
  })
})
