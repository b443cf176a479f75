/** @module What a test needs from the machine (reference data, servers, a browser): skipped per test with a reason, a failure under CI=true. */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { it, type TestContext } from 'node:test'
import { sharedPath } from './shared-data.js'

/** A missing prerequisite's reason, or false when it is there. */
export type Check = string | false

/** CI promises every prerequisite (.ci/run installs them): there a missing one is a failure, never a skip. */
export const IN_CI = process.env.CI === 'true'

const cached = new Map<string, Check>()
const once = (key: string, probe: () => Check): Check => {
  if (!cached.has(key)) cached.set(key, probe())
  return cached.get(key)!
}
const runs = (cmd: string, args: readonly string[]) => spawnSync(cmd, args, { stdio: 'ignore' }).status === 0

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

export const data = (relative: string): Check =>
  existsSync(sharedPath(relative))
    ? false
    : `reference data missing: ${sharedPath(relative)} (clone with ../shared beside the checkout, or set MDQ_SHARED_DATA)`
export const redisServer = (): Check =>
  once('redis', () =>
    runs('redis-server', ['--version'])
      ? false
      : 'redis-server is not installed (Debian package redis-server; .ci/run installs it)',
  )
// `which`, not `clickhouse-server --version`: Debian's 18.16 rejects `--version`.
export const clickhouseServer = (): Check =>
  once('clickhouse', () =>
    runs('which', ['clickhouse-server'])
      ? false
      : 'clickhouse-server is not installed (Debian package clickhouse-server; .ci/run installs it)',
  )
export const chromium = (): Check =>
  existsSync(CHROMIUM) ? false : `no browser at ${CHROMIUM} (Debian package chromium; .ci/run installs it)`
/** Mounting a small tmpfs (root with CAP_SYS_ADMIN, as on a CI machine): a real full disk in a test. */
export const tmpfsMount = (): Check =>
  once('tmpfs', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mdq-tmpfs-probe-'))
    try {
      if (!runs('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir]))
        return 'cannot mount a tmpfs (needs root with CAP_SYS_ADMIN) for a full disk'
      runs('umount', [dir])
      return false
    } finally {
      try {
        rmSync(dir, { recursive: true, force: true })
      } catch {
        // still mounted: left for the machine's owner rather than failing every test file
      }
    }
  })
/** `script` (util-linux) runs a command on a pseudo-terminal: what a user at a terminal sees. */
export const terminal = (): Check =>
  once('script', () =>
    runs('script', ['--version']) ? false : 'script is not installed (Debian package bsdutils, part of every install)',
  )
export const pythonLibs = (...modules: string[]): Check =>
  once(`py:${modules}`, () =>
    runs('/usr/bin/python3', ['-c', `import ${modules.join(', ')}`])
      ? false
      : `python3 cannot import ${modules.join(', ')} (Debian packages python3-*; .ci/run installs them)`,
  )

/**
 * Everything a group of tests needs, checked once. `it` registers a test that is skipped (and so
 * counted as skipped) when something is missing, or that fails with the reason under CI=true.
 * Hooks that set up what the tests need return early when `!met`.
 */
export class Requirements {
  readonly missing: Check
  constructor(...checks: Check[]) {
    this.missing = checks.find((c) => c !== false) ?? false
  }

  get met(): boolean {
    return this.missing === false
  }

  readonly it = (title: string, fn: (t: TestContext) => void | Promise<void>): void =>
    itRequiring(this.missing, title, fn)
}

/**
 * The one rule for a test whose prerequisite may be missing: `it` runs `fn` when nothing is missing;
 * otherwise the test is skipped with the reason, or fails with it under CI=true. `skip` is another
 * reason to skip (a capability the subject lacks by design), honoured also under CI=true.
 */
export function itRequiring(
  missing: Check,
  title: string,
  fn: (t: TestContext) => void | Promise<void>,
  skip: string | false = false,
): void {
  if (missing !== false && IN_CI) it(title, () => assert(missing))
  else it(title, { skip: missing || skip }, fn)
}

function assert(missing: string): never {
  throw new Error(`required under CI=true: ${missing}`)
}

export function requires(...checks: Check[]): Requirements {
  return new Requirements(...checks)
}
