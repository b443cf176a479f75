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
  if (err instanceof MdqError) {
    process.stderr.write(`mdq: ${err.message}\n`)
    process.exitCode = 1
  } else throw err
}
