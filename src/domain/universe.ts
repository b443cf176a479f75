/** @module An imported universe: a named list of symbols (contract "Universes"). */

/** A universe imported with `mdq import universes`; built-in ones are derived in query/, never stored. */
export interface StoredUniverse {
  readonly id: string
  readonly name: string
  readonly region: string | null
  readonly category: string | null
  readonly description: string | null
  readonly symbols: string[]
}
