/**
 * @module `mdq vacuum`: removes what the store keeps on disk that no reader sees (a backend that keeps
 * such rows: unfinished imports, superseded or deleted rows, tombstones that hide nothing).
 */
import type { Command } from 'commander'
import { MdqError } from '../domain/errors.js'
import { backendOf, displayLocation, withStores } from '../store/backends.js'
import { storeFlags } from './store-flags.js'

export function registerVacuum(program: Command): void {
  program
    .command('vacuum')
    .description(
      'remove the rows of imports that never committed (rolled back, or killed and silent for --grace seconds), then rows superseded by a newer import or deleted, as of imports committed --grace seconds ago',
    )
    .option(
      '--grace <seconds>',
      'how long an import must have shown no sign of life, or have been committed (ClickHouse: at least 10)',
      '120',
    )
    .action(async (o: { grace: string }) => {
      const flags = storeFlags(program)
      const graceMs = Number(o.grace) * 1000
      const { vacuum, vacuumGrace } = backendOf(flags.store)
      const min = vacuumGrace?.minMs ?? 0
      if (!Number.isFinite(graceMs) || graceMs < min)
        throw new MdqError(
          'BAD_PARAM',
          `--grace '${o.grace}' must be a number of seconds >= ${min / 1000}${vacuumGrace ? `: ${vacuumGrace.why}` : ''}`,
        )
      const shown = displayLocation(flags.store)
      await withStores({ ...flags, create: false }, async ({ market }) => {
        // A backend without vacuum (SQLite rolls an unfinished import back itself) never leaves anything to remove.
        const lines = vacuum
          ? await vacuum(market, { graceMs })
          : ['nothing to remove (this backend keeps no unseen rows)']
        for (const line of lines) process.stdout.write(`${shown}: ${line}\n`)
      })
    })
}
