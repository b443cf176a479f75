/** @module Connection and request limits: a slow, idle or flooding client cannot hold the server. */

export interface HttpLimits {
  /** The request head (line and headers) must arrive within this; else 408 and the connection closes. */
  readonly headersTimeoutMs: number
  /** The whole request, body included, must arrive within this; else 408 and the connection closes. */
  readonly requestTimeoutMs: number
  /**
   * An idle keep-alive connection is closed after this. Fastify's 72 s: above the 60 s idle timeout
   * of common load balancers (one reusing a connection the server has just closed answers 502), and
   * long enough for clients that block their event loop between requests to notice a close first.
   */
  readonly keepAliveTimeoutMs: number
  /** A connection with no traffic in either direction for this long is closed (a stalled reader). */
  readonly idleTimeoutMs: number
  /**
   * Open connections at most (below the usual 1024 file descriptors). A new one past it closes the
   * oldest connection without a request (408) or else the longest idle one; when every connection is
   * answering, the new one is closed at once.
   */
  readonly maxConnections: number
  /**
   * Open connections from one address (IPv6: one /64) at most, by the same rule: one client cannot
   * fill the cap. Behind a proxy every connection comes from the proxy's address.
   */
  readonly maxConnectionsPerAddress: number
  /** Request bodies larger than this are 413. */
  readonly bodyLimitBytes: number
  /**
   * While shutting down, an idle kept-alive connection waits this long for a request its client may
   * have sent already (answered 503 with `Connection: close`) before it is closed.
   */
  readonly closingIdleMs: number
}

export const DEFAULT_HTTP_LIMITS: HttpLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 72_000,
  idleTimeoutMs: 60_000,
  maxConnections: 900,
  maxConnectionsPerAddress: 256,
  bodyLimitBytes: 1 << 20,
  closingIdleMs: 1000,
}

/**
 * How often Node checks connections against the header and request timeouts. Its default (30 s)
 * would let a timed-out request live up to 30 s longer; a check is a walk over open connections.
 */
export function connectionsCheckingIntervalMs(limits: HttpLimits): number {
  return Math.max(100, Math.min(1000, Math.floor(limits.headersTimeoutMs / 4)))
}
