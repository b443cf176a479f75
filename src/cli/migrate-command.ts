/** @module `mdq migrate`: creates the store (and its keys) or upgrades their schema, then exits. */
import type { Command } from 'commander'
import { withStores } from './open-stores.js'
import { displayStore, storeUrls } from './store-flags.js'

export function registerMigrate(program: Command): void {
  program
    .command('migrate')
    .description('create the store and its keys, or upgrade their schema to this version of mdq')
    .action(async () => {
      const urls = storeUrls(program)
      await withStores({ ...urls, create: true }, async ({ market, keys }) => {
        await market.check()
        await keys.check()
      })
      process.stdout.write(
        `store ${displayStore(urls.store)} is at the current schema${urls.keys ? `; keys at ${displayStore(urls.keys)}` : ''}\n`,
      )
    })
}
