/** @module A fixed list of request paths drawn once, and their bodies captured from mdq for the bare baseline server. */
import { writeFileSync } from 'node:fs'
import { seededRandom } from '../src/demo/demo-data.js'

/** `n` paths drawn once from a seeded PRNG, so every run (and both servers) ask the same ones. */
export function fixedPaths(n: number, seed: number, make: (rnd: () => number) => string): string[] {
  const rnd = seededRandom(seed)
  return Array.from({ length: n }, () => make(rnd))
}

/**
 * Fetches every path from mdq and writes `{path: body}` to `file` (bench/bare-server.ts's input): the bare
 * server then sends exactly the bytes mdq answered, and 404s any other path, so a load never measures
 * bytes mdq did not send.
 */
export async function captureBodies(
  base: string,
  key: string,
  paths: readonly string[],
  file: string,
): Promise<Record<string, string>> {
  const bodies: Record<string, string> = {}
  for (const p of new Set(paths)) {
    const res = await fetch(base + p, { headers: { 'x-api-key': key } })
    if (res.status !== 200) throw new Error(`${p}: ${res.status} ${await res.text()}`)
    bodies[p] = await res.text()
  }
  writeFileSync(file, JSON.stringify(bodies))
  return bodies
}
