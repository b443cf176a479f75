/**
 * @module Answers leave at the end of the event loop's turn, together. Node writes an answer to its
 * socket as its handler ends (`res.end` corks the socket, writes, and uncorks: one `writev`). Here
 * the final uncork of each connection waits for the turn's check phase, so the answers to every
 * request read in one poll phase go out back to back.
 *
 * Why: a `writev` to a client that sleeps waits for the kernel to wake that client (over loopback,
 * the sender runs the receiver's side of TCP too), and a server spacing its writes out by its own
 * per-request work meets a sleeping client at almost every write. Written back to back, only the
 * first write of a turn finds it asleep. Under wrk at 32 connections this doubled the cached
 * answers' rate (`npm run bench -- http`, W1) and shortened their latency; over a real network the
 * sender does not run the receiver's side, so expect less there.
 *
 * Nothing else changes: the response is ended (`writableEnded`) when the handler ends it, its bytes
 * sit in the socket's own buffer, in order, and its 'finish' comes once they are written. A write
 * waits at most for the rest of the turn's handlers.
 */
import { Socket } from 'node:net'

const uncork = Socket.prototype.uncork
const held = new Set<Socket>()

function writeHeld(): void {
  const sockets = [...held]
  held.clear()
  for (const socket of sockets) uncork.call(socket)
}

/** `Socket.uncork`, except that the uncork that would write (the last of its corks) waits for the turn's end. */
function uncorkAtTurnEnd(this: Socket): void {
  if (this.writableCorked !== 1 || this.destroyed) return uncork.call(this)
  if (held.size === 0) setImmediate(writeHeld)
  held.add(this)
}

/** For a server's 'connection' event: this connection's writes leave at the end of each turn. */
export function writeAtTurnEnd(socket: Socket): void {
  socket.uncork = uncorkAtTurnEnd
}
