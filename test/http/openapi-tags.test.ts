// /openapi.json groups every documented route under one of mdq's tags (the groups of /docs), so a
// new route without one fails here rather than landing in Swagger UI's "default" group.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { DOC_TAGS } from '../../src/http/doc-tags.js'
import { demoDb, startServer, type TestServer } from '../helpers/server.js'
import { tempDir } from '../helpers/store-files.js'

interface Doc {
  tags: { name: string; description: string }[]
  paths: Record<string, Record<string, { tags?: string[]; security?: unknown[] }>>
}

describe('/openapi.json tags', () => {
  const { dir, cleanup } = tempDir()
  let server: TestServer
  let doc: Doc
  before(async () => {
    server = await startServer(await demoDb(dir))
    doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as Doc
  })
  after(async () => {
    await server.close()
    cleanup()
  })

  it("every operation has exactly one of mdq's tags; the document lists the tags in use, in order", () => {
    const names: string[] = DOC_TAGS.map((t) => t.name)
    const byTag = new Map<string, string[]>()
    for (const [path, ops] of Object.entries(doc.paths))
      for (const [method, op] of Object.entries(ops)) {
        assert.equal(op.tags?.length, 1, `${method} ${path}: ${JSON.stringify(op.tags)}`)
        assert.ok(names.includes(op.tags[0]), `${method} ${path}: ${op.tags[0]}`)
        byTag.set(op.tags[0], [...(byTag.get(op.tags[0]) ?? []), `${method.toUpperCase()} ${path}`])
      }
    assert.deepEqual(
      doc.tags.map((t) => t.name),
      names.filter((n) => byTag.has(n)),
    )
    assert.deepEqual(byTag.get('system'), ['GET /healthz', 'GET /readyz', 'GET /metrics'])
    assert.ok(byTag.get('klines')?.includes('GET /v1/klines/batch'))
    assert.ok(byTag.get('reference')?.includes('GET /v1/exchanges'))
    assert.ok(byTag.get('SDK extras')?.includes('GET /v1/quotes'))
  })

  it('the system routes are documented without a key; /openapi.json itself is not listed', () => {
    for (const path of ['/healthz', '/readyz', '/metrics']) assert.deepEqual(doc.paths[path].get.security, [], path)
    assert.equal(doc.paths['/openapi.json'], undefined)
  })
})
