/** @module `mdq migrate`: creates the store (and its keys) or upgrades their schema, then exits. */
import type { Command } from 'commander'
import { backendOf, displayLocation, withStores } from '../store/backends.js'
import { storeFlags } from './store-flags.js'

export function registerMigrate(program: Command): void {
  program
    .command('migrate')
    .description('create the store and its keys, or upgrade their schema to this version of mdq')
    .action(async () => {
      const flags = storeFlags(program)
      const created = await backendOf(flags.store).migrate?.(flags.store)
      for (const line of created ?? []) process.stdout.write(line + '\n')
      await withStores({ ...flags, create: true }, async ({ market, keys }) => {
        await market.check()
        await keys.check()
      })
      process.stdout.write(
        `store ${displayLocation(flags.store)} is at the current schema${flags.keys ? `; keys at ${displayLocation(flags.keys)}` : ''}\n`,
      )
    })
}
