// Integer parameters on every route are plain safe integers or a 400 naming them: the Infinity
// family ('Infinity', '1e309', '+Infinity', ' Infinity', '-Infinity') passed Ajv's coercion and
// bounds, returned every stored bar, answered 500 or leaked SQLITE_MISMATCH.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { demoDb, startServer, type TestServer } from '../helpers/server.js'
import { tempDir } from '../helpers/store-files.js'
import { assertErrorBody, send } from './harness.js'

const BAD = [
  'Infinity',
  '1e309',
  '%2BInfinity',
  '+Infinity',
  '%20Infinity',
  '-Infinity',
  'Infinity%20',
  '1e3',
  '0x10',
  '1.5',
  '1.0',
  '-0.0',
  '99999999999999999999',
  '9007199254740993',
  'NaN',
  '%E2%88%9E',
  '',
]

/** A valid value for each parameter a route requires, so the integer under test is the only fault. */
const VALID: Record<string, string> = {
  symbol: '600519.SH',
  symbols: '600519.SH',
  q: 'a',
  period: '1d',
  adjust: 'none',
  ids: 'CN_ETF',
  universes: 'CN_ETF',
}

interface OpenApiParameter {
  name: string
  in: string
  required?: boolean
  schema?: { type?: string }
}

const { dir, cleanup } = tempDir()
let server: TestServer
let base: URL
/** Every documented GET route with its integer query parameters, read from /openapi.json: new routes are covered as they appear. */
let routes: { path: string; required: string[]; integers: string[] }[]
before(async () => {
  server = await startServer(await demoDb(dir))
  base = new URL(server.url)
  const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, { parameters?: OpenApiParameter[] }>>
  }
  routes = Object.entries(doc.paths).flatMap(([path, ops]) => {
    const params = (ops.get?.parameters ?? []).filter((p) => p.in === 'query')
    return ops.get
      ? [
          {
            path,
            required: params.filter((p) => p.required).map((p) => p.name),
            integers: params.filter((p) => p.schema?.type === 'integer').map((p) => p.name),
          },
        ]
      : []
  })
})
after(async () => {
  await server.close()
  cleanup()
})

describe('integer parameters', () => {
  it('the documented routes include the klines, ex-factors and search integers (the table below is not empty)', () => {
    const all = routes.flatMap((r) => r.integers.map((i) => `${r.path} ${i}`))
    for (const expected of [
      '/v1/klines count',
      '/v1/klines start_time',
      '/v1/klines end_time',
      '/v1/klines/ex-factors start_time',
      '/v1/klines/ex-factors end_time',
      '/v1/instruments/search limit',
    ]) {
      assert.ok(all.includes(expected), `${expected} in ${all.join(', ')}`)
    }
  })

  it('every integer parameter of every route: each of the Infinity family and other non-integers is a 400 naming the parameter', async () => {
    let checked = 0
    for (const route of routes) {
      if (route.path.includes('{')) continue // path parameters: covered by the fuzz
      for (const name of route.integers) {
        for (const value of BAD) {
          const query = [
            ...route.required.filter((r) => r !== name && r in VALID).map((r) => `${r}=${VALID[r]}`),
            `${name}=${value}`,
          ].join('&')
          const path = `${route.path}?${query}`
          const r = await send(base, undefined, 'GET', path, { 'x-api-key': server.key })
          if (value === '') {
            assert.equal(r.status, 400, `${path}: ${r.body}`) // empty: "is empty" or "must be an integer"
          } else {
            assert.equal(r.status, 400, `${path}: ${r.status} ${r.body.slice(0, 200)}`)
            assert.match(JSON.parse(r.body).message as string, new RegExp(`'${name}' must be an integer`), path)
          }
          assertErrorBody(r.status, r.headers, r.body, path)
          checked++
        }
      }
    }
    assert.ok(checked >= 6 * BAD.length, `${checked} requests checked`)
  })

  it('the largest safe integer and plain integers still pass where the bounds allow them', async () => {
    for (const path of [
      '/v1/klines?symbol=600519.SH&end_time=9007199254740991&count=3',
      '/v1/klines?symbol=600519.SH&start_time=0&count=10000',
      '/v1/klines/ex-factors?symbols=600000.SH&start_time=0&end_time=9007199254740991',
      '/v1/instruments/search?q=6&limit=100',
    ]) {
      const r = await send(base, undefined, 'GET', path, { 'x-api-key': server.key })
      assert.equal(r.status, 200, `${path}: ${r.body.slice(0, 200)}`)
    }
    const r = await send(base, undefined, 'GET', '/v1/klines?symbol=600519.SH&count=3', { 'x-api-key': server.key })
    assert.equal((JSON.parse(r.body) as { data: { timestamp: number[] } }).data.timestamp.length, 3)
  })
})
