// mdq chart page: candles + volume from /v1/klines, ex-dates from /v1/klines/ex-factors,
// older bars fetched when scrolling back (end_time = first timestamp - 1).
// The forming bar follows the symbol's quotes stream (live.js).
/* global LightweightCharts */
'use strict'

const $ = (id) => document.getElementById(id)
// Bars per request; ?page=N in the URL changes it (small pages show the paging at work).
const PAGE = Math.min(10000, Math.max(10, Number(new URLSearchParams(location.search).get('page')) || 500))
const ZONES = {
  SH: 'Asia/Shanghai',
  SZ: 'Asia/Shanghai',
  BJ: 'Asia/Shanghai',
  HK: 'Asia/Hong_Kong',
  US: 'America/New_York',
}

// Up and down colours: mainland China draws a rise red and a fall green, Hong Kong and the US the other
// way round; "by market" follows the symbol's exchange, the switch can fix either.
const PALETTES = {
  'red-up': { up: '#d23c3c', down: '#1f9d55', upVolume: '#e8a5a5', downVolume: '#9fd3b2' },
  'green-up': { up: '#1f9d55', down: '#d23c3c', upVolume: '#9fd3b2', downVolume: '#e8a5a5' },
}
const RED_UP_EXCHANGES = ['SH', 'SZ', 'BJ']

const chart = LightweightCharts.createChart($('chart'), {
  autoSize: true,
  layout: { background: { color: '#ffffff' }, textColor: '#333' },
  timeScale: { timeVisible: true, secondsVisible: false },
  grid: { vertLines: { color: '#f0f0f0' }, horzLines: { color: '#f0f0f0' } },
})
const candles = chart.addSeries(LightweightCharts.CandlestickSeries, { borderVisible: false })
const volume = chart.addSeries(
  LightweightCharts.HistogramSeries,
  { priceFormat: { type: 'volume' }, color: '#9db4cc' },
  1,
)
const markers = LightweightCharts.createSeriesMarkers(candles, [])
window.mdqChart = chart // for tests and the curious

// `settled`: the view is the user's; range changes before that come from our own fit, not a scroll.
// `loading`: the symbol's bars are being read (quotes wait for them); `loadingOlder`: older bars are
// (quotes go on moving the last bar meanwhile: both change `bars` only once their answer is in).
// `quoteWhileLoading`: a quote came before the bars were in, which they may or may not hold.
let state = {
  symbol: '',
  period: '1d',
  adjust: 'forward',
  bars: [],
  events: [],
  loading: false,
  loadingOlder: false,
  quoteWhileLoading: false,
  exhausted: false,
  settled: false,
  generation: 0,
}

/** Keeps a setting for the next visit; a browser that refuses storage (private mode, full) only forgets it. */
function remember(key, value) {
  try {
    localStorage.setItem(key, value)
  } catch {
    // nothing to do: the page works without it
  }
}

function status(text, error = false) {
  $('status').textContent = text
  $('status').className = error ? 'error' : ''
}

/** The chart library draws UTC; shift each bar by its exchange's offset so axes read local time. */
const offsets = new Map()
function offsetSeconds(zone, ms) {
  const hour = Math.floor(ms / 3600000)
  const key = zone + hour
  if (!offsets.has(key)) {
    const parts = Object.fromEntries(
      new Intl.DateTimeFormat('en-US', {
        timeZone: zone,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
      })
        .formatToParts(hour * 3600000)
        .map((p) => [p.type, p.value]),
    )
    offsets.set(
      key,
      (Date.UTC(+parts.year, parts.month - 1, +parts.day, +parts.hour, +parts.minute) - hour * 3600000) / 1000,
    )
  }
  return offsets.get(key)
}
const exchangeOf = (symbol) => symbol.slice(symbol.lastIndexOf('.') + 1).toUpperCase()
const zoneOf = (symbol) => ZONES[exchangeOf(symbol)] ?? 'UTC'
const chartTime = (ms) => Math.floor(ms / 1000) + offsetSeconds(zoneOf(state.symbol), ms)

async function api(path) {
  const key = $('api-key').value.trim()
  for (;;) {
    const res = await fetch(path, { headers: { 'X-API-Key': key } })
    const body = await res.json().catch(() => ({}))
    if (res.ok) return body.data
    if (res.status === 429) {
      status(`Rate limited: retrying in ${(body.retry_after_ms / 1000).toFixed(1)} s...`, true)
      await new Promise((r) => setTimeout(r, body.retry_after_ms))
      continue
    }
    // The server's message says what went wrong (a 404 names the unknown symbol); a 401 adds how to get a key.
    const hint = res.status === 401 ? ' Check the API key (create one with: npx mdq keys create --name me).' : ''
    throw new Error(`${res.status}: ${body.message ?? res.statusText}${hint}`)
  }
}

