#!/usr/bin/env node
// Runs every compiled *.test.js under dist/ with node's test runner (Node 20 has no glob for --test).
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { spawnSync } from 'node:child_process'

const only = process.argv.slice(2)
const files = []
const walk = (dir) => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) walk(path)
    else if (entry.name.endsWith('.test.js') && (only.length === 0 || only.some((o) => path.includes(o)))) files.push(path)
  }
}
walk('dist')
files.sort()
const args = ['--enable-source-maps', '--test', '--test-reporter=spec', `--test-concurrency=${process.env.MDQ_TEST_CONCURRENCY ?? 2}`, ...files]
const result = spawnSync(process.execPath, args, { stdio: 'inherit' })
process.exit(result.status ?? 1)
