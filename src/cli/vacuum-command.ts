/**
 * @module `mdq vacuum`: removes what imports that never committed left on disk, then the committed rows
 * no reader sees any more (superseded or deleted) and the tombstones that hide nothing (a backend that keeps such rows).
 */
import type { Command } from 'commander'
import { MdqError } from '../domain/errors.js'
import type { CompactionReport } from '../store/clickhouse/compaction.js'
import { withStores } from './open-stores.js'
import { displayStore, storeUrls } from './store-flags.js'

/** A store that can vacuum (ClickHouse keeps an unfinished import's rows, and superseded and deleted ones, invisible, until then). */
interface Vacuumable {
  vacuum(options?: { graceMs?: number }): Promise<number>
  compact(options?: { graceMs?: number }): Promise<CompactionReport>
}
const canVacuum = (store: object): store is Vacuumable => typeof (store as Partial<Vacuumable>).vacuum === 'function'

export function registerVacuum(program: Command): void {
  program
    .command('vacuum')
    .description(
      'remove the rows of imports that never committed (rolled back, or killed and silent for --grace seconds), then rows superseded by a newer import or deleted, as of imports committed --grace seconds ago',
    )
    .option('--grace <seconds>', 'how long an import must have shown no sign of life, or have been committed', '120')
    .action(async (o: { grace: string }) => {
      const urls = storeUrls(program)
      const graceMs = Number(o.grace) * 1000
      if (!Number.isFinite(graceMs) || graceMs < 0)
        throw new MdqError('BAD_PARAM', `--grace '${o.grace}' must be a number of seconds >= 0`)
      await withStores({ ...urls, create: false }, async ({ market }) => {
        // SQLite rolls an unfinished import back itself: nothing is ever left to remove.
        const removed = canVacuum(market) ? await market.vacuum({ graceMs }) : 0
        process.stdout.write(`${displayStore(urls.store)}: removed the rows of ${removed} unfinished import(s)\n`)
        if (!canVacuum(market)) return
        const c = await market.compact({ graceMs })
        process.stdout.write(
          `${displayStore(urls.store)}: removed ${c.supersededRows} superseded and ${c.hiddenRows} deleted row(s), ${c.tombstones} tombstone(s)${c.pending ? ' (removals still running: the tombstones go on a later vacuum)' : ''}\n`,
        )
      })
    })
}
