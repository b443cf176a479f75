/**
 * @module TickFlow's stream messages from the client, checked: `{"op": "subscribe" | "unsubscribe",
 * "channel": "quotes" | "depth", "symbols": [...]}` (the SDK's `tf.stream`; its deprecated
 * `tf.realtime` sends no channel: quotes), and `{"op": "ping"}` for clients that cannot send a
 * WebSocket ping (browsers). Anything else is an error naming what is wrong.
 */
import { MdqError } from '../domain/errors.js'
import { parseSymbol } from '../domain/market.js'
import { CHANNELS, isChannel, type Channel } from './stream-hub.js'

export type StreamOp =
  | { readonly op: 'subscribe' | 'unsubscribe'; readonly channel: Channel; readonly symbols: readonly string[] }
  | { readonly op: 'ping' }

/** A message refused: the error op's code (400) and message. */
export interface RefusedOp {
  readonly error: string
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * One client message. `channels`: what the endpoint serves; when it serves one channel, a message
 * without `channel` means that one (the deprecated quotes endpoint).
 */
export function parseOp(text: string, channels: readonly Channel[] = CHANNELS): StreamOp | RefusedOp {
  let msg: unknown
  try {
    msg = JSON.parse(text)
  } catch {
    return { error: 'The message is not valid JSON; send {"op": "subscribe", "channel": ..., "symbols": [...]}.' }
  }
  if (!isRecord(msg)) return { error: 'The message must be a JSON object with an "op".' }
  const { op } = msg
  if (op === 'ping') return { op }
  if (op !== 'subscribe' && op !== 'unsubscribe')
    return { error: `Field 'op' must be one of subscribe, unsubscribe, ping; got ${JSON.stringify(op)?.slice(0, 40)}.` }
  const channel = msg.channel ?? (channels.length === 1 ? channels[0] : undefined)
  if (!isChannel(channel) || !channels.includes(channel))
    return {
      error:
        channel === undefined
          ? `Field 'channel' is required: one of ${channels.join(', ')}.`
          : `Field 'channel' must be one of ${channels.join(', ')}; got ${JSON.stringify(channel).slice(0, 40)}.`,
    }
  const { symbols } = msg
  if (!Array.isArray(symbols) || symbols.length === 0)
    return { error: `Field 'symbols' must be a non-empty array of symbols such as "600000.SH".` }
  const canonical = new Set<string>()
  for (const s of symbols) {
    if (typeof s !== 'string')
      return { error: `Field 'symbols' must hold strings; got ${JSON.stringify(s)?.slice(0, 40)}.` }
    try {
      canonical.add(parseSymbol(s, 'symbols').symbol)
    } catch (err) {
      if (err instanceof MdqError) return { error: err.message.replace(/^Parameter/, 'Field') }
      throw err
    }
  }
  return { op, channel, symbols: [...canonical] }
}