/** The colours of the current symbol: the switch's choice, or its market's convention. */
function palette() {
  const choice = $('colors').value
  if (choice !== 'market') return PALETTES[choice]
  return PALETTES[RED_UP_EXCHANGES.includes(exchangeOf(state.symbol)) ? 'red-up' : 'green-up']
}

function render() {
  const seen = new Set()
  const rows = state.bars.filter((b) => !seen.has(b.t) && seen.add(b.t))
  const colors = palette()
  candles.applyOptions({
    upColor: colors.up,
    downColor: colors.down,
    wickUpColor: colors.up,
    wickDownColor: colors.down,
  })
  candles.setData(rows.map((b) => ({ time: chartTime(b.t), open: b.o, high: b.h, low: b.l, close: b.c })))
  volume.setData(rows.map((b) => volumePoint(b, colors)))
  // An ex-date inside the loaded bars is marked on the bar that holds it (calendar periods) or on
  // its first bar (the first traded one after it, for a suspension).
  const calendar = ['1w', '1M', '1Q', '1Y'].includes(state.period)
  const marks = []
  for (const e of rows.length ? state.events : []) {
    if (e.timestamp < rows[0].t) continue
    const i = calendar ? rows.findLastIndex((b) => b.t <= e.timestamp) : rows.findIndex((b) => b.t >= e.timestamp)
    if (i >= 0)
      marks.push({
        time: chartTime(rows[i].t),
        position: 'aboveBar',
        shape: 'arrowDown',
        color: '#7b4bb7',
        text: `XD ${e.ex_factor.toFixed(4)}`,
      })
  }
  markers.setMarkers(marks.sort((a, b) => a.time - b.time))
  $('bar-count').value = String(rows.length)
  $('bar-count').dataset.first = rows.length ? String(rows[0].t) : ''
  $('event-count').value = String(marks.length)
}

/** Colours of one volume bar. */
const volumePoint = (b, colors) => ({
  time: chartTime(b.t),
  value: b.v,
  color: b.c >= b.o ? colors.upVolume : colors.downVolume,
})

// Live: a quote moves the last bar. Adjusted prices differ from a quote's raw ones, except forward
// ones with no ex-date after the quote (forward adjustment leaves the latest prices as traded).
const live = window.mdqLive.quoteStream({ onQuote, onState: (text) => ($('live').textContent = text) })
let prevQuote = null
// One reload at a time. A quote that comes meanwhile is left to another reload after it: the one in
// flight may have been answered before that quote's bar was written, and would undo a bar drawn from it.
let reloading = false
let reloadAgain = false
function onQuote(q) {
  if (q.symbol !== state.symbol.toUpperCase()) return
  if (state.loading) return void (state.quoteWhileLoading = true)
  if (!state.bars.length) return
  const forward = state.adjust === 'forward' || state.adjust === 'forward_additive'
  if (state.adjust !== 'none' && !(forward && state.events.every((e) => e.timestamp <= q.timestamp))) return
  const local = (ms) => chartTime(ms)
  const last = state.bars[state.bars.length - 1]
  const bar = window.mdqLive.nextBar(state.period, last, q, prevQuote, local)
  prevQuote = q
  if (bar === 'reload' || (bar && reloading)) return void reloadTail()
  if (!bar) return
  if (bar.t === last.t) state.bars[state.bars.length - 1] = bar
  else state.bars.push(bar)
  candles.update({ time: chartTime(bar.t), open: bar.o, high: bar.h, low: bar.l, close: bar.c })
  volume.update(volumePoint(bar, palette()))
  $('bar-count').value = String(new Set(state.bars.map((b) => b.t)).size)
}

/** The latest bars again from /v1/klines (a quote opened a bar whose start only the server knows). */
async function reloadTail() {
  if (reloading) return void (reloadAgain = true)
  reloading = true
  const generation = state.generation
  try {
    const data = await api(
      `/v1/klines?symbol=${encodeURIComponent(state.symbol)}&period=${state.period}&adjust=${state.adjust}&count=2`,
    )
    if (generation !== state.generation || state.loading) return
    const tail = toBars(data)
    if (tail.length) state.bars = [...state.bars.filter((b) => b.t < tail[0].t), ...tail]
    render()
  } catch (err) {
    status(err.message, true)
  } finally {
    reloading = false
    if (reloadAgain) {
      reloadAgain = false
      void reloadTail()
    }
  }
}

function toBars(d) {
  return d.timestamp.map((t, i) => ({ t, o: d.open[i], h: d.high[i], l: d.low[i], c: d.close[i], v: d.volume[i] }))
}

