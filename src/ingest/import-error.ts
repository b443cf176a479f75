/** @module An import failure that names file, line and column; the import is rolled back whole. */
import { MdqError } from '../domain/errors.js'

export class ImportError extends MdqError {
  constructor(
    readonly file: string,
    readonly line: number,
    readonly column: number,
    readonly reason: string,
  ) {
    // Line 0: the file as a whole (not found, a directory, a line too long to find the end of).
    super('BAD_IMPORT', line > 0 ? `${file}:${line}:${column}: ${reason}` : `${file}: ${reason}`)
  }
}
