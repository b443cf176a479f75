#!/usr/bin/env node
// Runs the compiled *.test.js under dist/ with node's test runner (Node 20 has no glob for --test).
// `node scripts/run-tests.js PATTERN...` (also `npm test -- PATTERN`) runs only the files whose path
// contains one of the patterns. A compiled test whose .ts source is gone (a stale dist/ file left by
// a renamed or deleted test) never runs: tsc does not delete outputs.
import { existsSync, readdirSync } from 'node:fs'
import { join, relative } from 'node:path'
import { spawnSync } from 'node:child_process'

const only = process.argv.slice(2)
const files = []
const stale = []
const walk = (dir) => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) walk(path)
    else if (entry.name.endsWith('.test.js') && (only.length === 0 || only.some((o) => path.includes(o)))) {
      const source = relative('dist', path).replace(/\.js$/, '.ts')
      if (existsSync(source)) files.push(path)
      else stale.push(path)
    }
  }
}
walk('dist')
files.sort()
if (stale.length) console.error(`not run (no source file any more): ${stale.join(', ')}`)
if (files.length === 0) {
  console.error(`no test file matches ${only.map((o) => JSON.stringify(o)).join(' or ')}`)
  process.exit(1)
}
const args = [
  '--enable-source-maps',
  '--test',
  '--test-reporter=spec',
  `--test-concurrency=${process.env.MDQ_TEST_CONCURRENCY ?? 2}`,
  ...files,
]
const result = spawnSync(process.execPath, args, { stdio: 'inherit' })
process.exit(result.status ?? 1)
