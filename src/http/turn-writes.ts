/**
 * @module Whole answers leave at the end of the event loop's turn, together. Node writes an answer
 * to its socket as its handler ends it (`res.end` corks the socket, writes, and uncorks: one
 * `writev`). Here that uncork waits for the turn's check phase, so the answers to every request
 * read in one poll phase go out back to back.
 *
 * Why: a `writev` to a client that sleeps waits for the kernel to wake that client (over loopback,
 * the sender runs the receiver's side of TCP too), and a server spacing its writes out by its own
 * per-request work meets a sleeping client at almost every write. Written back to back, only the
 * first write of a turn finds it asleep. Under wrk at 32 connections this about doubled the cached
 * answers' rate (`npm run bench -- http`, W1) and shortened their latency; over a real network the
 * sender does not run the receiver's side, so expect less there.
 *
 * Only `end` waits: a streamed answer's pieces are written as they come (held pieces would fill the
 * socket's buffer and stall the stream until the turn ends), and only its last bytes wait.
 * Nothing else changes: the response is ended (`writableEnded`) when the handler ends it, its bytes
 * sit in the socket's own buffer, in order, and its 'finish' comes once they are written. A write
 * waits at most for the rest of the turn's handlers.
 */
import type { IncomingMessage } from 'node:http'
import { ServerResponse } from 'node:http'
import { Socket } from 'node:net'

const uncork = Socket.prototype.uncork
const held = new Set<Socket>()
/** The socket of the response whose `end` is running (JS runs one at a time). */
let ending: Socket | null = null

function writeHeld(): void {
  const sockets = [...held]
  held.clear()
  for (const socket of sockets) uncork.call(socket)
}

/** `Socket.uncork`, except that the uncork that would write an ending answer (the last of its corks) waits for the turn's end. */
function uncorkAtTurnEnd(this: Socket): void {
  if (this !== ending || this.writableCorked !== 1 || this.destroyed) return uncork.call(this)
  if (held.size === 0) setImmediate(writeHeld)
  held.add(this)
}

/**
 * A server's `ServerResponse` class (`createServer`'s option): the write of its `end` waits for the
 * turn's end. Its socket's `uncork` is replaced at the first `end` (and stays so for the connection).
 */
export class TurnEndResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
  override end(...args: unknown[]): this {
    const socket = this.socket
    if (socket !== null && socket.uncork !== uncorkAtTurnEnd) socket.uncork = uncorkAtTurnEnd
    ending = socket
    try {
      return (ServerResponse.prototype.end as (...a: unknown[]) => this).apply(this, args)
    } finally {
      ending = null
    }
  }
}
