/** @module Which clients share a per-address connection budget: one IPv4 address, or one IPv6 /64 (what one host or site usually holds). */
import { isIPv4, isIPv6 } from 'node:net'

/** The group of a remote address: `a.b.c.d`, or the first four hex groups of an IPv6 address plus `::/64`. */
export function addressGroup(address: string | undefined): string {
  if (address === undefined) return ''
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (mapped !== null) return mapped[1]
  if (isIPv4(address) || !isIPv6(address.split('%')[0])) return address
  const [head, tail] = address.split('%')[0].toLowerCase().split('::')
  const groups = (part: string | undefined) =>
    part === undefined || part === '' ? [] : part.split(':').flatMap((g) => (g.includes('.') ? ['0', '0'] : [g]))
  const before = groups(head)
  const after = groups(tail)
  const all = [...before, ...Array<string>(Math.max(0, 8 - before.length - after.length)).fill('0'), ...after]
  return `${all
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(':')}::/64`
}
