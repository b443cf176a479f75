// The test runner tells the truth: a missing prerequisite is a skip counted per test (a failure under
// CI=true), a stale compiled test never runs, and `npm test -- PATTERN` runs only matching files.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { repoRoot } from './helpers/shared-data.js'
import { CN_CODES } from './reference/cn.js'

const root = repoRoot()
const tally = (out: string, what: 'pass' | 'fail' | 'skipped' | 'tests') =>
  Number(new RegExp(`^# ${what} (\\d+)$`, 'm').exec(out)?.[1])

/** The environment without this runner's own marks (NODE_TEST_CONTEXT makes a child report to us, not print). */
function cleanEnv(env: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const { CI: _ci, NODE_TEST_CONTEXT: _ctx, ...rest } = process.env
  return { ...rest, ...env }
}

function runFile(file: string, env: NodeJS.ProcessEnv) {
  const r = spawnSync(process.execPath, ['--test', '--test-reporter=tap', file], {
    cwd: root,
    encoding: 'utf8',
    env: cleanEnv(env),
  })
  return { status: r.status, out: r.stdout }
}

describe('test runner', () => {
  // cn-adjustment: one test per CN code, the 600519 event, and two Hikyuu modes.
  const tests = CN_CODES.length + 3
  const file = join('dist', 'test', 'real-data', 'cn-adjustment.test.js')

  it('counts each test of a suite whose reference data is missing as skipped', () => {
    const { status, out } = runFile(file, { MDQ_SHARED_DATA: join(root, 'no-such-folder') })
    assert.equal(status, 0, out)
    assert.equal(tally(out, 'tests'), tests, out)
    assert.equal(tally(out, 'skipped'), tests, out)
    assert.match(out, /# SKIP reference data missing: .*no-such-folder/)
  })

  it('fails every such test under CI=true, naming what is missing', () => {
    const { status, out } = runFile(file, { MDQ_SHARED_DATA: join(root, 'no-such-folder'), CI: 'true' })
    assert.notEqual(status, 0)
    assert.equal(tally(out, 'fail'), tests, out)
    assert.equal(tally(out, 'skipped'), 0, out)
    assert.match(out, /required under CI=true: reference data missing/)
  })

  it('never runs a compiled test whose source is gone, and refuses a pattern that matches nothing', () => {
    const name = `zz-stale-${process.pid}.test.js`
    const stale = join(root, 'dist', 'test', name)
    writeFileSync(stale, "throw new Error('a stale test ran')\n")
    try {
      const r = spawnSync(process.execPath, ['scripts/run-tests.js', name], {
        cwd: root,
        encoding: 'utf8',
        env: cleanEnv(),
      })
      assert.equal(r.status, 1)
      assert.doesNotMatch(r.stdout, /a stale test ran/)
      assert.match(r.stderr, new RegExp(`not run \\(no source file any more\\): .*${name}`))
      assert.match(r.stderr, /no test file matches/)
    } finally {
      rmSync(stale, { force: true })
    }
  })

  it('runs only the files matching a pattern', () => {
    const r = spawnSync(process.execPath, ['scripts/run-tests.js', 'domain/period.test'], {
      cwd: root,
      encoding: 'utf8',
      env: cleanEnv({ MDQ_TEST_CONCURRENCY: '1' }),
    })
    assert.equal(r.status, 0, r.stdout + r.stderr)
    assert.match(r.stdout, /periods/)
    assert.doesNotMatch(r.stdout, /parseSymbol|chunk codec/)
  })
})
