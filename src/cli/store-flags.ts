/** @module The global `--store` / `--db` / `--keys` flags (and MDQ_STORE, MDQ_DB, MDQ_KEYS) shared by every command. */
import { Option, type Command } from 'commander'
import { DEFAULT_STORE } from './open-stores.js'

export function addStoreFlags(program: Command): Command {
  return program
    .addOption(
      new Option(
        '--store <url>',
        'the market data: sqlite:PATH (or a file path) or clickhouse://[user[:password]@]host:port/database[?cluster=NAME]',
      )
        .env('MDQ_STORE')
        .default(DEFAULT_STORE),
    )
    .addOption(new Option('--db <path>', 'alias of --store sqlite:PATH').env('MDQ_DB'))
    .addOption(
      new Option('--keys <url>', 'the API keys, if not beside the market data (sqlite: <store>.keys.db)').env(
        'MDQ_KEYS',
      ),
    )
}

const RANK: Record<string, number> = { cli: 3, env: 2, default: 1 }

/** The store and keys URLs the user chose: of --store and --db, the one given most directly (command line, then env). */
export function storeUrls(program: Command): { store: string; keys?: string } {
  const o = program.opts<{ store: string; db?: string; keys?: string }>()
  const rank = (name: string) => RANK[program.getOptionValueSource(name) ?? ''] ?? 0
  const store = o.db !== undefined && rank('db') >= rank('store') ? `sqlite:${o.db}` : o.store
  return { store, ...(o.keys !== undefined && { keys: o.keys }) }
}

/** The file of a sqlite store URL, for messages and for `mdq start`'s first-run check; undefined for other backends. */
export function displayStore(url: string): string {
  return url.startsWith('sqlite:') ? url.slice('sqlite:'.length) : url.replace(/\/\/[^@/]*@/, '//')
}
