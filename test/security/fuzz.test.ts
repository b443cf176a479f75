// The fuzz: 20,000 generated requests (fast-check, fixed seed) over every registered route of a real
// server on loopback: generated paths, path parameters, methods, query strings (with the Infinity
// family, malformed escapes and keys in every spelling), headers and bodies. Every answer is below
// 500, every error is JSON {code, message}, the server keeps serving, and no key is in any log line.
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { Agent } from 'node:http'
import { after, before, describe, it } from 'node:test'
import { registeredRoutes } from '../../src/http/app.js'
import { MemoryRateLimiter } from '../../src/auth/rate-limiter.js'
import { demoDb, newKey, startServer, type TestServer } from '../helpers/server.js'
import { tempDir } from '../helpers/store-files.js'
import { assertNoKeyInLogs, captureLogs, send, type RawAnswer } from './harness.js'

const SEED = 20_261_122
const RUNS = 20_000
const WORKERS = 8

interface Route {
  readonly method: string
  readonly url: string
  readonly names: readonly string[]
}
interface FuzzRequest {
  readonly route: string
  readonly method: string
  readonly path: string
  readonly headers: Record<string, string>
  readonly body?: string
}

/** Percent-encodes what node:http refuses in a path (outside U+0021..U+007E), keeping '%' as written. */
const pathSafe = (s: string) => [...s].map((c) => (/[\u0021-\u007e]/.test(c) ? c : encodeURIComponent(c))).join('')

