/** @module A temp file of the daily bars an import has written, read back per symbol to derive ex-factors without holding the file. */
import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { allocBars, barCount, type Bars } from '../domain/bars.js'

/** The columns ex-factor derivation reads; the others read back as 0. */
const SPILLED = ['timestamp', 'close', 'prevClose'] as const

/**
 * Blocks of bars appended per symbol and read back as a list of blocks. Only timestamp, close and
 * prev_close are kept (what deriveExFactors reads), so a daily file of any size costs disk, not memory.
 */
export class BarSpill {
  readonly #dir = mkdtempSync(join(tmpdir(), 'mdq-import-'))
  readonly #fd = openSync(join(this.#dir, 'bars.bin'), 'w+')
  readonly #blocks = new Map<string, { at: number; n: number }[]>()
  #size = 0

  append(symbol: string, bars: Bars): void {
    const n = barCount(bars)
    if (n === 0) return
    const at = this.#size
    for (const f of SPILLED) {
      const col = bars[f]
      this.#size += writeSync(this.#fd, new Uint8Array(col.buffer, col.byteOffset, n * 8), 0, n * 8, this.#size)
    }
    let list = this.#blocks.get(symbol)
    if (!list) this.#blocks.set(symbol, (list = []))
    list.push({ at, n })
  }

  /** The symbol's blocks in the order they were appended. */
  blocks(symbol: string): Bars[] {
    return (this.#blocks.get(symbol) ?? []).map(({ at, n }) => {
      const out = allocBars(n)
      SPILLED.forEach((f, k) => {
        const col = out[f]
        readSync(this.#fd, new Uint8Array(col.buffer, col.byteOffset, n * 8), 0, n * 8, at + k * n * 8)
      })
      return out
    })
  }

  dispose(): void {
    closeSync(this.#fd)
    rmSync(this.#dir, { recursive: true, force: true })
  }
}
