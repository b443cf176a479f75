import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseOp } from './stream-protocol.js'

describe('parseOp', () => {
  it("reads TickFlow's subscribe and unsubscribe, symbols canonical and once", () => {
    assert.deepEqual(parseOp('{"op":"subscribe","channel":"depth","symbols":["600000.sh","600000.SH","aapl.us"]}'), {
      op: 'subscribe',
      channel: 'depth',
      symbols: ['600000.SH', 'AAPL.US'],
    })
    assert.deepEqual(parseOp('{"op":"unsubscribe","symbols":["00700.HK"]}', ['quotes']), {
      op: 'unsubscribe',
      channel: 'quotes',
      symbols: ['00700.HK'],
    })
    assert.deepEqual(parseOp('{"op":"ping"}'), { op: 'ping' })
  })

  it('refuses anything else with a message naming the field', () => {
    const refused = (text: string, channels?: readonly ('quotes' | 'depth')[]) => {
      const r = parseOp(text, channels)
      assert.ok('error' in r, text)
      return r.error
    }
    assert.match(refused('{"op":'), /not valid JSON/)
    assert.match(refused('[1]'), /JSON object/)
    assert.match(refused('{"op":"subscribe_all"}'), /'op' must be one of subscribe, unsubscribe, ping/)
    assert.match(refused('{"op":"subscribe","symbols":["600000.SH"]}'), /'channel' is required: one of quotes, depth/)
    assert.match(refused('{"op":"subscribe","channel":"depth","symbols":["600000.SH"]}', ['quotes']), /one of quotes;/)
    assert.match(refused('{"op":"subscribe","channel":"quotes","symbols":[]}'), /'symbols' must be a non-empty array/)
    assert.match(refused('{"op":"subscribe","channel":"quotes","symbols":"600000.SH"}'), /non-empty array/)
    assert.match(refused('{"op":"subscribe","channel":"quotes","symbols":[600000]}'), /must hold strings/)
    assert.match(
      refused('{"op":"subscribe","channel":"quotes","symbols":["600000.XX"]}'),
      /^Field 'symbols': unknown exchange 'XX'/,
    )
  })
})
