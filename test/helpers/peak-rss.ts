/** @module Runs a node child and reads its peak resident set (getrusage ru_maxrss, reported by the child at exit). */
import { spawn } from 'node:child_process'

const MARK = 'mdq-peak-rss-kb '
// Preloaded into the child: at exit it prints its own peak RSS (kB) on stderr (synchronous for pipes on Linux).
const REPORT = `data:text/javascript,process.on('exit',()=>process.stderr.write('\\n${MARK}'+process.resourceUsage().maxRSS+'\\n'))`

export interface PeakRun {
  readonly status: number | null
  readonly stdout: string
  readonly stderr: string
  /** Peak resident set of the child in bytes. */
  readonly peakRssBytes: number
}

/** `node [nodeFlags] script ...args`, resolved at exit with the child's output and peak RSS. */
export function runWithPeakRss(nodeFlags: readonly string[], args: readonly string[]): Promise<PeakRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', REPORT, ...nodeFlags, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s))
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s))
    child.on('error', reject)
    child.on('close', (status) => {
      const at = stderr.lastIndexOf(MARK)
      if (at < 0) return reject(new Error(`the child reported no peak RSS (status ${status}): ${stderr}`))
      const peakRssBytes = Number(stderr.slice(at + MARK.length).trim()) * 1024
      resolve({ status, stdout, stderr: stderr.slice(0, at).trimEnd(), peakRssBytes })
    })
  })
}
