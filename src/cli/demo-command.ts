/** @module `mdq demo`: writes the deterministic demo data set into the store, an empty one unless --force. */
import type { Command } from 'commander'
import { performance } from 'node:perf_hooks'
import { demoBatch } from '../demo/demo-data.js'
import { MdqError } from '../domain/errors.js'
import { displayLocation, parseStoreUrl, withStores, type StoreLocation } from '../store/backends.js'
import { storeFlags } from './store-flags.js'

/**
 * `store`: a location, or a --store URL or file path. A store that holds instruments or universes is
 * refused unless `force`: the demo's bars and factors of real tickers would merge over the user's.
 */
export async function buildDemo(where: StoreLocation | string, { force = false } = {}): Promise<string> {
  const store = typeof where === 'string' ? parseStoreUrl(where) : where
  const t0 = performance.now()
  const batch = demoBatch()
  await withStores({ store, create: true }, async ({ market }) => {
    if (!force) {
      const [instruments, universes] = await Promise.all([market.listInstruments(), market.readUniverses()])
      if (instruments.length > 0 || universes.length > 0)
        throw new MdqError(
          'BAD_PARAM',
          `${displayLocation(store)} already holds data (${instruments.length} instruments, ${universes.length} universes): the demo writes into an empty store only, since its bars and factors of ${batch.instruments?.map((i) => i.symbol).join(', ')} would merge over any you have; give another --store, or --force to merge anyway`,
        )
    }
    await market.write(batch)
  })
  const bars = (batch.bars ?? []).reduce((n, b) => n + b.bars.timestamp.length, 0)
  return `demo store ${displayLocation(store)}: ${batch.instruments?.length} instruments, ${bars.toLocaleString('en-US')} bars, ${(batch.exFactors ?? []).reduce((n, e) => n + e.events.length, 0)} ex-factor events in ${((performance.now() - t0) / 1000).toFixed(1)} s`
}

export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description(
      'build the demo data set (10 instruments over SH, SZ, HK, US; synthetic prices) into --store, which must be empty',
    )
    .option(
      '--force',
      "write into a store that holds data: the demo's bars and factors merge over those of its ten symbols (a bar or event at the same time is the demo's; others stay)",
      false,
    )
    .action(async (o: { force: boolean }) => {
      process.stdout.write((await buildDemo(storeFlags(program).store, o)) + '\n')
    })
}
