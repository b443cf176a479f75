/** @module `mdq demo`: writes the deterministic demo data set into the store. */
import type { Command } from 'commander'
import { performance } from 'node:perf_hooks'
import { demoBatch } from '../demo/demo-data.js'
import { SqliteStore } from '../store/sqlite/sqlite-store.js'

export async function buildDemo(dbPath: string): Promise<string> {
  const t0 = performance.now()
  const batch = demoBatch()
  const store = SqliteStore.open(dbPath)
  try {
    await store.write(batch)
  } finally {
    await store.close()
  }
  const bars = (batch.bars ?? []).reduce((n, b) => n + b.bars.timestamp.length, 0)
  return `demo store ${dbPath}: ${batch.instruments?.length} instruments, ${bars.toLocaleString('en-US')} bars, ${(batch.exFactors ?? []).reduce((n, e) => n + e.events.length, 0)} ex-factor events in ${((performance.now() - t0) / 1000).toFixed(1)} s`
}

export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description('build the demo data set (10 instruments over SH, SZ, HK, US; synthetic prices) into --db')
    .action(async () => {
      process.stdout.write((await buildDemo(program.opts<{ db: string }>().db)) + '\n')
    })
}
