import assert from 'node:assert/strict'
import { once } from 'node:events'
import { Readable } from 'node:stream'
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, describe, it } from 'node:test'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { until } from '../../test/helpers/wait.js'
import { AnswerMemory } from './answer-memory.js'
import { memoryHeld, ResponseCache } from './response-cache.js'

const servers: Server[] = []
after(() => servers.forEach((s) => s.close()))

/** An answer in memory of its own (as a worker's comes back), `size` bytes of `fill`. */
const ownAnswer = (size: number, fill: number, room = size) => Buffer.from(new ArrayBuffer(room), 0, size).fill(fill)

/** A cache of 100 bytes (answers of at most 25) that records what it hands back. */
function recordingCache() {
  const handedBack: Buffer[] = []
  const cache = new ResponseCache(100, { memory: new AnswerMemory((body) => handedBack.push(body)) })
  return { cache, handedBack }
}

/** Fills the cache with five new 20-byte answers: every answer before them is evicted. */
async function evictAll(cache: ResponseCache, fill: number): Promise<void> {
  for (let i = 0; i < 5; i++) await cache.answer(`filler-${fill}-${i}`, async () => ownAnswer(20, fill))
}

/**
 * A real HTTP server on loopback that writes the cached answer of its URL's tag, and ends the
 * response only when the test says so (`end`): until then the write has not finished.
 */
async function slowServer(cache: ResponseCache) {
  const ends = new Map<string, () => void>()
  const closes = new Map<string, Promise<unknown>>()
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const tag = req.url!.slice(1)
    void cache
      .answer(tag, async () => assert.fail(`${tag} is not cached`))
      .then((body) => {
        assert.ok(Buffer.isBuffer(body))
        cache.memory.writing(body, res)
        closes.set(tag, once(res, 'close'))
        res.writeHead(200) // chunked: the client's response ends only when the server ends it
        res.write(body)
        ends.set(tag, () => res.end())
      })
  })
  servers.push(server)
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const port = (server.address() as AddressInfo).port
  /** Asks for `tag`; resolves with the response once its head and first bytes arrived. */
  const ask = (tag: string) =>
    new Promise<IncomingMessage>((resolve, reject) => {
      const req = request({ port, host: '127.0.0.1', path: `/${tag}`, agent: false }, resolve)
      req.on('error', reject)
      req.end()
    })
  return { ask, end: (tag: string) => ends.get(tag)!(), closed: (tag: string) => closes.get(tag)! }
}

describe('ResponseCache: a computation whose place is evicted while it runs', () => {
  it('still answers its request and those waiting on it (uncached), as a 200 would need', async () => {
    const cache = new ResponseCache(100)
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    const slow = cache.answer('slow', async () => {
      await gate
      return ownAnswer(20, 5)
    })
    const waiting = cache.answer('slow', async () => assert.fail('a second computation of the same tag'))
    await evictAll(cache, 6) // five answers arrive while it runs: its placeholder is the oldest entry
    release()
    const [first, second] = await Promise.all([slow, waiting])
    assert.ok(Buffer.isBuffer(first) && first.equals(Buffer.alloc(20, 5)))
    assert.equal(second, first)
    assert.equal(cache.has('slow'), false, 'kept, though its place was given up')
  })
})

