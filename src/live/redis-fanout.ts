/**
 * @module Every instance's subscribers get every instance's snapshots, through Redis (the one the rate
 * limiter uses): each batch published here goes out on one pub/sub channel, and each instance hands
 * the batches of the others to its hub. Beside the channel, a hash keeps the latest line of each
 * symbol and channel, read after each (re)subscription: an instance that starts, or comes back after
 * Redis was away, begins from the present. While Redis is unreachable, this instance's own
 * subscribers still get its snapshots (the hub serves them first), the latest of each symbol waits
 * here, and goes out once Redis is back.
 */
import { randomUUID } from 'node:crypto'
import { Redis } from 'ioredis'
import { isChannel, type Snapshot, type SnapshotBatch, type StreamHub } from './stream-hub.js'

const VERSION = 'mdq-stream-1'

/** `<channel> <symbol> <timestamp> <json>`: JSON text has no raw newline, symbols no space. */
const lineOf = (s: Snapshot) => `${s.channel} ${s.symbol} ${s.timestamp} ${s.json}`

function snapshotOf(line: string): Snapshot | undefined {
  const a = line.indexOf(' ')
  const b = line.indexOf(' ', a + 1)
  const c = line.indexOf(' ', b + 1)
  const channel = line.slice(0, a)
  const timestamp = Number(line.slice(b + 1, c))
  if (a <= 0 || b < 0 || c < 0 || !isChannel(channel) || !Number.isFinite(timestamp)) return undefined
  return { channel, symbol: line.slice(a + 1, b), timestamp, json: line.slice(c + 1) }
}

/** A batch on the wire: a header line (version, sender, publishedMs), then one line per snapshot. */
export function encodeBatch(sender: string, batch: SnapshotBatch): string {
  return `${VERSION} ${sender} ${batch.publishedMs}\n${batch.snapshots.map(lineOf).join('\n')}`
}

export function decodeBatch(message: string): { sender: string; batch: SnapshotBatch } | undefined {
  const lines = message.split('\n')
  const [version, sender, publishedMs] = lines[0].split(' ')
  if (version !== VERSION || sender === undefined) return undefined
  const snapshots = lines.slice(1).map(snapshotOf)
  if (snapshots.some((s) => s === undefined)) return undefined
  return { sender, batch: { snapshots: snapshots as Snapshot[], publishedMs: Number(publishedMs) } }
}

export interface FanoutOptions {
  /** Pub/sub channel; the hash of latest lines is `<channel>:latest`. */
  readonly channel?: string
  /** Bytes of publishes Redis has not answered past which new batches wait here instead (a stalled Redis). */
  readonly maxUnansweredBytes?: number
  /** A publish unanswered for this long means Redis is unreachable (for /readyz). */
  readonly stalledMs?: number
}

export class RedisFanout {
  readonly #pub: Redis
  readonly #sub: Redis
  readonly #id = randomUUID()
  readonly #channel: string
  readonly #latestKey: string
  readonly #maxUnanswered: number
  readonly #stalledMs: number
  /** While Redis cannot take them: the latest snapshot of each channel and symbol published here, with its batch's time. */
  readonly #waiting = new Map<string, { snapshot: Snapshot; publishedMs: number }>()
  /** Publishes sent and not answered: their size, and when each was sent (Redis answers in order). */
  #unansweredBytes = 0
  readonly #sentMs: number[] = []
  #subscribed = false
  readonly #stop: () => void

  constructor(
    url: string,
    private readonly hub: StreamHub,
    opts: FanoutOptions = {},
  ) {
    this.#channel = opts.channel ?? 'mdq:stream'
    this.#latestKey = `${this.#channel}:latest`
    this.#maxUnanswered = opts.maxUnansweredBytes ?? 8 << 20
    this.#stalledMs = opts.stalledMs ?? 1000
    const options = {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: (n: number) => Math.min(n * 100, 1000),
    }
    this.#pub = new Redis(url, options)
    // Subscriptions are renewed here, not by ioredis, so that catching up follows the subscription's confirmation.
    this.#sub = new Redis(url, { ...options, autoResubscribe: false })
    for (const r of [this.#pub, this.#sub]) r.on('error', () => {}) // reported by ready() and /readyz
    this.#sub.on('ready', () => void this.#subscribe())
    this.#sub.on('close', () => (this.#subscribed = false))
    this.#sub.on('message', (_channel: string, message: string) => this.#received(message))
    this.#pub.on('ready', () => {
      this.#sendWaiting()
      void this.#catchUp()
    })
    this.#stop = hub.onPublish((batch) => this.#send(batch))
  }

