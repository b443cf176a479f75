/** @module Running the official TickFlow Python SDK (../shared/clients/tickflow-python) with Debian's python3, for end-to-end tests. */
import { execFile, spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { repoRoot } from './shared-data.js'

export const PYTHON = '/usr/bin/python3'
export const SDK_DIR = process.env.MDQ_TICKFLOW_SDK ?? resolve(repoRoot(), '..', 'shared', 'clients', 'tickflow-python')

/** Why the SDK cannot run here (folder, interpreter or a library missing), or false when it can. */
export function sdkMissing(): string | false {
  if (!existsSync(join(SDK_DIR, 'tickflow', '__init__.py')))
    return `TickFlow SDK missing: ${SDK_DIR} (clone with ../shared beside the checkout)`
  if (!existsSync(PYTHON)) return `${PYTHON} missing (apt-get install python3)`
  const probe = spawnSync(PYTHON, ['-c', 'import httpx, pandas, typing_extensions'], { encoding: 'utf8' })
  if (probe.status !== 0)
    return `python libraries missing (apt-get install python3-httpx python3-pandas python3-typing-extensions): ${probe.stderr.trim().split('\n').pop()}`
  return false
}

/**
 * The `skip` option of an SDK test: the reason when the SDK cannot run, except under CI=true, where
 * the test runs and fails on `sdkMissing()` instead (a missing fixture is a failure in CI).
 */
export function sdkSkip(): string | false {
  const missing = sdkMissing()
  return missing && process.env.CI !== 'true' ? missing : false
}

/** Runs test/sdk/<script> with the SDK on PYTHONPATH (asynchronously: the server may be in this process) and parses its JSON stdout. */
export function runSdkScript<T>(script: string, args: readonly string[]): Promise<T> {
  const missing = sdkMissing()
  if (missing) return Promise.reject(new Error(missing))
  return new Promise((resolvePromise, reject) => {
    execFile(
      PYTHON,
      [join(repoRoot(), 'test', 'sdk', script), ...args],
      { env: { ...process.env, PYTHONPATH: SDK_DIR }, maxBuffer: 256 << 20, timeout: 300_000 },
      (err, stdout, stderr) => {
        if (err) return reject(new Error(`${script} failed: ${err.message}\n${stderr}`))
        try {
          resolvePromise(JSON.parse(stdout) as T)
        } catch {
          reject(new Error(`${script} printed no JSON:\n${stdout.slice(0, 2000)}\n${stderr}`))
        }
      },
    )
  })
}
