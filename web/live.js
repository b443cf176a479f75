// mdq chart page, live half: TickFlow's quotes stream on this origin (/v1/ws/stream) and how a quote
// moves the forming bar. Loaded before app.js, which wires both to the chart.
'use strict'

/**
 * One WebSocket to /v1/ws/stream following one symbol's quotes. The key goes in `api_key`, as the
 * TickFlow SDK sends it (a browser cannot set a header on a WebSocket; mdq's log redacts it). A
 * closed socket reopens after 1, 2, 4 ... 30 s (with jitter), and resubscribes.
 * `onQuote(quote)` gets every Quote; `onState(text)` a word for the footer.
 */
function quoteStream({ onQuote, onState }) {
  let ws = null
  let key = ''
  let symbol = ''
  let retries = 0
  let timer = 0
  const send = (op, s) => ws?.send(JSON.stringify({ op, channel: 'quotes', symbols: [s] }))

  function open() {
    clearTimeout(timer)
    if (!key || !symbol) return
    const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/v1/ws/stream?api_key=${encodeURIComponent(key)}`
    const socket = (ws = new WebSocket(url))
    onState('connecting')
    socket.onopen = () => {
      retries = 0
      onState('subscribing')
      send('subscribe', symbol)
    }
    socket.onmessage = (e) => {
      let msg
      try {
        msg = JSON.parse(e.data)
      } catch {
        return
      }
      // 'live' once subscribed: every quote accepted from then on arrives (the latest one first).
      if (msg.op === 'subscribed') onState('live')
      else if (msg.op === 'quotes' && Array.isArray(msg.data)) for (const q of msg.data) onQuote(q)
    }
    socket.onclose = () => {
      if (ws !== socket) return // replaced or stopped on purpose
      ws = null
      const delay = Math.min(30_000, 1000 * 2 ** retries++) * (0.75 + Math.random() / 2)
      onState(`reconnecting in ${Math.ceil(delay / 1000)} s`)
      timer = setTimeout(open, delay)
    }
  }

  return {
    /** Follow `nextSymbol` with `nextKey`: resubscribes on the open socket, or opens one for a new key. */
    follow(nextKey, nextSymbol) {
      const sameKey = nextKey === key && ws !== null
      const previous = symbol
      key = nextKey
      symbol = nextSymbol
      if (!sameKey) {
        stop(false)
        retries = 0
        open()
      } else if (ws.readyState === WebSocket.OPEN && previous !== nextSymbol) {
        send('unsubscribe', previous)
        send('subscribe', nextSymbol)
      } // still connecting: onopen subscribes the symbol followed by then
    },
    stop: () => stop(true),
  }

  function stop(forget) {
    clearTimeout(timer)
    const socket = ws
    ws = null
    socket?.close()
    if (forget) symbol = ''
    onState('')
  }
}

const MINUTES = { '1m': 1, '5m': 5, '10m': 10, '15m': 15, '30m': 30, '60m': 60 }
const MONTHS = { '1M': 1, '1Q': 3, '1Y': 12 }

/**
 * The end (exclusive, UTC ms) of the bar starting at `t`, or undefined where it cannot be told from
 * the bar alone (a minute bar cut at a session end ends earlier; that changes nothing here, as no
 * quote falls in the cut part). `local(ms)`: seconds of the exchange's wall clock read as UTC.
 */
function barEnd(period, t, local) {
  if (MINUTES[period]) return t + MINUTES[period] * 60_000
  const day = 86_400_000
  if (period === '1d') return t + day
  if (period === '1w') return t + 7 * day
  const start = new Date(local(t) * 1000)
  const next = Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + MONTHS[period], 1)
  return t + (next - local(t) * 1000)
}

/**
 * The last bar after quote `q` (TickFlow's Quote: last_price, the day's open/high/low, cumulative day
 * volume, session), as the server's bars will hold it; null when the quote changes nothing drawn; or
 * 'reload' when only the server can tell: the page then reads the latest bars from /v1/klines, which
 * the ingest keeps current. `prev`: the quote before it that the page saw (same symbol); `local` as
 * in barEnd.
 *
 * A bar gains the volume traded since the quote before; without that quote of the same day (the
 * first after the bars were read, or of a new day) only the server knows how much of it a bar holds,
 * except the day's bar, which is the quote's day figures. Minute bars are made as the server makes
 * them from the same snapshots (src/domain/minute-bars.ts): only trades open or move them, and a print
 * outside the sessions (`session` is 'regular' only inside them: the lunch break's first, the opening
 * and closing auctions, after hours) belongs to a session's last minute, the day's first or none. A
 * bucket past the last bar of a period above 1m starts where only the server knows (minute buckets
 * anchor at session opens, calendar periods need the day's share of volume).
 */
function nextBar(period, last, q, prev, local) {
  const price = q.last_price
  if (period === '1d') {
    if (q.timestamp < last.t) return null
    if (q.timestamp >= barEnd(period, last.t, local)) return 'reload'
    return { t: last.t, o: q.open, h: q.high, l: q.low, c: price, v: q.volume }
  }
  const sameDay = prev && Math.floor(local(prev.timestamp) / 86400) === Math.floor(local(q.timestamp) / 86400)
  if (!sameDay) return 'reload'
  const traded = Math.max(0, q.volume - prev.volume)
  const minutes = MINUTES[period]
  if (minutes && traded === 0) return null
  if (minutes && q.session !== 'regular') return 'reload'
  if (q.timestamp < last.t) return null
  // A new high or low of the day since the quote before was traded in between: the minute's, as the server counts it.
  const high = q.high > prev.high ? Math.max(q.high, price) : price
  const low = q.low < prev.low && q.low > 0 ? Math.min(q.low, price) : price
  if (q.timestamp >= barEnd(period, last.t, local)) {
    if (period !== '1m') return 'reload'
    const t = Math.floor(q.timestamp / 60_000) * 60_000
    return { t, o: price, h: high, l: low, c: price, v: traded }
  }
  return {
    ...last,
    h: Math.max(last.h, minutes ? high : q.high),
    l: Math.min(last.l, minutes ? low : q.low),
    c: price,
    v: last.v + traded,
  }
}

window.mdqLive = { quoteStream, nextBar }
