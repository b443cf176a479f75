/** @module Pushing snapshots into a running mdq's ingest listener, as a relay would: retried where they may not have been stored. */
import { setTimeout as sleep } from 'node:timers/promises'
import type { QuoteSnapshot } from '../domain/minute-bars.js'
import { tickflowQuote } from './stream-server.js'

export interface PushCounts {
  accepted: number
  stale: number
  duplicate: number
}

const RETRIES = 8

/** A push that failed for good: the server's refusal, or no answer after every retry (one line for the operator, no stack). */
export class PushFailed extends Error {
  override readonly name = 'PushFailed'
  readonly code = 'PUSH_FAILED'
}

/**
 * POSTs one batch to `{base}/v1/ingest/quotes`. A network failure, a 5xx or a 429 may or may not have
 * been stored: it is sent again (a repeat changes nothing), waiting longer each time, and `retrying` is
 * told; any other refusal throws with the server's message.
 */
export async function pushQuotes(
  base: string,
  key: string,
  batch: readonly QuoteSnapshot[],
  retrying: (failure: string, waitMs: number) => void = () => {},
): Promise<PushCounts> {
  const body = JSON.stringify(batch.map(tickflowQuote))
  for (let attempt = 1; ; attempt++) {
    let failure: string
    try {
      const r = await fetch(`${base}/v1/ingest/quotes`, {
        method: 'POST',
        headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
        body,
      })
      const text = await r.text()
      if (r.ok) return (JSON.parse(text) as { data: PushCounts }).data
      const message = ((): string => {
        try {
          return (JSON.parse(text) as { message?: string }).message ?? text
        } catch {
          return text
        }
      })()
      if (r.status < 500 && r.status !== 429) throw new PushFailed(`${r.status}: ${message}`)
      failure = `${r.status}: ${message}`
    } catch (err) {
      if (err instanceof PushFailed) throw err
      failure = err instanceof Error ? ((err.cause as Error | undefined)?.message ?? err.message) : String(err)
    }
    if (attempt >= RETRIES) throw new PushFailed(`the ingest listener at ${base} failed ${RETRIES} times: ${failure}`)
    const waitMs = Math.min(5_000, 100 * 2 ** attempt)
    retrying(failure, waitMs)
    await sleep(waitMs)
  }
}