describe('ResponseCache: memory of answers that left it goes back to the runner', () => {
  it('an evicted answer no response is writing is handed back on the next turn, once', async () => {
    const { cache, handedBack } = recordingCache()
    const first = ownAnswer(20, 1)
    await cache.answer('a', async () => first)
    for (let i = 0; i < 4; i++) await cache.answer(`b${i}`, async () => ownAnswer(20, 2))
    assert.equal(cache.has('a'), true)
    assert.equal(cache.answer('b4', async () => ownAnswer(20, 2)) instanceof Promise, true) // the sixth: evicts a
    await Promise.resolve()
    assert.equal(cache.has('a'), false)
    assert.equal(
      handedBack.length,
      0,
      'handed back in the turn it left (someone who got it this turn may still say it writes it)',
    )
    await nextTurn()
    assert.deepEqual(handedBack, [first])
    await nextTurn()
    assert.equal(handedBack.length, 1)
    assert.equal(cache.has('b0'), true)
  })

  it('an evicted answer a response is writing is handed back only once that response has finished', async () => {
    const { cache, handedBack } = recordingCache()
    const answer = ownAnswer(20, 7)
    await cache.answer('big', async () => answer)
    const { ask, end } = await slowServer(cache)
    const res = await ask('big')
    const chunks: Buffer[] = []
    res.on('data', (c: Buffer) => chunks.push(c))
    await evictAll(cache, 8) // evicts it while it is being written
    assert.equal(cache.has('big'), false)
    for (let i = 0; i < 5; i++) await nextTurn()
    assert.equal(handedBack.length, 0, 'handed back while its response had not finished')
    end('big')
    await once(res, 'end')
    assert.ok(Buffer.concat(chunks).equals(Buffer.alloc(20, 7)))
    await until(() => handedBack.length === 1, 'the answer handed back after its response finished')
    assert.equal(handedBack[0], answer)
  })

  it('an answer whose response closed before it finished is never handed back (its socket may still hold it)', async () => {
    const { cache, handedBack } = recordingCache()
    await cache.answer('big', async () => ownAnswer(20, 7))
    const { ask, closed } = await slowServer(cache)
    const res = await ask('big')
    await evictAll(cache, 8) // evicts it while it is being written
    res.destroy() // the client leaves before the response has finished
    await closed('big') // the server saw it close (the cache's own listener ran first)
    await evictAll(cache, 9) // evicts the fillers (no writes): handed back
    await until(() => handedBack.length === 5, 'the five unwritten answers handed back')
    for (let i = 0; i < 5; i++) await nextTurn()
    assert.deepEqual(
      handedBack.map((b) => b[0]),
      [8, 8, 8, 8, 8],
      'only the answers no response wrote came back',
    )
  })

  it('without a memory that recycles nothing is watched or handed back, and answers are kept as before', async () => {
    const cache = new ResponseCache(100)
    const first = ownAnswer(20, 1)
    await cache.answer('a', async () => first)
    await evictAll(cache, 2)
    await nextTurn()
    assert.equal(cache.has('a'), false)
    assert.equal(first[0], 1)
  })

  it('counts the memory an answer holds: its whole buffer, or its length when it is a slice of the shared pool', () => {
    const pooled = Buffer.from('{"data":[]}')
    assert.equal(pooled.buffer.byteLength, Buffer.poolSize, 'a small Buffer.from is a slice of the pool slab')
    assert.equal(memoryHeld(pooled), pooled.length)
    assert.equal(memoryHeld(ownAnswer(30_000, 1, 40_960)), 40_960)
    assert.equal(memoryHeld(ownAnswer(30_000, 1)), 30_000)
    const cache = new ResponseCache(1 << 20)
    cache.set('a', ownAnswer(30_000, 1, 40_960))
    cache.set('b', pooled)
    assert.equal(cache.bytes, 40_960 + pooled.length)
  })
})

