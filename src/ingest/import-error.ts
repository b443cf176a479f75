/** @module An import failure that names file, line and column; the import is rolled back whole. */
import { MdqError } from '../domain/errors.js'

export class ImportError extends MdqError {
  constructor(
    readonly file: string,
    readonly line: number,
    readonly column: number,
    readonly reason: string,
  ) {
    super('BAD_IMPORT', `${file}:${line}:${column}: ${reason}`)
  }
}
