/** @module `mdq demo`: writes the deterministic demo data set into the store. */
import type { Command } from 'commander'
import { performance } from 'node:perf_hooks'
import { demoBatch } from '../demo/demo-data.js'
import { displayLocation, parseStoreUrl, withStores, type StoreLocation } from '../store/backends.js'
import { storeFlags } from './store-flags.js'

/** `store`: a location, or a --store URL or file path. */
export async function buildDemo(where: StoreLocation | string): Promise<string> {
  const store = typeof where === 'string' ? parseStoreUrl(where) : where
  const t0 = performance.now()
  const batch = demoBatch()
  await withStores({ store, create: true }, ({ market }) => market.write(batch))
  const bars = (batch.bars ?? []).reduce((n, b) => n + b.bars.timestamp.length, 0)
  return `demo store ${displayLocation(store)}: ${batch.instruments?.length} instruments, ${bars.toLocaleString('en-US')} bars, ${(batch.exFactors ?? []).reduce((n, e) => n + e.events.length, 0)} ex-factor events in ${((performance.now() - t0) / 1000).toFixed(1)} s`
}

export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description('build the demo data set (10 instruments over SH, SZ, HK, US; synthetic prices) into --store')
    .action(async () => {
      process.stdout.write((await buildDemo(storeFlags(program).store)) + '\n')
    })
}
