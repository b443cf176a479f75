/**
 * @module The ingest log in files of the ingest's own (`mdq serve --ingest-log <dir>`), in place of
 * the store's (MarketStore.ingestLog): an append is one write to the newest segment file, durable
 * (fdatasync) before it resolves, where the store's log on ClickHouse costs the server an INSERT and
 * a part. A segment is removed once every entry in it is marked written. The log is this host's: an
 * ingest that starts over the same directory replays what it holds, another instance does not see it
 * (docs/design/live-data.md).
 *
 * Format: segments `000000000001.log` and up, each a sequence of lines `E <feed> <seq> <body>` (an
 * entry; its body JSON, so one line) and `M <feed> <seq>` (a mark). A line cut short by the process
 * dying in its write has no newline and was never acknowledged: it is skipped, and appends go on in a
 * new segment. A new segment begins with the marks of the feeds the segments kept still hold. `LOCK`
 * holds the pid of the process appending there.
 */
import { mkdir, open, readdir, readFile, unlink, writeFile, type FileHandle } from 'node:fs/promises'
import { join } from 'node:path'
import { MdqError } from '../domain/errors.js'
import type { IngestLog, LogEntry, LogMark } from '../store/market-store.js'
import { atLeast } from './write-behind.js'

/** A segment past this size is closed and the next append begins a new one. */
export const SEGMENT_BYTES = 64 << 20

const SEGMENT = /^(\d{12})\.log$/
const segmentName = (n: number) => `${String(n).padStart(12, '0')}.log`
const LOCK = 'LOCK'

/** Whether process `pid` exists (one of another user's counts). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** Per feed, the newest entry a segment holds. */
type Feeds = Map<string, number>

/** A segment's lines, up to the last whole one. */
function* linesOf(text: string): Generator<string> {
  let at = 0
  for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', at)) {
    yield text.slice(at, nl)
    at = nl + 1
  }
}

interface Parsed {
  readonly entries: LogEntry[]
  readonly marks: LogMark[]
}

function parseSegment(text: string): Parsed {
  const entries: LogEntry[] = []
  const marks: LogMark[] = []
  for (const line of linesOf(text)) {
    const a = line.indexOf(' ', 2)
    const b = line.indexOf(' ', a + 1)
    const feed = line.slice(2, a)
    if (line.startsWith('E ') && b > a)
      entries.push({ feed, seq: Number(line.slice(a + 1, b)), body: line.slice(b + 1) })
    else if (line.startsWith('M ') && a > 0) marks.push({ feed, seq: Number(line.slice(a + 1)) })
  }
  return { entries, marks }
}

/** The segment appends go to. */
interface Segment {
  readonly n: number
  readonly fh: FileHandle
  bytes: number
  readonly feeds: Feeds
}

export class FileIngestLog implements IngestLog {
  /** Segments closed with an entry not yet marked, oldest first. */
  readonly #kept = new Map<number, Feeds>()
  /** Per feed, the newest mark. */
  readonly #marked = new Map<string, number>()
  #current: Segment | undefined
  #opened: Promise<void> | undefined
  /** Appends one at a time, in the order called. */
  #chain: Promise<unknown> = Promise.resolve()

  constructor(
    readonly dir: string,
    private readonly segmentBytes = SEGMENT_BYTES,
  ) {}

  /** Reads what the directory holds (creating it if need be); once. Rejects when it cannot be used. */
  open(): Promise<void> {
    this.#opened ??= this.#load()
    return this.#opened
  }

  async #load(): Promise<void> {
    await mkdir(this.dir, { recursive: true })
    await this.#lock()
    for (const n of await this.#segments()) {
      const { entries, marks } = parseSegment(await readFile(join(this.dir, segmentName(n)), 'utf8'))
      const feeds: Feeds = new Map()
      for (const e of entries) atLeast(feeds, e.feed, e.seq)
      for (const m of marks) atLeast(this.#marked, m.feed, m.seq)
      this.#kept.set(n, feeds)
    }
    await this.#prune()
  }

