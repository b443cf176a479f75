/** @module Tiny timing helpers for the benches: best of N runs, medians, a process's CPU, the load average, rates, printed rows. */
import { spawn } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { availableParallelism, loadavg } from 'node:os'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'

/** Best wall time in ms of `runs` calls (after one warm-up), so noise from a shared machine counts less. */
export function bestMs(fn: () => unknown, runs = 5): number {
  fn()
  let best = Infinity
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now()
    fn()
    best = Math.min(best, performance.now() - t0)
  }
  return best
}

export function rate(items: number, ms: number): string {
  const perS = (items / ms) * 1000
  return perS >= 1e6 ? `${(perS / 1e6).toFixed(1)}M/s` : `${(perS / 1e3).toFixed(1)}k/s`
}

/** One line of a bench's table: the label in 40 columns, each cell in 12, a wider one followed by two spaces. */
export function row(...cells: (string | number)[]): void {
  const width = (i: number) => (i === 0 ? 40 : 12)
  console.log(
    cells
      .map(String)
      .map((c, i) => (c.length >= width(i) ? `${c}  ` : c.padEnd(width(i))))
      .join('')
      .trimEnd(),
  )
}

/** The middle value (the upper one of an even count). */
export const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]

/**
 * CPU ms (user + system) a process has used so far, from /proc/PID/stat in clock ticks (USER_HZ: 100
 * on every Linux architecture Node runs on): a server's CPU per request moves far less with the
 * machine's load than its wall-clock latency does. With `thread`, that thread's alone (the main
 * thread's id is the pid).
 */
export function cpuMs(pid: number, thread?: number): number {
  const fields = readFileSync(thread === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${thread}/stat`, 'utf8')
    .replace(/^.*\) /s, '')
    .split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10 // utime, stime (fields 14, 15)
}

/** cpuMs of each thread of a process, by thread id (the main thread's is the pid). */
export function threadsCpuMs(pid: number): Map<number, number> {
  return new Map(readdirSync(`/proc/${pid}/task`).map((t) => [Number(t), cpuMs(pid, Number(t))]))
}

/** cpuMs of a process and its child processes (a node:cluster server's), read at once. */
export function treeCpuMs(pid: number): number {
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
    .trim()
    .split(' ')
    .filter(Boolean)
    .map(Number)
  return children.reduce((ms, child) => ms + treeCpuMs(child), cpuMs(pid))
}

/**
 * The machine's CPU ms so far, from /proc/stat: `idle` (idle and waiting on I/O, over all cores) and
 * `irq` (interrupts and softirqs: loopback TCP's receive path runs there, charged to no process).
 */
export function machineCpuMs(): { idle: number; irq: number } {
  // "cpu  user nice system idle iowait irq softirq ...", in USER_HZ ticks (100 a second)
  const [, , , , idle, iowait, irq, softirq] = readFileSync('/proc/stat', 'utf8')
    .split('\n', 1)[0]
    .split(/\s+/)
    .map(Number)
  return { idle: (idle + iowait) * 10, irq: (irq + softirq) * 10 }
}

/** The 1, 5 and 15 minute load averages, printed beside every figure. */
export const loadAverage = (): string =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')

/**
 * A process's resident set now, in bytes (/proc/PID/status): all of it (VmRSS), and its anonymous
 * part (RssAnon: heap and buffers, without the pages of files it maps, such as a SQLite store read
 * through mmap, which the kernel may drop and share with other processes).
 */
export function residentBytes(pid: number): { rss: number; anon: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (field: string) => {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)
    if (!m) throw new Error(`no ${field} for process ${pid}`)
    return Number(m[1]) * 1024
  }
  return { rss: kb('VmRSS'), anon: kb('RssAnon') }
}

/**
 * Ms a thread has spent runnable but waiting for a CPU so far (the second field of its schedstat; the
 * main thread's when `thread` is omitted): on a shared machine, how much of a latency is the queue
 * for a core rather than the work.
 */
export function cpuWaitMs(pid: number, thread = pid): number {
  return Number(readFileSync(`/proc/${pid}/task/${thread}/schedstat`, 'utf8').split(' ')[1]) / 1e6
}

/** Processes that keep `share` cores busy between them (each spinning its part of every 10 ms) until stopped. */
export async function startHog(share: number): Promise<{ kill: () => void }> {
  const n = Math.max(1, Math.ceil(share))
  const each = share / n
  const hogs = Array.from({ length: n }, () =>
    spawn(
      process.execPath,
      [
        '-e',
        `setInterval(() => { const end = performance.now() + 10 * ${each}; while (performance.now() < end); }, 10)`,
      ],
      { stdio: 'ignore' },
    ),
  )
  await sleep(300)
  return { kill: () => hogs.forEach((h) => h.kill()) }
}

/** What `work` run alone keeps the machine busy with, in cores (from /proc/stat's idle time), with its result. */
export async function busyCores<T>(work: () => Promise<T>): Promise<{ result: T; cores: number }> {
  const idle0 = machineCpuMs().idle
  const t0 = performance.now()
  const result = await work()
  const wall = performance.now() - t0
  return { result, cores: Math.max(0, availableParallelism() - (machineCpuMs().idle - idle0) / wall) }
}
