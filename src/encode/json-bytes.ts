/** @module JSON text of bars written as bytes, digit by digit, into 16 KB Buffers: the one writer of every klines answer. */
import type { Bars } from '../domain/bars.js'
import { fallback, NUMBER_ROOM, stoppedAt, writeNumber, writeRun, type NumberStyle } from './json-digits.js'

export type { NumberStyle }

/** 16 KB: small enough for V8's young generation as a string. */
const CHUNK = 1 << 14

/**
 * 16 KB Buffers to write into again once their bytes have been copied out: a query worker copies
 * each answer into the memory it hands over, so its pieces are done with at once (fresh ones were
 * four new ArrayBuffers a 1,000-bar window, for the worker's GC to free).
 */
export class ChunkPool {
  readonly #free: Buffer[] = []
  constructor(private readonly max: number) {}

  take(): Buffer {
    return this.#free.pop() ?? Buffer.allocUnsafe(CHUNK)
  }

  /** Pieces a JsonBytes of this pool handed out, no longer read anywhere (others are left alone). */
  give(pieces: readonly Buffer[]): void {
    for (const p of pieces)
      if (p.byteOffset === 0 && p.buffer.byteLength === CHUNK && this.#free.length < this.max)
        this.#free.push(Buffer.from(p.buffer, 0, CHUNK))
  }
}

/** A pool that keeps nothing: every Buffer fresh (for a JsonBytes whose pieces are kept or handed on). */
const fresh = new ChunkPool(0)

/**
 * Appends ASCII into Buffers of 16 KB; `take()` hands out the filled ones. A batch answer takes
 * them after each symbol, so no more than one symbol's answer is ever held.
 */
export class JsonBytes<T extends Buffer | string = Buffer> {
  #buf: Buffer
  /** The same bytes: numbers are written 4 bytes a store (DataView stores are unaligned-safe). */
  #view: DataView
  #at = 0
  #chunks: T[] = []

  /**
   * @param text Hand out strings and reuse one Buffer: a streamed answer's pieces are then small
   * young-generation strings, collected at once, instead of fresh 64 KB ArrayBuffers that V8
   * reclaims only when their external memory adds up (measured on 100 x 10,000 bars: peak RSS +64 MB
   * with Buffers, +37 to +43 MB with strings).
   */
  constructor(
    readonly text: T extends string ? true : false = false as T extends string ? true : false,
    /** Where its Buffers come from (a ChunkPool, to write into given-back ones). */
    private readonly chunks: ChunkPool = fresh,
  ) {
    this.#buf = chunks.take()
    this.#view = viewOf(this.#buf)
  }

  /** ASCII text (JSON punctuation, keys, numbers from String()). */
  ascii(s: string): void {
    if (this.#at + s.length > CHUNK) this.#next()
    if (s.length > CHUNK) {
      this.#chunks.push((this.text ? s : Buffer.from(s, 'latin1')) as T)
      return
    }
    this.#at += this.#buf.write(s, this.#at, 'latin1')
  }

  #next(): void {
    if (this.#at === 0) return
    if (this.text) this.#chunks.push(this.#buf.toString('latin1', 0, this.#at) as T)
    else {
      this.#chunks.push(this.#buf.subarray(0, this.#at) as T)
      this.#buf = this.chunks.take()
      this.#view = viewOf(this.#buf)
    }
    this.#at = 0
  }

  /** The text written since the last take. */
  take(): T[] {
    this.#next()
    const out = this.#chunks
    this.#chunks = []
    return out
  }

  /**
   * One number, the same text as wire.ts's formatters: `integer` as formatNumber (what
   * JSON.stringify writes), `float` as formatFloat (always a fraction part), `price4` as
   * formatPrice4 (rounded half up to 4 decimals), `amount6` as float noise below 1e-6 dropped.
   */
  number(x: number, style: NumberStyle): void {
    if (this.#at + NUMBER_ROOM > CHUNK) this.#next()
    const at = writeNumber(this.#view, this.#at, x, style)
    if (at < 0) this.ascii(fallback(x, style))
    else this.#at = at
  }

  /**
   * `[n,n,...]`: the hot loop of every klines answer. Numbers go out in runs that surely fit the
   * current chunk (no bounds check per number), each followed by a comma; the last comma becomes "]".
   */
  column(values: Float64Array, style: NumberStyle): void {
    const n = values.length
    if (n === 0) return this.ascii('[]')
    this.ascii('[')
    let i = 0
    while (i < n) {
      const room = ((CHUNK - this.#at) / NUMBER_ROOM) | 0
      if (room === 0) {
        this.#next()
        continue
      }
      const stop = Math.min(n, i + room)
      this.#at = writeRun(this.#view, this.#at, values, i, stop, style)
      i = stoppedAt
      if (i < stop) this.ascii(`${fallback(values[i++], style)},`) // a number only String() writes right
    }
    // The comma after the last number is in the current chunk: nothing was taken since it was written.
    this.#view.setUint8(this.#at - 1, 93)
  }
}

const viewOf = (buf: Buffer) => new DataView(buf.buffer, buf.byteOffset, buf.byteLength)

export interface KlinesFormat {
  readonly adjusted: boolean
  readonly aggregated: boolean
}

/**
 * `{timestamp, open, ..., prev_close}` of one symbol: the one writer of bars, for /v1/klines and
 * every batch. Adjusted prices are rounded to 4 decimals here and only here; raw prices go out
 * exactly as stored; prices and amounts always with a fraction part. Summed amounts of aggregated
 * bars drop float noise below 1e-6.
 */
export function writeKlinesColumns<T extends Buffer | string>(out: JsonBytes<T>, bars: Bars, opts: KlinesFormat): void {
  const price: NumberStyle = opts.adjusted ? 'price4' : 'float'
  out.ascii('{"timestamp":')
  out.column(bars.timestamp, 'integer')
  for (const [key, values] of [
    ['open', bars.open],
    ['high', bars.high],
    ['low', bars.low],
    ['close', bars.close],
  ] as const) {
    out.ascii(`,"${key}":`)
    out.column(values, price)
  }
  out.ascii(',"volume":')
  out.column(bars.volume, 'integer')
  out.ascii(',"amount":')
  out.column(bars.amount, opts.aggregated ? 'amount6' : 'float')
  out.ascii(',"prev_close":')
  out.column(bars.prevClose, price)
  out.ascii('}')
}
