/** @module `mdq`: the command line and the only composition root (flags and env -> Config -> run). */
import { Command, Option } from 'commander'
import { MdqError } from '../domain/errors.js'
import { registerImport } from './import-command.js'
import { registerKeys } from './keys-command.js'
import { registerDemo } from './demo-command.js'
import { registerServe } from './serve-command.js'

const program = new Command('mdq')
  .description('Self-hosted market data query service (TickFlow-compatible API)')
  .addOption(new Option('--db <path>', 'the store file').env('MDQ_DB').default('./data/mdq.db'))
  .showHelpAfterError()

registerImport(program)
registerKeys(program)
registerDemo(program)
registerServe(program)

try {
  await program.parseAsync(process.argv)
} catch (err) {
  // One line for the operator; the stack only when asked for (MDQ_DEBUG=1) or for a bug.
  const known = err instanceof MdqError || (err instanceof Error && 'code' in err)
  process.stderr.write(`mdq: ${err instanceof Error ? err.message : String(err)}\n`)
  if (process.env.MDQ_DEBUG || !known) process.stderr.write(`${err instanceof Error ? err.stack : ''}\n`)
  process.exitCode = 1
}
