/** @module `mdq copy --from URL --to URL`: a whole store into an empty one (SQLite into ClickHouse), all or nothing. */
import type { Command } from 'commander'
import { copyStore } from '../ingest/store-copy.js'
import { URL_FORMS, displayLocation, parseStoreUrl, withStores } from '../store/backends.js'
import { pauseAt } from './pause-at.js'

export function registerCopy(program: Command): void {
  program
    .command('copy')
    .description(
      'copy every instrument with its bars and ex-factors, and every imported universe, into an empty store, all or nothing (API keys are not copied)',
    )
    .requiredOption('--from <url>', `the store to read: ${URL_FORMS}`)
    .requiredOption('--to <url>', 'the store to write, created if missing; it must hold no data')
    .action(async (o: { from: string; to: string }) => {
      const from = parseStoreUrl(o.from, '--from')
      const to = parseStoreUrl(o.to, '--to')
      const s = await withStores({ store: from, create: false }, (source) =>
        withStores({ store: to, create: true }, (target) =>
          copyStore(source.market, target.market, pauseAt(process.env.MDQ_COPY_PAUSE_AT, 'copy')),
        ),
      )
      const n = (x: number) => x.toLocaleString('en-US')
      process.stdout.write(
        `copied ${displayLocation(from)} to ${displayLocation(to)}: ${n(s.instruments)} instruments, ` +
          `${n(s.bars['1d'])} daily and ${n(s.bars['1m'])} minute bars, ${n(s.events)} ex-factor events, ` +
          `${n(s.statements)} statement versions, ${n(s.universes)} universes in ${s.seconds.toFixed(1)} s\n` +
          `API keys are not copied: create the new store's with mdq keys create --store ${displayLocation(to)}\n`,
      )
    })
}
