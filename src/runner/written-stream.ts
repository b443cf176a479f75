/** @module A stream of answer pieces that tells when its destination has written each Buffer piece, so the memory under it can be used again. */
import { Readable, type Writable } from 'node:stream'

/**
 * What `Readable.from(pieces)` sends, except that piped (as Fastify sends a stream, and as
 * @fastify/compress and `pipeline` feed one) it writes each piece itself, with a callback:
 * `written(piece)` runs once the destination has flushed that Buffer (Node's write callback: for a
 * socket, the kernel has the bytes), never earlier. A piece whose write fails, or that is still queued
 * when the destination closes, is never reported, so its memory is left to the GC. Strings (the JSON
 * punctuation between pieces) are ASCII, written as Latin-1 and not reported.
 *
 * Read any other way (`resume()`, `for await`: Fastify's HEAD routes), it pushes the pieces as
 * `Readable.from` does and reports none.
 */
export function writtenStream(pieces: AsyncIterable<Buffer | string>, written: (piece: Buffer) => void): Readable {
  return new WrittenStream(pieces, written)
}

class WrittenStream extends Readable {
  readonly #pieces: AsyncIterator<Buffer | string>
  readonly #written: (piece: Buffer) => void
  #mode: 'idle' | 'piped' | 'pushing' = 'idle'
  /** Wakes a write loop waiting for 'drain' when this stream is destroyed. */
  #wake: () => void = () => {}

  constructor(pieces: AsyncIterable<Buffer | string>, written: (piece: Buffer) => void) {
    super()
    this.#pieces = pieces[Symbol.asyncIterator]()
    this.#written = written
  }

  override pipe<T extends NodeJS.WritableStream>(dest: T, options?: { end?: boolean }): T {
    if (this.#mode !== 'idle') throw new Error('a writtenStream is read once, by one destination')
    this.#mode = 'piped'
    void this.#writeTo(dest as unknown as Writable, options?.end !== false)
    return dest
  }

  /** The pieces written in order, each Buffer with a callback; waits for 'drain' as pipe() does. */
  async #writeTo(dest: Writable, end: boolean): Promise<void> {
    try {
      for (;;) {
        const next = await this.#pieces.next()
        if (this.destroyed) return void (await this.#pieces.return?.())
        if (next.done) break
        const piece = next.value
        const more =
          typeof piece === 'string'
            ? dest.write(piece, 'latin1')
            : dest.write(piece, (err) => {
                if (!err) this.#written(piece)
              })
        if (!more && !(await this.#drained(dest))) {
          await this.#pieces.return?.()
          // The destination closed or failed first (a client that left): as pipe() would, stop here.
          return void this.destroy()
        }
      }
      if (end) dest.end()
      // Ends this side too (nothing was buffered here): Fastify and pipeline wait for 'end'.
      this.push(null)
      this.resume()
    } catch (err) {
      this.destroy(err as Error)
    }
  }

  /** True on the destination's 'drain'; false when it closes or fails first, or this stream is destroyed. */
  #drained(dest: Writable): Promise<boolean> {
    if (dest.destroyed || this.destroyed) return Promise.resolve(false) // its 'close' may be past
    return new Promise((resolve) => {
      const done = (drained: boolean) => () => {
        dest.off('drain', onDrain).off('close', onStop).off('error', onStop)
        this.#wake = () => {}
        resolve(drained)
      }
      const onDrain = done(true)
      const onStop = done(false)
      this.#wake = onStop
      dest.on('drain', onDrain).on('close', onStop).on('error', onStop)
    })
  }

  override _read(): void {
    if (this.#mode === 'piped') return // the write loop sends everything; only its final push(null) is read
    if (this.#mode === 'idle') this.#mode = 'pushing'
    this.#pieces.next().then(
      (next) =>
        void this.push(
          next.done ? null : typeof next.value === 'string' ? Buffer.from(next.value, 'latin1') : next.value,
        ),
      (err: Error) => this.destroy(err),
    )
  }

  override _destroy(err: Error | null, callback: (err?: Error | null) => void): void {
    this.#wake()
    if (this.#mode === 'pushing') void this.#pieces.return?.()?.catch(() => {})
    callback(err)
  }
}
