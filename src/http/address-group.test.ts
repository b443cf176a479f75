import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { addressGroup } from './address-group.js'

describe('addressGroup', () => {
  it('is the IPv4 address itself (also written IPv4-mapped), and the /64 of an IPv6 address however written', () => {
    const cases: [string | undefined, string][] = [
      ['127.0.0.1', '127.0.0.1'],
      ['::ffff:10.1.2.3', '10.1.2.3'],
      ['::FFFF:10.1.2.3', '10.1.2.3'],
      ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
      ['2001:0db8:0001:0002:ffff::1', '2001:db8:1:2::/64'],
      ['2001:db8:1:2::', '2001:db8:1:2::/64'],
      ['2001:db8::1', '2001:db8:0:0::/64'],
      ['2001:db8::', '2001:db8:0:0::/64'],
      ['fe80::1%eth0', 'fe80:0:0:0::/64'],
      ['::1', '0:0:0:0::/64'],
      ['::', '0:0:0:0::/64'],
      ['64:ff9b::192.0.2.33', '64:ff9b:0:0::/64'],
      [undefined, ''],
    ]
    for (const [address, group] of cases) assert.equal(addressGroup(address), group, String(address))
  })
})
