/** @module `mdq keys create|list|revoke|set-rate`: API keys, stored only as hashes. */
import { InvalidArgumentError, type Command } from 'commander'
import { generateKey, hashKey } from '../auth/api-keys.js'
import { MdqError } from '../domain/errors.js'
import { KEY_SCOPES, isKeyScope, type KeyScope, type KeyStore } from '../store/key-store.js'
import { openKeyStore } from '../store/backends.js'
import { storeFlags } from './store-flags.js'

/** `N/min`, `N/s` or a bare N (per minute) -> requests per minute; `off` -> 0 (only where allowed). */
export function parseRate(value: string): number {
  if (value.trim() === 'off') return 0
  const m = /^(\d+(?:\.\d+)?)(?:\/(min|s))?$/.exec(value.trim())
  if (!m || !(Number(m[1]) > 0)) throw new InvalidArgumentError('expected a rate like 600/min or 10/s')
  return m[2] === 's' ? Number(m[1]) * 60 : Number(m[1])
}

function positiveRate(value: string): number {
  const r = parseRate(value)
  if (r === 0) throw new InvalidArgumentError('a key quota must be a positive rate')
  return r
}

export function positiveInt(value: string): number {
  const n = Number(value)
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a positive integer')
  return n
}

function scopeOf(value: string): KeyScope {
  if (!isKeyScope(value)) throw new InvalidArgumentError(`must be one of ${KEY_SCOPES.join(', ')}`)
  return value
}

/** A key's name: shown in `keys list`'s tab-separated lines and in the logs, so one line of text. */
function keyName(value: string): string {
  const name = value.trim()
  if (name === '' || name.length > 100) throw new InvalidArgumentError('must be 1 to 100 characters')
  if ([...name].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f))
    throw new InvalidArgumentError('must not hold tabs, line breaks or other control characters')
  return name
}

export function registerKeys(program: Command): void {
  const keys = program.command('keys').description('manage API keys')
  const withStore = async (fn: (store: KeyStore) => Promise<void>) => {
    const store = await openKeyStore(storeFlags(program))
    try {
      await fn(store)
    } finally {
      await store.close()
    }
  }
  const noSuchKey = (id: number) => new MdqError('BAD_PARAM', `no key with id ${id} (see mdq keys list)`)

  keys
    .command('create')
    .description('create a key; prints only the plaintext key (shown this once)')
    .requiredOption('--name <name>', 'who or what the key is for (1-100 characters, no tabs or line breaks)', keyName)
    .option('--rate <rate>', 'own quota for the limited routes, e.g. 600/min', positiveRate)
    .option('--burst <n>', 'own burst size', positiveInt)
    .option(
      '--scope <scope>',
      'read: the data routes; ingest: also push on the ingest listener; admin: everything',
      scopeOf,
      'read',
    )
    .action(async (o: { name: string; rate?: number; burst?: number; scope: KeyScope }) => {
      await withStore(async (store) => {
        const key = generateKey()
        await store.createKey({
          name: o.name,
          hash: hashKey(key),
          ratePerMin: o.rate ?? null,
          burst: o.burst ?? null,
          scope: o.scope,
        })
        process.stdout.write(key + '\n')
      })
    })

  keys
    .command('list')
    .description(
      'list keys (never their plaintext): id, name, scope, status, quota, created, tab-separated under a header',
    )
    .action(async () => {
      await withStore(async (store) => {
        const list = await store.listKeys()
        process.stdout.write('id\tname\tscope\tstatus\tquota\tcreated\n')
        for (const k of list) {
          const status = k.revokedMs ? `revoked ${new Date(k.revokedMs).toISOString()}` : 'active'
          const quota =
            k.ratePerMin === null && k.burst === null
              ? 'default quota'
              : `${k.ratePerMin === null ? 'default rate' : `${k.ratePerMin}/min`} burst ${k.burst ?? 'default'}`
          process.stdout.write(
            `${k.id}\t${k.name}\t${k.scope}\t${status}\t${quota}\t${new Date(k.createdMs).toISOString()}\n`,
          )
        }
        if (list.length === 0) process.stderr.write('no keys yet: create one with mdq keys create --name NAME\n')
      })
    })

  keys
    .command('revoke')
    .description('revoke a key by id (takes effect within a second, also in running servers)')
    .argument('<id>', 'key id from `mdq keys list`', positiveInt)
    .action(async (id: number) => {
      await withStore(async (store) => {
        if (!(await store.revokeKey(id))) throw noSuchKey(id)
        process.stdout.write(`revoked key ${id}\n`)
      })
    })

  keys
    .command('set-rate')
    .description("change a key's own quota (omit both to go back to the defaults)")
    .argument('<id>', 'key id', positiveInt)
    .option('--rate <rate>', 'e.g. 600/min', positiveRate)
    .option('--burst <n>', 'burst size', positiveInt)
    .action(async (id: number, o: { rate?: number; burst?: number }) => {
      await withStore(async (store) => {
        if (!(await store.setKeyRate(id, o.rate ?? null, o.burst ?? null))) throw noSuchKey(id)
        process.stdout.write(
          `key ${id}: ${o.rate ? `${o.rate}/min` : 'default rate'}, ${o.burst ? `burst ${o.burst}` : 'default burst'}\n`,
        )
      })
    })
}