  /**
   * Takes the directory for this process (LOCK, its pid): another ingest appending there would have
   * its segments removed under it once this one marks their entries. A LOCK left by a process that
   * is gone (killed) is taken over.
   */
  async #lock(): Promise<void> {
    const lock = join(this.dir, LOCK)
    for (;;) {
      try {
        await writeFile(lock, String(process.pid), { flag: 'wx' })
        return
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
      }
      const holder = Number(await readFile(lock, 'utf8').catch(() => ''))
      if (holder > 0 && holder !== process.pid && alive(holder))
        throw new Error(
          `in use by process ${holder} (${lock}): one ingest a directory; remove the file if that process is not an mdq`,
        )
      await unlink(lock).catch(() => undefined)
    }
  }

  async #segments(): Promise<number[]> {
    return (await readdir(this.dir))
      .map((name) => SEGMENT.exec(name)?.[1])
      .filter((n) => n !== undefined)
      .map(Number)
      .sort((x, y) => x - y)
  }

  append(entries: readonly LogEntry[], marks: readonly LogMark[]): Promise<void> {
    if (entries.length + marks.length === 0) return Promise.resolve()
    const run = this.#chain.then(() => this.#append(entries, marks))
    this.#chain = run.catch(() => undefined)
    return run
  }

  async #append(entries: readonly LogEntry[], marks: readonly LogMark[]): Promise<void> {
    for (const e of entries) if (e.body.includes('\n')) throw new Error('an ingest log entry must be one line')
    try {
      await this.open()
      const text =
        entries.map((e) => `E ${e.feed} ${e.seq} ${e.body}\n`).join('') +
        marks.map((m) => `M ${m.feed} ${m.seq}\n`).join('')
      const current = this.#current && this.#current.bytes < this.segmentBytes ? this.#current : await this.#roll()
      try {
        const bytes = Buffer.from(text)
        await current.fh.write(bytes)
        await current.fh.datasync()
        current.bytes += bytes.length
      } catch (err) {
        // Whatever of this write reached the file ends it: the next append begins a new segment.
        await this.#close()
        throw err
      }
      for (const e of entries) atLeast(current.feeds, e.feed, e.seq)
      for (const m of marks) atLeast(this.#marked, m.feed, m.seq)
      if (marks.length) await this.#prune()
    } catch (err) {
      if (err instanceof MdqError) throw err
      throw new MdqError(
        'STORE_UNAVAILABLE',
        `the ingest log in ${this.dir} could not be written (${(err as Error).message}); nothing of this push was taken`,
      )
    }
  }

  /** Closes the segment being written (kept until its entries are marked) and begins the next, with the marks still needed. */
  async #roll(): Promise<Segment> {
    await this.#close()
    const n = Math.max(0, ...this.#kept.keys(), ...(await this.#segments())) + 1
    const fh = await open(join(this.dir, segmentName(n)), 'wx')
    const current: Segment = { n, fh, bytes: 0, feeds: new Map() }
    this.#current = current
    // The new file's name is durable before anything is acknowledged from it.
    const dir = await open(this.dir, 'r')
    try {
      await dir.sync()
    } finally {
      await dir.close()
    }
    const needed = new Set([...this.#kept.values()].flatMap((feeds) => [...feeds.keys()]))
    const carried = [...this.#marked].filter(([feed]) => needed.has(feed))
    if (carried.length) {
      const bytes = Buffer.from(carried.map(([feed, seq]) => `M ${feed} ${seq}\n`).join(''))
      await fh.write(bytes)
      current.bytes += bytes.length
    }
    return current
  }

  async #close(): Promise<void> {
    const current = this.#current
    if (!current) return
    this.#current = undefined
    this.#kept.set(current.n, current.feeds)
    await current.fh.close().catch(() => undefined)
  }

  /** Removes the closed segments whose every entry is marked. */
  async #prune(): Promise<void> {
    for (const [n, feeds] of this.#kept) {
      if ([...feeds].some(([feed, seq]) => seq > (this.#marked.get(feed) ?? 0))) continue
      await unlink(join(this.dir, segmentName(n))).catch(() => undefined)
      this.#kept.delete(n)
    }
  }

  async unwritten(): Promise<LogEntry[]> {
    await this.open()
    await this.#chain
    const out: LogEntry[] = []
    const names = [...this.#kept.keys(), ...(this.#current ? [this.#current.n] : [])]
    for (const n of names) {
      const { entries } = parseSegment(await readFile(join(this.dir, segmentName(n)), 'utf8'))
      for (const e of entries) if (e.seq > (this.#marked.get(e.feed) ?? 0)) out.push(e)
    }
    return out
  }

  /** Closes the segment being written and gives the directory up; the segments stay. */
  async close(): Promise<void> {
    await this.#chain
    await this.#close()
    if (this.#opened) await unlink(join(this.dir, LOCK)).catch(() => undefined)
  }
}
