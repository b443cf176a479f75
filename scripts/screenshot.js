#!/usr/bin/env node
// `npm run screenshot`: regenerates docs/chart.png (shown in the README) through the browser test;
// `npm test` writes its screenshot to a temp dir and never touches the tracked file.
import { spawnSync } from 'node:child_process'
import { resolve } from 'node:path'

const env = { ...process.env, MDQ_SCREENSHOT: resolve('docs', 'chart.png'), CI: 'true' } // CI: no browser is a failure, not a skip
const result = spawnSync(process.execPath, ['scripts/run-tests.js', 'test/browser/chart-page'], {
  stdio: 'inherit',
  env,
})
process.exit(result.status ?? 1)
