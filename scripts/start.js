#!/usr/bin/env node
// `npm start [-- FLAGS]`: `mdq start FLAGS`, compiling first only when dist/ is not current. Compiling
// takes 15-35 s on a small machine; a start from current output takes well under one.
// dist/ is current when every src/**/*.ts has its compiled .js, and none of them (nor tsconfig.json)
// is newer than the oldest of those outputs: tsc rewrites every output on each build, and emits
// nothing when the build fails (noEmitOnError), so a failed build is tried again, never run.
import { spawnSync } from 'node:child_process'
import { readdirSync, statSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')

/** Why dist/ must be rebuilt, or undefined when it is current. */
function staleness() {
  let newestSource = statSync(join(root, 'tsconfig.json')).mtimeMs
  let oldestOutput = Infinity
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) {
        const missing = walk(path)
        if (missing) return missing
      } else if (entry.name.endsWith('.ts')) {
        const output = join(root, 'dist', relative(root, path)).replace(/\.ts$/, '.js')
        let built
        try {
          built = statSync(output).mtimeMs
        } catch {
          return `${relative(root, output)} is missing`
        }
        newestSource = Math.max(newestSource, statSync(path).mtimeMs)
        oldestOutput = Math.min(oldestOutput, built)
      }
    }
    return undefined
  }
  return walk(join(root, 'src')) ?? (newestSource > oldestOutput ? 'sources changed since the last build' : undefined)
}

const why = staleness()
if (why !== undefined) {
  process.stderr.write(`Compiling TypeScript (${why})...\n`)
  const build = spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' })
  if (build.status !== 0) process.exit(build.status ?? 1)
}
// The command line runs in this process (no child to orphan): `node scripts/start.js ARGS` = `mdq start ARGS`.
process.argv.splice(2, 0, 'start')
await import('../bin/mdq.js')
