// Every path the TickFlow SDK calls is answered by a registered mdq route, except the deliberate ones listed below.
import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { SDK_DIR } from '../helpers/python-sdk.js'
import { demoDb, startServer, type TestServer } from '../helpers/server.js'
import { tempDir } from '../helpers/store-files.js'

/** Routes mdq does not serve on purpose, each with the reason; they answer 404 with a message saying why. */
const EXCEPTIONS: readonly { readonly prefix: string; readonly reason: string }[] = []
/** Values for the SDK's f-string placeholders. */
const PLACEHOLDERS: Record<string, string> = { exchange: 'SH', universe_id: 'CN_Equity_A' }

const missing = existsSync(join(SDK_DIR, 'tickflow', 'resources')) ? false : `TickFlow SDK missing: ${SDK_DIR}`
const skip = missing && process.env.CI !== 'true' ? missing : false

/** (method, path) of every `/v1/...` the SDK's sources name; POST when the call on that line or the line before is `.post(`. */
function sdkCalls(): { method: 'GET' | 'POST'; path: string; where: string }[] {
  if (missing) throw new Error(missing)
  const dir = join(SDK_DIR, 'tickflow')
  const files = [...readdirSync(join(dir, 'resources')).map((f) => join('resources', f)), '_cache.py'].filter((f) =>
    f.endsWith('.py'),
  )
  const calls = new Map<string, { method: 'GET' | 'POST'; path: string; where: string }>()
  for (const file of files) {
    const lines = readFileSync(join(dir, file), 'utf8').split('\n')
    lines.forEach((line, i) => {
      for (const m of line.matchAll(/\/v1\/[A-Za-z0-9_\-/{}]*/g)) {
        const path = m[0].replace(/\{(\w+)\}/g, (_, name: string) => PLACEHOLDERS[name] ?? name)
        const method = /\.post\(/.test(line) || /\.post\(\s*$/.test(lines[i - 1] ?? '') ? 'POST' : 'GET'
        calls.set(`${method} ${path}`, { method, path, where: `${file}:${i + 1}` })
      }
    })
  }
  return [...calls.values()]
}

describe('the routes the TickFlow SDK calls', () => {
  const { dir, cleanup } = tempDir()
  let server: TestServer
  before(async () => {
    server = await startServer(await demoDb(dir))
  })
  after(async () => {
    await server.close()
    cleanup()
  })

  it(
    'each is answered by a registered route, or is a listed exception answering 404 with its reason',
    { skip },
    async () => {
      const calls = sdkCalls()
      assert.ok(calls.length >= 15, `found only ${calls.length} SDK calls: the walk is broken`)
      const unanswered: string[] = []
      for (const { method, path, where } of calls) {
        const res = await server.app.inject({
          method,
          url: path,
          headers: { 'x-api-key': server.key, 'content-type': 'application/json' },
          ...(method === 'POST' ? { payload: '{}' } : {}),
        })
        const body = res.json<{ code?: number; message?: string }>()
        const exception = EXCEPTIONS.find((e) => path.startsWith(e.prefix))
        if (exception) {
          assert.equal(res.statusCode, 404, `${method} ${path} (${where})`)
          assert.doesNotMatch(
            body.message ?? '',
            /^No route/,
            `${path} must say why it is not served (${exception.reason})`,
          )
          continue
        }
        // A registered route answers with anything but the "No route" 404 or a 405 (a 400 for the empty probe is fine).
        if (res.statusCode === 405 || /^No route/.test(body.message ?? ''))
          unanswered.push(`${method} ${path} (${where}): ${res.statusCode} ${body.message}`)
      }
      assert.deepEqual(unanswered, [])
    },
  )
})