function requests(routes: readonly Route[], keys: { valid: string; limited: string; revoked: string }): FuzzRequest[] {
  const k = keys.valid
  const junk = fc.string({ maxLength: 24 }).map(pathSafe)
  const unicode = fc.string({ unit: 'binary', maxLength: 12 }).map((s) => encodeURIComponent(s))
  const numbers = fc.constantFrom(
    'Infinity',
    '-Infinity',
    '+Infinity',
    '%2BInfinity',
    '%20Infinity',
    '1e309',
    '-1e309',
    'NaN',
    '0',
    '-0',
    '1',
    '5',
    '100',
    '10000',
    '10001',
    '-1',
    '1.5',
    '1e3',
    '0x10',
    '9007199254740991',
    '9007199254740992',
    '99999999999999999999',
    '1' + '0'.repeat(400),
    '%31%30',
    '',
  )
  const words = fc.constantFrom(
    '600519.SH',
    '600000.SH',
    'AAPL.US',
    'aapl.us',
    '00700.HK',
    'BRK.B.US',
    '688999.SH',
    '600519.SH,AAPL.US',
    ',,',
    '600519',
    '6005.SH',
    'x.XX',
    '1m',
    '5m',
    '10m',
    '60m',
    '1d',
    '1w',
    '1M',
    '1Q',
    '1Y',
    '2m',
    'none',
    'forward',
    'backward',
    'forward_additive',
    'qfq',
    'CN_ETF',
    'CN_Equity_A',
    'US',
    'SH',
    'stock',
    'etf',
    'a',
    '贵州',
  )
  const keyish = fc.constantFrom(
    k,
    encodeURIComponent(k),
    k.replace('_', '%5F'),
    k.replace('_', '%255F'),
    keys.limited,
    keys.revoked,
    'mdq_' + 'A'.repeat(43),
    'mdq_',
    '',
  )
  const malformed = fc.constantFrom('%', '%%', '%zz', '%E0%A4%A', '%C0%AF', '%00', '%0d%0a', '%FF', '%u0041')
  const value = fc.oneof(
    { weight: 4, arbitrary: words },
    { weight: 4, arbitrary: numbers },
    { weight: 2, arbitrary: junk },
    { weight: 1, arbitrary: unicode },
    { weight: 1, arbitrary: keyish },
    { weight: 1, arbitrary: malformed },
    { weight: 1, arbitrary: fc.integer().map(String) },
  )
  const keyNames = fc.constantFrom('api_key', 'api%5Fkey', 'API_KEY', 'apiKey', '%61pi_key', 'api_key[]', 'amp;api_key')
  const methods = fc.constantFrom(
    'GET',
    'HEAD',
    'POST',
    'PUT',
    'PATCH',
    'DELETE',
    'OPTIONS',
    'TRACE',
    'PROPFIND',
    'FOO',
    'get',
  )
  const segment = fc.oneof(
    words,
    junk,
    malformed,
    keyish,
    fc.constantFrom('..', '%2e%2e', '.', '', 'index.html', 'swagger-initializer.js'),
  )

  const request = fc
    .record({
      routeIndex: fc.nat({ max: routes.length - 1 }),
      ownMethod: fc.nat({ max: 9 }), // 0..7: the route's own method
      otherMethod: methods,
      segments: fc.array(segment, { minLength: 1, maxLength: 4 }),
      suffix: fc.constantFrom('', '', '', '', '/', '//', '/..', '%', '/%zz', '?', '#x', `/${k}`),
      randomPath: fc.option(
        fc.array(segment, { maxLength: 5 }).map((s) => '/' + s.join('/')),
        { freq: 8 },
      ),
      query: fc.array(
        fc.tuple(
          fc.oneof(
            { weight: 6, arbitrary: fc.constant('') },
            { weight: 1, arbitrary: keyNames },
            { weight: 1, arbitrary: junk },
          ),
          value,
        ),
        { maxLength: 7 },
      ),
      separator: fc.constantFrom('&', '&', '&', '&', ';', '&amp;', '&&'),
      key: fc.constantFrom(
        'header',
        'header',
        'header',
        'query',
        'both',
        'both-different',
        'none',
        'revoked',
        'limited',
        'junk',
        'two-headers',
      ),
      contentType: fc.constantFrom(
        undefined,
        'application/json',
        'application/json',
        'application/json; charset=utf-8',
        'text/plain',
        'application/x-www-form-urlencoded',
        'application/json; charset=utf-16',
        'multipart/form-data; boundary=x',
        '*/*',
        'application/jsonp',
      ),
      ifNoneMatch: fc.constantFrom(undefined, undefined, undefined, '*', 'W/"x"', '"x", *', ''),
      acceptEncoding: fc.constantFrom(undefined, 'gzip', 'br', 'identity', 'gzip;q=0, br;q=0', 'x-junk'),
      extraHeader: fc.option(
        fc.tuple(
          fc.stringMatching(/^[a-z][a-z0-9-]{0,15}$/),
          fc.string({ maxLength: 30 }).map((s) => s.replace(/[^\u0020-\u007e]/g, '')),
        ),
        { freq: 4 },
      ),
      body: fc.option(
        fc.oneof(
          fc.constantFrom(
            '{"symbols":["600519.SH","AAPL.US"]}',
            '{"symbols":"600519.SH,AAPL.US"}',
            '{"symbols":[]}',
            '{"symbols":""}',
            '{"symbols":[1e309]}',
            '{"symbols":1e309}',
            '{"symbols":null}',
            '{"ids":["CN_ETF"]}',
            '{"universes":["CN_ETF"],"symbols":["600519.SH"]}',
            '{',
            '',
            'null',
            '[]',
            '"x"',
            '{"__proto__":{"x":1}}',
            `{"api_key":"${k}"}`,
          ),
          fc.json({ maxDepth: 3 }),
          fc.string({ maxLength: 64 }),
          fc.constant('{"symbols":["' + 'A'.repeat(1 << 20) + '"]}'), // over the 1 MB body limit
        ),
        { freq: 2 },
      ),
    })
    .map((g): FuzzRequest => {
      const route = routes[g.routeIndex]
      const method = g.ownMethod < 8 ? route.method : g.otherMethod
      let path =
        g.randomPath ??
        route.url
          .split('/')
          .map((part, i) => (part.startsWith(':') || part === '*' ? g.segments[i % g.segments.length] : part))
          .join('/')
      path = (path.startsWith('/') ? path : '/' + path) + g.suffix
      const pairs = g.query.map(
        ([name, v], i) => `${name || route.names[i % Math.max(1, route.names.length)] || 'symbol'}=${v}`,
      )
      const headers: Record<string, string> = {}
      const keyOf = {
        header: k,
        query: k,
        both: k,
        'both-different': keys.limited,
        none: '',
        revoked: keys.revoked,
        limited: keys.limited,
        junk: 'not-a-key',
        'two-headers': k,
      }[g.key]
      if (g.key !== 'query' && g.key !== 'none') headers['x-api-key'] = keyOf
      if (g.key === 'query' || g.key === 'both' || g.key === 'both-different') pairs.push(`api_key=${k}`)
      if (g.contentType !== undefined) headers['content-type'] = g.contentType
      if (g.ifNoneMatch !== undefined) headers['if-none-match'] = g.ifNoneMatch
      if (g.acceptEncoding !== undefined) headers['accept-encoding'] = g.acceptEncoding
      if (
        g.extraHeader &&
        !['host', 'content-length', 'transfer-encoding', 'connection', 'expect', 'upgrade'].includes(g.extraHeader[0])
      )
        headers[g.extraHeader[0]] = g.extraHeader[1]
      // Framed explicitly: node:http sends a GET or HEAD body unframed (its bytes would read as a next request).
      if (g.body != null) headers['content-length'] = String(Buffer.byteLength(g.body))
      const query = pairs.join(g.separator)
      return {
        route: `${route.method} ${route.url}`,
        method,
        path: pathSafe(query ? `${path}?${query}` : path),
        headers,
        body: g.body ?? undefined,
      }
    })
  return fc.sample(request, { seed: SEED, numRuns: RUNS })
}