describe('ResponseCache: stand-ins while a newer answer is computed (stale-while-revalidate)', () => {
  /** A cache of stand-ins up to 1,000 ms old on a clock the test moves, and a gate for background computations. */
  function standInCache(staleMs = 1000) {
    let now = 0
    const cache = new ResponseCache(1 << 20, { staleMs, clock: () => now })
    return { cache, advance: (ms: number) => (now += ms) }
  }
  const gated = () => {
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    return { gate, release }
  }
  /** Background computations that record their start; those of the `held` tags wait until `release`. */
  function recorded(...held: string[]) {
    const { gate, release } = gated()
    const started: string[] = []
    const produceOf = (tag: string) => async () => {
      started.push(tag)
      if (held.includes(tag)) await gate
      return ownAnswer(10, 5)
    }
    return { started, release, produceOf }
  }
  /** Computes and sends `tag` as the request's current answer, as etag.ts does. */
  async function sent(cache: ResponseCache, request: string, tag: string, fill: number): Promise<void> {
    await cache.answer(tag, async () => ownAnswer(10, fill))
    cache.confirm(request, tag)
  }

  it('is off by default: a newer version waits on its own answer', async () => {
    const cache = new ResponseCache(1 << 20)
    await sent(cache, 'r', 'v1', 1)
    assert.equal(
      cache.standIn('r', 'v2', async () => assert.fail('computed')),
      undefined,
    )
    assert.equal(cache.stale, 0)
  })

  it('sends the previous answer with its own tag while the new one is computed once, in the background; then the new one is held', async () => {
    const { cache, advance } = standInCache()
    await sent(cache, 'r', 'v1', 1)
    advance(999)
    const { gate, release } = gated()
    let computed = 0
    const produce = async () => {
      computed++
      await gate
      return ownAnswer(10, 2)
    }
    const first = cache.standIn('r', 'v2', produce)
    assert.equal(first?.tag, 'v1')
    assert.ok(first.body.equals(Buffer.alloc(10, 1)))
    const second = cache.standIn('r', 'v2', async () => assert.fail('a second computation of v2'))
    assert.equal(second?.tag, 'v1', 'still the stand-in while v2 is computed')
    const latest = cache.confirm('r', 'v1', -1)! // an older confirmation changes nothing
    assert.equal(latest.tag, 'v1')
    assert.equal(cache.standsIn(latest), true, "the fast path's held v1 stands in too")
    assert.equal(cache.stale, 2, 'the fast path counts its own')
    await until(() => computed === 1, 'v2 computed')
    release()
    await until(() => cache.has('v2'), 'v2 held')
    assert.equal(
      cache.standIn('r', 'v2', async () => assert.fail('computed again')),
      undefined,
      'v2 is held',
    )
    assert.equal(latest.tag, 'v2')
    assert.equal(cache.standsIn(latest), false, 'nothing is being computed: v2 is current')
    // v2 is now the request's latest: the next version's stand-in is v2's answer.
    const third = cache.standIn('r', 'v3', async () => ownAnswer(10, 3))
    assert.equal(third?.tag, 'v2')
    assert.ok(third.body.equals(Buffer.alloc(10, 2)))
  })

  it('sends no stand-in known current longer ago than its bound: the request computes its own answer', async () => {
    const { cache, advance } = standInCache()
    await sent(cache, 'r', 'v1', 1)
    advance(1001)
    assert.equal(
      cache.standIn('r', 'v2', async () => assert.fail('computed')),
      undefined,
    )
    // Each send of the current answer confirms it again: the bound counts from the last one.
    await sent(cache, 'r', 'v1', 1)
    advance(1000)
    assert.equal(cache.standIn('r', 'v2', async () => ownAnswer(10, 2))?.tag, 'v1')
  })

  it('an evicted previous answer stands in for nothing', async () => {
    let now = 0
    const cache = new ResponseCache(100, { staleMs: 1000, clock: () => now })
    await sent(cache, 'r', 'v1', 1)
    await evictAll(cache, 7)
    now += 1
    assert.equal(
      cache.standIn('r', 'v2', async () => assert.fail('computed')),
      undefined,
    )
  })

  it('a failed background computation is left for the next request past the stand-ins, which meets its error', async () => {
    const { cache, advance } = standInCache()
    await sent(cache, 'r', 'v1', 1)
    let failures = 0
    const failing = async () => {
      failures++
      throw new Error('store gone')
    }
    assert.equal(cache.standIn('r', 'v2', failing)?.tag, 'v1')
    await until(() => failures === 1, 'the failing computation')
    await nextTurn()
    assert.equal(cache.has('v2'), false)
    advance(1001)
    assert.equal(cache.standIn('r', 'v2', failing), undefined)
    await assert.rejects(cache.answer('v2', failing), /store gone/)
  })

  it('computes the newer answers one at a time, and skips one a later version overtook', async () => {
    const { cache, advance } = standInCache()
    await sent(cache, 'a', 'a1', 1)
    await sent(cache, 'b', 'b1', 1)
    const { started, release, produceOf } = recorded('a2')
    cache.standIn('a', 'a2', produceOf('a2'))
    cache.standIn('b', 'b2', produceOf('b2'))
    await until(() => started.length === 1, 'a2 started')
    await nextTurn()
    assert.deepEqual(started, ['a2'], "b2 waits for a2's computation")
    // Meanwhile a request computed b's answer at a later version: b2's computation is not needed.
    advance(1)
    await sent(cache, 'b', 'b3', 3)
    release()
    await until(() => cache.has('a2'), 'a2 held')
    await nextTurn()
    await nextTurn()
    assert.deepEqual(started, ['a2'])
    assert.equal(cache.standIn('b', 'b4', async () => ownAnswer(10, 4))?.tag, 'b3', 'b3 stays the latest')
  })

  it("a version's computation still queued when a later version's is queued is skipped: the stand-in waits for the later one", async () => {
    const { cache } = standInCache()
    await sent(cache, 'a', 'a1', 1)
    await sent(cache, 'r', 'v1', 1)
    const { started, release, produceOf } = recorded('a2')
    cache.standIn('a', 'a2', produceOf('a2')) // holds the one computation at a time
    await until(() => started.length === 1, 'a2 started')
    assert.equal(cache.standIn('r', 'v2', produceOf('v2'))?.tag, 'v1')
    assert.equal(cache.standIn('r', 'v3', produceOf('v3'))?.tag, 'v1', 'v1 still stands in: v2 is not computed yet')
    release()
    await until(() => cache.has('v3'), 'v3 held')
    assert.deepEqual(started, ['a2', 'v3'])
    assert.equal(cache.has('v2'), false)
    assert.equal(cache.standIn('r', 'v4', produceOf('v4'))?.tag, 'v3')
  })

  it('once closed, sends no stand-in and drops the computations not yet started', async () => {
    const { cache } = standInCache()
    await sent(cache, 'a', 'a1', 1)
    await sent(cache, 'r', 'v1', 1)
    const { started, release, produceOf } = recorded('a2')
    cache.standIn('a', 'a2', produceOf('a2'))
    await until(() => started.length === 1, 'a2 started')
    const latest = cache.confirm('r', 'v1', -1)!
    cache.standIn('r', 'v2', produceOf('v2'))
    assert.equal(cache.standsIn(latest), true)
    cache.close()
    assert.equal(cache.standsIn(latest), false)
    assert.equal(
      cache.standIn('r', 'v3', async () => assert.fail('computed')),
      undefined,
    )
    release()
    await until(() => cache.has('a2'), 'a2 held (it had started)')
    await nextTurn()
    assert.deepEqual(started, ['a2'], 'v2 was dropped')
  })

  it('an answer too large to hold, computed in the background, is not kept and its stream is closed', async () => {
    const { cache } = standInCache()
    await sent(cache, 'r', 'v1', 1)
    const stream = Readable.from(['x'])
    assert.equal(cache.standIn('r', 'v2', async () => stream)?.tag, 'v1')
    await until(() => stream.destroyed, 'the stream closed')
    assert.equal(cache.has('v2'), false)
  })
})
