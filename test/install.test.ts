// Installing mdq as the README says (`npm ci` on Node 20) is quiet and honest: every locked package
// supports every Node version package.json promises, and npm itself reports no EBADENGINE.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { copyFileSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import semver from 'semver'
import { repoRoot } from './helpers/shared-data.js'
import { tempDir } from './helpers/store-files.js'

const root = repoRoot()
const readJson = <T>(file: string) => JSON.parse(readFileSync(join(root, file), 'utf8')) as T
const promised = readJson<{ engines: { node: string } }>('package.json').engines.node
const locked = readJson<{ packages: Record<string, { version?: string; engines?: { node?: string } }> }>(
  'package-lock.json',
).packages

describe('install', () => {
  it('every locked package supports the lowest Node version of each range package.json promises', () => {
    // "^20.19.0 || ^22.13.0 || >=24" promises 20.19.0, 22.13.0 and 24.0.0 (and what follows each).
    const lowest = new semver.Range(promised).set.map(
      (comparators) => semver.minVersion(comparators.map((c) => c.value).join(' '))!.version,
    )
    assert.ok(
      lowest.some((v) => semver.major(v) === 20),
      `package.json promises Node 20 (${promised})`,
    )
    const refused = Object.entries(locked).flatMap(([path, pkg]) =>
      lowest
        .filter((v) => pkg.engines?.node !== undefined && !semver.satisfies(v, pkg.engines.node))
        .map((v) => `${path.replace(/^.*node_modules\//, '')}@${pkg.version} needs ${pkg.engines!.node}, not ${v}`),
    )
    assert.deepEqual(refused, [])
  })

  it('`npm ci` of the lock file prints no EBADENGINE on this Node', () => {
    const { dir, cleanup } = tempDir('mdq-npm-ci-')
    after(cleanup)
    for (const file of ['package.json', 'package-lock.json']) copyFileSync(join(root, file), join(dir, file))
    // A dry run reads the whole lock file and checks every engine, but fetches and builds nothing.
    const r = spawnSync(
      'npm',
      ['ci', '--dry-run', '--ignore-scripts', '--offline', '--no-audit', '--no-fund', '--cache', join(dir, 'cache')],
      { cwd: dir, encoding: 'utf8' },
    )
    assert.equal(r.status, 0, r.stderr)
    assert.doesNotMatch(r.stderr + r.stdout, /EBADENGINE/)
  })
})
