/** @module Test helpers around store files: temp dirs, a logical dump, running the CLI. */
import Database from 'better-sqlite3'
import { spawn, spawnSync } from 'node:child_process'
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MARKETS } from '../../src/domain/market.js'
import { daysFromCivil, isoWeekday } from '../../src/domain/time-zone.js'
import { repoRoot } from './shared-data.js'

export function tempDir(prefix = 'mdq-test-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) }
}

/**
 * Every row of the data tables, BLOBs as hex, in key order: two dumps are equal iff the stored
 * data is byte-for-byte the same. The version counters (`meta`, and `live_symbols` and `live_commits`:
 * the commits that changed each symbol) are left out with `withMeta: false`.
 */
export function dumpStore(path: string, { withMeta = true } = {}): string {
  const db = new Database(path, { readonly: true })
  try {
    const has = (t: string) => db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(t)
    const tables: [string, string][] = [
      ['chunks', '1, 2, 3'],
      ['instruments', '1'],
      ['ex_factors', '1, 2'],
      ['financials', '1, 2, 3, 4'],
      ['universes', '1'],
      ['universe_members', '1, 2'],
      ...(withMeta ? [['meta', '1'] as [string, string]] : []),
      // Live data (schema 7 on): appended bars, the latest pushed quotes and depth, the symbols' versions.
      ...(
        [
          ['tail', '1, 2, 3'],
          ['live_quotes', '1'],
          ['live_depth', '1'],
          ...(withMeta
            ? [
                ['live_symbols', '1'],
                ['live_commits', '1'],
              ]
            : []),
        ] as [string, string][]
      ).filter(([t]) => has(t)),
    ]
    return tables
      .map(
        ([t, order]) =>
          `${t}\n` +
          db
            .prepare(`SELECT * FROM ${t} ORDER BY ${order}`)
            .raw()
            .all()
            .map((row) =>
              JSON.stringify(row, (_k, v) => (v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v)),
            )
            .join('\n'),
      )
      .join('\n')
  } finally {
    db.close()
  }
}

export function writeCsv(path: string, header: string, rows: readonly string[]): string {
  writeFileSync(path, [header, ...rows].join('\n') + '\n')
  return path
}

export const MDQ_BIN = () => join(repoRoot(), 'bin', 'mdq.js')

export function runMdq(
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [MDQ_BIN(), ...args], { encoding: 'utf8', env: { ...process.env, ...env } })
  return { status: r.status, stdout: r.stdout, stderr: r.stderr }
}

export function spawnMdq(args: readonly string[], env: NodeJS.ProcessEnv = {}) {
  return spawn(process.execPath, [MDQ_BIN(), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  })
}

/** A 1m CSV of `days` CN trading days for one symbol, every bar with volume `volume`. */
export function minuteCsv(path: string, symbol: string, days: number, volume: number): number {
  const sh = MARKETS.SH
  const lines = ['symbol,time,open,high,low,close,volume']
  let n = 0
  for (let d = daysFromCivil(2015, 1, 5), left = days; left > 0; d++) {
    if (isoWeekday(d) >= 5) continue
    left--
    const midnight = sh.zone.midnightUtc(d)
    for (const s of sh.sessions)
      for (let m = s.open; m < s.close; m++, n++)
        lines.push(`${symbol},${midnight + m * 60_000},10,10.02,9.98,10.01,${volume}`)
  }
  writeFileSync(path, lines.join('\n') + '\n')
  return n
}

/** A copy of the store at `db`, written to `path`, with 600519.SH's daily chunks zeroed (their checksums fail on read). */
export function damagedCopy(db: string, path: string): string {
  copyFileSync(db, path)
  const sqlite = new Database(path)
  sqlite.prepare("UPDATE chunks SET data = zeroblob(length(data)) WHERE symbol = '600519.SH' AND period = '1d'").run()
  sqlite.close()
  return path
}
