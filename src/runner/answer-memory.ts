/**
 * @module The memory of answers computed by query workers, handed back to them once nothing refers to
 * it: an answer out of the response cache (or never in it) whose responses have all finished, a batch
 * piece once written. One object per app owns that bookkeeping; the cache, the routes and the fast path
 * only say what they do with an answer.
 */
import type { ServerResponse } from 'node:http'
import type { Readable } from 'node:stream'
import { writtenStream } from './written-stream.js'

/** The answer a response writes (`writing`), on the response: one listener shared by all responses. */
const BODY = Symbol('mdq.answerBody')
type Writing = ServerResponse & { [BODY]?: Buffer }

export class AnswerMemory {
  readonly #handBack: ((memory: Buffer) => void) | undefined
  /** Responses writing each answer, until they finish or close. */
  readonly #writes = new Map<Buffer, number>()
  /** Answers released this turn: handed back on the next (by then whoever got one has said it is writing it). */
  #released: Buffer[] = []
  /** Answers released and still being written: handed back when the last write ends. */
  readonly #releasedWriting = new Set<Buffer>()
  /** Answers a response closed on before it finished (its socket may still hold them): never handed back. */
  readonly #unfinished = new WeakSet<Buffer>()
  /** A writing response's 'close' listener: after 'finish', or when the client left first. */
  readonly #closed: (this: Writing) => void

  /**
   * @param handBack Where released memory goes (the worker pool's `written`); absent: nothing is
   * tracked or handed back (answers computed in the main thread are left to the GC).
   */
  constructor(handBack?: (memory: Buffer) => void) {
    this.#handBack = handBack
    const written = (body: Buffer, finished: boolean) => this.#written(body, finished)
    this.#closed = function (this: Writing) {
      written(this[BODY]!, this.writableFinished)
    }
  }

  /** Whether memory goes back anywhere (a worker pool that reuses it). */
  get recycles(): boolean {
    return this.#handBack !== undefined
  }

  /**
   * `res` writes `body`: its memory is not handed back before that response has closed, and never if
   * it closed unfinished. Called before the write starts, in the turn the answer was got.
   */
  writing(body: Buffer, res: ServerResponse): void {
    if (this.#handBack === undefined) return
    this.#writes.set(body, (this.#writes.get(body) ?? 0) + 1)
    ;(res as Writing)[BODY] = body
    res.on('close', this.#closed)
  }

  /** Nothing keeps `body` any more (it left the response cache): handed back once its writes end. */
  release(body: Buffer): void {
    if (this.#handBack === undefined) return
    if (this.#released.push(body) === 1) setImmediate(() => this.#handBackReleased())
  }

  /** An answer for `res` alone (no response cache): handed back once that response has written it. */
  passing(body: Buffer, res: ServerResponse): void {
    this.writing(body, res)
    this.release(body)
  }

  /** A stream of batch pieces whose Buffers are handed back as each is written (writtenStream); undefined when nothing recycles. */
  stream(pieces: AsyncIterable<Buffer | string>): Readable | undefined {
    const handBack = this.#handBack
    return handBack && writtenStream(pieces, handBack)
  }

  #written(body: Buffer, finished: boolean): void {
    if (!finished) this.#unfinished.add(body)
    const writes = this.#writes.get(body)! - 1
    if (writes > 0) return void this.#writes.set(body, writes)
    this.#writes.delete(body)
    if (this.#releasedWriting.delete(body)) this.#giveBack(body)
  }

  #handBackReleased(): void {
    const released = this.#released
    this.#released = []
    for (const body of released) {
      if (this.#writes.has(body)) this.#releasedWriting.add(body)
      else this.#giveBack(body)
    }
  }

  #giveBack(body: Buffer): void {
    if (!this.#unfinished.has(body)) this.#handBack!(body)
  }
}
