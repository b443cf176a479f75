// The ingest log in files: what is appended is read back by the next process over the same directory,
// less what is marked; a line cut short by a death mid-write is skipped and appends go on in a new
// segment; segments roll at their size and go once all their entries are marked, a new one carrying
// the marks the kept ones need; a directory is one process's at a time; a directory that cannot be
// written refuses the append, naming it.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, it } from 'node:test'
import { MdqError } from '../domain/errors.js'
import type { LogEntry } from '../store/market-store.js'
import { FileIngestLog } from './file-log.js'

const root = mkdtempSync(join(tmpdir(), 'mdq-file-log-'))
after(() => rmSync(root, { recursive: true, force: true }))
let dirs = 0
const newDir = () => join(root, `log-${++dirs}`)

const entry = (feed: string, seq: number): LogEntry => ({
  feed,
  seq,
  body: `[["600519.SH",[${seq},1688.5,"x y"]]]`,
})

/** What a process that opens `dir` next would replay. */
async function replayed(dir: string): Promise<LogEntry[]> {
  const log = new FileIngestLog(dir)
  try {
    return await log.unwritten()
  } finally {
    await log.close()
  }
}

const segments = (dir: string) =>
  readdirSync(dir)
    .filter((name) => name.endsWith('.log'))
    .sort()

it('what is appended is read back by the next log over the directory, less what is marked', async () => {
  const dir = newDir()
  const log = new FileIngestLog(dir)
  await log.append([entry('7', 1), entry('7', 2)], [])
  await log.append([entry('7', 3)], [{ feed: '7', seq: 1 }])
  assert.deepEqual(await log.unwritten(), [entry('7', 2), entry('7', 3)])
  await log.close()
  assert.deepEqual(await replayed(dir), [entry('7', 2), entry('7', 3)])
  const next = new FileIngestLog(dir)
  await next.append([entry('8', 1)], [{ feed: '7', seq: 3 }])
  await next.close()
  assert.deepEqual(await replayed(dir), [entry('8', 1)])
})

it('a line cut short by a death in its write is skipped; appends go on in a new segment', async () => {
  const dir = newDir()
  const log = new FileIngestLog(dir)
  await log.append([entry('7', 1)], [])
  await log.close()
  const [first] = segments(dir)
  appendFileSync(join(dir, first), 'E 7 2 [["600519.SH",[2,')
  const next = new FileIngestLog(dir)
  assert.deepEqual(await next.unwritten(), [entry('7', 1)])
  await next.append([entry('9', 1)], [])
  await next.close()
  assert.equal(segments(dir).length, 2, 'the torn segment is not written again')
  assert.deepEqual(await replayed(dir), [entry('7', 1), entry('9', 1)])
})

it('segments roll at their size and go once all their entries are marked; a new one carries the marks still needed', async () => {
  const dir = newDir()
  // Segments smaller than an entry: each append begins a new one.
  const log = new FileIngestLog(dir, 1)
  await log.append([entry('1', 1), entry('2', 1)], []) // a predecessor's entry beside this feed's
  await log.append([entry('2', 2)], [{ feed: '2', seq: 1 }])
  assert.equal(segments(dir).length, 2, 'the first still holds an unmarked entry')
  await log.append([entry('2', 3)], [])
  // The third segment begins with feed 2's mark (the first still holds an entry of feed 2); on its own
  // it is enough to tell what of feed 2 is written.
  rmSync(join(dir, segments(dir)[1]))
  await log.close()
  assert.deepEqual(await replayed(dir), [entry('1', 1), entry('2', 3)])
  const next = new FileIngestLog(dir, 1)
  await next.append(
    [],
    [
      { feed: '1', seq: 1 },
      { feed: '2', seq: 3 },
    ],
  )
  await next.close()
  assert.equal(segments(dir).length, 1, 'only the segment written last stays: every entry is marked')
  assert.deepEqual(await replayed(dir), [])
})

it('a directory is one process at a time: refused while the process in its LOCK lives, taken over once it is gone', async () => {
  const dir = newDir()
  const other = spawn('sleep', ['60'], { stdio: 'ignore' })
  try {
    mkdirSync(dir)
    writeFileSync(join(dir, 'LOCK'), String(other.pid))
    await assert.rejects(new FileIngestLog(dir).open(), new RegExp(`in use by process ${other.pid}`))
  } finally {
    other.kill('SIGKILL')
    await once(other, 'exit')
  }
  const log = new FileIngestLog(dir)
  await log.append([entry('7', 1)], [])
  assert.equal(readFileSync(join(dir, 'LOCK'), 'utf8'), String(process.pid))
  await log.close()
  assert.deepEqual(segments(dir), ['000000000001.log'], 'a graceful close gives the directory up')
})

it('a directory that cannot be written refuses the append as the store being away, naming it', async () => {
  const dir = newDir()
  const log = new FileIngestLog(dir, 1)
  await log.append([entry('7', 1)], [])
  rmSync(dir, { recursive: true })
  await assert.rejects(
    log.append([entry('7', 2)], []),
    (err: unknown) =>
      err instanceof MdqError &&
      err.code === 'STORE_UNAVAILABLE' &&
      err.message.includes(`the ingest log in ${dir} could not be written`),
  )
  await log.close()
  const file = join(root, 'a-file')
  writeFileSync(file, '')
  await assert.rejects(new FileIngestLog(join(file, 'log')).open(), /ENOTDIR|EEXIST/)
  await assert.rejects(new FileIngestLog(newDir()).append([{ feed: '7', seq: 1, body: 'a\nb' }], []), /one line/)
})