/** What is wrong with one answer, if anything. */
function problem(req: FuzzRequest, res: RawAnswer): string | undefined {
  if (res.status >= 500) return `status ${res.status}: ${res.body.slice(0, 300)}`
  if (res.status < 400 || req.method === 'HEAD') return undefined
  if (!/^application\/json/.test(String(res.headers['content-type'])))
    return `a ${res.status} with content-type ${res.headers['content-type']}: ${res.body.slice(0, 200)}`
  try {
    const body = JSON.parse(res.body) as { code?: unknown; message?: unknown }
    if (body.code !== res.status || typeof body.message !== 'string')
      return `a ${res.status} body is not {code, message}: ${res.body.slice(0, 200)}`
  } catch {
    return `a ${res.status} body is not JSON: ${res.body.slice(0, 200)}`
  }
  return undefined
}

describe('fuzz', () => {
  const { dir, cleanup } = tempDir()
  const { lines, logger } = captureLogs('trace')
  let server: TestServer
  let keys: { valid: string; limited: string; revoked: string }
  before(async () => {
    server = await startServer(await demoDb(dir), {
      logger,
      rateLimit: {
        limiter: new MemoryRateLimiter(),
        defaults: { ratePerMin: 1_000_000, burst: 100_000 },
        failOpen: true,
      },
    })
    const limited = await newKey(server.keys, 'limited', { ratePerMin: 60, burst: 3 })
    const revoked = await newKey(server.keys, 'revoked')
    const id = (await server.keys.listKeys()).find((r) => r.name === 'revoked')!.id
    await server.keys.revokeKey(id)
    keys = { valid: server.key, limited, revoked }
  })
  after(async () => {
    await server.close()
    cleanup()
  })

  it(
    `${RUNS} generated requests over every registered route: no 5xx, every error {code, message}, no key in any log line`,
    { timeout: 900_000 },
    async () => {
      const table = registeredRoutes.get(server.app)
      assert.ok(table && table.length > 20, 'the app lists its routes')
      const routes: Route[] = table.map((r) => {
        const props =
          (r.schema as
            | {
                querystring?: { properties?: Record<string, unknown> }
                body?: { properties?: Record<string, unknown> }
              }
            | undefined) ?? {}
        return {
          method: r.method,
          url: r.url,
          names: [...Object.keys(props.querystring?.properties ?? {}), ...Object.keys(props.body?.properties ?? {})],
        }
      })
      const all = requests(routes, keys)
      const covered = new Set(all.map((r) => r.route))
      const missed = routes.map((r) => `${r.method} ${r.url}`).filter((r) => !covered.has(r))
      assert.deepEqual(missed, [], 'every registered route is requested')

      const base = new URL(server.url)
      const agent = new Agent({ keepAlive: true, maxSockets: WORKERS })
      const failures: string[] = []
      const statuses = new Map<number, number>()
      let next = 0
      const worker = async () => {
        while (next < all.length) {
          const req = all[next++]
          let res: RawAnswer
          try {
            res = await send(base, agent, req.method, req.path, req.headers, req.body)
          } catch {
            try {
              // The server may close a connection after a client error (400/408/431); a retry on a
              // fresh connection must then get an answer.
              res = await send(base, undefined, req.method, req.path, { ...req.headers, connection: 'close' }, req.body)
            } catch (err) {
              failures.push(`${req.method} ${req.path}: no answer (${(err as Error).message})`)
              continue
            }
          }
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
          const p = problem(req, res)
          if (p)
            failures.push(
              `${req.method} ${req.path.slice(0, 200)} ${JSON.stringify(req.headers).slice(0, 200)} body ${String(req.body).slice(0, 80)}: ${p}`,
            )
        }
      }
      await Promise.all(Array.from({ length: WORKERS }, worker))
      agent.destroy()
      assert.deepEqual(failures.slice(0, 20), [], `${failures.length} of ${all.length} failed`)
      const sent = [...statuses.values()].reduce((a, b) => a + b, 0)
      assert.equal(sent, RUNS)
      // The mix reaches the handlers, not only the front door: each status at least this often in the
      // fixed seed's mix (the routes are the app's own; wrong methods, 405, come from the mix itself).
      const floor: Record<number, number> = { 200: 1000, 400: 1000, 401: 40, 404: 1000, 405: 100, 413: 50, 415: 100 }
      for (const [status, n] of Object.entries(floor))
        assert.ok(
          (statuses.get(Number(status)) ?? 0) >= n,
          `${status}: ${statuses.get(Number(status))} of ${JSON.stringify([...statuses])}`,
        )
      assert.equal((await fetch(`${server.url}/healthz`)).status, 200, 'still serving')

      const requestLines = lines.filter((l) => l.includes('"msg":"request"'))
      assert.ok(requestLines.length > RUNS / 2, `${requestLines.length} request log lines captured`)
      assertNoKeyInLogs(lines, [keys.valid, keys.limited, keys.revoked])
      const errors = lines.filter((l) => /"level":(50|60)/.test(l))
      assert.deepEqual(errors.slice(0, 5), [], 'no error-level log lines')
    },
  )
})