async function load() {
  const symbol = $('symbol').value.trim().split(' ')[0]
  const generation = ++state.generation
  state = {
    ...state,
    symbol,
    period: $('period').value,
    adjust: $('adjust').value,
    bars: [],
    events: [],
    exhausted: false,
    loading: true,
    loadingOlder: false,
    quoteWhileLoading: false,
    settled: false,
  }
  $('bar-count').dataset.settled = ''
  // The bars read now may or may not hold the trades of a quote seen before (or while loading): the
  // next quote has none to count its trades from, and re-reads them.
  prevQuote = null
  remember('mdq.apiKey', $('api-key').value.trim())
  status(`Loading ${symbol} ${state.period} ${state.adjust}...`)
  try {
    const q = `symbol=${encodeURIComponent(symbol)}&period=${state.period}&adjust=${state.adjust}&count=${PAGE}`
    const [data, events, info] = await Promise.all([
      api(`/v1/klines?${q}`),
      api(`/v1/klines/ex-factors?symbols=${encodeURIComponent(symbol)}`),
      api(`/v1/instruments?symbols=${encodeURIComponent(symbol)}`),
    ])
    if (generation !== state.generation) return
    state.bars = toBars(data)
    state.events = Object.values(events)[0] ?? []
    state.exhausted = state.bars.length < PAGE
    $('name').textContent = info[0] ? `${info[0].symbol} ${info[0].name ?? ''} · ` : ''
    render()
    live.follow($('api-key').value.trim(), symbol)
    chart.timeScale().fitContent()
    setTimeout(() => {
      if (generation !== state.generation) return
      state.settled = true
      $('bar-count').dataset.settled = 'true' // for tests: scrolling now loads older bars
    }, 300)
    status(
      state.bars.length
        ? `${symbol}: ${state.bars.length} bars. Scroll left for older ones.`
        : `${symbol}: no bars for ${state.period}.`,
    )
  } catch (err) {
    if (generation !== state.generation) return
    // Nothing of the symbol shown before stays under this one's error.
    state.bars = []
    state.events = []
    $('name').textContent = ''
    live.stop()
    render()
    status(err.message, true)
  } finally {
    if (generation === state.generation) {
      state.loading = false
      // The bars may have been read before that quote's trades were written: read the latest again.
      if (state.quoteWhileLoading && state.bars.length) void reloadTail()
      state.quoteWhileLoading = false
    }
  }
}

async function loadOlder() {
  if (state.loading || state.loadingOlder || state.exhausted || state.bars.length === 0) return
  state.loadingOlder = true
  const generation = state.generation
  try {
    const end = state.bars[0].t - 1
    const data = await api(
      `/v1/klines?symbol=${encodeURIComponent(state.symbol)}&period=${state.period}&adjust=${state.adjust}&count=${PAGE}&end_time=${end}`,
    )
    if (generation !== state.generation) return
    const range = chart.timeScale().getVisibleLogicalRange()
    const older = toBars(data)
    state.bars = [...older, ...state.bars]
    state.exhausted = older.length < PAGE
    render()
    if (range)
      chart.timeScale().setVisibleLogicalRange({ from: range.from + older.length, to: range.to + older.length })
    status(`${state.symbol}: ${state.bars.length} bars${state.exhausted ? ' (the whole history)' : ''}.`)
  } catch (err) {
    if (generation === state.generation) status(err.message, true)
  } finally {
    if (generation === state.generation) state.loadingOlder = false
  }
}

chart.timeScale().subscribeVisibleLogicalRangeChange((range) => {
  if (range && range.from < 10 && state.settled) void loadOlder()
})

let searchTimer
$('symbol').addEventListener('input', () => {
  clearTimeout(searchTimer)
  const q = $('symbol').value.trim()
  if (q.length < 1 || !$('api-key').value.trim()) return
  searchTimer = setTimeout(async () => {
    try {
      const found = await api(`/v1/instruments/search?q=${encodeURIComponent(q)}&limit=20`)
      $('symbols').replaceChildren(
        ...found.map((i) =>
          Object.assign(document.createElement('option'), {
            value: i.symbol,
            label: [i.symbol, i.name, i.ext.name_en].filter(Boolean).join(' '),
          }),
        ),
      )
    } catch {
      /* search is a convenience; the Show button reports errors */
    }
  }, 200)
})
$('controls').addEventListener('submit', (e) => {
  e.preventDefault()
  void load()
})
for (const id of ['period', 'adjust']) $(id).addEventListener('change', () => $('api-key').value && void load())
$('colors').addEventListener('change', () => {
  remember('mdq.colors', $('colors').value)
  render()
})

// A link may carry the key once, in its fragment (/#key=mdq_...): browsers never send a fragment to
// the server. The page keeps it in localStorage like a typed key and takes it out of the address bar.
const fragment = new URLSearchParams(location.hash.slice(1))
if (fragment.get('key')) {
  remember('mdq.apiKey', fragment.get('key').trim())
  fragment.delete('key')
  const rest = fragment.toString()
  history.replaceState(null, '', `${location.pathname}${location.search}${rest ? `#${rest}` : ''}`)
}
$('colors').value = PALETTES[localStorage.getItem('mdq.colors')] ? localStorage.getItem('mdq.colors') : 'market'
$('api-key').value = localStorage.getItem('mdq.apiKey') ?? ''
if ($('api-key').value) void load()
