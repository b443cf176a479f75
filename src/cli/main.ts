/** @module `mdq`: the command line and the only composition root (flags and env -> Config -> run). */
import { Command } from 'commander'
import { MdqError } from '../domain/errors.js'
import { registerImport } from './import-command.js'
import { registerKeys } from './keys-command.js'
import { registerDemo } from './demo-command.js'
import { registerServe } from './serve-command.js'
import { registerCorrections } from './delete-command.js'
import { registerMigrate } from './migrate-command.js'
import { registerVacuum } from './vacuum-command.js'
import { registerReplay } from './replay-command.js'
import { addStoreFlags } from './store-flags.js'

const program = addStoreFlags(
  new Command('mdq').description('Self-hosted market data query service (TickFlow-compatible API)'),
).showHelpAfterError()

registerImport(program)
registerKeys(program)
registerDemo(program)
registerServe(program)
registerCorrections(program)
registerMigrate(program)
registerVacuum(program)
registerReplay(program)

try {
  await program.parseAsync(process.argv)
} catch (err) {
  // One line for the operator; the stack only when asked for (MDQ_DEBUG=1) or for a bug.
  const known = err instanceof MdqError || (err instanceof Error && 'code' in err)
  process.stderr.write(`mdq: ${err instanceof Error ? err.message : String(err)}\n`)
  if (process.env.MDQ_DEBUG || !known) process.stderr.write(`${err instanceof Error ? err.stack : ''}\n`)
  process.exitCode = 1
}
