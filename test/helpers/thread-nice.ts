/** @module The nice value of each thread of a process, as the kernel reports it (Linux: /proc/<pid>/task/<tid>/stat, field 19). */
import { readdirSync, readFileSync } from 'node:fs'

/** Thread `tid`'s nice value in process `pid`. */
export function threadNice(pid: number, tid: number): number {
  // Fields after the command's closing parenthesis start at the third (state): the 19th is the 17th there.
  return Number(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1].split(' ')[16])
}

/** Every thread's nice value in process `pid`. */
export function threadNices(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).map((tid) => threadNice(pid, Number(tid)))
}
