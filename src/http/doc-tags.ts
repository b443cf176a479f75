/** @module The groups of the API reference at /docs: every documented route names one; /openapi.json lists them in this order. */

export const DOC_TAGS = [
  { name: 'klines', description: 'Kline series and ex-rights factors, one instrument or a batch (rate-limited)' },
  { name: 'reference', description: 'Instruments, exchanges and universes' },
  { name: 'financials', description: 'Financial statements: every version kept, the latest (or as of a date) served' },
  {
    name: 'SDK extras',
    description: "TickFlow's other routes: quotes (the latest pushed today, else derived from stored bars)",
  },
  {
    name: 'live',
    description:
      'Depth as pushed to the ingest listener; the WebSocket streams /v1/ws/stream (quotes, depth) and /v1/ws/quotes',
  },
  { name: 'ingest', description: 'Pushing live quotes and bars into the store' },
  { name: 'system', description: 'Liveness, readiness and Prometheus metrics; no key needed' },
] as const
export type DocTag = (typeof DOC_TAGS)[number]['name']

/** The `tags` of a route schema: its group on /docs. */
export const docTag = (tag: DocTag) => ({ tags: [tag] })

/** The tags of every operation of an OpenAPI `paths` object. */
function usedTags(paths: unknown): Set<string> {
  const used = new Set<string>()
  for (const ops of Object.values((paths ?? {}) as Record<string, Record<string, { tags?: unknown } | undefined>>))
    for (const op of Object.values(ops ?? {}))
      if (Array.isArray(op?.tags)) for (const tag of op.tags) used.add(String(tag))
  return used
}

/** The document with the groups its routes use, in DOC_TAGS order (a group without routes yet is left out). */
export function withDocTags<T extends { paths?: unknown }>(doc: T): T {
  const used = usedTags(doc.paths)
  return { ...doc, tags: DOC_TAGS.filter((t) => used.has(t.name)).map((t) => ({ ...t })) }
}
