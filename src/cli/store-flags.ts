/** @module The global `--store` / `--db` / `--keys` flags (and MDQ_STORE, MDQ_DB, MDQ_KEYS) shared by every command, parsed once here; usage errors as one line. */
import { Option, type Command } from 'commander'
import { DEFAULT_STORE, URL_FORMS, parseStoreUrl, type StoreLocation } from '../store/backends.js'

export function addStoreFlags(program: Command): Command {
  return program
    .addOption(new Option('--store <url>', `the market data: ${URL_FORMS}`).env('MDQ_STORE').default(DEFAULT_STORE))
    .addOption(new Option('--db <path>', 'alias of --store sqlite:PATH').env('MDQ_DB'))
    .addOption(
      new Option('--keys <url>', 'the API keys, if not where the store keeps them (sqlite: <store>.keys.db)').env(
        'MDQ_KEYS',
      ),
    )
}

const RANK: Record<string, number> = { cli: 3, env: 2, default: 1 }

/** Where the chosen store and keys are. */
export interface StoreFlags {
  readonly store: StoreLocation
  readonly keys?: StoreLocation
  /** Whether --store is the default (messages then need not repeat it). */
  readonly isDefault: boolean
}

/** The store and keys the user chose: of --store and --db, the one given most directly (command line, then env). */
export function storeFlags(program: Command): StoreFlags {
  const o = program.opts<{ store: string; db?: string; keys?: string }>()
  const rank = (name: string) => RANK[program.getOptionValueSource(name) ?? ''] ?? 0
  const url = o.db !== undefined && rank('db') >= rank('store') ? `sqlite:${o.db}` : o.store
  return {
    store: parseStoreUrl(url),
    ...(o.keys !== undefined && { keys: parseStoreUrl(o.keys, '--keys') }),
    isDefault: url === DEFAULT_STORE,
  }
}

/**
 * A usage error of any command (a missing argument, an unknown option, a value not among the
 * choices) as one line on stderr, as every other error is, naming the help that shows the usage.
 */
export function oneLineErrors(cmd: Command, path = cmd.name()): void {
  cmd.configureOutput({
    outputError: (text, write) => write(`mdq: ${text.replace(/^error: /, '').trim()} (see ${path} --help)\n`),
  })
  for (const sub of cmd.commands) oneLineErrors(sub, `${path} ${sub.name()}`)
}
