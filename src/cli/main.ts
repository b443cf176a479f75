/** @module `mdq`: the command line and the only composition root (flags and env -> Config -> run). */
import { Command } from 'commander'
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { MdqError } from '../domain/errors.js'
import { registerImport } from './import-command.js'
import { registerKeys } from './keys-command.js'
import { registerDemo } from './demo-command.js'
import { registerServe } from './serve-command.js'
import { registerCorrections } from './delete-command.js'
import { registerMigrate } from './migrate-command.js'
import { registerVacuum } from './vacuum-command.js'
import { registerCopy } from './copy-command.js'
import { registerReplay } from './replay-command.js'
import { addStoreFlags, oneLineErrors } from './store-flags.js'

const { version } = JSON.parse(
  readFileSync(join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'package.json'), 'utf8'),
) as { version: string }

const program = addStoreFlags(
  new Command('mdq').description('Self-hosted market data query service (TickFlow-compatible API)'),
).version(version, '-V, --version', 'print the version of mdq')

registerImport(program)
registerKeys(program)
registerDemo(program)
registerServe(program)
registerCorrections(program)
registerMigrate(program)
registerVacuum(program)
registerCopy(program)
registerReplay(program)
oneLineErrors(program)

try {
  await program.parseAsync(process.argv)
} catch (err) {
  // One line for the operator; the stack only when asked for (MDQ_DEBUG=1) or for a bug.
  const known = err instanceof MdqError || (err instanceof Error && 'code' in err)
  process.stderr.write(`mdq: ${err instanceof Error ? err.message : String(err)}\n`)
  if (process.env.MDQ_DEBUG || !known) process.stderr.write(`${err instanceof Error ? err.stack : ''}\n`)
  process.exitCode = 1
}