  /** Whether batches go out and come in now: both connections up, subscribed, no publish stalled. */
  reachable(): boolean {
    const stalled = this.#sentMs.length > 0 && Date.now() - this.#sentMs[0] > this.#stalledMs
    return this.#pub.status === 'ready' && this.#subscribed && !stalled
  }

  async close(): Promise<void> {
    this.#stop()
    this.#pub.disconnect()
    this.#sub.disconnect()
  }

  #send(batch: SnapshotBatch): void {
    const ready = this.#pub.status === 'ready' && this.#waiting.size === 0
    if (!ready || this.#unansweredBytes > this.#maxUnanswered) return this.#wait(batch)
    const message = encodeBatch(this.#id, batch)
    const latest: string[] = []
    for (const s of batch.snapshots) latest.push(`${s.channel} ${s.symbol}`, lineOf(s))
    const bytes = 2 * message.length // as held in memory (UTF-16), twice: the message and the hash's lines
    this.#unansweredBytes += bytes
    this.#sentMs.push(Date.now())
    const done = () => {
      this.#unansweredBytes -= bytes
      this.#sentMs.shift()
      if (this.#sentMs.length === 0) this.#sendWaiting()
    }
    this.#pub
      .multi()
      .hset(this.#latestKey, ...latest)
      .publish(this.#channel, message)
      .exec()
      .then((replies) => {
        done()
        if (replies === null || replies.some(([err]) => err)) this.#wait(batch)
      })
      .catch(() => {
        done()
        this.#wait(batch)
      })
  }

  #wait(batch: SnapshotBatch): void {
    for (const snapshot of batch.snapshots) {
      const key = `${snapshot.channel} ${snapshot.symbol}`
      const held = this.#waiting.get(key)
      if (held === undefined || held.snapshot.timestamp <= snapshot.timestamp)
        this.#waiting.set(key, { snapshot, publishedMs: held?.publishedMs ?? batch.publishedMs })
    }
  }

  /** Redis is back: what waited goes out as one batch (stamped with the oldest wait, for the lag). */
  #sendWaiting(): void {
    if (this.#waiting.size === 0 || this.#pub.status !== 'ready' || this.#sentMs.length > 0) return
    const held = [...this.#waiting.values()]
    this.#waiting.clear()
    this.#send({
      snapshots: held.map((h) => h.snapshot),
      publishedMs: Math.min(...held.map((h) => h.publishedMs)),
    })
  }

  async #subscribe(): Promise<void> {
    try {
      await this.#sub.subscribe(this.#channel)
      this.#subscribed = true
      await this.#catchUp()
    } catch {
      // The connection dropped again: its next 'ready' subscribes.
    }
  }

  /** After a confirmed subscription, every later batch arrives on the channel; the hash holds everything before it. */
  async #catchUp(): Promise<void> {
    if (!this.#subscribed || this.#pub.status !== 'ready') return
    try {
      const lines = Object.values(await this.#pub.hgetall(this.#latestKey))
      const snapshots = lines.map(snapshotOf).filter((s): s is Snapshot => s !== undefined)
      if (snapshots.length) this.hub.receive({ snapshots, publishedMs: Date.now() }, 'catch-up')
    } catch {
      // Redis went away again; the next 'ready' catches up.
    }
  }

  #received(message: string): void {
    const decoded = decodeBatch(message)
    if (decoded === undefined || decoded.sender === this.#id) return
    this.hub.receive(decoded.batch, 'remote')
  }
}
